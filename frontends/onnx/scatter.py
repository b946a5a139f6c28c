"""ONNX ScatterElements, Scatter (opset 9-10) and ScatterND from relay ops: every update
gets a flat target position along the (flattened) leading axis, a [targets x updates]
match matrix compares them with every position, and the matched updates are combined:
the last one wins (`none`), or add / mul / max / min with the data. Negative indices
count from the end. The match matrix is static-sized: at most MAX_MATCH elements."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dtypes import element_type
from xrelay.frontends.common import checked_indices
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.registry import onnx_op

MAX_MATCH = 1 << 22
I64 = element_type(np.int64)


def _shape(v: SSAValue) -> list[int]:
    """The static shape of a scatter operand (`_static` checked it)."""
    return list(v.type.get_shape())


def _static(b: Node) -> None:
    """Scatters build their match matrices at import: every operand's shape must be known."""
    for i in range(b.n_inputs):
        if b.has_input(i):
            b.static_shape(i, b.op_type)


def _normalized(b: Node, index: SSAValue, size: int) -> SSAValue:
    index = b.emit(relay.CastOp(index, dtype=I64))
    negative = b.emit(relay.LessOp(index, b.constant(np.int64(0))))
    wrapped = b.emit(relay.AddOp(index, b.constant(np.int64(size))))
    return b.emit(relay.WhereOp(negative, wrapped, index))


def scatter_rows(
    b: Node, data: SSAValue, positions: SSAValue, updates: SSAValue, reduction: str
) -> SSAValue:
    """data [L, R...], positions [Q] (in 0..L-1), updates [Q, R...] -> data with each
    matched row combined by `reduction`."""
    rows, rest = _shape(data)[0], _shape(data)[1:]
    count = _shape(positions)[0]
    if rows * count * max(1, int(np.prod(rest))) > MAX_MATCH:
        raise b.unsupported(f"a scatter of {count} updates into {rows} rows (too large)")
    dtype = np.dtype(b.dtype(0))
    iota = b.constant(np.arange(rows, dtype=np.int64).reshape(rows, 1))
    match = b.emit(relay.EqualOp(iota, b.emit(relay.ReshapeOp(positions, newshape=(1, count)))))
    order = b.constant(np.arange(count, dtype=np.int64).reshape(1, count))
    latest = b.emit(relay.WhereOp(match, order, b.constant(np.int64(-1))))
    top = b.emit(relay.MaxOp(latest, axis=(1,)))  # [L]: the last matching update, or -1
    hit = b.emit(relay.GreaterEqualOp(top, b.constant(np.int64(0))))
    hit = b.emit(relay.ReshapeOp(hit, newshape=(rows, *[1] * len(rest))))
    if reduction == "none":
        safe = b.emit(relay.MaximumOp(top, b.constant(np.int64(0))))
        chosen = b.emit(relay.TakeOp(updates, safe, axis=0))
        return b.emit(relay.WhereOp(hit, chosen, data))
    wide = b.emit(relay.ReshapeOp(match, newshape=(rows, count, *[1] * len(rest))))
    spread = b.emit(relay.ExpandDimsOp(updates, axis=0))  # [1, Q, R...]
    if dtype.kind == "f":
        low, high = -np.inf, np.inf
    else:
        info = np.iinfo(dtype)
        low, high = info.min, info.max
    neutral, reduce, combine = {
        "add": (0, relay.SumOp, relay.AddOp),
        "mul": (1, relay.ProdOp, relay.MultiplyOp),
        "max": (low, relay.MaxOp, relay.MaximumOp),
        "min": (high, relay.MinOp, relay.MinimumOp),
    }[reduction]
    picked = b.emit(relay.WhereOp(wide, spread, b.constant(np.asarray(neutral, dtype))))
    total = b.emit(reduce(picked, axis=(1,)))
    return b.emit(relay.WhereOp(hit, b.emit(combine(data, total)), data))


def _reduction(b: Node) -> str:
    reduction = b.attr("reduction", "none")
    if reduction not in ("none", "add", "mul", "max", "min"):
        raise b.unsupported(f"reduction '{reduction}'")
    return reduction


@onnx_op("ScatterElements", since=11)
def scatter_elements(b: Node) -> SSAValue:
    _static(b)
    data, indices, updates = b.input(0), b.input(1), b.input(2)
    shape, idx_shape = _shape(data), _shape(indices)
    rank = len(shape)
    axis = b.axis(b.attr("axis", 0), rank)
    if len(idx_shape) != rank or any(i > d for i, d in zip(idx_shape, shape)):
        raise b.error(f"indices {idx_shape} do not fit data {shape}")
    strides = [int(np.prod(shape[d + 1 :])) for d in range(rank)]
    coords = np.indices(idx_shape)
    base = sum(coords[d] * strides[d] for d in range(rank) if d != axis)
    target = _normalized(b, checked_indices(b, indices, data, axis, b.label), shape[axis])
    target = b.emit(relay.MultiplyOp(target, b.constant(np.int64(strides[axis]))))
    positions = b.emit(relay.AddOp(target, b.constant(base.astype(np.int64))))
    count = int(np.prod(idx_shape))
    flat = b.emit(relay.ReshapeOp(data, newshape=(int(np.prod(shape)),)))
    out = scatter_rows(
        b,
        flat,
        b.emit(relay.ReshapeOp(positions, newshape=(count,))),
        b.emit(relay.ReshapeOp(updates, newshape=(count,))),
        _reduction(b),
    )
    return b.emit(relay.ReshapeOp(out, newshape=shape))


onnx_op("Scatter", since=9)(scatter_elements)


@onnx_op("ScatterND", since=11)
def scatter_nd(b: Node) -> SSAValue:
    _static(b)
    data, indices, updates = b.input(0), b.input(1), b.input(2)
    shape, idx_shape = _shape(data), _shape(indices)
    k = idx_shape[-1]
    if not 0 < k <= len(shape):
        raise b.error(f"indices address {k} axes of rank-{len(shape)} data")
    indices = checked_indices(b, indices, data, 0, b.label, k)
    row_strides = [int(np.prod(shape[d + 1 : k])) for d in range(k)]
    parts = []
    for d in range(k):
        component = b.emit(
            relay.StridedSliceOp(indices, begin=[d], end=[d + 1], axes=[len(idx_shape) - 1])
        )
        component = _normalized(b, component, shape[d])
        parts.append(b.emit(relay.MultiplyOp(component, b.constant(np.int64(row_strides[d])))))
    positions = parts[0]
    for p in parts[1:]:
        positions = b.emit(relay.AddOp(positions, p))
    count = int(np.prod(idx_shape[:-1]))
    rows = int(np.prod(shape[:k]))
    out = scatter_rows(
        b,
        b.emit(relay.ReshapeOp(data, newshape=(rows, *shape[k:]))),
        b.emit(relay.ReshapeOp(positions, newshape=(count,))),
        b.emit(relay.ReshapeOp(updates, newshape=(count, *shape[k:]))),
        _reduction(b),
    )
    return b.emit(relay.ReshapeOp(out, newshape=shape))
