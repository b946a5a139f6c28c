"""`qnn-legalize`: every qnn op -> relay ops on integers (TVM's QNN canonicalization).

Products widen their operands to i32, subtract the zero points and run relay's conv2d /
dense / batch_matmul in i32, so relay-to-linalg emits integer loop nests with int32
accumulation. Conversions scale in f32 and round half to even, then clip to the output
type's range and cast: the arithmetic onnxruntime's QuantizeLinear and requantization and
fbgemm use. The reference executor's qnn implementations (reference/qnn.py) are the
independent oracle these rewrites are tested against.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType, f32, i32, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xrelay.dialects import qnn, relay
from xrelay.dialects.constants import constant_value, equal_constants
from xrelay.dialects.dtypes import dense_from_numpy
from xrelay.dialects.qnn.base import (
    broadcast_shape,
    check_params,
    dtype_range,
    tflite_multiplier,
)
from xrelay.errors import Error, ShapeError
from xrelay.ir import location_str


class Builder:
    """Inserts relay ops before the qnn op being legalized, at its location."""

    def __init__(self, op: Operation) -> None:
        self.op = op
        self.rewriter = Rewriter()

    def emit(self, new: Operation) -> SSAValue:
        new.location = self.op.location
        self.rewriter.insert_op(new, InsertPoint.before(self.op))
        return new.results[0]

    def constant(self, value: np.generic) -> SSAValue:
        return self.emit(relay.ConstantOp(dense_from_numpy(np.asarray(value))))

    def cast(self, value: SSAValue, elem: Attribute) -> SSAValue:
        if _elem(value) == elem:
            return value
        return self.emit(relay.CastOp(value, dtype=elem))

    def along(self, param: SSAValue, rank: int, axis: int) -> SSAValue:
        """A per-channel parameter reshaped to broadcast along `axis`; scalars unchanged."""
        shape = broadcast_shape(rank, axis, _rank(param))
        if shape is None:
            return param
        full = [_shape(param)[0] if d == -1 else d for d in shape]
        return self.emit(relay.ReshapeOp(param, newshape=full))

    def centered(self, q: SSAValue, zero_point: SSAValue, axis: int = -1) -> SSAValue:
        """`q - zero_point` in i32."""
        zp = self.along(zero_point, _rank(q), axis)
        return self.emit(relay.SubtractOp(self.cast(q, i32), zp))

    def saturate(self, value: SSAValue, zero_point: SSAValue, dtype: Attribute) -> SSAValue:
        """`round(value) + zero_point`, clipped to `dtype`'s range and cast to it."""
        shifted = self.emit(
            relay.AddOp(self.emit(relay.RoundOp(value)), self.cast(zero_point, f32))
        )
        lo, hi = dtype_range(dtype)
        clipped = self.emit(relay.ClipOp(shifted, a_min=float(lo), a_max=float(hi)))
        return self.cast(clipped, dtype)

    def requantize(
        self,
        acc: SSAValue,
        in_scale: SSAValue,
        in_zp: SSAValue,
        out_scale: SSAValue,
        out_zp: SSAValue,
        axis: int,
        dtype: Attribute,
    ) -> SSAValue:
        if (
            _elem(acc) == dtype
            and equal_constants(in_scale, out_scale)
            and equal_constants(in_zp, out_zp)
        ):
            # (q - zp) * 1.0, rounded, + zp, clipped: q itself (a concatenation of inputs
            # that share the output's parameters is then a plain copy)
            return acc
        rank = _rank(acc)
        multiplier = self.emit(relay.DivideOp(in_scale, out_scale))
        real = self.cast(self.centered(acc, in_zp, axis), f32)
        scaled = self.emit(relay.MultiplyOp(real, self.along(multiplier, rank, axis)))
        return self.saturate(scaled, out_zp, dtype)


def _elem(v: SSAValue) -> Attribute:
    assert isinstance(v.type, TensorType)
    return v.type.element_type


def _shape(v: SSAValue) -> tuple[int, ...]:
    assert isinstance(v.type, TensorType)
    return v.type.get_shape()


def _rank(v: SSAValue) -> int:
    return len(_shape(v))


def quantize(b: Builder, op: qnn.QuantizeOp) -> SSAValue:
    rank, axis = _rank(op.data), op.attrs.axis
    value = b.emit(relay.DivideOp(op.data, b.along(op.scale, rank, axis)))
    return b.saturate(value, b.along(op.zero_point, rank, axis), op.attrs.out_dtype)


def dequantize(b: Builder, op: qnn.DequantizeOp) -> SSAValue:
    rank, axis = _rank(op.data), op.attrs.axis
    real = b.cast(b.centered(op.data, op.zero_point, axis), f32)
    return b.emit(relay.MultiplyOp(real, b.along(op.scale, rank, axis)))


def tflite_requantize(b: Builder, op: qnn.RequantizeOp) -> SSAValue:
    """TFLite's MultiplyByQuantizedMultiplier in i64 (reference/qnn.py has the numpy form):
    gemmlowp's doubling high multiply with its nudge and the rounding right shift
    ("tflite"), or one rounding half up, `(x * m + 2^(30 - s)) >> (31 - s)`
    ("tflite_single")."""
    a = op.attrs
    scales = [constant_value(v) for v in (op.input_scale, op.output_scale)]
    if any(s is None for s in scales):
        raise Error(f"{location_str(op)}: rounding '{a.rounding}' needs constant scales")
    real = np.asarray(scales[0], np.float64) / np.float64(scales[1])
    mantissa, shift = tflite_multiplier(real)
    rank = _rank(op.data)

    def per_axis(values: np.ndarray) -> SSAValue:
        shape = broadcast_shape(rank, a.axis, values.ndim)
        return b.constant(values.astype(np.int64).reshape(shape or values.shape))

    x = b.cast(b.centered(op.data, op.input_zero_point, a.axis), i64)
    if a.rounding == "tflite_single":
        total_shift = 31 - shift
        product = b.emit(relay.MultiplyOp(x, per_axis(mantissa)))
        nudged = b.emit(relay.AddOp(product, per_axis(np.int64(1) << (total_shift - 1))))
        rounded = b.emit(relay.RightShiftOp(nudged, per_axis(total_shift)))
    else:
        rounded = _double_rounding(b, x, mantissa, shift, per_axis)
    shifted = b.emit(relay.AddOp(rounded, b.cast(op.output_zero_point, i64)))
    lo, hi = dtype_range(a.out_dtype)
    clipped = b.emit(relay.ClipOp(shifted, a_min=float(lo), a_max=float(hi)))
    return b.cast(clipped, a.out_dtype)


def _double_rounding(b: Builder, x: SSAValue, mantissa, shift, per_axis) -> SSAValue:
    """gemmlowp: SaturatingRoundingDoublingHighMul(x << left, m), RoundingDivideByPOT."""
    if np.any(shift > 0):
        x = b.emit(relay.MultiplyOp(x, per_axis(np.int64(1) << np.maximum(shift, 0))))
    product = b.emit(relay.MultiplyOp(x, per_axis(mantissa)))
    zero = b.constant(np.int64(0))
    nudge = b.emit(
        relay.WhereOp(
            b.emit(relay.GreaterEqualOp(product, zero)),
            b.constant(np.int64(1 << 30)),
            b.constant(np.int64(1 - (1 << 30))),
        )
    )
    total = b.emit(relay.AddOp(product, nudge))
    toward_zero = b.emit(
        relay.WhereOp(b.emit(relay.LessOp(total, zero)), b.constant(np.int64((1 << 31) - 1)), zero)
    )
    high = b.emit(
        relay.RightShiftOp(b.emit(relay.AddOp(total, toward_zero)), b.constant(np.int64(31)))
    )
    right = np.maximum(-shift, 0)
    if not np.any(right > 0):
        return high
    mask = (np.int64(1) << right) - 1
    remainder = b.emit(relay.BitwiseAndOp(high, per_axis(mask)))
    negative = b.cast(b.emit(relay.LessOp(high, zero)), i64)
    threshold = b.emit(relay.AddOp(per_axis(mask >> 1), negative))
    up = b.cast(b.emit(relay.GreaterOp(remainder, threshold)), i64)
    return b.emit(relay.AddOp(b.emit(relay.RightShiftOp(high, per_axis(right))), up))


def requantize(b: Builder, op: qnn.RequantizeOp) -> SSAValue:
    a = op.attrs
    if a.rounding != "half_to_even":
        return tflite_requantize(b, op)
    return b.requantize(
        op.data,
        op.input_scale,
        op.input_zero_point,
        op.output_scale,
        op.output_zero_point,
        a.axis,
        a.out_dtype,
    )


def product(b: Builder, op: qnn.ProductOp) -> SSAValue:
    """conv2d / dense / batch_matmul: both operands widened to i32 with their zero points
    subtracted (a per-channel weight zero point runs along weight axis 0), then the relay
    op on i32."""
    x = b.centered(op.data, op.input_zero_point)
    w = b.centered(op.weight, op.kernel_zero_point, 0)
    if isinstance(op, qnn.Conv2DOp):
        a = op.attrs
        return b.emit(
            relay.Conv2DOp(
                x, w, strides=a.strides, padding=a.padding, dilation=a.dilation, groups=a.groups
            )
        )
    if isinstance(op, qnn.DenseOp):
        return b.emit(relay.DenseOp(x, w))
    return b.emit(relay.BatchMatmulOp(x, w))


def binary(b: Builder, op: qnn.BinaryOp) -> SSAValue:
    lhs = b.cast(b.centered(op.lhs, op.lhs_zero_point), f32)
    rhs = b.cast(b.centered(op.rhs, op.rhs_zero_point), f32)
    if isinstance(op, qnn.AddOp):
        lhs_ratio = b.emit(relay.DivideOp(op.lhs_scale, op.output_scale))
        rhs_ratio = b.emit(relay.DivideOp(op.rhs_scale, op.output_scale))
        value = b.emit(
            relay.AddOp(
                b.emit(relay.MultiplyOp(lhs, lhs_ratio)), b.emit(relay.MultiplyOp(rhs, rhs_ratio))
            )
        )
    else:
        scale = b.emit(relay.MultiplyOp(op.lhs_scale, op.rhs_scale))
        ratio = b.emit(relay.DivideOp(scale, op.output_scale))
        value = b.emit(relay.MultiplyOp(b.emit(relay.MultiplyOp(lhs, rhs)), ratio))
    return b.saturate(value, op.output_zero_point, op.attrs.out_dtype)


def concatenate(b: Builder, op: qnn.ConcatenateOp) -> SSAValue:
    values = list(op.operands)
    n = (len(values) - 2) // 3
    out_scale, out_zp = values[3 * n :]
    dtype = op.results[0].type.element_type
    parts = [
        b.requantize(values[i], values[n + i], values[2 * n + i], out_scale, out_zp, -1, dtype)
        for i in range(n)
    ]
    return b.emit(relay.ConcatenateOp(*parts, axis=op.attrs.axis))


def global_avg_pool2d(b: Builder, op: qnn.GlobalAvgPool2DOp) -> SSAValue:
    total = b.emit(
        relay.SumOp(b.centered(op.data, op.input_zero_point), axis=(2, 3), keepdims=True)
    )
    h, w = _shape(op.data)[2:]
    n = b.constant(np.float32(h * w))
    in_scale = b.emit(relay.DivideOp(op.input_scale, n))
    zero = b.constant(np.int32(0))
    dtype = _elem(op.data)
    return b.requantize(total, in_scale, zero, op.output_scale, op.output_zero_point, -1, dtype)


LEGALIZE = {
    qnn.QuantizeOp: quantize,
    qnn.DequantizeOp: dequantize,
    qnn.RequantizeOp: requantize,
    qnn.Conv2DOp: product,
    qnn.DenseOp: product,
    qnn.BatchMatmulOp: product,
    qnn.AddOp: binary,
    qnn.MulOp: binary,
    qnn.ConcatenateOp: concatenate,
    qnn.GlobalAvgPool2DOp: global_avg_pool2d,
}


def check_constant_scales(op: Operation) -> None:
    """Scales known at compile time must be finite and non-zero (a zero scale would divide
    by zero in quantize and requantize)."""
    for (name, _), value in zip(op.get_irdl_definition().operands, op.operands):
        if not name.endswith("scale"):
            continue
        array = constant_value(value)
        if array is not None:
            check_params(
                array, np.zeros((), np.int64), i32, f"{location_str(op)}: '{op.name}' {name}"
            )


def legalize_op(op: Operation) -> None:
    rule = LEGALIZE.get(type(op))
    if rule is None:
        raise Error(f"{location_str(op)}: no legalization for '{op.name}'")
    check_constant_scales(op)
    try:
        result = rule(Builder(op), op)
    except ShapeError as e:
        raise Error(f"{location_str(op)}: cannot legalize '{op.name}': {e}") from None
    op.results[0].replace_all_uses_with(result)
    op.detach()
    op.erase()


@dataclass(frozen=True)
class QnnLegalize(ModulePass):
    """Rewrite every qnn op into relay ops on integers. No options."""

    name = "qnn-legalize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in list(op.walk()):
            if inner.dialect_name() == "qnn":
                legalize_op(inner)
