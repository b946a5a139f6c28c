"""ONNX elementwise ops -> relay: arithmetic, comparisons, logic, unary math, activations,
Clip, Cast."""

from __future__ import annotations

import math

import numpy as np
import onnx
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dtypes import element_type, narrow_dtype
from xrelay.frontends.common import match_run_time_dims
from xrelay.frontends.onnx import narrow
from xrelay.frontends.onnx.binder import Node, Value
from xrelay.frontends.onnx.registry import onnx_op


def legacy_broadcast(b: Node, rhs: SSAValue) -> SSAValue:
    """Opset < 7 binary ops broadcast the rhs at `axis` when `broadcast=1`."""
    if b.opset >= 7 or not b.attr("broadcast", 0) or not b.has_attr("axis"):
        return rhs
    lhs_rank, rhs_shape = b.rank(0), b.shape(1)
    axis = b.attr("axis") % max(lhs_rank, 1)
    shape = [1] * axis + list(rhs_shape) + [1] * (lhs_rank - axis - len(rhs_shape))
    return b.emit(relay.ReshapeOp(rhs, newshape=shape))


BINARY = {
    "Add": relay.AddOp,
    "Sub": relay.SubtractOp,
    "Mul": relay.MultiplyOp,
    "Div": relay.DivideOp,
    "Equal": relay.EqualOp,
    "Less": relay.LessOp,
    "Greater": relay.GreaterOp,
    "LessOrEqual": relay.LessEqualOp,
    "GreaterOrEqual": relay.GreaterEqualOp,
    "And": relay.LogicalAndOp,
    "Or": relay.LogicalOrOp,
    "Xor": relay.LogicalXorOp,
}


def _binary(b: Node) -> SSAValue:
    lhs, rhs = b.input(0), legacy_broadcast(b, b.input(1))
    return b.emit(BINARY[b.op_type](lhs, match_run_time_dims(b, rhs, lhs)))


for _name in BINARY:
    onnx_op(_name)(_binary)


@onnx_op("Pow")
def pow_(b: Node) -> SSAValue:
    base, exponent = b.input(0), legacy_broadcast(b, b.input(1))
    exponent = match_run_time_dims(b, exponent, base)
    if b.dtype(1) != b.dtype(0):
        exponent = b.emit(relay.CastOp(exponent, dtype=element_type(b.dtype(0))))
    return b.emit(relay.PowerOp(base, exponent))


@onnx_op("Mod")
def mod(b: Node) -> SSAValue:
    """fmod=1: C fmod (sign of the dividend); fmod=0: Python % (sign of the divisor)."""
    cls = relay.ModOp if b.attr("fmod", 0) else relay.FloorModOp
    return b.emit(cls(b.input(0), b.input(1)))


BITWISE = {
    "BitwiseAnd": relay.BitwiseAndOp,
    "BitwiseOr": relay.BitwiseOrOp,
    "BitwiseXor": relay.BitwiseXorOp,
}


def _bitwise(b: Node) -> SSAValue:
    return b.emit(BITWISE[b.op_type](b.input(0), b.input(1)))


for _name in BITWISE:
    onnx_op(_name, since=18)(_bitwise)


@onnx_op("BitwiseNot", since=18)
def bitwise_not(b: Node) -> SSAValue:
    return b.emit(relay.BitwiseNotOp(b.input(0)))


@onnx_op("BitShift", since=11)
def bit_shift(b: Node) -> SSAValue:
    direction = b.attr("direction")
    if direction not in ("LEFT", "RIGHT"):
        raise b.error(f"direction must be LEFT or RIGHT, got {direction!r}")
    cls = relay.LeftShiftOp if direction == "LEFT" else relay.RightShiftOp
    return b.emit(cls(b.input(0), b.input(1)))


VARIADIC = {"Sum": relay.AddOp, "Max": relay.MaximumOp, "Min": relay.MinimumOp, "Mean": relay.AddOp}


def _variadic(b: Node) -> SSAValue:
    values = b.inputs()
    acc = values[0]
    for v in values[1:]:
        acc = b.emit(VARIADIC[b.op_type](acc, match_run_time_dims(b, v, acc)))
    if b.op_type == "Mean" and len(values) > 1:
        acc = b.emit(relay.DivideOp(acc, b.constant(len(values), b.dtype(0))))
    return acc


for _name in VARIADIC:
    onnx_op(_name)(_variadic)


@onnx_op("Not")
def not_(b: Node) -> SSAValue:
    return b.emit(relay.LogicalNotOp(b.input(0)))


@onnx_op("Where", since=9)
def where(b: Node) -> SSAValue:
    operands = b.inputs()
    ref = max(operands, key=lambda v: v.type.get_num_dims())  # the first of highest rank
    cond, x, y = (v if v is ref else match_run_time_dims(b, v, ref) for v in operands)
    return b.emit(relay.WhereOp(cond, x, match_run_time_dims(b, y, x)))


UNARY = {
    "Abs": relay.AbsOp,
    "Neg": relay.NegativeOp,
    "Sign": relay.SignOp,
    "Exp": relay.ExpOp,
    "Log": relay.LogOp,
    "Sqrt": relay.SqrtOp,
    "Reciprocal": relay.ReciprocalOp,
    "Tanh": relay.TanhOp,
    "Sigmoid": relay.SigmoidOp,
    "Erf": relay.ErfOp,
    "Floor": relay.FloorOp,
    "Ceil": relay.CeilOp,
    "Round": relay.RoundOp,
    "Sin": relay.SinOp,
    "Cos": relay.CosOp,
    "Tan": relay.TanOp,
    "Asin": relay.AsinOp,
    "Acos": relay.AcosOp,
    "Atan": relay.AtanOp,
    "Asinh": relay.AsinhOp,
    "Acosh": relay.AcoshOp,
    "Atanh": relay.AtanhOp,
    "Relu": relay.ReluOp,
    "IsNaN": relay.IsNanOp,
}


def _unary(b: Node) -> SSAValue:
    return b.emit(UNARY[b.op_type](b.input(0)))


for _name in UNARY:
    onnx_op(_name)(_unary)


@onnx_op("Identity")
def identity(b: Node) -> SSAValue | Value:
    value = b.value(0)
    if value.items is not None or (
        value.ssa is not None and not isinstance(value.ssa.type, TensorType)
    ):
        return value  # a sequence
    return b.input(0)


@onnx_op("LeakyRelu")
def leaky_relu(b: Node) -> SSAValue:
    return b.emit(relay.LeakyReluOp(b.input(0), alpha=float(b.attr("alpha", 0.01))))


def _scalar(b: Node, value: float) -> SSAValue:
    return b.constant(value, b.dtype(0))


@onnx_op("Elu")
def elu(b: Node) -> SSAValue:
    """alpha * (exp(x) - 1) where x < 0, else x."""
    x = b.input(0)
    negative = b.emit(relay.LessOp(x, _scalar(b, 0.0)))
    expm1 = b.emit(relay.SubtractOp(b.emit(relay.ExpOp(x)), _scalar(b, 1.0)))
    scaled = b.emit(relay.MultiplyOp(expm1, _scalar(b, b.attr("alpha", 1.0))))
    return b.emit(relay.WhereOp(negative, scaled, x))


@onnx_op("Selu")
def selu(b: Node) -> SSAValue:
    """gamma * (alpha * (exp(x) - 1) where x <= 0, else x)."""
    x = b.input(0)
    alpha = b.attr("alpha", 1.67326319217681884765625)
    gamma = b.attr("gamma", 1.05070102214813232421875)
    positive = b.emit(relay.GreaterOp(x, _scalar(b, 0.0)))
    expm1 = b.emit(relay.SubtractOp(b.emit(relay.ExpOp(x)), _scalar(b, 1.0)))
    inner = b.emit(relay.WhereOp(positive, x, b.emit(relay.MultiplyOp(expm1, _scalar(b, alpha)))))
    return b.emit(relay.MultiplyOp(inner, _scalar(b, gamma)))


@onnx_op("Softplus")
def softplus(b: Node) -> SSAValue:
    """log(exp(x) + 1), computed as max(x, 0) + log(1 + exp(-|x|)) so it never overflows."""
    x = b.input(0)
    relu = b.emit(relay.ReluOp(x))
    neg_abs = b.emit(relay.NegativeOp(b.emit(relay.AbsOp(x))))
    log1p = b.emit(relay.LogOp(b.emit(relay.AddOp(b.emit(relay.ExpOp(neg_abs)), _scalar(b, 1.0)))))
    return b.emit(relay.AddOp(relu, log1p))


@onnx_op("HardSigmoid")
def hard_sigmoid(b: Node) -> SSAValue:
    x = b.input(0)
    lin = b.emit(relay.MultiplyOp(x, _scalar(b, b.attr("alpha", 0.2))))
    lin = b.emit(relay.AddOp(lin, _scalar(b, b.attr("beta", 0.5))))
    return b.emit(relay.ClipOp(lin, a_min=0.0, a_max=1.0))


@onnx_op("PRelu")
def prelu(b: Node) -> SSAValue:
    x, slope = b.input(0), b.input(1)
    rank, slope_shape = b.rank(0), b.shape(1)
    if b.opset < 7 and rank > 2 and slope_shape == (b.shape(0)[1],):
        # before opset 7 a per-channel slope broadcasts along axis 1
        slope = b.emit(relay.ReshapeOp(slope, newshape=(slope_shape[0],) + (1,) * (rank - 2)))
    negative = b.emit(relay.LessOp(x, _scalar(b, 0.0)))
    return b.emit(relay.WhereOp(negative, b.emit(relay.MultiplyOp(x, slope)), x))


@onnx_op("Gelu", since=20)
def gelu(b: Node) -> SSAValue:
    x = b.input(0)
    half = _scalar(b, 0.5)
    if b.attr("approximate", "none") == "tanh":
        cube = b.emit(relay.MultiplyOp(b.emit(relay.MultiplyOp(x, x)), x))
        inner = b.emit(relay.AddOp(x, b.emit(relay.MultiplyOp(cube, _scalar(b, 0.044715)))))
        inner = b.emit(relay.MultiplyOp(inner, _scalar(b, math.sqrt(2 / math.pi))))
        gate = b.emit(relay.TanhOp(inner))
    else:
        gate = b.emit(relay.ErfOp(b.emit(relay.MultiplyOp(x, _scalar(b, 1 / math.sqrt(2))))))
    one_plus = b.emit(relay.AddOp(gate, _scalar(b, 1.0)))
    return b.emit(relay.MultiplyOp(b.emit(relay.MultiplyOp(x, half)), one_plus))


@onnx_op("Clip")
def clip(b: Node) -> SSAValue:
    x = b.input(0)
    dtype = b.dtype(0)
    if b.opset < 11:
        lo, hi = b.attr("min", -math.inf), b.attr("max", math.inf)
        return b.emit(relay.ClipOp(x, a_min=float(lo), a_max=float(hi)))
    if all(not b.has_input(i) or b.is_const(i) for i in (1, 2)):
        lo = float(b.const(1)) if b.has_input(1) else -math.inf
        hi = float(b.const(2)) if b.has_input(2) else math.inf
        if lo <= hi:
            return b.emit(relay.ClipOp(x, a_min=lo, a_max=hi))
        # ONNX: min > max gives max everywhere
        return b.emit(relay.BroadcastToOp(b.constant(hi, dtype), shape=b.shape(0)))
    if b.has_input(1):
        x = b.emit(relay.MaximumOp(x, b.input(1)))
    if b.has_input(2):
        x = b.emit(relay.MinimumOp(x, b.input(2)))
    return x


def _cast_to(b: Node, to: np.dtype) -> SSAValue:
    """Input 0 cast to ONNX type `to`; the narrow types (bfloat16, float8, int4, ...) through
    their storage (narrow.py)."""
    src = b.narrow(0) or b.dtype(0)
    if narrow_dtype(src) is None and narrow_dtype(to) is None:
        return b.emit(relay.CastOp(b.input(0), dtype=element_type(to)))
    if narrow_dtype(to) is not None:
        b.narrow_outputs[0] = to
    return narrow.cast(b, b.input(0), src, to, saturate=bool(b.attr("saturate", 1)))


@onnx_op("CastLike", since=15)
def cast_like(b: Node) -> SSAValue:
    return _cast_to(b, b.narrow(1) or b.dtype(1))


@onnx_op("Cast")
def cast(b: Node) -> SSAValue:
    to = onnx.helper.tensor_dtype_to_np_dtype(b.attr("to"))
    if to == np.dtype(object):
        raise b.unsupported("cast to string")
    return _cast_to(b, to)


@onnx_op("BitCast", since=26)
def bit_cast(b: Node) -> SSAValue:
    """The same bits as type `to`, of the same width (bool is one byte holding 0 or 1)."""
    to = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(b.attr("to")))
    src = b.dtype(0)
    if b.narrow(0) is not None or narrow_dtype(to) is not None or to.itemsize != src.itemsize:
        raise b.unsupported(f"BitCast from {b.narrow(0) or src} to {to} (only equal widths)")
    if src == np.bool_ or to == np.bool_:
        if to == np.bool_:
            raise b.unsupported("BitCast to bool")
        return b.emit(relay.CastOp(b.input(0), dtype=element_type(to)))
    return b.emit(relay.ReinterpretOp(b.input(0), dtype=element_type(to)))
