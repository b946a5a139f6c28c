"""numpy implementations of the ops in dialects/relay/tensor.py."""

from __future__ import annotations

import numpy as np
from xrelay.dialects import relay
from xrelay.dialects.dtypes import numpy_from_dense
from xrelay.dialects.relay.tensor import check_index_values, slice_specs
from xrelay.reference.registry import impl


@impl(relay.ConstantOp)
def constant(op: relay.ConstantOp) -> np.ndarray:
    return numpy_from_dense(op.value)


@impl(relay.ReshapeOp)
def reshape(op: relay.ReshapeOp, x: np.ndarray) -> np.ndarray:
    return x.reshape(op.results[0].type.get_shape())


@impl(relay.TransposeOp)
def transpose(op: relay.TransposeOp, x: np.ndarray) -> np.ndarray:
    return np.transpose(x, op.attrs.axes)


@impl(relay.ConcatenateOp)
def concatenate(op: relay.ConcatenateOp, *xs: np.ndarray) -> np.ndarray:
    return np.concatenate(xs, axis=op.attrs.axis)


@impl(relay.SplitOp)
def split(op: relay.SplitOp, x: np.ndarray) -> list[np.ndarray]:
    return np.split(x, list(op.attrs.indices), axis=op.attrs.axis)


@impl(relay.SqueezeOp, relay.ExpandDimsOp, relay.BatchFlattenOp)
def reshape_like(op, x: np.ndarray) -> np.ndarray:
    return x.reshape(op.results[0].type.get_shape())


@impl(relay.BroadcastToOp)
def broadcast_to(op: relay.BroadcastToOp, x: np.ndarray) -> np.ndarray:
    return np.broadcast_to(x, op.attrs.shape)


@impl(relay.StridedSliceOp)
def strided_slice(op: relay.StridedSliceOp, x: np.ndarray) -> np.ndarray:
    index = [slice(None)] * x.ndim
    for axis, begin, end, stride in slice_specs(op.name, list(x.shape), op.attrs):
        index[axis] = slice(begin, end, stride)
    return x[tuple(index)]


@impl(relay.TakeOp)
def take(op: relay.TakeOp, x: np.ndarray, indices: np.ndarray) -> np.ndarray:
    axis = op.attrs.axis % x.ndim
    n = x.shape[axis]
    idx = indices.astype(np.int64)
    if op.attrs.mode == "wrap":
        idx = np.mod(idx, n)
    else:
        idx = np.clip(np.where(idx < 0, idx + n, idx), 0, n - 1)
    return np.take(x, idx, axis=axis)


@impl(relay.CheckIndicesOp)
def check_indices(op: relay.CheckIndicesOp, indices: np.ndarray, x: np.ndarray) -> np.ndarray:
    check_index_values(op.attrs.what, indices, x.shape, op.attrs.axis % x.ndim, op.attrs.depth)
    return indices


@impl(relay.GatherOp)
def gather(op: relay.GatherOp, x: np.ndarray, indices: np.ndarray) -> np.ndarray:
    axis = op.attrs.axis % x.ndim
    idx = indices.astype(np.int64)
    idx = np.where(idx < 0, idx + x.shape[axis], idx)
    return np.take_along_axis(x, idx, axis=axis)


@impl(relay.GatherNDOp)
def gather_nd(op: relay.GatherNDOp, x: np.ndarray, indices: np.ndarray) -> np.ndarray:
    b = op.attrs.batch_dims
    idx = indices.astype(np.int64)
    depth = idx.shape[-1]
    idx = np.where(idx < 0, idx + np.array(x.shape[b : b + depth]), idx)
    batch = int(np.prod(x.shape[:b]))
    xs = x.reshape((batch,) + x.shape[b:])
    ids = idx.reshape((batch, -1, depth))
    out = [xs[n][tuple(ids[n].T)] for n in range(batch)]
    return np.stack(out).reshape(op.results[0].type.get_shape())


@impl(relay.TileOp)
def tile(op: relay.TileOp, x: np.ndarray) -> np.ndarray:
    return np.tile(x, op.attrs.reps)


@impl(relay.ArangeOp)
def arange(op: relay.ArangeOp) -> np.ndarray:
    return np.arange(op.results[0].type.get_shape()[0])


@impl(relay.ShapeOfOp)
def shape_of(op: relay.ShapeOfOp, x: np.ndarray) -> np.ndarray:
    return np.array(x.shape, dtype=np.int64)
