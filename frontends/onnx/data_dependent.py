"""ONNX ops whose output sizes depend on the data: NonZero, Unique, NonMaxSuppression, and
Compress with a run-time condition. Each size is a fresh symbol the op names
(dialects/relay/data_dependent.py); the VM computes these ops between compiled segments
(lowering/vm.py). With every input known at import they fold like any other op."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.registry import onnx_op


def _size(b: Node, what: str) -> str:
    return b.importer.fresh_symbol(f"{b.name}_{what}")


@onnx_op("NonZero", since=9)
def nonzero(b: Node) -> SSAValue:
    return b.emit(relay.NonZeroOp(b.input(0), size=_size(b, "count")))


@onnx_op("Unique", since=11)
def unique(b: Node) -> list[SSAValue]:
    axis = int(b.attr("axis")) if b.has_attr("axis") else None
    if axis is not None and not -b.rank(0) <= axis < b.rank(0):
        raise b.error(f"axis {axis} is out of range for rank {b.rank(0)}")
    op = b.emit(
        relay.UniqueOp(
            b.input(0), size=_size(b, "unique"), sorted=int(b.attr("sorted", 1)), axis=axis
        )
    )
    return list(op.results)


@onnx_op("NonMaxSuppression", since=10)
def non_max_suppression(b: Node) -> SSAValue:
    dtype = b.dtype(0)
    scalars = []
    for i, default, kind in ((2, 0, np.int64), (3, 0.0, dtype), (4, -np.inf, dtype)):
        if not b.has_input(i):
            scalars.append(b.constant(np.array(default, kind)))
            continue
        value = b.input(i)
        if b.dtype(i) != np.dtype(kind):
            raise b.error(f"input {i} is {b.dtype(i)}, expected {np.dtype(kind)}")
        if b.shape(i) != ():
            if b.shape(i) != (1,):
                raise b.error(f"input {i} has shape {list(b.shape(i))}, expected one value")
            value = b.emit(relay.ReshapeOp(value, newshape=[]))
        scalars.append(value)
    return b.emit(
        relay.NonMaxSuppressionOp(
            b.input(0),
            b.input(1),
            *scalars,
            size=_size(b, "selected"),
            center_point_box=int(b.attr("center_point_box", 0)),
        )
    )


def compress_at_run_time(b: Node, x: SSAValue, axis: int) -> SSAValue:
    """Compress whose condition is computed at run time: a take of its nonzero positions."""
    cond = b.input(1)
    if b.rank(1) != 1:
        raise b.error(f"the condition must be 1-d, got rank {b.rank(1)}")
    positions = b.emit(relay.NonZeroOp(cond, size=_size(b, "count")))  # [1, count]
    flat = b.emit(relay.SqueezeOp(positions, axis=[0]))
    return b.emit(relay.TakeOp(x, flat, axis=axis))
