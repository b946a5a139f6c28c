"""The qnn dialect: quantized tensors as integer tensors plus scale and zero-point operands
(TVM QNN's design). Conversions (quantize, dequantize, requantize) live in `convert`,
quantized compute ops in `compute`, the parameter rules in `base`. Import ops from here:
`qnn.QuantizeOp`, `qnn.Conv2DOp`.
"""

from xdsl.ir import Dialect

from .base import QUANTIZED_TYPES, check_params, ui8, ui16
from .compute import (
    COMPUTE_OPS,
    AddOp,
    BatchMatmulOp,
    BinaryOp,
    ConcatenateOp,
    Conv2DOp,
    DenseOp,
    GlobalAvgPool2DOp,
    MulOp,
    ProductOp,
)
from .convert import CONVERT_OPS, DequantizeOp, QuantizeOp, RequantizeOp

ALL_OPS = [*CONVERT_OPS, *COMPUTE_OPS]

Qnn = Dialect("qnn", ALL_OPS, [])

__all__ = [
    "ALL_OPS",
    "QUANTIZED_TYPES",
    "AddOp",
    "BatchMatmulOp",
    "BinaryOp",
    "ConcatenateOp",
    "Conv2DOp",
    "DenseOp",
    "DequantizeOp",
    "GlobalAvgPool2DOp",
    "MulOp",
    "ProductOp",
    "Qnn",
    "QuantizeOp",
    "RequantizeOp",
    "check_params",
    "ui8",
    "ui16",
]
