"""ONNX tensor ops -> relay: Constant, ConstantOfShape, Shape, Size, Reshape, Transpose,
Concat, Split, Squeeze, Unsqueeze, Gather, Slice, Tile, Expand."""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dims import normalize, prod
from xrelay.frontends.onnx.symbolic import symbolic_array
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.registry import onnx_op


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
    shape = [normalize(d) for d in b.const(0)]
    value = b.attr("value", np.zeros(1, np.float32))
    if not all(isinstance(d, int) for d in shape):  # dynamic: a broadcast scalar in the IR
        return b.emit(relay.BroadcastToOp(b.constant(value.reshape(())), shape=shape))
    # a view of one element: cheap for huge shapes, and emitted as a broadcast scalar
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
def range_(b: Node) -> np.ndarray:
    """Only with start, limit and delta known at import time (the result's length is
    its shape)."""
    start, limit, delta = (np.asarray(b.const(i)) for i in range(3))
    if any(v.size != 1 for v in (start, limit, delta)):
        raise b.error("Range takes scalar start, limit and delta")
    start, limit, delta = (v.reshape(()) for v in (start, limit, delta))
    if delta == 0:
        raise b.error("Range with delta 0")
    return np.arange(start, limit, delta).astype(np.asarray(start).dtype)


@onnx_op("Reshape", since=5)
def reshape(b: Node) -> SSAValue:
    target = [normalize(d) for d in b.const(1)]
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
    axis = b.attr("axis", 0) % b.rank(0)
    size = b.shape(0)[axis]
    n_out = len(b.node.output)
    if b.opset >= 13 and b.has_input(1):
        sizes = [int(s) for s in b.const(1)]
    elif b.opset < 13 and b.has_attr("split"):
        sizes = list(b.attr("split"))
    else:
        parts = b.attr("num_outputs", n_out)
        chunk = math.ceil(size / parts)
        sizes = [min(chunk, size - i * chunk) for i in range(parts)]
    if sum(sizes) != size:
        raise b.error(f"split sizes {sizes} do not add up to {size}")
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
    return b.emit(relay.SqueezeOp(b.input(0), axis=axes))


@onnx_op("Unsqueeze")
def unsqueeze(b: Node) -> SSAValue:
    axes = _axes(b, 13)
    if axes is None:
        raise b.error("Unsqueeze needs axes")
    rank = b.rank(0) + len(axes)
    newshape = list(b.shape(0))
    for a in sorted(x % rank for x in axes):
        newshape.insert(a, 1)
    return b.emit(relay.ReshapeOp(b.input(0), newshape=newshape))


@onnx_op("Gather")
def gather(b: Node) -> SSAValue:
    return b.emit(relay.TakeOp(b.input(0), b.input(1), axis=b.attr("axis", 0), mode="clip"))


@onnx_op("GatherElements", since=11)
def gather_elements(b: Node) -> SSAValue:
    return b.emit(relay.GatherOp(b.input(0), b.input(1), axis=b.attr("axis", 0)))


@onnx_op("GatherND", since=11)
def gather_nd(b: Node) -> SSAValue:
    return b.emit(relay.GatherNDOp(b.input(0), b.input(1), batch_dims=b.attr("batch_dims", 0)))


@onnx_op("Slice")
def slice_(b: Node) -> SSAValue:
    if b.opset < 10:
        starts, ends = list(b.attr("starts")), list(b.attr("ends"))
        axes = list(b.attr("axes", range(len(starts))))
        steps = [1] * len(starts)
    else:
        starts = [int(v) for v in b.const(1)]
        ends = [int(v) for v in b.const(2)]
        axes = [int(v) for v in b.const(3)] if b.has_input(3) else list(range(len(starts)))
        steps = [int(v) for v in b.const(4)] if b.has_input(4) else [1] * len(starts)
    # ONNX clamps with INT_MAX/INT_MIN sentinels; keep them inside i64
    clamp = lambda v: max(min(v, 2**63 - 1), -(2**63))
    return b.emit(
        relay.StridedSliceOp(
            b.input(0),
            begin=[clamp(v) for v in starts],
            end=[clamp(v) for v in ends],
            strides=steps,
            axes=axes,
        )
    )


@onnx_op("Tile", since=6)
def tile(b: Node) -> SSAValue:
    return b.emit(relay.TileOp(b.input(0), reps=[int(r) for r in b.const(1)]))


@onnx_op("Expand", since=8)
def expand(b: Node) -> SSAValue:
    target = tuple(normalize(d) for d in b.const(1))
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
    """The slices along `axis` (of the flattened input without one) where the condition,
    known at import, is true; a shorter condition leaves the rest out."""
    cond = np.asarray(b.const(1)).astype(bool).reshape(-1)
    x = b.input(0)
    if b.has_attr("axis"):
        axis = int(b.attr("axis"))
        if not -b.rank(0) <= axis < b.rank(0):
            raise b.error(f"axis {axis} is out of range for rank {b.rank(0)}")
        axis %= b.rank(0)
        size = b.shape(0)[axis]
    else:
        axis, size = 0, int(np.prod(b.shape(0)))
        x = b.emit(relay.ReshapeOp(x, newshape=(size,)))
    if cond.size > size:
        raise b.error(f"the condition has {cond.size} entries, the axis {size}")
    indices = np.nonzero(cond)[0].astype(np.int64)
    return b.emit(relay.TakeOp(x, b.constant(indices), axis=axis))
