"""numpy implementations of the ops in dialects/relay/elementwise.py."""

from __future__ import annotations

import math

import numpy as np
from xrelay.dialects import relay
from xrelay.dialects.dtypes import numpy_dtype
from xrelay.reference.registry import along, impl


def _trunc_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.floating):
        return a / b
    safe = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(safe)
    return np.where(b == 0, 0, np.sign(a) * np.sign(safe) * q).astype(a.dtype)


def _power(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):
        return np.power(a.astype(np.float64), b).astype(a.dtype)
    return np.power(a, b)


def _int_safe(fn):
    """Integer floor division/mod by zero is undefined: give 0 instead of a numpy error."""

    def run(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if np.issubdtype(a.dtype, np.integer):
            safe = np.where(b == 0, 1, b)
            return np.where(b == 0, 0, fn(a, safe)).astype(a.dtype)
        return fn(a, b)

    return run


def _shift(left: bool):
    """Shifts by the bit width or more give 0 (-1 for a negative value shifted right)."""

    def run(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        bits = a.dtype.itemsize * 8
        big = (
            b.astype(np.uint64) >= bits
            if np.issubdtype(b.dtype, np.unsignedinteger)
            else (b >= bits) | (b < 0)
        )
        safe = np.where(big, 0, b).astype(a.dtype)
        shifted = np.left_shift(a, safe) if left else np.right_shift(a, safe)
        overflow = np.where(a < 0, -1, 0).astype(a.dtype) if not left else np.zeros_like(a)
        return np.where(big, overflow, shifted).astype(a.dtype)

    return run


BINARY = {
    relay.AddOp: np.add,
    relay.SubtractOp: np.subtract,
    relay.MultiplyOp: np.multiply,
    relay.DivideOp: _trunc_divide,
    relay.PowerOp: _power,
    relay.MaximumOp: np.maximum,
    relay.MinimumOp: np.minimum,
    relay.FloorDivideOp: _int_safe(np.floor_divide),
    relay.FloorModOp: _int_safe(np.mod),
    relay.ModOp: _int_safe(np.fmod),
    relay.BitwiseAndOp: np.bitwise_and,
    relay.BitwiseOrOp: np.bitwise_or,
    relay.BitwiseXorOp: np.bitwise_xor,
    relay.LeftShiftOp: _shift(left=True),
    relay.RightShiftOp: _shift(left=False),
    relay.EqualOp: np.equal,
    relay.NotEqualOp: np.not_equal,
    relay.LessOp: np.less,
    relay.LessEqualOp: np.less_equal,
    relay.GreaterOp: np.greater,
    relay.GreaterEqualOp: np.greater_equal,
    relay.LogicalAndOp: np.logical_and,
    relay.LogicalOrOp: np.logical_or,
    relay.LogicalXorOp: np.logical_xor,
}


@impl(*BINARY)
def binary(op, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return BINARY[type(op)](a, b)


@impl(*relay.UNARY_ROWS)
def unary(op, x: np.ndarray) -> np.ndarray:
    """The numpy function of the op's row in the unary table (dialects/relay/elementwise.py)."""
    return relay.UNARY_ROWS[type(op)].numpy(x)


@impl(relay.WhereOp)
def where(op, cond: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(cond, a, b)


@impl(relay.LeakyReluOp)
def leaky_relu(op: relay.LeakyReluOp, x: np.ndarray) -> np.ndarray:
    return np.where(x >= 0, x, x * x.dtype.type(op.attrs.alpha))


@impl(relay.PReluOp)
def prelu(op: relay.PReluOp, x: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    a = along(alpha, op.attrs.axis % x.ndim, x.ndim)
    return np.where(x >= 0, x, x * a)


@impl(relay.ClipOp)
def clip(op: relay.ClipOp, x: np.ndarray) -> np.ndarray:
    lo, hi = op.attrs.a_min, op.attrs.a_max
    if np.issubdtype(x.dtype, np.integer):
        info = np.iinfo(x.dtype)
        lo = int(max(lo, info.min)) if math.isfinite(lo) or lo > 0 else info.min
        hi = int(min(hi, info.max)) if math.isfinite(hi) or hi < 0 else info.max
    return np.minimum(np.maximum(x, x.dtype.type(lo)), x.dtype.type(hi))


@impl(relay.ReinterpretOp)
def reinterpret(op: relay.ReinterpretOp, x: np.ndarray) -> np.ndarray:
    return np.asarray(x, order="C").view(numpy_dtype(op.attrs.dtype))


@impl(relay.CastOp)
def cast(op: relay.CastOp, x: np.ndarray) -> np.ndarray:
    return x.astype(numpy_dtype(op.attrs.dtype))
