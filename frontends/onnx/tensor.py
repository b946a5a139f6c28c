"""ONNX tensor ops -> relay: Constant, ConstantOfShape, Shape, Size, Reshape, Transpose,
Concat, Split, Squeeze, Unsqueeze, Gather, Slice, Tile, Expand."""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dims import Dim, dim_str, equal, normalize, prod, shape_of
from xrelay.dialects.dtypes import element_type
from xrelay.dialects.limits import bytes_over_limit
from xrelay.frontends.common import arange, checked_indices, dim_scalar
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.registry import onnx_op
from xrelay.frontends.onnx.symbolic import ceiling_div, is_symbolic, symbolic_array


@onnx_op("Constant")
def constant(b: Node) -> np.ndarray:
    for name, dtype in (
        ("value", None),
        ("value_float", np.float32),
        ("value_floats", np.float32),
        ("value_int", np.int64),
        ("value_ints", np.int64),
    ):
        if b.has_attr(name):
            return np.asarray(b.attr(name), dtype=dtype)
    raise b.unsupported("Constant without a value, value_float(s) or value_int(s) attribute")


@onnx_op("ConstantOfShape", since=9)
def constant_of_shape(b: Node) -> np.ndarray | SSAValue:
    shape = b.dims_const(0)
    value = b.attr("value", np.zeros(1, np.float32))
    if not all(isinstance(d, int) for d in shape):  # dynamic: a broadcast scalar in the IR
        return b.emit(relay.BroadcastToOp(b.constant(value.reshape(())), shape=shape))
    # a view of one element: cheap for huge shapes, and emitted as a broadcast scalar
    if any(d < 0 for d in shape):
        raise b.error(f"shape {list(shape)} has a negative dimension")
    why = bytes_over_limit(math.prod(shape) * value.dtype.itemsize)
    if why is not None:
        raise b.error(f"shape {list(shape)} makes {why}")
    return np.broadcast_to(value.reshape(()), shape)


@onnx_op("Shape")
def shape(b: Node) -> np.ndarray:
    dims = symbolic_array(b.shape(0))  # expressions for dynamic dimensions
    start, end = b.attr("start", 0), b.attr("end", None)
    return dims[start:end]


@onnx_op("Size")
def size(b: Node) -> np.ndarray:
    return symbolic_array(prod(b.shape(0)))


@onnx_op("Range", since=11)
def range_(b: Node) -> np.ndarray | SSAValue:
    """start, start + delta, ... below limit. A limit or start that is a dynamic dimension
    gives a range of dynamic length, made in the IR (frontends/common.py:arange)."""
    start, limit, delta = (np.asarray(b.const(i)) for i in range(3))
    if any(v.size != 1 for v in (start, limit, delta)):
        raise b.error("Range takes scalar start, limit and delta")
    start, limit, delta = (v.reshape(()) for v in (start, limit, delta))
    if any(is_symbolic(v) for v in (start, limit, delta)):
        return _dynamic_range(b, start.item(), limit.item(), delta.item())
    if delta == 0:
        raise b.error("Range with delta 0")
    return np.arange(start, limit, delta).astype(np.asarray(start).dtype)


def _dynamic_range(b: Node, start: Dim, limit: Dim, delta: Dim) -> SSAValue:
    start, limit, delta = normalize(start), normalize(limit), normalize(delta)
    if not isinstance(delta, int) or delta == 0:
        raise b.unsupported(f"Range with delta {dim_str(delta)} (it must be a nonzero constant)")
    dtype = next((b.dtype(i) for i in range(3) if not is_symbolic(b.const(i))), np.dtype(np.int64))
    count = b.at_least(ceiling_div(limit - start, delta), 0)
    return _index_range(b, start, delta, count, dtype)


def _index_range(b: Node, first: Dim, step: int, count: Dim, dtype: np.dtype) -> SSAValue:
    """first, first + step, ... (count values) as a 1-d tensor of `dtype`."""
    values = arange(b, count, dtype)
    if step != 1:
        values = b.emit(relay.MultiplyOp(values, b.constant(step, dtype)))
    if not (isinstance(first, int) and first == 0):
        values = b.emit(relay.AddOp(values, dim_scalar(b, first, dtype)))
    return values


@onnx_op("Reshape", since=5)
def reshape(b: Node) -> SSAValue:
    target = b.dims_const(1)
    src = b.shape(0)
    if not b.attr("allowzero", 0):
        target = [src[i] if d == 0 else d for i, d in enumerate(target)]
    return b.emit(relay.ReshapeOp(b.input(0), newshape=target))


@onnx_op("Transpose")
def transpose(b: Node) -> SSAValue:
    perm = b.attr("perm", None)
    return b.emit(relay.TransposeOp(b.input(0), axes=None if perm is None else list(perm)))


@onnx_op("Concat")
def concat(b: Node) -> SSAValue:
    return b.emit(relay.ConcatenateOp(*b.inputs(), axis=b.attr("axis", 0)))


@onnx_op("Split")
def split(b: Node) -> list[SSAValue]:
    axis = b.axis(b.attr("axis", 0), b.rank(0))
    (size,) = b.static_dims(b.shape(0)[axis : axis + 1], "Split along a dynamic axis")
    n_out = len(b.node.output)
    if b.opset >= 13 and b.has_input(1):
        sizes = [int(s) for s in b.static_dims(b.const(1).tolist(), "Split sizes")]
    elif b.opset < 13 and b.has_attr("split"):
        sizes = list(b.attr("split"))
    else:
        parts = b.attr("num_outputs", n_out)
        if parts != n_out:  # before a list of `parts` sizes (2**31 of them hung the import)
            raise b.error(f"num_outputs is {parts}, but the node declares {n_out} outputs")
        chunk = math.ceil(size / parts)
        sizes = [min(chunk, size - i * chunk) for i in range(parts)]
    if sum(sizes) != size:
        raise b.error(f"split sizes {sizes} do not add up to {size}")
    if len(sizes) != n_out:
        raise b.error(f"the node declares {n_out} outputs for {len(sizes)} parts {sizes}")
    indices = list(np.cumsum(sizes)[:-1])
    op = b.emit(relay.SplitOp(b.input(0), indices=[int(i) for i in indices], axis=axis))
    return list(op.results) if len(sizes) > 1 else [op]


def _axes(b: Node, since_input: int) -> list[int] | None:
    if b.opset >= since_input:
        return [int(a) for a in np.asarray(b.const(1)).reshape(-1)] if b.has_input(1) else None
    return b.attr("axes", None)


@onnx_op("Squeeze")
def squeeze(b: Node) -> SSAValue:
    axes = _axes(b, 13)
    if axes is None:  # every axis of size 1: a dynamic one may be 1 or not
        b.static_shape(0, "Squeeze without axes")
    return b.emit(relay.SqueezeOp(b.input(0), axis=axes))


@onnx_op("Unsqueeze")
def unsqueeze(b: Node) -> SSAValue:
    axes = _axes(b, 13)
    if axes is None:
        raise b.error("Unsqueeze needs axes")
    rank = b.rank(0) + len(axes)
    if any(not -rank <= a < rank for a in axes) or len({a % rank for a in axes}) != len(axes):
        raise b.error(f"axes {axes} are out of range or repeated for an output of rank {rank}")
    newshape = list(b.shape(0))
    for a in sorted(x % rank for x in axes):
        newshape.insert(a, 1)
    return b.emit(relay.ReshapeOp(b.input(0), newshape=newshape))


@onnx_op("Gather")
def gather(b: Node) -> SSAValue:
    axis = b.attr("axis", 0)
    indices = checked_indices(b, b.input(1), b.input(0), axis, b.label)
    return b.emit(relay.TakeOp(b.input(0), indices, axis=axis, mode="clip"))


@onnx_op("GatherElements", since=11)
def gather_elements(b: Node) -> SSAValue:
    axis = b.attr("axis", 0)
    indices = checked_indices(b, b.input(1), b.input(0), axis, b.label)
    return b.emit(relay.GatherOp(b.input(0), indices, axis=axis))


@onnx_op("GatherND", since=11)
def gather_nd(b: Node) -> SSAValue:
    batch = b.attr("batch_dims", 0)
    depth = b.shape(1)[-1] if b.rank(1) else 0
    if not isinstance(depth, int) or not 0 < depth <= b.rank(0) - batch:
        raise b.error(
            f"indices {b.shape(1)} do not index data {b.shape(0)} after {batch} batch axes"
        )
    indices = checked_indices(b, b.input(1), b.input(0), batch, b.label, depth)
    return b.emit(relay.GatherNDOp(b.input(0), indices, batch_dims=batch))


@onnx_op("Slice")
def slice_(b: Node) -> SSAValue:
    rank = b.rank(0)
    if b.opset < 10:
        starts, ends = list(b.attr("starts")), list(b.attr("ends"))
        axes = list(b.attr("axes", range(len(starts))))
        steps = [1] * len(starts)
    else:
        if not (b.is_const(1) and b.is_const(2)) and not _deferrable_bounds(b):
            return _run_time_slice(b)
        starts, ends = b.dims_const(1), b.dims_const(2)
        axes = [int(v) for v in b.const(3)] if b.has_input(3) else list(range(len(starts)))
        steps = [int(v) for v in b.const(4)] if b.has_input(4) else [1] * len(starts)
    shape = b.shape(0)
    specs = [
        (b.axis(a, rank, "axes entry"), s, e, st) for a, s, e, st in zip(axes, starts, ends, steps)
    ]
    static = [spec for spec in specs if all(isinstance(v, int) for v in (shape[spec[0]], *spec))]
    y = b.input(0)
    if static:
        # ONNX clamps with INT_MAX/INT_MIN sentinels; keep them inside i64
        clamp = lambda v: max(min(v, 2**63 - 1), -(2**63))
        y = b.emit(
            relay.StridedSliceOp(
                y,
                begin=[clamp(s) for _, s, _, _ in static],
                end=[clamp(e) for _, _, e, _ in static],
                strides=[st for _, _, _, st in static],
                axes=[a for a, _, _, _ in static],
            )
        )
    for axis, start, end, step in specs:
        if (axis, start, end, step) not in static:
            y = _dynamic_slice(b, y, axis, start, end, step)
    return y


def _deferrable_bounds(b: Node) -> bool:
    from xrelay.frontends.onnx.deferred import deferrable

    return all(b.is_const(i) or deferrable(b.importer, b.value(i)) for i in (1, 2))


def _run_time_slice(b: Node) -> SSAValue:
    """Slice whose starts or ends the model computes from its data (a loop's iteration
    number, say): per axis, the indices it takes (`relay.slice_indices`, a size the data
    decides) and a take of them. Axes and steps must be known at import."""
    n = b.shape(1)[0] if b.rank(1) == 1 else None
    if n is None or not isinstance(n, int) or b.shape(2) != (n,):
        raise b.error("starts and ends must be 1-d and of one length")
    axes = [int(v) for v in b.const(3)] if b.has_input(3) else list(range(n))
    steps = [int(v) for v in b.const(4)] if b.has_input(4) else [1] * n
    if len(axes) != n or len(steps) != n:
        raise b.error(f"{n} starts, {len(axes)} axes and {len(steps)} steps")
    bounds = []
    for i in (1, 2):
        v = b.input(i)
        if b.dtype(i) != np.int64:
            v = b.emit(relay.CastOp(v, dtype=element_type(np.int64)))
        bounds.append(v)
    y, rank = b.input(0), b.rank(0)
    for k, (axis, step) in enumerate(zip(axes, steps)):
        if not -rank <= axis < rank:
            raise b.error(f"axis {axis} is out of range for rank {rank}")
        if step == 0:
            raise b.error("Slice step must not be 0")
        at = b.constant(np.array(k, np.int64))
        start, end = (b.emit(relay.TakeOp(v, at, axis=0)) for v in bounds)
        size = b.importer.fresh_symbol(f"{b.name}_len")
        indices = b.emit(
            relay.SliceIndicesOp(y, start, end, axis=axis % rank, step=step, size=size)
        )
        y = b.emit(relay.TakeOp(y, indices, axis=axis % rank))
    return y


SENTINEL = 2**31 - 1  # ONNX bounds at or beyond INT32_MAX (or below -INT32_MAX) mean "to the end"


def _dynamic_slice(b: Node, x: SSAValue, axis: int, start: Dim, end: Dim, step: int) -> SSAValue:
    """x[start:end:step] along `axis`, whose size or bounds are dimension expressions, as a
    take of an index range."""
    if step == 0:
        raise b.error("Slice step must not be 0")
    size = shape_of(x.type)[axis]
    # a bound the model computes (`seq`) is taken to fit the axis; a constant is clamped
    fit_start, fit_end = not isinstance(start, int), not isinstance(end, int)
    start, end = _from_end(b, start, size), _from_end(b, end, size)
    if step > 0:
        first, last = b.clamp(start, 0, size, fit_start), b.clamp(end, 0, size, fit_end)
        count = b.at_least(ceiling_div(last - first, step), 0)
    else:
        first = b.clamp(start, 0, size - 1, fit_start)
        last = b.clamp(end, -1, size - 1, fit_end)
        count = b.at_least(ceiling_div(first - last, -step), 0)
    if step == 1 and equal(first, 0) and equal(count, size):
        return x
    indices = _index_range(b, first, step, count, np.dtype(np.int64))
    return b.emit(relay.TakeOp(x, indices, axis=axis, mode="clip"))


def _from_end(b: Node, v: Dim, size: Dim) -> Dim:
    """A Slice bound as an index from the start: negative ones count from the end, the
    sentinels are the ends."""
    if isinstance(v, int):
        if v >= SENTINEL:
            return size
        if v <= -SENTINEL:
            return -1
        return normalize(v + size) if v < 0 else v
    if v.is_nonnegative:
        return v
    raise b.unsupported(f"Slice bound {dim_str(v)} that may be negative")


@onnx_op("Tile", since=6)
def tile(b: Node) -> SSAValue:
    reps = b.dims_const(1)
    if len(reps) != b.rank(0):  # numpy's tile would prepend axes; ONNX's takes one per axis
        raise b.error(f"repeats has {len(reps)} values for an input of rank {b.rank(0)}")
    if all(isinstance(r, int) for r in reps):
        return b.emit(relay.TileOp(b.input(0), reps=reps))
    # repeats that are dimension expressions: x[None, :, None, :] broadcast to
    # [r0, d0, r1, d1], then merged to [r0 * d0, r1 * d1]
    shape = b.shape(0)
    if len(reps) != len(shape):
        raise b.error(f"{len(reps)} repeats for a rank-{len(shape)} input")
    spread = [d for pair in zip([1] * len(shape), shape) for d in pair]
    x = b.emit(relay.ReshapeOp(b.input(0), newshape=spread))
    x = b.emit(relay.BroadcastToOp(x, shape=[d for pair in zip(reps, shape) for d in pair]))
    return b.emit(relay.ReshapeOp(x, newshape=[r * d for r, d in zip(reps, shape)]))


@onnx_op("Expand", since=8)
def expand(b: Node) -> SSAValue:
    target = tuple(b.dims_const(1))
    try:
        shape = _broadcast_shapes(b.shape(0), target)
    except ValueError:
        raise b.error(f"cannot expand shape {list(b.shape(0))} to {list(target)}") from None
    if tuple(shape) == b.shape(0):
        return b.input(0)
    return b.emit(relay.BroadcastToOp(b.input(0), shape=shape))


def _broadcast_shapes(a: tuple, b: tuple) -> tuple:
    """numpy broadcasting of two shapes whose dimensions may be expressions."""
    rank = max(len(a), len(b))
    a, b = (1,) * (rank - len(a)) + tuple(a), (1,) * (rank - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x == 1 or x == y:
            out.append(y)
        elif y == 1:
            out.append(x)
        else:
            raise ValueError
    return tuple(out)


@onnx_op("Compress", since=9)
def compress(b: Node) -> SSAValue:
    """The slices along `axis` (of the flattened input without one) where the condition is
    true; a shorter condition leaves the rest out. A condition computed at run time gives a
    result of data-dependent size (frontends/onnx/data_dependent.py)."""
    x = b.input(0)
    if b.has_attr("axis"):
        axis = int(b.attr("axis"))
        if not -b.rank(0) <= axis < b.rank(0):
            raise b.error(f"axis {axis} is out of range for rank {b.rank(0)}")
        axis %= b.rank(0)
        size = b.shape(0)[axis]
    else:
        axis, size = 0, prod(b.shape(0))
        x = b.emit(relay.ReshapeOp(x, newshape=(size,)))
    if not b.is_const(1) or is_symbolic(b.const(1)):
        from xrelay.frontends.onnx.data_dependent import compress_at_run_time

        return compress_at_run_time(b, x, axis)
    cond = np.asarray(b.const(1)).astype(bool).reshape(-1)
    if cond.size > size:
        raise b.error(f"the condition has {cond.size} entries, the axis {size}")
    indices = np.nonzero(cond)[0].astype(np.int64)
    return b.emit(relay.TakeOp(x, b.constant(indices), axis=axis))
