"""Shared machinery of the qnn dialect: quantization parameters as operands.

A quantized tensor `q` of element type int8/uint8/int16/uint16/int32 stands for the real
values `scale * (q - zero_point)`. Scales are f32 and zero points i32 tensors, either of
rank 0 (per tensor) or of rank 1 along the op's `axis` (per channel), with one entry per
element of that axis. Every qnn op is a `RelayOp` (same base, printing, inference and
canonicalization hook), so passes and the reference executor treat both dialects alike.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import IntegerType, Signedness, TensorType, f32, i8, i16, i32
from xdsl.ir import Attribute
from xrelay.dialects.dims import shape_of
from xrelay.dialects.relay.base import fmt_type, norm_axis
from xrelay.errors import Error, ShapeError

ui8 = IntegerType(8, Signedness.UNSIGNED)
ui16 = IntegerType(16, Signedness.UNSIGNED)
QUANTIZED_TYPES = (i8, ui8, i16, ui16, i32)


def expect_quantized(name: str, t: TensorType, what: str = "data") -> None:
    if t.element_type not in QUANTIZED_TYPES:
        raise ShapeError(
            f"'{name}' expects a quantized ({', '.join(map(str, QUANTIZED_TYPES))}) {what}, "
            f"got {fmt_type(t)}"
        )


def expect_dtype(name: str, dtype: Attribute) -> None:
    if dtype not in QUANTIZED_TYPES:
        raise ShapeError(
            f"'{name}' out_dtype must be one of {', '.join(map(str, QUANTIZED_TYPES))}, got {dtype}"
        )


def expect_params(
    name: str,
    scale: Attribute,
    zero_point: Attribute,
    channels: int | None,
    what: str = "",
) -> None:
    """A (scale, zero point) pair: f32 and i32, each of rank 0 or of rank 1 with `channels`
    entries (`channels` None: per-tensor only)."""
    label = f"{what} " if what else ""
    for t, elem, kind in ((scale, f32, "scale"), (zero_point, i32, "zero point")):
        if not isinstance(t, TensorType) or t.element_type != elem:
            raise ShapeError(f"'{name}' {label}{kind} must be a tensor of {elem}, got {t}")
        if t.get_num_dims() == 0:
            continue
        if t.get_num_dims() != 1 or channels is None:
            raise ShapeError(
                f"'{name}' {label}{kind} must be a scalar"
                + ("" if channels is None else " or a vector along the axis")
                + f", got {fmt_type(t)}"
            )
        if shape_of(t)[0] != channels:
            raise ShapeError(
                f"'{name}' {label}{kind} has {shape_of(t)[0]} entries but the axis has {channels}"
            )


def axis_size(name: str, data: TensorType, axis: int) -> int:
    if data.get_num_dims() == 0:
        return 1
    return shape_of(data)[norm_axis(name, axis, data.get_num_dims())]


def dtype_range(dtype: np.dtype | Attribute) -> tuple[int, int]:
    from xrelay.dialects.dtypes import numpy_dtype

    np_dtype = numpy_dtype(dtype) if isinstance(dtype, Attribute) else np.dtype(dtype)
    info = np.iinfo(np_dtype)
    return int(info.min), int(info.max)


def check_params(
    scale: np.ndarray, zero_point: np.ndarray, dtype: np.dtype | Attribute, where: str
) -> None:
    """Values of quantization parameters known at import or compile time: every scale
    finite and non-zero, every zero point inside the quantized type's range."""
    scale = np.asarray(scale, dtype=np.float64)
    bad = scale[~np.isfinite(scale) | (scale == 0)]
    if bad.size:
        raise Error(f"{where}: quantization scale {bad.flat[0]} is not a finite non-zero number")
    lo, hi = dtype_range(dtype)
    zp = np.asarray(zero_point)
    out = zp[(zp < lo) | (zp > hi)]
    if out.size:
        raise Error(
            f"{where}: zero point {int(out.flat[0])} is outside the range [{lo}, {hi}] of "
            f"{np.dtype(dtype) if not isinstance(dtype, Attribute) else dtype}"
        )


def broadcast_shape(rank: int, axis: int, param_rank: int) -> Sequence[int] | None:
    """The shape a per-channel parameter takes to broadcast along `axis` (None: scalar)."""
    if param_rank == 0 or rank == 0:
        return None
    shape = [1] * rank
    shape[axis % rank] = -1
    return shape


def tflite_multiplier(real: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TFLite's QuantizeMultiplier, elementwise: each non-negative `real` (f64) as a 31-bit
    mantissa `m` (int64, in [2^30, 2^31)) and a shift `s` with real ~= m * 2^(s - 31); zero
    (and values below 2^-31) give (0, 0). The semantics of `qnn.requantize {rounding =
    "tflite"}`, read by its lowering and the reference executor alike."""
    real = np.asarray(real, dtype=np.float64)
    fraction, shift = np.frexp(real)
    mantissa = np.floor(fraction * 2.0**31 + 0.5).astype(np.int64)  # std::round: half away
    carry = mantissa == 2**31
    mantissa = np.where(carry, mantissa // 2, mantissa)
    shift = np.where(carry, shift + 1, shift).astype(np.int64)
    tiny = (shift < -31) | (real == 0)
    return np.where(tiny, 0, mantissa), np.where(tiny, 0, shift)
