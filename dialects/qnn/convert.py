"""Conversions between real and quantized tensors: quantize, dequantize, requantize.

Rounding is half to even on the f32 value, as onnxruntime's QuantizeLinear and fbgemm's
requantization do, then the result saturates to the output type's range. A requantize with
`rounding = "tflite"` instead scales in fixed point as TFLite's integer kernels do.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType, f32, f64
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, result_def
from xrelay.dialects.dims import shape_of
from xrelay.dialects.relay.base import (
    Attrs,
    RelayOp,
    expect_count,
    fmt_type,
    int_prop,
    str_prop,
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

    `rounding = "tflite"` computes as TFLite's integer kernels (MultiplyByQuantizedMultiplier):
    the multiplier `input_scale / output_scale`, taken in f64, becomes a 31-bit fixed-point
    mantissa `m` and a shift `s` (QuantizeMultiplier); the product rounds with gemmlowp's
    doubling high multiply and rounding right shift. `rounding = "tflite_single"` rounds
    once, half up: `(x * m + 2^(30 - s)) >> (31 - s)` (TFLITE_SINGLE_ROUNDING; LiteRT's
    fully connected kernels round so). Their scales must be constants, and their input
    scale may be f64 (an exact product of two f32 scales).

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
    rounding = str_prop("half_to_even")

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        data, in_scale, in_zp, out_scale, out_zp = expect_count(name, types, 5)
        expect_quantized(name, data)
        if attrs.rounding not in ROUNDINGS:
            raise ShapeError(f"'{name}' rounding '{attrs.rounding}' is not one of {ROUNDINGS}")
        tflite = attrs.rounding != "half_to_even"
        if tflite and isinstance(in_scale, TensorType) and in_scale.element_type == f64:
            in_scale = tensor(shape_of(in_scale), f32)  # checked as f32: same rules
        expect_dtype(name, attrs.out_dtype)
        expect_params(name, in_scale, in_zp, axis_size(name, data, attrs.axis), "input")
        expect_params(name, out_scale, out_zp, None, "output")
        return [tensor(shape_of(data), attrs.out_dtype)]


ROUNDINGS = ("half_to_even", "tflite", "tflite_single")

CONVERT_OPS = [QuantizeOp, DequantizeOp, RequantizeOp]
