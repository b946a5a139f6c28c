"""Quantized compute ops: conv2d, dense, batch_matmul (int32 accumulators), add, mul,
concatenate and global_avg_pool2d (quantized in, quantized out).

Products take the zero points and scales of both operands; the result is the exact int32
sum of `(x - x_zero_point) * (w - w_zero_point)`, whose scale is `x_scale * w_scale`
(a `qnn.requantize` brings it to an output quantization). A per-channel weight zero point
and scale run along the output channels.
"""

from __future__ import annotations

from abc import ABC
from typing import ClassVar

from xdsl.dialects.builtin import TensorType, f32, i32
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, result_def, var_operand_def
from xrelay.dialects import relay
from xrelay.dialects.dims import shape_of
from xrelay.dialects.relay.base import (
    Attrs,
    RelayOp,
    expect_count,
    expect_rank,
    fmt_type,
    int_prop,
    ints_prop,
    ranked,
    tensor,
    type_prop,
)
from xrelay.errors import ShapeError

from .base import expect_dtype, expect_params, expect_quantized


def _as_f32(t: TensorType) -> TensorType:
    return tensor(shape_of(t), f32)


def _accumulator(name: str, attrs: Attrs) -> Attribute:
    if attrs.out_dtype != i32:
        raise ShapeError(f"'{name}' accumulates in i32, not {attrs.out_dtype}")
    return i32


class ProductOp(RelayOp, ABC):
    """A quantized product of `data` and `weight` into an i32 accumulator; `CHANNELS` is
    the weight axis a per-channel weight zero point and scale run along (None: per tensor
    only), and `float_rule` the float op whose shape rule the product follows."""

    data = operand_def(TensorType)
    weight = operand_def(TensorType)
    input_zero_point = operand_def(TensorType)
    kernel_zero_point = operand_def(TensorType)
    input_scale = operand_def(TensorType)
    kernel_scale = operand_def(TensorType)
    result = result_def(TensorType)
    out_dtype = type_prop(i32)

    CHANNELS: ClassVar[int | None]
    WEIGHT_RANK: ClassVar[int]

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        data, weight, data_zp, weight_zp, data_scale, weight_scale = expect_count(name, types, 6)
        expect_quantized(name, data)
        expect_quantized(name, weight, "weight")
        expect_rank(name, weight, cls.WEIGHT_RANK, "weight")
        channels = None if cls.CHANNELS is None else shape_of(weight)[cls.CHANNELS]
        expect_params(name, data_scale, data_zp, None, "data")
        expect_params(name, weight_scale, weight_zp, channels, "weight")
        (out,) = cls.float_rule(_as_f32(data), _as_f32(weight), attrs, name)
        return [tensor(shape_of(out), _accumulator(name, attrs))]

    @classmethod
    def float_rule(cls, data: TensorType, weight: TensorType, attrs: Attrs, name: str):
        raise NotImplementedError


@irdl_op_definition
class Conv2DOp(ProductOp):
    """Quantized 2-d convolution, NCHW data and OIHW weight; padding is by the data zero
    point (a real 0).

    %y = qnn.conv2d %x, %w, %xzp, %wzp, %xs, %ws {padding = array<i64: 1, 1, 1, 1>}
        : (tensor<1x3x8x8xui8>, tensor<4x3x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>,
           tensor<4xf32>) -> tensor<1x4x8x8xi32>
    """

    name = "qnn.conv2d"
    strides = ints_prop((1, 1))
    padding = ints_prop((0, 0, 0, 0))
    dilation = ints_prop((1, 1))
    groups = int_prop(1)
    CHANNELS: ClassVar = 0
    WEIGHT_RANK: ClassVar = 4

    @classmethod
    def float_rule(cls, data, weight, attrs, name):
        conv_attrs = Attrs(attrs)
        conv_attrs["data_layout"], conv_attrs["kernel_layout"] = "NCHW", "OIHW"
        return relay.Conv2DOp.infer([data, weight], conv_attrs, name)


@irdl_op_definition
class DenseOp(ProductOp):
    """Quantized `data @ weight.T`: data [..., K], weight [N, K] -> int32 [..., N].

    %y = qnn.dense %x, %w, %xzp, %wzp, %xs, %ws
        : (tensor<2x8xui8>, tensor<4x8xi8>, tensor<i32>, tensor<i32>, tensor<f32>,
           tensor<f32>) -> tensor<2x4xi32>
    """

    name = "qnn.dense"
    CHANNELS: ClassVar = 0
    WEIGHT_RANK: ClassVar = 2

    @classmethod
    def float_rule(cls, data, weight, attrs, name):
        return relay.DenseOp.infer([data, weight], Attrs(), name)


@irdl_op_definition
class BatchMatmulOp(ProductOp):
    """Quantized batched product [B, M, K] x [B, K, N] -> int32 [B, M, N] (a batch of 1
    broadcasts); per-tensor parameters only.

    %y = qnn.batch_matmul %a, %b, %azp, %bzp, %as, %bs
        : (tensor<2x3x8xi8>, tensor<2x8x4xi8>, tensor<i32>, tensor<i32>, tensor<f32>,
           tensor<f32>) -> tensor<2x3x4xi32>
    """

    name = "qnn.batch_matmul"
    CHANNELS: ClassVar = None
    WEIGHT_RANK: ClassVar = 3

    @classmethod
    def float_rule(cls, data, weight, attrs, name):
        mm_attrs = Attrs(transpose_a=False, transpose_b=False)
        return relay.BatchMatmulOp.infer([data, weight], mm_attrs, name)


class BinaryOp(RelayOp):
    """Quantized elementwise op of two operands with numpy broadcasting, each with its own
    per-tensor parameters, into an output quantization of `out_dtype` (computed in f32)."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    lhs_scale = operand_def(TensorType)
    lhs_zero_point = operand_def(TensorType)
    rhs_scale = operand_def(TensorType)
    rhs_zero_point = operand_def(TensorType)
    output_scale = operand_def(TensorType)
    output_zero_point = operand_def(TensorType)
    result = result_def(TensorType)
    out_dtype = type_prop()

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        lhs, rhs, ls, lz, rs, rz, os, oz = expect_count(name, types, 8)
        expect_quantized(name, lhs, "lhs")
        expect_quantized(name, rhs, "rhs")
        expect_dtype(name, attrs.out_dtype)
        for scale, zp, what in ((ls, lz, "lhs"), (rs, rz, "rhs"), (os, oz, "output")):
            expect_params(name, scale, zp, None, what)
        (out,) = relay.AddOp.infer([_as_f32(lhs), _as_f32(rhs)], Attrs(), name)
        return [tensor(shape_of(out), attrs.out_dtype)]


@irdl_op_definition
class AddOp(BinaryOp):
    """Quantized `lhs + rhs` on real values.

    %y = qnn.add %a, %b, %as, %azp, %bs, %bzp, %ys, %yzp {out_dtype = ui8}
        : (tensor<4xui8>, tensor<4xui8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>,
           tensor<f32>, tensor<i32>) -> tensor<4xui8>
    """

    name = "qnn.add"


@irdl_op_definition
class MulOp(BinaryOp):
    """Quantized `lhs * rhs` on real values (operands as for qnn.add)."""

    name = "qnn.mul"


@irdl_op_definition
class ConcatenateOp(RelayOp):
    """Quantized concatenation along `axis`: n inputs, then their n scales and n zero
    points, then the output scale and zero point (3n + 2 operands); every input is
    requantized to the output quantization.

    %y = qnn.concatenate %a, %b, %as, %bs, %azp, %bzp, %ys, %yzp {axis = 1}
        : (tensor<1x2xui8>, tensor<1x3xui8>, tensor<f32>, tensor<f32>, tensor<i32>,
           tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x5xui8>
    """

    name = "qnn.concatenate"
    operands_ = var_operand_def(TensorType)
    result = result_def(TensorType)
    axis = int_prop(0)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        if len(types) < 5 or (len(types) - 2) % 3:
            raise ShapeError(f"'{name}' takes 3n + 2 operands (n >= 1), got {len(types)}")
        n = (len(types) - 2) // 3
        inputs = [ranked(name, t, "input") for t in types[:n]]
        elems = {t.element_type for t in inputs}
        if len(elems) != 1:
            raise ShapeError(
                f"'{name}' inputs differ in element type: {', '.join(map(fmt_type, inputs))}"
            )
        for t in inputs:
            expect_quantized(name, t, "input")
        for i in range(n):
            expect_params(name, types[n + i], types[2 * n + i], None, f"input {i}")
        expect_params(name, types[3 * n], types[3 * n + 1], None, "output")
        (out,) = relay.ConcatenateOp.infer([_as_f32(t) for t in inputs], attrs, name)
        return [tensor(shape_of(out), inputs[0].element_type)]


@irdl_op_definition
class GlobalAvgPool2DOp(RelayOp):
    """Quantized mean over H and W of NCHW data: the int32 sum of `data - input_zero_point`
    is requantized by `input_scale / (H * W)` to the output quantization (same dtype).

    %y = qnn.global_avg_pool2d %x, %xs, %xzp, %ys, %yzp
        : (tensor<1x4x7x7xui8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>)
        -> tensor<1x4x1x1xui8>
    """

    name = "qnn.global_avg_pool2d"
    data = operand_def(TensorType)
    input_scale = operand_def(TensorType)
    input_zero_point = operand_def(TensorType)
    output_scale = operand_def(TensorType)
    output_zero_point = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        data, xs, xz, ys, yz = expect_count(name, types, 5)
        expect_quantized(name, data)
        expect_rank(name, data, 4)
        expect_params(name, xs, xz, None, "input")
        expect_params(name, ys, yz, None, "output")
        n, c = shape_of(data)[:2]
        return [tensor((n, c, 1, 1), data.element_type)]


COMPUTE_OPS = [
    Conv2DOp,
    DenseOp,
    BatchMatmulOp,
    AddOp,
    MulOp,
    ConcatenateOp,
    GlobalAvgPool2DOp,
]
