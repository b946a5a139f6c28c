"""numpy implementations of the ops in dialects/relay/reduce.py."""

from __future__ import annotations

import numpy as np
from xrelay.dialects import relay
from xrelay.reference.registry import impl

REDUCERS = {
    relay.SumOp: np.sum,
    relay.MeanOp: np.mean,
    relay.MaxOp: np.max,
    relay.MinOp: np.min,
    relay.ProdOp: np.prod,
}


@impl(*REDUCERS)
def reduce(op, x: np.ndarray) -> np.ndarray:
    axis = None if op.attrs.axis is None else tuple(a % max(x.ndim, 1) for a in op.attrs.axis)
    if axis == () or x.ndim == 0:
        return x.copy()
    extra = {}
    if x.size == 0 and isinstance(op, relay.MaxOp | relay.MinOp):  # nothing to compare
        extra["initial"] = _lowest(x.dtype) if isinstance(op, relay.MaxOp) else _highest(x.dtype)
    return REDUCERS[type(op)](x, axis=axis, keepdims=op.attrs.keepdims, **extra).astype(x.dtype)


def _lowest(dtype: np.dtype):
    return -np.inf if dtype.kind == "f" else False if dtype.kind == "b" else np.iinfo(dtype).min


def _highest(dtype: np.dtype):
    return np.inf if dtype.kind == "f" else True if dtype.kind == "b" else np.iinfo(dtype).max


@impl(relay.ArgmaxOp, relay.ArgminOp)
def arg_reduce(op, x: np.ndarray) -> np.ndarray:
    axis = op.attrs.axis % x.ndim
    find = np.argmax if isinstance(op, relay.ArgmaxOp) else np.argmin
    if op.attrs.select_last_index:
        flipped = np.flip(x, axis=axis)
        index = x.shape[axis] - 1 - find(flipped, axis=axis)
    else:
        index = find(x, axis=axis)
    if op.attrs.keepdims:
        index = np.expand_dims(index, axis)
    return index.astype(np.int64)
