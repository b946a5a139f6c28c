"""The largest tensor xrelay makes: `max_tensor_bytes()` (XRELAY_MAX_TENSOR_BYTES, default
half of this machine's memory). Builds (lowering/limits.py) and every evaluation by the
reference executor, import-time folding included, refuse a result over it with an
`xrelay.Error` instead of an abort or a failed allocation."""

from __future__ import annotations

import os

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xrelay.dialects.dtypes import numpy_dtype
from xrelay.errors import Error


def max_tensor_bytes() -> int:
    value = os.environ.get("XRELAY_MAX_TENSOR_BYTES", "").strip()
    if value:
        try:
            return int(float(value))
        except ValueError:
            raise Error(f"XRELAY_MAX_TENSOR_BYTES must be a number, not '{value}'") from None
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError):
        return 1 << 34


def tensor_bytes(t: TensorType) -> int:
    try:
        itemsize = numpy_dtype(t.element_type).itemsize
    except Error:
        itemsize = 8
    return int(np.prod([int(d) for d in t.get_shape()], dtype=object)) * itemsize


def bytes_over_limit(size: int) -> str | None:
    """Why `size` bytes are over the limit ("X GiB, over the limit of Y GiB ..."), or None."""
    limit = max_tensor_bytes()
    if size <= limit:
        return None
    return (
        f"{size / 2**30:.1f} GiB, over the limit of {limit / 2**30:.1f} GiB "
        "(XRELAY_MAX_TENSOR_BYTES)"
    )


def over_limit(t: TensorType) -> str | None:
    """Why a static tensor type is over the limit (None if it is not, or is dynamic)."""
    if DYNAMIC_INDEX in t.get_shape():
        return None
    return bytes_over_limit(tensor_bytes(t))
