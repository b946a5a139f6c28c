"""Conversions between real and quantized tensors: quantize, dequantize, requantize.

Rounding is half to even on the f32 value, as onnxruntime's QuantizeLinear and fbgemm's
requantization do, then the result saturates to the output type's range.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, result_def
from xrelay.dialects.dims import shape_of
from xrelay.dialects.relay.base import (
    Attrs,
    RelayOp,
    expect_count,
    fmt_type,
    int_prop,
    tensor,
    type_prop,
)
from xrelay.errors import ShapeError

from .base import axis_size, expect_dtype, expect_params, expect_quantized


@irdl_op_definition
class QuantizeOp(RelayOp):
    """`clamp(round(data / scale) + zero_point)` as `out_dtype`; a per-channel scale and
    zero point run along `axis`.

    %q = qnn.quantize %x, %scale, %zp {out_dtype = ui8}
        : (tensor<4xf32>, tensor<f32>, tensor<i32>) -> tensor<4xui8>
    """

    name = "qnn.quantize"
    data = operand_def(TensorType)
    scale = operand_def(TensorType)
    zero_point = operand_def(TensorType)
    result = result_def(TensorType)
    axis = int_prop(-1)
    out_dtype = type_prop()

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        data, scale, zp = expect_count(name, types, 3)
        if data.element_type != f32:
            raise ShapeError(f"'{name}' expects f32 data, got {fmt_type(data)}")
        expect_dtype(name, attrs.out_dtype)
        expect_params(name, scale, zp, axis_size(name, data, attrs.axis))
        return [tensor(shape_of(data), attrs.out_dtype)]


@irdl_op_definition
class DequantizeOp(RelayOp):
    """`(data - zero_point) * scale` as f32; per-channel parameters run along `axis`.

    %x = qnn.dequantize %q, %scale, %zp
        : (tensor<4xui8>, tensor<f32>, tensor<i32>) -> tensor<4xf32>
    """

    name = "qnn.dequantize"
    data = operand_def(TensorType)
    scale = operand_def(TensorType)
    zero_point = operand_def(TensorType)
    result = result_def(TensorType)
    axis = int_prop(-1)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        data, scale, zp = expect_count(name, types, 3)
        expect_quantized(name, data)
        expect_params(name, scale, zp, axis_size(name, data, attrs.axis))
        return [tensor(shape_of(data), f32)]


@irdl_op_definition
class RequantizeOp(RelayOp):
    """From one quantization to another: `clamp(round((data - input_zero_point) *
    (input_scale / output_scale)) + output_zero_point)` as `out_dtype`, computed in f32.
    Input parameters may be per channel along `axis` (a conv's weight scales); output ones
    are per tensor.

    %y = qnn.requantize %acc, %in_scale, %in_zp, %out_scale, %out_zp {out_dtype = ui8}
        : (tensor<1x4xi32>, tensor<4xf32>, tensor<i32>, tensor<f32>, tensor<i32>)
        -> tensor<1x4xui8>
    """

    name = "qnn.requantize"
    data = operand_def(TensorType)
    input_scale = operand_def(TensorType)
    input_zero_point = operand_def(TensorType)
    output_scale = operand_def(TensorType)
    output_zero_point = operand_def(TensorType)
    result = result_def(TensorType)
    axis = int_prop(-1)
    out_dtype = type_prop()

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        data, in_scale, in_zp, out_scale, out_zp = expect_count(name, types, 5)
        expect_quantized(name, data)
        expect_dtype(name, attrs.out_dtype)
        expect_params(name, in_scale, in_zp, axis_size(name, data, attrs.axis), "input")
        expect_params(name, out_scale, out_zp, None, "output")
        return [tensor(shape_of(data), attrs.out_dtype)]


CONVERT_OPS = [QuantizeOp, DequantizeOp, RequantizeOp]
