"""Relay constants <-> numpy arrays: `constant_ops` builds the ops of a constant (a large splat
becomes a broadcast scalar, so a constant-filled weight does not turn into megabytes of IR),
`constant_value` reads one back. Frontends, transforms and lowerings all build and read
constants this way.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation, SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dtypes import dense_from_numpy, numpy_from_dense

# Constants at least this large whose elements are all equal are emitted as a broadcast scalar.
SPLAT_MIN_ELEMENTS = 64


def constant_ops(array: np.ndarray) -> list[Operation]:
    """The ops of a constant holding `array` (the last one gives the value): a relay.constant,
    or for a large splat a 0-d constant broadcast to the shape."""
    flat = array.reshape(-1)
    if array.size >= SPLAT_MIN_ELEMENTS and np.all(flat == flat[0]):
        scalar = relay.ConstantOp(dense_from_numpy(flat[:1].reshape(())))
        return [scalar, relay.BroadcastToOp(scalar, shape=array.shape)]
    return [relay.ConstantOp(dense_from_numpy(array))]


def equal_constants(a: SSAValue, b: SSAValue) -> bool:
    """Are `a` and `b` both constants holding the same array?"""
    va, vb = constant_value(a), constant_value(b)
    return va is not None and vb is not None and va.shape == vb.shape and np.array_equal(va, vb)


def constant_value(value: SSAValue) -> np.ndarray | None:
    """The array a relay constant (or a constant splat, broadcast) holds, else None."""
    op = value.owner
    if isinstance(op, relay.ConstantOp):
        return numpy_from_dense(op.value)
    if isinstance(op, relay.BroadcastToOp) and isinstance(op.data.owner, relay.ConstantOp):
        return np.broadcast_to(numpy_from_dense(op.data.owner.value), op.result.type.get_shape())
    return None
