"""PyTorch shape and data-movement ops -> relay: views and reshapes, permutes, squeezes,
expand/repeat, concatenation and stacking, slicing and selection, splits, and gathers."""

from __future__ import annotations

import functools
import math

import numpy as np
import torch
from xdsl.dialects.builtin import DYNAMIC_INDEX
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dtypes import numpy_dtype
from xrelay.frontends.common import checked_indices
from xrelay.frontends.common import stack as stack_values
from xrelay.frontends.pytorch.call import Call, np_dtype, torch_dtype
from xrelay.frontends.pytorch.registry import aten_op


def _axis(c: Call, dim: int, rank: int) -> int:
    if not -max(rank, 1) <= dim < max(rank, 1):
        raise c.error(f"dimension {dim} is out of range for a rank-{rank} tensor")
    return dim % max(rank, 1)


def reshape(c: Call, x: SSAValue, shape: list[int] | tuple[int, ...]) -> SSAValue:
    if tuple(x.type.get_shape()) == tuple(shape):
        return x
    return c.emit(relay.ReshapeOp(x, newshape=list(shape)))


def _resolve_shape(c: Call, shape: list[int], numel: int) -> list[int]:
    """A view shape with its -1 resolved."""
    if shape.count(-1) > 1:
        raise c.error(f"shape {shape} has more than one -1")
    known = math.prod(d for d in shape if d != -1)
    if -1 in shape:
        if known == 0 or numel % known:
            raise c.error(f"shape {shape} does not fit {numel} elements")
        shape = [numel // known if d == -1 else d for d in shape]
    if math.prod(shape) != numel:
        raise c.error(f"shape {shape} does not fit {numel} elements")
    return shape


@aten_op("view", "reshape", "_unsafe_view", "_reshape_alias")
def view(c: Call) -> SSAValue:
    shape = _resolve_shape(c, c.ints(1), math.prod(c.shape(0)))
    return reshape(c, c.tensor(0), shape)


@aten_op("view_as", "reshape_as")
def view_as(c: Call) -> SSAValue:
    return reshape(c, c.tensor(0), c.shape(1))


@aten_op("flatten")
def flatten(c: Call) -> SSAValue:
    shape = list(c.shape(0))
    if not shape:
        return reshape(c, c.tensor(0), [1])
    start = _axis(c, c.int("start_dim", 0), len(shape))
    end = _axis(c, c.int("end_dim", -1), len(shape))
    new = shape[:start] + [math.prod(shape[start : end + 1])] + shape[end + 1 :]
    return reshape(c, c.tensor(0), new)


@aten_op("unflatten")
def unflatten(c: Call) -> SSAValue:
    shape = list(c.shape(0))
    axis = _axis(c, c.int("dim"), len(shape))
    sizes = _resolve_shape(c, c.ints("sizes"), shape[axis])
    return reshape(c, c.tensor(0), shape[:axis] + sizes + shape[axis + 1 :])


@aten_op("permute")
def permute(c: Call) -> SSAValue:
    rank = c.rank(0)
    axes = [_axis(c, d, rank) for d in c.ints("dims")]
    if axes == list(range(rank)):
        return c.tensor(0)
    return c.emit(relay.TransposeOp(c.tensor(0), axes=axes))


@aten_op("numpy_T")
def reverse_axes(c: Call) -> SSAValue:
    rank = c.rank(0)
    if rank < 2:
        return c.tensor(0)
    return c.emit(relay.TransposeOp(c.tensor(0), axes=list(reversed(range(rank)))))


@aten_op("transpose", "swapaxes")
def transpose(c: Call) -> SSAValue:
    rank = c.rank(0)
    a, b = _axis(c, c.int(1), rank), _axis(c, c.int(2), rank)
    if a == b or rank < 2:
        return c.tensor(0)
    axes = list(range(rank))
    axes[a], axes[b] = b, a
    return c.emit(relay.TransposeOp(c.tensor(0), axes=axes))


@aten_op("unsqueeze")
def unsqueeze(c: Call) -> SSAValue:
    shape = list(c.shape(0))
    axis = _axis(c, c.int("dim"), len(shape) + 1)
    return reshape(c, c.tensor(0), shape[:axis] + [1] + shape[axis:])


@aten_op("squeeze")
def squeeze(c: Call) -> SSAValue:
    shape = list(c.shape(0))
    if "dim" in c.names:
        dims = {_axis(c, d, len(shape)) for d in c.ints("dim")}
    else:
        dims = set(range(len(shape)))
    return reshape(c, c.tensor(0), [d for i, d in enumerate(shape) if not (i in dims and d == 1)])


@aten_op("expand", "broadcast_to")
def expand(c: Call) -> SSAValue:
    shape = list(c.shape(0))
    sizes = c.ints("size")
    if len(sizes) < len(shape):
        raise c.error(f"expand to {sizes} has fewer dimensions than {shape}")
    padded = [1] * (len(sizes) - len(shape)) + shape
    target = [p if s == -1 else s for s, p in zip(sizes, padded)]
    if target == shape:
        return c.tensor(0)
    return c.emit(relay.BroadcastToOp(c.tensor(0), shape=target))


@aten_op("expand_as")
def expand_as(c: Call) -> SSAValue:
    if c.shape(0) == c.shape(1):
        return c.tensor(0)
    return c.emit(relay.BroadcastToOp(c.tensor(0), shape=c.shape(1)))


@aten_op("repeat")
def repeat(c: Call) -> SSAValue:
    reps = c.ints("repeats")
    shape = list(c.shape(0))
    if len(reps) < len(shape):
        raise c.error(f"repeat {reps} has fewer dimensions than {shape}")
    x = reshape(c, c.tensor(0), [1] * (len(reps) - len(shape)) + shape)
    if all(r == 1 for r in reps):
        return x
    return c.emit(relay.TileOp(x, reps=reps))


def _common_dtype(values: list[SSAValue]) -> np.dtype:
    dtypes = [torch_dtype(numpy_dtype(v.type.element_type)) for v in values]
    return np_dtype(functools.reduce(torch.promote_types, dtypes))


@aten_op("cat", "concat", "concatenate")
def cat(c: Call) -> SSAValue:
    values = [v for v in c.raw("tensors") if not _is_empty_1d(c, v)]
    if not values:
        raise c.unsupported("concatenation of empty tensors only")
    proxies = [c.as_tensor(v) for v in values]
    dtype = _common_dtype(proxies)
    parts = [c.cast(v, dtype) for v in proxies]
    if len(parts) == 1:
        return parts[0]
    axis = _axis(c, c.int("dim", 0), len(parts[0].type.get_shape()))
    return c.emit(relay.ConcatenateOp(*parts, axis=axis))


def _is_empty_1d(c: Call, value: object) -> bool:
    """torch.cat skips 1-d empty tensors whatever the other shapes are."""
    shape = value.type.get_shape() if isinstance(value, SSAValue) else tuple(value.shape)
    return shape == (0,)


@aten_op("stack")
def stack(c: Call) -> SSAValue:
    proxies = c.tensors("tensors")
    dtype = _common_dtype(proxies)
    shape = list(proxies[0].type.get_shape())
    axis = _axis(c, c.int("dim", 0), len(shape) + 1)
    return stack_values(c, [c.cast(v, dtype) for v in proxies], axis)


def _slice(c: Call, x: SSAValue, axis: int, start: int, end: int, step: int) -> SSAValue:
    size = x.type.get_shape()[axis]
    if (start, step) in ((0, 1), (-size, 1)) and end >= size:
        return x
    return c.emit(relay.StridedSliceOp(x, begin=[start], end=[end], strides=[step], axes=[axis]))


@aten_op("slice")
def slice_(c: Call) -> SSAValue:
    rank = c.rank(0)
    axis = _axis(c, c.int("dim", 0), rank)
    size = c.shape(0)[axis]
    start = c.value("start", None)
    end = c.value("end", None)
    step = c.int("step", 1)
    if step < 1:
        raise c.error(f"slice step must be positive, got {step}")
    start = 0 if start is None else max(min(int(start), size), -size - 1)
    end = size if end is None else max(min(int(end), size), -size - 1)
    return _slice(c, c.tensor(0), axis, start, end, step)


@aten_op("narrow")
def narrow(c: Call) -> SSAValue:
    axis = _axis(c, c.int("dim"), c.rank(0))
    start = c.int("start") % c.shape(0)[axis] if c.int("start") < 0 else c.int("start")
    return _slice(c, c.tensor(0), axis, start, start + c.int("length"), 1)


@aten_op("select")
def select(c: Call) -> SSAValue:
    shape = list(c.shape(0))
    axis = _axis(c, c.int("dim"), len(shape))
    if isinstance(c.raw("index"), SSAValue) or shape[axis] == DYNAMIC_INDEX:
        return _select_at_run_time(c, axis)
    index = c.int("index")
    if not -shape[axis] <= index < shape[axis]:
        raise c.error(f"index {index} is out of range for dimension {axis} of size {shape[axis]}")
    index %= shape[axis]
    part = _slice(c, c.tensor(0), axis, index, index + 1, 1)
    return reshape(c, part, shape[:axis] + shape[axis + 1 :])


def _select_at_run_time(c: Call, axis: int) -> SSAValue:
    """select of an index computed at run time (a loop's iteration), or along an axis whose
    size is: `relay.take` of a 0-d index, checked at run time as torch checks it (it reads
    only the rank, so tensors of run-time shape may reach it)."""
    index = c.tensor("index", np.int64)
    if index.type.get_shape() != ():
        raise c.error(f"the index must be a number, got {index.type}")
    index = checked_indices(c, index, c.tensor(0), axis, c.label)
    return c.emit(relay.TakeOp(c.tensor(0), index, axis=axis))


def _split_at(c: Call, sizes: list[int], axis: int) -> list[SSAValue]:
    if sum(sizes) != c.shape(0)[axis]:
        raise c.error(f"split sizes {sizes} do not add up to {c.shape(0)[axis]}")
    if len(sizes) == 1:
        return [c.tensor(0)]
    bounds = list(np.cumsum(sizes)[:-1])
    op = c.emit(relay.SplitOp(c.tensor(0), indices=[int(b) for b in bounds], axis=axis))
    return list(op.results)


@aten_op("split", "split_with_sizes", "chunk", "unsafe_split")
def split(c: Call) -> list[SSAValue]:
    axis = _axis(c, c.int("dim", 0), c.rank(0))
    size = c.shape(0)[axis]
    name = c.name
    if name == "chunk":
        step = -(-size // c.int("chunks"))
        sizes = [min(step, size - i) for i in range(0, size, step)]
    else:
        arg = c.value(1)
        if isinstance(arg, int):
            sizes = [min(arg, size - i) for i in range(0, size, arg)]
        else:
            sizes = [int(s) for s in arg]
    return _split_at(c, sizes, axis)


@aten_op("unbind")
def unbind(c: Call) -> list[SSAValue]:
    shape = list(c.shape(0))
    axis = _axis(c, c.int("dim", 0), len(shape))
    rest = shape[:axis] + shape[axis + 1 :]
    return [reshape(c, part, rest) for part in _split_at(c, [1] * shape[axis], axis)]


@aten_op("index_select")
def index_select(c: Call) -> SSAValue:
    axis = _axis(c, c.int("dim"), c.rank(0))
    return c.emit(relay.TakeOp(c.tensor(0), c.tensor("index"), axis=axis, mode="clip"))


@aten_op("gather")
def gather(c: Call) -> SSAValue:
    axis = _axis(c, c.int("dim"), c.rank(0))
    return c.emit(relay.GatherOp(c.tensor(0), c.tensor("index"), axis=axis))


@aten_op("tril", "triu")
def triangle(c: Call) -> SSAValue:
    rows, cols = c.shape(0)[-2:]
    i, j = np.indices((rows, cols))
    k = c.int("diagonal", 0)
    keep = (j - i <= k) if c.kind.endswith("tril") else (j - i >= k)
    zero = c.constant(0, c.dtype(0))
    return c.emit(relay.WhereOp(c.constant(keep), c.tensor(0), zero))
