"""Relay-building pieces shared by the ONNX and PyTorch frontends.

`emit_constant` puts a numpy constant into a block (`constant_ops` builds its ops,
`constant_value` reads one back) (a large splat becomes a broadcast scalar,
so a constant-filled weight does not turn into megabytes of IR). `matmul_nd` gives numpy
matmul semantics (any batch rank, broadcasting, 1-d operands) on relay's 2-d/3-d matmuls;
`stack` joins tensors on a new axis. They take anything with an `emit(op)` that adds the op and returns its result.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np
from xdsl.dialects.builtin import LocationAttr
from xdsl.ir import Block, Operation, SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dtypes import dense_from_numpy, numpy_from_dense

# Constants at least this large whose elements are all equal are emitted as a broadcast scalar.
SPLAT_MIN_ELEMENTS = 64


class Emitter(Protocol):
    def emit(self, op: Operation) -> Any: ...


def constant_ops(array: np.ndarray) -> list[Operation]:
    """The ops of a constant holding `array` (the last one gives the value): a relay.constant,
    or for a large splat a 0-d constant broadcast to the shape."""
    flat = array.reshape(-1)
    if array.size >= SPLAT_MIN_ELEMENTS and np.all(flat == flat[0]):
        scalar = relay.ConstantOp(dense_from_numpy(flat[:1].reshape(())))
        return [scalar, relay.BroadcastToOp(scalar, shape=array.shape)]
    return [relay.ConstantOp(dense_from_numpy(array))]


def constant_value(value: SSAValue) -> np.ndarray | None:
    """The array a relay constant (or a constant splat, broadcast) holds, else None."""
    op = value.owner
    if isinstance(op, relay.ConstantOp):
        return numpy_from_dense(op.value)
    if isinstance(op, relay.BroadcastToOp) and isinstance(op.data.owner, relay.ConstantOp):
        return np.broadcast_to(numpy_from_dense(op.data.owner.value), op.result.type.get_shape())
    return None


def emit_constant(block: Block, array: np.ndarray, loc: LocationAttr) -> SSAValue:
    """Append a constant holding `array` to `block`; a large splat becomes a broadcast scalar."""
    ops = constant_ops(array)
    for op in ops:
        op.location = loc
        block.add_op(op)
    return ops[-1].results[0]


def stack(b: Emitter, values: list[SSAValue], axis: int) -> SSAValue:
    """Tensors of one shape joined on a new axis `axis` (numpy.stack)."""
    parts = [b.emit(relay.ExpandDimsOp(v, axis=axis)) for v in values]
    return parts[0] if len(parts) == 1 else b.emit(relay.ConcatenateOp(*parts, axis=axis))


def matmul_nd(b: Emitter, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    """numpy matmul semantics on relay matmul/batch_matmul plus reshapes."""
    ls, rs = list(lhs.type.get_shape()), list(rhs.type.get_shape())
    batch = list(np.broadcast_shapes(tuple(ls[:-2]), tuple(rs[:-2])))
    out = batch + ls[-2:-1] * (len(ls) > 1) + rs[-1:] * (len(rs) > 1)
    if len(ls) == 1:
        lhs, ls = b.emit(relay.ReshapeOp(lhs, newshape=(1, ls[0]))), [1, ls[0]]
    if len(rs) == 1:
        rhs, rs = b.emit(relay.ReshapeOp(rhs, newshape=(rs[0], 1))), [rs[0], 1]
    y = _matmul_2d_up(b, lhs, rhs, ls, rs, batch)
    if list(y.type.get_shape()) != out:
        y = b.emit(relay.ReshapeOp(y, newshape=out))
    return y


def _matmul_2d_up(
    b: Emitter, lhs: SSAValue, rhs: SSAValue, ls: list[int], rs: list[int], batch: list[int]
) -> SSAValue:
    m, k, n = ls[-2], ls[-1], rs[-1]
    if len(ls) == 2 and len(rs) == 2:
        return b.emit(relay.MatmulOp(lhs, rhs))
    if len(rs) == 2:  # fold the batch into the rows
        flat = b.emit(relay.ReshapeOp(lhs, newshape=(math.prod(ls[:-1]), k)))
        y = b.emit(relay.MatmulOp(flat, rhs))
        return b.emit(relay.ReshapeOp(y, newshape=(*ls[:-1], n)))
    nb = math.prod(batch)

    def as_3d(v: SSAValue, shape: list[int]) -> SSAValue:
        full = [*batch, *shape[-2:]]
        if shape != full:
            v = b.emit(relay.BroadcastToOp(v, shape=full))
        return b.emit(relay.ReshapeOp(v, newshape=(nb, *shape[-2:])))

    y = b.emit(relay.BatchMatmulOp(as_3d(lhs, ls), as_3d(rhs, rs)))
    return b.emit(relay.ReshapeOp(y, newshape=(*batch, m, n)))
