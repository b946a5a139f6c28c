"""Narrow ONNX types as relay arithmetic on their storage (see `dialects/dtypes.py`).

bfloat16, float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz) and float4 (e2m1fn) tensors are carried
as their bits in ui16/ui8; int4/uint4/int2/uint2 tensors as their values in i8/ui8.

- decode (bits -> f32): bfloat16 is its upper half of an f32; the 8- and 4-bit floats index
  a table of their values (`format_values`, computed from the format's definition).
- encode (f32 or f64 -> bits): the round-to-nearest-even of the source's mantissa on its
  integer bits, with the carry running into the exponent; values below the format's
  smallest normal are scaled by a power of two and rounded with `relay.round` (half to
  even); then overflow (saturate to the largest finite value, or inf/NaN as the format
  has), the sign, and NaN.
- small integers: a cast wraps to the type's width, as numpy and ml_dtypes do.

The importer calls these for Cast/CastLike and QuantizeLinear/DequantizeLinear; any other
op on a bfloat16 value computes in f32 with its float results rounded back to bfloat16
(as ONNX's reference computes bfloat16 ops one at a time); other ops on the 8- and 4-bit
types are refused.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dtypes import (
    element_type,
    keeps_bits,
    narrow_dtype,
    numpy_dtype,
    storage_dtype,
)
from xrelay.frontends.onnx.binder import Node


@dataclass(frozen=True)
class FloatFormat:
    exp_bits: int
    man_bits: int
    bias: int
    # "ieee": the top exponent holds inf and NaN; "fn": no inf, NaN is all ones;
    # "fnuz": no inf, no -0, NaN is the sign bit alone; "plain": no inf, no NaN
    kind: str

    @property
    def width(self) -> int:
        return 1 + self.exp_bits + self.man_bits

    @property
    def max_code(self) -> int:
        """The largest finite magnitude's code."""
        top = (1 << (self.exp_bits + self.man_bits)) - 1
        if self.kind == "ieee":
            return top - (1 << self.man_bits)
        return top - 1 if self.kind == "fn" else top

    @property
    def inf_code(self) -> int:
        return ((1 << self.exp_bits) - 1) << self.man_bits

    @property
    def nan_code(self) -> int:
        if self.kind == "ieee":
            return self.inf_code | (1 << (self.man_bits - 1))
        if self.kind == "fn":
            return self.max_code + 1
        return 1 << (self.exp_bits + self.man_bits) if self.kind == "fnuz" else 0


FORMATS = {
    "bfloat16": FloatFormat(8, 7, 127, "ieee"),
    "float8_e4m3fn": FloatFormat(4, 3, 7, "fn"),
    "float8_e4m3fnuz": FloatFormat(4, 3, 8, "fnuz"),
    "float8_e5m2": FloatFormat(5, 2, 15, "ieee"),
    "float8_e5m2fnuz": FloatFormat(5, 2, 16, "fnuz"),
    "float4_e2m1fn": FloatFormat(2, 1, 1, "plain"),
}
INT_BITS = {"int4": 4, "uint4": 4, "int2": 2, "uint2": 2}


def format_values(fmt: FloatFormat) -> np.ndarray:
    """The f32 value of every code of a format, indexed by code."""
    codes = np.arange(1 << fmt.width)
    sign = (codes >> (fmt.exp_bits + fmt.man_bits)) & 1
    exp = (codes >> fmt.man_bits) & ((1 << fmt.exp_bits) - 1)
    man = codes & ((1 << fmt.man_bits) - 1)
    scale = 2.0 ** np.where(exp == 0, 1 - fmt.bias, exp - fmt.bias)
    magnitude = np.where(exp == 0, man / (1 << fmt.man_bits), 1 + man / (1 << fmt.man_bits)) * scale
    values = np.where(sign == 1, -magnitude, magnitude)
    top = (1 << fmt.exp_bits) - 1
    if fmt.kind == "ieee":
        values = np.where(
            exp == top, np.where(man == 0, np.copysign(np.inf, values), np.nan), values
        )
    elif fmt.kind == "fn":
        values = np.where((exp == top) & (man == (1 << fmt.man_bits) - 1), np.nan, values)
    elif fmt.kind == "fnuz":
        values = np.where(codes == fmt.nan_code, np.nan, values)
    return values.astype(np.float32)


def dtype_of(x: SSAValue) -> np.dtype:
    return numpy_dtype(x.type.element_type)  # type: ignore[attr-defined]


def _cast(b: Node, x: SSAValue, dtype: np.dtype | type) -> SSAValue:
    if dtype_of(x) == np.dtype(dtype):
        return x
    return b.emit(relay.CastOp(x, dtype=element_type(dtype)))


def decode(b: Node, x: SSAValue, dtype: np.dtype) -> SSAValue:
    """The f32 values of a narrow float tensor (its storage `x`)."""
    fmt = FORMATS.get(dtype.name)
    if fmt is None:
        raise b.unsupported(f"type {dtype.name}")
    if dtype.name == "bfloat16":
        wide = b.emit(relay.CastOp(x, dtype=element_type(np.uint32)))
        high = b.emit(relay.LeftShiftOp(wide, b.constant(16, np.uint32)))
        return b.emit(relay.ReinterpretOp(high, dtype=element_type(np.float32)))
    index = b.emit(relay.CastOp(x, dtype=element_type(np.int32)))
    table = b.constant(format_values(fmt))
    return b.emit(relay.TakeOp(table, index, axis=0, mode="clip"))


def encode(b: Node, x: SSAValue, dtype: np.dtype, saturate: bool) -> SSAValue:
    """The storage of `x` (f16/f32/f64; integers go through f64) rounded to a narrow float
    type: to nearest, ties to even."""
    fmt = FORMATS.get(dtype.name)
    if fmt is None:
        raise b.unsupported(f"cast to {dtype.name}")
    src = dtype_of(x)
    ft = (
        np.dtype(np.float64)
        if src in (np.float64, np.int64, np.uint64, np.int32, np.uint32)
        else np.dtype(np.float32)
    )
    x = _cast(b, x, ft)
    it = np.dtype(np.int64) if ft == np.float64 else np.dtype(np.int32)
    width, src_man = (64, 52) if ft == np.float64 else (32, 23)
    src_bias = (1 << (width - src_man - 2)) - 1
    m = fmt.man_bits

    def c(value: float, dtype: np.dtype = it) -> SSAValue:
        return b.constant(value, dtype)

    def op(cls: type, *args: SSAValue) -> SSAValue:
        return b.emit(cls(*args))

    bits = b.emit(relay.ReinterpretOp(x, dtype=element_type(it)))
    magnitude = op(relay.BitwiseAndOp, bits, c((1 << (width - 1)) - 1))
    negative = op(relay.LessOp, bits, c(0))
    absx = b.emit(relay.ReinterpretOp(magnitude, dtype=element_type(ft)))
    # normal results: round the source mantissa to `m` bits on the integer bits
    shift = src_man - m
    odd = op(relay.BitwiseAndOp, op(relay.RightShiftOp, magnitude, c(shift)), c(1))
    rounded = op(relay.AddOp, op(relay.AddOp, magnitude, c((1 << (shift - 1)) - 1)), odd)
    normal = op(
        relay.SubtractOp, op(relay.RightShiftOp, rounded, c(shift)), c((src_bias - fmt.bias) << m)
    )
    # subnormal results: multiples of 2^(1 - bias - m), rounded half to even
    smallest_normal = 2.0 ** (1 - fmt.bias)
    scaled = op(relay.MinimumOp, absx, c(smallest_normal, ft))
    factor = fmt.bias - 1 + m
    for part in (factor // 2, factor - factor // 2):  # 2^factor itself may not be an f32
        scaled = op(relay.MultiplyOp, scaled, c(2.0**part, ft))
    subnormal = _cast(b, op(relay.RoundOp, scaled), it)
    is_normal = op(relay.GreaterEqualOp, magnitude, c((src_bias + 1 - fmt.bias) << src_man))
    code = b.emit(relay.WhereOp(is_normal, normal, subnormal))
    # overflow (inf included: its bits round past every finite code)
    over = op(relay.GreaterOp, code, c(fmt.max_code))
    if saturate or fmt.kind == "plain":
        big = fmt.max_code
    elif fmt.kind == "ieee":
        big = fmt.inf_code
    else:
        big = fmt.nan_code
    code = b.emit(relay.WhereOp(over, c(big), code))
    sign = c(1 << (fmt.exp_bits + m))
    has_sign = negative
    if fmt.kind == "fnuz":  # no negative zero; its NaN has the sign bit alone
        has_sign = op(relay.LogicalAndOp, negative, op(relay.NotEqualOp, code, c(0)))
        has_sign = op(relay.LogicalAndOp, has_sign, op(relay.NotEqualOp, code, c(fmt.nan_code)))
    code = b.emit(relay.WhereOp(has_sign, op(relay.BitwiseOrOp, code, sign), code))
    code = b.emit(relay.WhereOp(op(relay.IsNanOp, x), c(fmt.nan_code), code))
    return _cast(b, code, storage_dtype(dtype))


def wrap_int(b: Node, x: SSAValue, dtype: np.dtype) -> SSAValue:
    """Values of any numeric tensor cast to a 2- or 4-bit integer type (wrapping, as a C
    cast to the type's width), in the type's storage."""
    bits = INT_BITS[dtype.name]
    value = _cast(b, x, np.int64)
    if dtype.name.startswith("u"):
        value = b.emit(relay.BitwiseAndOp(value, b.constant((1 << bits) - 1, np.int64)))
    else:
        up = b.emit(relay.LeftShiftOp(value, b.constant(64 - bits, np.int64)))
        value = b.emit(relay.RightShiftOp(up, b.constant(64 - bits, np.int64)))
    return _cast(b, value, storage_dtype(dtype))


def cast(b: Node, x: SSAValue, src: np.dtype, to: np.dtype, saturate: bool = True) -> SSAValue:
    """ONNX Cast of `x` (a tensor of ONNX type `src`, in its storage) to `to`."""
    narrow_src, narrow_to = narrow_dtype(src), narrow_dtype(to)
    if src == to:
        return x
    if narrow_src is not None and keeps_bits(narrow_src):
        x = decode(b, x, narrow_src)
    if narrow_to is None:
        return _cast(b, x, to)
    if not keeps_bits(narrow_to):
        return wrap_int(b, x, narrow_to)
    # ONNX's `saturate` is for the float8 types; bfloat16 overflows to inf
    return encode(b, x, narrow_to, saturate and narrow_to.name.startswith("float8"))
