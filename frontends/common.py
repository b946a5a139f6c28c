"""Relay-building pieces shared by the ONNX and PyTorch frontends.

`emit_constant` puts a numpy constant into a block (its ops from
`xrelay.dialects.constants.constant_ops`: a large splat becomes a broadcast scalar).
`matmul_nd` gives numpy matmul semantics (any batch rank, broadcasting, 1-d operands) on
relay's 2-d/3-d matmuls; `stack` joins tensors on a new axis. They take anything with an
`emit(op)` that adds the op and returns its result.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np
from xdsl.dialects.builtin import LocationAttr
from xdsl.ir import Block, Operation, SSAValue
from xrelay.dialects import relay
from xrelay.dialects.constants import constant_ops


class Emitter(Protocol):
    def emit(self, op: Operation) -> Any: ...


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
