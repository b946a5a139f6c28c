"""The table of numpy implementations, keyed by op class."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.ir import Operation

Impl = Callable[..., Any]

IMPLS: dict[type[Operation], Impl] = {}


def impl(*op_classes: type[Operation]) -> Callable[[Impl], Impl]:
    """Register `fn(op, *operand_arrays) -> array | sequence of arrays` for the op classes."""

    def register(fn: Impl) -> Impl:
        for cls in op_classes:
            IMPLS[cls] = fn
        return fn

    return register


def along(vec: np.ndarray, axis: int, rank: int) -> np.ndarray:
    """Reshape a vector so it broadcasts along `axis` of a rank-`rank` tensor."""
    shape = [1] * rank
    shape[axis] = -1
    return vec.reshape(shape)
