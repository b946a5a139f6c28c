"""ONNX sequence ops, resolved at import time.

A sequence is a list of tensors the importer holds (`Value.items`), never an IR value: each
op that builds, edits or reads one needs its positions known at import time, and ends in
plain tensors (SequenceAt, ConcatFromSequence) or a constant (SequenceLength). A sequence
as a graph input or output is refused.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.frontends.common import stack
from xrelay.frontends.onnx.binder import Node, Value
from xrelay.frontends.onnx.registry import onnx_op


def _position(b: Node, i: int, length: int, *, inserting: bool = False) -> int:
    """Input i as a position in a sequence of `length` (negative counts from the back)."""
    pos = int(np.asarray(b.const(i)).reshape(()))
    hi = length if inserting else length - 1
    if not -length <= pos <= hi:
        raise b.error(f"position {pos} is out of range for a sequence of {length}")
    return pos + length if pos < 0 else pos


@onnx_op("SequenceEmpty", since=11, structured=True)
def sequence_empty(b: Node) -> Value:
    return Value(items=[])


@onnx_op("SequenceConstruct", since=11, structured=True)
def sequence_construct(b: Node) -> Value:
    return Value(items=[b.value(i) for i in range(b.n_inputs)])


@onnx_op("SequenceInsert", since=11, structured=True)
def sequence_insert(b: Node) -> Value:
    items = list(b.sequence(0))
    pos = _position(b, 2, len(items), inserting=True) if b.has_input(2) else len(items)
    items.insert(pos, b.value(1))
    return Value(items=items)


@onnx_op("SequenceErase", since=11, structured=True)
def sequence_erase(b: Node) -> Value:
    items = list(b.sequence(0))
    pos = _position(b, 1, len(items)) if b.has_input(1) else len(items) - 1
    if not items:
        raise b.error("erase from an empty sequence")
    del items[pos]
    return Value(items=items)


@onnx_op("SequenceAt", since=11, structured=True)
def sequence_at(b: Node) -> Value:
    items = b.sequence(0)
    return items[_position(b, 1, len(items))]


@onnx_op("SequenceLength", since=11, structured=True)
def sequence_length(b: Node) -> np.ndarray:
    return np.array(len(b.sequence(0)), dtype=np.int64)


@onnx_op("SplitToSequence", since=11, structured=True)
def split_to_sequence(b: Node) -> Value:
    """Pieces of input 0 along `axis`: of the given sizes, of one size (the last piece
    shorter), or of size 1 (squeezed away unless keepdims)."""
    rank = b.rank(0)
    axis = int(b.attr("axis", 0))
    if not -rank <= axis < rank:
        raise b.error(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    # the sequence's length is known at import
    (size,) = b.static_dims(b.shape(0)[axis : axis + 1], "SplitToSequence along a dynamic axis")
    squeeze = False
    if b.has_input(1):
        split = np.asarray(b.const(1)).astype(np.int64)
        if split.ndim == 0:
            step = int(split)
            if step <= 0:
                raise b.error(f"split size {step} is not positive")
            sizes = [min(step, size - s) for s in range(0, size, step)]
        else:
            sizes = [int(s) for s in split]
    else:
        sizes = [1] * size
        squeeze = not b.attr("keepdims", 1)
    if sum(sizes) != size or any(s < 0 for s in sizes):
        raise b.error(f"split sizes {sizes} do not add up to {size}")
    x = b.input(0)
    pieces: list[SSAValue] = [x]
    if len(sizes) > 1:
        indices = [int(i) for i in np.cumsum(sizes)[:-1]]
        pieces = list(b.emit(relay.SplitOp(x, indices=indices, axis=axis)).results)
    if squeeze:
        pieces = [b.emit(relay.SqueezeOp(p, axis=[axis])) for p in pieces]
    return Value(items=[Value(ssa=p) for p in pieces])


@onnx_op("ConcatFromSequence", since=11, structured=True)
def concat_from_sequence(b: Node) -> SSAValue | np.ndarray:
    """The elements joined along `axis`, or stacked on a new axis (`new_axis`); known
    elements are joined at import."""
    items = b.sequence(0)
    if not items:
        raise b.error("concatenation of an empty sequence")
    new_axis = bool(b.attr("new_axis", 0))
    axis = int(b.attr("axis"))
    out_rank = len(b.type_of(items[0]).get_shape()) + new_axis
    if not -out_rank <= axis < out_rank:
        raise b.error(f"axis {axis} is out of range for rank {out_rank}")
    axis %= out_rank
    if all(v.foldable for v in items):
        join = np.stack if new_axis else np.concatenate
        return join([v.array for v in items], axis=axis)
    tensors = [b.ssa(v) for v in items]
    if new_axis:
        return stack(b, tensors, axis)
    if len(tensors) == 1:
        return tensors[0]
    return b.emit(relay.ConcatenateOp(*tensors, axis=axis))
