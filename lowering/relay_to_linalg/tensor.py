"""Lowerings of dialects/relay/tensor.py: constants, reshapes (tensor.reshape, a view once
bufferized), data movement as linalg.generic with affine maps, gathers with tensor.extract."""

from __future__ import annotations

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseArrayBase, IndexType, TensorType, i64
from xdsl.ir import SSAValue
from xrelay.dialects import dims as dimexpr
from xrelay.dialects import relay
from xrelay.dialects.relay.tensor import slice_specs
from xrelay.lowering.dynamic_sizes import DynamicUnsupported
from xrelay.lowering.relay_to_linalg.builder import (
    Body,
    Emitter,
    amap,
    dims,
    result_shape,
    shape_of,
)

# on a concatenation's linalg.generic of static shape: [axis, the start along the axis of
# each input its body reads, in the order of the body's reads] (read by plan-buffers)
CONCAT_ATTR = "xrelay.concat"


def _out(op, i: int = 0) -> TensorType:
    return op.results[i].type


def lower_constant(e: Emitter, op: relay.ConstantOp) -> SSAValue:
    return e.insert(arith.ConstantOp(op.value))


def lower_reshape(e: Emitter, op) -> SSAValue:
    """Every reshape-like op (reshape, squeeze, expand_dims, batch_flatten) keeps the
    row-major element order: a tensor.reshape, which bufferizes to a view."""
    return e.reshape(op.data, result_shape(op))


def lower_transpose(e: Emitter, op: relay.TransposeOp) -> SSAValue:
    out = _out(op)
    rank = len(out.get_shape())
    axes = list(op.attrs.axes) if op.attrs.axes is not None else list(reversed(range(rank)))
    axes = [a % rank for a in axes]
    d = dims(rank)
    # out[k] = in[axes[k]]: input axis j is read at the loop dim k with axes[k] == j
    in_map = amap(rank, [d[axes.index(j)] for j in range(rank)])
    return e.map([op.data], result_shape(op), out.element_type, lambda b: b.args[0], [in_map])


def lower_broadcast_to(e: Emitter, op: relay.BroadcastToOp) -> SSAValue:
    out = _out(op)
    return e.map([op.data], result_shape(op), out.element_type, lambda b: b.args[0])


def slice_copy(
    e: Emitter, source: SSAValue, out: TensorType, starts: list[int], steps: list[int]
) -> SSAValue:
    """out[i] = source[starts + i * steps] per axis. The source is read with tensor.extract:
    an operand map would make its full extent a loop bound."""

    def body(b: Body) -> SSAValue:
        idx = [
            b.affine([(step, b.idx(k))], start)
            for k, (start, step) in enumerate(zip(starts, steps))
        ]
        return b.extract(source, idx)

    return e.map([], dimexpr.shape_of(out), out.element_type, body)


def lower_strided_slice(e: Emitter, op: relay.StridedSliceOp) -> SSAValue:
    shape = list(shape_of(op.data))
    # a dynamic axis may only be kept whole: sliced with a sentinel size, it must come out
    # as start 0, step 1 and at least the sentinel's length
    in_shape = [d if isinstance(d, int) else _WHOLE for d in shape]
    starts, steps = [0] * len(in_shape), [1] * len(in_shape)
    for axis, begin, end, stride in slice_specs(op.name, in_shape, op.attrs):
        start, stop, _ = slice(begin, end, stride).indices(in_shape[axis])
        if in_shape[axis] == _WHOLE and (start, stop, stride) != (0, _WHOLE, 1):
            raise DynamicUnsupported(f"a slice of the dynamic axis {axis}")
        starts[axis] = start
        steps[axis] = stride
    return slice_copy(e, op.data, _out(op), starts, steps)


def lower_split(e: Emitter, op: relay.SplitOp) -> list[SSAValue]:
    rank = len(shape_of(op.data))
    axis = op.attrs.axis % rank
    if not isinstance(shape_of(op.data)[axis], int):
        raise DynamicUnsupported(f"a split along the dynamic axis {axis}")
    results = []
    begin = 0
    for res in op.results:
        starts = [0] * rank
        starts[axis] = begin
        results.append(slice_copy(e, op.data, res.type, starts, [1] * rank))
        begin += res.type.get_shape()[axis]
    return results


def lower_tile(e: Emitter, op: relay.TileOp) -> SSAValue:
    out = _out(op)
    in_shape = shape_of(op.data)
    n, offset = len(out.get_shape()), len(out.get_shape()) - len(in_shape)
    d = dims(n)
    in_map = amap(n, [d[offset + j] % size for j, size in enumerate(in_shape)])
    return e.map([op.data], out.get_shape(), out.element_type, lambda b: b.args[0], [in_map])


def lower_concatenate(e: Emitter, op: relay.ConcatenateOp) -> SSAValue:
    """out[..., i, ...] = inputs[k][..., i - offset_k, ...]: read every input at a clamped
    index and select the one whose range holds i. Sizes along the axis may be dynamic
    (offsets are then run-time values)."""
    out = _out(op)
    shape = result_shape(op)
    axis = op.attrs.axis % len(shape)
    sizes = [shape_of(v)[axis] for v in op.inputs]
    starts: list = [0]
    for size in sizes[:-1]:
        starts.append(dimexpr.normalize(starts[-1] + size))
    bounds = [
        (e.size_value(lo), e.size_value(dimexpr.normalize(lo + n))) for lo, n in zip(starts, sizes)
    ]
    lengths = [e.size_value(n) for n in sizes]

    read_starts: list = []  # the start of each input the body reads, in the order it reads

    def body(b: Body) -> SSAValue:
        i = b.idx(axis)
        idx = [b.idx(k) for k in range(len(shape))]
        value = None
        for source, n, length, (lo, hi) in reversed(list(zip(op.inputs, sizes, lengths, bounds))):
            if n == 0:
                continue
            local = b.add(arith.SubiOp(i, b.size(lo)))
            read = b.extract(source, [*idx[:axis], b.clamp(local, length), *idx[axis + 1 :]])
            read_starts.append(lo)
            value = read if value is None else b.select(b.cmp("lt", i, b.size(hi)), read, value)
        assert value is not None
        return value

    result = e.map([], shape, out.element_type, body)
    if all(isinstance(d, int) for d in [*shape, *read_starts]):
        # plan-buffers may place the inputs in the result's bytes (concatenation in place)
        result.owner.attributes[CONCAT_ATTR] = DenseArrayBase.from_list(i64, [axis, *read_starts])
    return result


_WHOLE = 1 << 62  # the size a dynamic axis is sliced with (lower_strided_slice)


def _index_value(b: Body, raw: SSAValue, size: int | SSAValue, mode: str) -> SSAValue:
    """An integer tensor element as an in-range index: negatives count from the end, then
    clip (or wrap). `size`: an int, or a run-time size (Emitter.size_value)."""
    i = b.add(arith.IndexCastOp(raw, IndexType()))
    n = b.size(size)
    if mode == "wrap":
        r = b.add(arith.RemSIOp(i, n))
        return b.select(b.cmp("lt", r, b.iconst(0)), b.add(arith.AddiOp(r, n)), r)
    i = b.select(b.cmp("lt", i, b.iconst(0)), b.add(arith.AddiOp(i, n)), i)
    return b.clamp(i, size)


def lower_take(e: Emitter, op: relay.TakeOp) -> SSAValue:
    out = _out(op)
    data_shape, ind_shape = shape_of(op.data), shape_of(op.indices)
    axis = op.attrs.axis % len(data_shape)
    ri = len(ind_shape)
    size = e.size_value(data_shape[axis])

    def body(b: Body) -> SSAValue:
        raw = b.extract(op.indices, [b.idx(axis + k) for k in range(ri)])
        i = _index_value(b, raw, size, op.attrs.mode)
        lead = [b.idx(k) for k in range(axis)]
        trail = [b.idx(axis + ri + k) for k in range(len(data_shape) - axis - 1)]
        return b.extract(op.data, [*lead, i, *trail])

    return e.map([], result_shape(op), out.element_type, body)


def lower_gather(e: Emitter, op: relay.GatherOp) -> SSAValue:
    out = _out(op)
    data_shape = shape_of(op.data)
    rank = len(data_shape)
    axis = op.attrs.axis % rank
    size = e.size_value(data_shape[axis])

    def body(b: Body) -> SSAValue:
        here = [b.idx(k) for k in range(rank)]
        i = _index_value(b, b.extract(op.indices, here), size, "clip")
        return b.extract(op.data, [*here[:axis], i, *here[axis + 1 :]])

    return e.map([], result_shape(op), out.element_type, body)


def lower_gather_nd(e: Emitter, op: relay.GatherNDOp) -> SSAValue:
    out = _out(op)
    data_shape, ind_shape = shape_of(op.data), shape_of(op.indices)
    batch, depth = op.attrs.batch_dims, ind_shape[-1]
    lead = len(ind_shape) - 1
    sizes = [e.size_value(data_shape[batch + j]) for j in range(depth)]

    def body(b: Body) -> SSAValue:
        outer = [b.idx(k) for k in range(lead)]
        picked = [
            _index_value(b, b.extract(op.indices, [*outer, b.iconst(j)]), sizes[j], "clip")
            for j in range(depth)
        ]
        trail = [b.idx(lead + k) for k in range(len(data_shape) - batch - depth)]
        return b.extract(op.data, [*outer[:batch], *picked, *trail])

    return e.map([], result_shape(op), out.element_type, body)


def lower_shape_of(e: Emitter, op: relay.ShapeOfOp) -> SSAValue:
    shape = shape_of(op.data)
    out = _out(op)
    if all(isinstance(d, int) for d in shape):
        return e.constant(np.array(shape, dtype=np.int64))
    sizes = [e.size_value(d) for d in shape]  # dynamic ones are run-time values

    def body(b: Body) -> SSAValue:
        i = b.idx(0)
        value = None
        for k in reversed(range(len(sizes))):
            v = b.cast(b.add(arith.IndexCastOp(b.size(sizes[k]), i64)), out.element_type)
            value = v if value is None else b.select(b.cmp("eq", i, b.iconst(k)), v, value)
        assert value is not None
        return value

    return e.map([], [len(shape)], out.element_type, body)


def lower_arange(e: Emitter, op: relay.ArangeOp) -> SSAValue:
    out = op.results[0].type

    def body(b: Body) -> SSAValue:
        return b.cast(b.add(arith.IndexCastOp(b.idx(0), i64)), out.element_type)

    return e.map([], result_shape(op), out.element_type, body)


LOWERINGS = {
    relay.ConstantOp: lower_constant,
    relay.ReshapeOp: lower_reshape,
    relay.SqueezeOp: lower_reshape,
    relay.ExpandDimsOp: lower_reshape,
    relay.BatchFlattenOp: lower_reshape,
    relay.TransposeOp: lower_transpose,
    relay.BroadcastToOp: lower_broadcast_to,
    relay.StridedSliceOp: lower_strided_slice,
    relay.SplitOp: lower_split,
    relay.TileOp: lower_tile,
    relay.ConcatenateOp: lower_concatenate,
    relay.TakeOp: lower_take,
    relay.GatherOp: lower_gather,
    relay.GatherNDOp: lower_gather_nd,
    relay.ShapeOfOp: lower_shape_of,
    relay.ArangeOp: lower_arange,
}

# lowerings that read shapes through shape_of / result_shape and refuse (DynamicUnsupported)
# what needs a dynamic size as a constant: a slice or an index along a dynamic axis
DYNAMIC = frozenset(
    {
        lower_constant,
        lower_reshape,
        lower_transpose,
        lower_broadcast_to,
        lower_strided_slice,
        lower_take,
        lower_gather,
        lower_gather_nd,
        lower_arange,
        lower_concatenate,
        lower_shape_of,
        lower_split,
    }
)
