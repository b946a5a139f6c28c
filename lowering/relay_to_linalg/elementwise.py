"""Lowerings of dialects/relay/elementwise.py: each op is one elementwise linalg.generic,
operands broadcast through their indexing maps. A unary op applies the math op of its row in
the unary table (relay.UNARY_TABLE) to each element, or its hand-written scalar body."""

from __future__ import annotations

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, f16, f32, f64, i1
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dims import Dim
from xrelay.dialects.dtypes import numpy_dtype
from xrelay.lowering.relay_to_linalg.builder import (
    Body,
    Emitter,
    amap,
    dims,
    is_float,
    is_unsigned,
    result_shape,
)

BINARY_KINDS = {
    relay.AddOp: "add",
    relay.SubtractOp: "sub",
    relay.MultiplyOp: "mul",
    relay.MaximumOp: "max",
    relay.MinimumOp: "min",
    relay.LogicalAndOp: "and",
    relay.LogicalOrOp: "or",
    relay.LogicalXorOp: "xor",
    relay.BitwiseAndOp: "and",
    relay.BitwiseOrOp: "or",
    relay.BitwiseXorOp: "xor",
}

COMPARE_PREDICATES = {
    relay.EqualOp: "eq",
    relay.NotEqualOp: "ne",
    relay.LessOp: "lt",
    relay.LessEqualOp: "le",
    relay.GreaterOp: "gt",
    relay.GreaterEqualOp: "ge",
}

# The unary rows without a math op (dialects/relay/elementwise.py: UNARY_TABLE) and the
# scalar body each is written as (builder.scalar_unary).
HAND_WRITTEN_UNARY = {
    relay.BitwiseNotOp: "bitnot",
    relay.NegativeOp: "neg",
    relay.AbsOp: "abs",
    relay.SignOp: "sign",
    relay.LogicalNotOp: "not",
    relay.IsNanOp: "isnan",
    relay.ReciprocalOp: "reciprocal",
    relay.SigmoidOp: "sigmoid",
    relay.ReluOp: "relu",
}


def _result(op) -> tuple[tuple[Dim, ...], object]:
    return result_shape(op), op.results[0].type.element_type


def lower_binary(e: Emitter, op) -> SSAValue:
    shape, elem = _result(op)
    kind = BINARY_KINDS[type(op)]
    return e.map([op.lhs, op.rhs], shape, elem, lambda b: b.binary(kind, *b.args[:2]))


def lower_compare(e: Emitter, op) -> SSAValue:
    shape, _ = _result(op)
    pred = COMPARE_PREDICATES[type(op)]
    return e.map([op.lhs, op.rhs], shape, i1, lambda b: b.cmp(pred, *b.args[:2]))


def _int_divide(b: Body, x: SSAValue, y: SSAValue, kind: str) -> SSAValue:
    """Integer x / y (kind "div" truncates, "floordiv" floors) or remainder ("rem"),
    never trapping: division by 0 gives 0 (as the reference does) and by -1 is a wrapping
    negation (so MIN / -1 = MIN, like numpy) instead of the CPU's divide fault."""
    t = x.type
    zero = b.const(0, t)
    by_zero = b.cmp("eq", y, zero)
    if is_unsigned(t):
        return b.select(by_zero, zero, b.binary(kind, x, b.select(by_zero, b.const(1, t), y)))
    by_minus_one = b.cmp("eq", y, b.const(-1, t))
    safe = b.select(b.binary("or", by_zero, by_minus_one), b.const(1, t), y)
    q = b.binary(kind, x, safe)
    if kind == "rem":
        special = zero
    else:
        special = b.binary("sub", zero, x)
    q = b.select(by_minus_one, special, q)
    return b.select(by_zero, zero, q)


def _divide(b: Body, x: SSAValue, y: SSAValue) -> SSAValue:
    if is_float(x.type):
        return b.binary("div", x, y)
    return _int_divide(b, x, y, "div")


def _floor_div(b: Body, x: SSAValue, y: SSAValue) -> SSAValue:
    if is_float(x.type):
        return b.unary("floor", b.binary("div", x, y))
    return _int_divide(b, x, y, "floordiv")


def _remainder(b: Body, x: SSAValue, y: SSAValue, floor: bool) -> SSAValue:
    """The remainder with the sign of the dividend (C fmod) or, if `floor`, of the divisor
    (Python %, moved by one divisor as numpy does); integer division by zero gives 0 as in
    the reference."""
    zero = b.const(0, x.type)
    if is_float(x.type):
        rem = b.binary("rem", x, y)
    else:
        rem = _int_divide(b, x, y, "rem")
    if floor:  # move a non-zero remainder to the divisor's sign
        differ = b.cmp("ne", b.cmp("lt", rem, zero), b.cmp("lt", y, zero))
        adjust = b.binary("and", differ, b.cmp("ne", rem, zero))
        rem = b.select(adjust, b.binary("add", rem, y), rem)
    return rem


def lower_divide(e: Emitter, op) -> SSAValue:
    shape, elem = _result(op)
    return e.map([op.lhs, op.rhs], shape, elem, lambda b: _divide(b, *b.args[:2]))


def lower_floor_divide(e: Emitter, op) -> SSAValue:
    shape, elem = _result(op)
    return e.map([op.lhs, op.rhs], shape, elem, lambda b: _floor_div(b, *b.args[:2]))


def lower_floor_mod(e: Emitter, op) -> SSAValue:
    shape, elem = _result(op)
    return e.map([op.lhs, op.rhs], shape, elem, lambda b: _remainder(b, *b.args[:2], floor=True))


def lower_mod(e: Emitter, op) -> SSAValue:
    shape, elem = _result(op)
    return e.map([op.lhs, op.rhs], shape, elem, lambda b: _remainder(b, *b.args[:2], floor=False))


def lower_shift(e: Emitter, op) -> SSAValue:
    """x << y or x >> y (logical for unsigned, arithmetic for signed); LLVM's shifts by the
    bit width or more are poison, so those amounts give 0 (or the sign) explicitly."""
    shape, elem = _result(op)
    left = isinstance(op, relay.LeftShiftOp)

    def body(b: Body) -> SSAValue:
        x, y = b.args[:2]
        bits = b.const(elem.width.data, elem)
        big = b.cmp("ge", y, bits)
        if not is_unsigned(elem):
            big = b.binary("or", big, b.cmp("lt", y, b.const(0, elem)))
        safe = b.select(big, b.const(0, elem), y)
        if left:
            return b.select(big, b.const(0, elem), b.add(arith.ShLIOp(x, safe)))
        if is_unsigned(elem):
            return b.select(big, b.const(0, elem), b.add(arith.ShRUIOp(x, safe)))
        sign = b.add(arith.ShRSIOp(x, b.const(elem.width.data - 1, elem)))
        return b.select(big, sign, b.add(arith.ShRSIOp(x, safe)))

    return e.map([op.lhs, op.rhs], shape, elem, body)


def lower_power(e: Emitter, op) -> SSAValue:
    shape, elem = _result(op)

    def body(b: Body) -> SSAValue:
        x, y = b.args[:2]
        if is_float(elem):
            return b.binary("pow", x, y)
        as_f = b.binary("pow", b.cast(x, f64), b.cast(y, f64))
        return b.cast(as_f, elem)

    return e.map([op.lhs, op.rhs], shape, elem, body)


def lower_where(e: Emitter, op: relay.WhereOp) -> SSAValue:
    shape, elem = _result(op)
    return e.map([op.condition, op.lhs, op.rhs], shape, elem, lambda b: b.select(*b.args[:3]))


def lower_unary(e: Emitter, op) -> SSAValue:
    """The row's math op on each element (f16 computed in f32: libm has no half-precision
    functions), or the op's hand-written body."""
    shape, elem = _result(op)
    math_op = relay.UNARY_ROWS[type(op)].math
    if math_op is None:
        kind = HAND_WRITTEN_UNARY[type(op)]
        return e.map([op.data], shape, elem, lambda b: b.unary(kind, b.args[0]))

    def body(b: Body) -> SSAValue:
        x = b.args[0]
        if elem != f16:
            return b.add(math_op(x))
        return b.cast(b.add(math_op(b.cast(x, f32))), f16)

    return e.map([op.data], shape, elem, body)


def lower_leaky_relu(e: Emitter, op: relay.LeakyReluOp) -> SSAValue:
    shape, elem = _result(op)

    def body(b: Body) -> SSAValue:
        x = b.args[0]
        scaled = b.binary("mul", x, b.const(op.attrs.alpha, elem))
        return b.select(b.cmp("ge", x, b.const(0, elem)), x, scaled)

    return e.map([op.data], shape, elem, body)


def lower_prelu(e: Emitter, op: relay.PReluOp) -> SSAValue:
    shape, elem = _result(op)
    axis = op.attrs.axis % len(shape)
    maps = [amap(len(shape), dims(len(shape))), amap(len(shape), [dims(len(shape))[axis]])]

    def body(b: Body) -> SSAValue:
        x, alpha = b.args[:2]
        return b.select(b.cmp("ge", x, b.const(0, elem)), x, b.binary("mul", x, alpha))

    return e.map([op.data, op.alpha], shape, elem, body, in_maps=maps)


def clip_bounds(op: relay.ClipOp, elem) -> tuple[float | int, float | int]:
    """The clip's bounds as the lowering compares with them: as given for floats, within
    the type's range (truncated) for integers (qnn-lookup-tables mirrors them)."""
    lo, hi = op.attrs.a_min, op.attrs.a_max
    if not is_float(elem):
        info = np.iinfo(numpy_dtype(elem))
        lo = int(max(lo, info.min)) if lo > -np.inf else int(info.min)
        hi = int(min(hi, info.max)) if hi < np.inf else int(info.max)
    return lo, hi


def lower_clip(e: Emitter, op: relay.ClipOp) -> SSAValue:
    shape, elem = _result(op)
    lo, hi = clip_bounds(op, elem)

    zero_floor = is_float(elem) and lo == 0 and _only_cast_to_int(op)

    def body(b: Body) -> SSAValue:
        if zero_floor:  # one vmaxps: NaN and -0 give +0, which the cast reads as 0
            low = b.add(arith.MaxnumfOp(b.args[0], b.const(0.0, elem)))
        else:
            low = b.binary("max", b.args[0], b.const(lo, elem))
        return b.binary("min", low, b.const(hi, elem))

    return e.map([op.data], shape, elem, body)


def _only_cast_to_int(op: relay.ClipOp) -> bool:
    """Whether the clip's only reader is a cast to an 8- or 16-bit integer: there a floor
    of 0 may use maxnum (NaN -> 0) instead of maximum, whose NaN and -0 handling costs two
    more instructions a vector. LLVM leaves the cast of NaN undefined (poison); on x86 it
    converts to 0x80000000, truncated to 0 at these widths, so NaN still gives 0, and +0
    and -0 both give 0. Quantization to u8 clamps to [0, 255] this way."""
    users = [u.operation for u in op.results[0].uses]
    if len(users) != 1 or not isinstance(users[0], relay.CastOp):
        return False
    to = users[0].attrs.dtype
    return isinstance(to, IntegerType) and 8 <= to.width.data <= 16


def lower_cast(e: Emitter, op: relay.CastOp) -> SSAValue:
    shape, elem = _result(op)
    return e.map([op.data], shape, elem, lambda b: b.cast(b.args[0], elem))


def lower_reinterpret(e: Emitter, op: relay.ReinterpretOp) -> SSAValue:
    shape, elem = _result(op)
    return e.map([op.data], shape, elem, lambda b: b.add(arith.BitcastOp(b.args[0], elem)))


LOWERINGS = {
    **{cls: lower_binary for cls in BINARY_KINDS},
    **{cls: lower_compare for cls in COMPARE_PREDICATES},
    **{cls: lower_unary for cls in relay.UNARY_ROWS},
    relay.DivideOp: lower_divide,
    relay.FloorDivideOp: lower_floor_divide,
    relay.FloorModOp: lower_floor_mod,
    relay.ModOp: lower_mod,
    relay.PowerOp: lower_power,
    relay.LeftShiftOp: lower_shift,
    relay.RightShiftOp: lower_shift,
    relay.WhereOp: lower_where,
    relay.LeakyReluOp: lower_leaky_relu,
    relay.PReluOp: lower_prelu,
    relay.ClipOp: lower_clip,
    relay.CastOp: lower_cast,
    relay.ReinterpretOp: lower_reinterpret,
}

# every elementwise lowering reads its shapes through _result and broadcast maps
DYNAMIC = frozenset(LOWERINGS.values())
