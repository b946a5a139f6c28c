"""Element types: numpy dtypes <-> xDSL element types, and dense constants <-> numpy arrays.

Integer element types are signless (i8, i16, i32, i64: two's complement, like numpy's signed
ints) or unsigned (ui8, ui16, ui32, ui64); i1 is bool. Floats are f16, bf16, f32 and f64.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    IntegerType,
    Signedness,
    TensorType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute
from xrelay.errors import Error

_PAIRS: list[tuple[np.dtype, Attribute]] = [
    (np.dtype(np.float32), f32),
    (np.dtype(np.float64), f64),
    (np.dtype(np.float16), f16),
    (np.dtype(np.bool_), i1),
    (np.dtype(np.int8), i8),
    (np.dtype(np.int16), i16),
    (np.dtype(np.int32), i32),
    (np.dtype(np.int64), i64),
    (np.dtype(np.uint8), IntegerType(8, Signedness.UNSIGNED)),
    (np.dtype(np.uint16), IntegerType(16, Signedness.UNSIGNED)),
    (np.dtype(np.uint32), IntegerType(32, Signedness.UNSIGNED)),
    (np.dtype(np.uint64), IntegerType(64, Signedness.UNSIGNED)),
]
_TO_ELEM = {d: e for d, e in _PAIRS}
_TO_NUMPY = {e: d for d, e in _PAIRS}


def element_type(dtype: np.dtype | str | type) -> Attribute:
    """The xDSL element type of a numpy dtype (or its name, e.g. "float32")."""
    try:
        return _TO_ELEM[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise Error(f"unsupported dtype {dtype}") from None


def numpy_dtype(elem: Attribute) -> np.dtype:
    """The numpy dtype of an xDSL element type."""
    if elem == bf16:
        raise Error("bf16 has no numpy dtype")
    try:
        return _TO_NUMPY[elem]
    except KeyError:
        raise Error(f"unsupported element type {elem}") from None


def tensor_type(shape: tuple[Any, ...] | list[Any], dtype: np.dtype | str | type) -> TensorType:
    """A tensor type of these dimensions (ints, or symbolic: dialects/dims.py)."""
    if all(isinstance(d, int | np.integer) for d in shape):
        return TensorType(element_type(dtype), [int(d) for d in shape])
    from xrelay.dialects.dims import make_tensor

    return make_tensor(element_type(dtype), shape)


def dense_from_numpy(array: np.ndarray) -> DenseIntOrFPElementsAttr:
    """A dense elements attribute holding `array` (copied, little-endian)."""
    array = np.asarray(array)
    elem = element_type(array.dtype)
    data = array.astype(array.dtype.newbyteorder("<"), copy=False)
    if elem == i1:
        data = np.where(array, -1, 0).astype(np.int8)  # xDSL stores true as all ones
    return DenseIntOrFPElementsAttr(
        TensorType(elem, list(array.shape)), BytesAttr(np.ascontiguousarray(data).tobytes())
    )


def numpy_from_dense(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The values of a dense elements attribute as a numpy array of its shape; a splat
    (one stored value) is broadcast to the full shape."""
    shape = attr.get_shape()
    elem = attr.get_element_type()
    dtype = np.dtype(np.int8) if elem == i1 else numpy_dtype(elem)
    flat = np.frombuffer(attr.data.data, dtype=dtype.newbyteorder("<"))
    if elem == i1:
        flat = flat != 0
    flat = flat.astype(flat.dtype.newbyteorder("="))
    size = int(np.prod(shape))
    if flat.size == 1 and size != 1:
        return np.full(shape, flat[0], dtype=flat.dtype)
    return flat.reshape(shape).copy()


# --- narrow types -----------------------------------------------------------------------
# bfloat16, the float8/float4 formats and the 2/4-bit integers (numpy dtypes from
# ml_dtypes) have no element type of their own: tensors of them are carried in a storage
# integer type. Floats keep their bits (bfloat16 in ui16, float8/float4 in ui8, low bits);
# the small integers keep their value (int4/int2 in i8, uint4/uint2 in ui8). Casts to and
# from them are relay arithmetic on the storage (frontends/onnx/narrow.py).
_NARROW_STORAGE = {
    "bfloat16": np.uint16,
    "float8_e4m3fn": np.uint8,
    "float8_e4m3fnuz": np.uint8,
    "float8_e5m2": np.uint8,
    "float8_e5m2fnuz": np.uint8,
    "float8_e8m0fnu": np.uint8,
    "float4_e2m1fn": np.uint8,
    "int4": np.int8,
    "int2": np.int8,
    "uint4": np.uint8,
    "uint2": np.uint8,
}


def narrow_dtype(dtype: object) -> np.dtype | None:
    """`dtype` as a numpy dtype if it is one of the narrow types, else None."""
    try:
        d = np.dtype(dtype)  # type: ignore[call-overload]
    except TypeError:
        return None
    if d.name in _NARROW_STORAGE and d.type.__module__.startswith("ml_dtypes"):
        return d
    return None


def storage_dtype(dtype: np.dtype) -> np.dtype:
    """The numpy dtype a tensor of `dtype` is carried in (itself if it is not narrow)."""
    return np.dtype(_NARROW_STORAGE[dtype.name]) if narrow_dtype(dtype) is not None else dtype


def keeps_bits(dtype: np.dtype) -> bool:
    """Whether a narrow type's storage holds its bits (the floats) or its value (ints)."""
    return dtype.name not in ("int4", "int2", "uint4", "uint2")


def to_storage(array: np.ndarray) -> np.ndarray:
    """A narrow-typed array as its storage array (others unchanged)."""
    d = narrow_dtype(array.dtype)
    if d is None:
        return array
    store = storage_dtype(d)
    if keeps_bits(d):
        return np.asarray(array, order="C").view(store)
    return array.astype(store)


def from_storage(array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The inverse of `to_storage`: storage values as an array of the narrow `dtype`."""
    if narrow_dtype(dtype) is None:
        return array
    if keeps_bits(dtype):
        return array.view(dtype)
    return array.astype(dtype)
