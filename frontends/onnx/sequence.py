"""ONNX sequence ops: import-time lists where everything about them is known at import, else
run-time sequences (`!relay.seq`, dialects/relay/sequence.py) that the VM holds as lists.

A sequence the importer can follow is a list of tensors it holds (`Value.items`): each op
that builds, edits or reads one with positions known at import ends in plain tensors
(SequenceAt, ConcatFromSequence) or a constant (SequenceLength). A sequence that is a graph
input or output, is carried by a run-time loop or branch, or is edited or read at a
position computed at run time is a run-time sequence instead (`Value.ssa` of type
`!relay.seq`); a held list becomes one (`lift`: relay.seq_construct of its elements) where
it meets such a value.
"""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.dialects.builtin import TensorType, UnrankedTensorType, i1, i64
from xdsl.ir import Block, SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dims import make_tensor, shape_of, symbol, unknown
from xrelay.dialects.dtypes import tensor_type
from xrelay.dialects.relay.sequence import SequenceType
from xrelay.frontends.common import erase_block, stack
from xrelay.frontends.onnx.binder import Node, Value
from xrelay.frontends.onnx.registry import onnx_op


def is_run_time(value: Value) -> bool:
    """Whether `value` is a run-time sequence (an SSA value of type !relay.seq)."""
    return (
        value.items is None and value.ssa is not None and isinstance(value.ssa.type, SequenceType)
    )


def element_type(proto: onnx.TypeProto | None) -> TensorType | None:
    """The element type of an ONNX sequence type (unknown dimensions as `?`), if declared."""
    if proto is None or proto.WhichOneof("value") != "sequence_type":
        return None
    elem = proto.sequence_type.elem_type
    if elem.WhichOneof("value") != "tensor_type":
        return None
    t = elem.tensor_type
    try:
        dtype = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)
    except (KeyError, TypeError, ValueError):
        return None
    if not t.HasField("shape"):  # elements of any rank
        return UnrankedTensorType(tensor_type((), dtype).element_type)
    dims = [d.dim_value if d.HasField("dim_value") else unknown() for d in t.shape.dim]
    return make_tensor(tensor_type((), dtype).element_type, dims)


def general(types: list[TensorType]) -> TensorType | UnrankedTensorType | None:
    """One element type for tensors of these types: their element type and rank, the
    dimensions they share, `?` elsewhere (unranked where the ranks differ or one is
    unranked); None if they differ in element type."""
    first = types[0]
    if any(t.element_type != first.element_type for t in types):
        return None
    if any(
        isinstance(t, UnrankedTensorType) or t.get_num_dims() != first.get_num_dims() for t in types
    ):
        return UnrankedTensorType(first.element_type)
    if any(
        t.element_type != first.element_type or t.get_num_dims() != first.get_num_dims()
        for t in types
    ):
        return None
    shapes = [shape_of(t) for t in types]
    dims = [
        d[0] if isinstance(d[0], int) and all(x == d[0] for x in d) else unknown()
        for d in zip(*shapes)
    ]
    return make_tensor(first.element_type, dims)


def _hint(b: Node, i: int) -> TensorType | None:
    name = b.node.input[i] if i < len(b.node.input) else ""
    return element_type(b.importer.inferred_value_types().get(name)) if name else None


def lift(b: Node, value: Value, hint: TensorType | None = None) -> SSAValue:
    """`value`, a sequence, as a run-time sequence."""
    if is_run_time(value):
        return value.ssa
    if value.items is None:
        raise b.error("a tensor where a sequence is expected")
    tensors = [b.ssa(v) for v in value.items]
    if tensors:
        element = general([t.type for t in tensors])
        if element is None:
            raise b.unsupported("a sequence whose elements differ in element type or rank")
    elif hint is not None:
        element = hint
    else:
        raise b.unsupported("an empty sequence whose element type is unknown at import")
    return b.emit(relay.SeqConstructOp(tensors, SequenceType(element)))


def fresh_dims(b: Node, t: TensorType, what: str) -> TensorType:
    """`t` with a fresh symbol for each dimension that is not static."""
    if not isinstance(t, TensorType):
        raise b.unsupported("a tensor out of a sequence whose elements' rank is unknown")
    dims = [
        d if isinstance(d, int) else symbol(b.importer.fresh_symbol(f"{b.name}_{what}{i}"))
        for i, d in enumerate(shape_of(t))
    ]
    return make_tensor(t.element_type, dims)


def _known_position(b: Node, i: int) -> bool:
    return not b.has_input(i) or b.is_const(i)


def _position_value(b: Node, i: int) -> SSAValue | None:
    if not b.has_input(i):
        return None
    if b.dtype(i) not in (np.int64, np.int32):
        raise b.error(f"the position is {b.dtype(i)}, expected int64 or int32")
    value = b.input(i)
    if b.dtype(i) != np.int64:
        value = b.emit(relay.CastOp(value, dtype=tensor_type((), np.int64).element_type))
    return value


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
    if is_run_time(b.value(0)) or not _known_position(b, 2):
        seq = lift(b, b.value(0), _hint(b, 0))
        item = b.input(1)
        element = general([seq.type.element, item.type])
        if element is None:
            raise b.error(f"cannot insert a {item.type} into a sequence of {seq.type.element}")
        op = relay.SeqInsertOp(seq, item, _position_value(b, 2), SequenceType(element))
        return Value(ssa=b.emit(op))
    items = list(b.sequence(0))
    pos = _position(b, 2, len(items), inserting=True) if b.has_input(2) else len(items)
    items.insert(pos, b.value(1))
    return Value(items=items)


@onnx_op("SequenceErase", since=11, structured=True)
def sequence_erase(b: Node) -> Value:
    if is_run_time(b.value(0)) or not _known_position(b, 1):
        seq = lift(b, b.value(0), _hint(b, 0))
        return Value(ssa=b.emit(relay.SeqEraseOp(seq, _position_value(b, 1))))
    items = list(b.sequence(0))
    pos = _position(b, 1, len(items)) if b.has_input(1) else len(items) - 1
    if not items:
        raise b.error("erase from an empty sequence")
    del items[pos]
    return Value(items=items)


@onnx_op("SequenceAt", since=11, structured=True)
def sequence_at(b: Node) -> Value:
    if is_run_time(b.value(0)) or not _known_position(b, 1):
        seq = lift(b, b.value(0), _hint(b, 0))
        result = fresh_dims(b, seq.type.element, "d")
        return Value(ssa=b.emit(relay.SeqAtOp(seq, _position_value(b, 1), result)))
    items = b.sequence(0)
    return items[_position(b, 1, len(items))]


@onnx_op("SequenceLength", since=11, structured=True)
def sequence_length(b: Node) -> np.ndarray | SSAValue:
    if is_run_time(b.value(0)):
        return b.emit(relay.SeqLengthOp(b.value(0).ssa))
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
    keepdims = int(b.attr("keepdims", 1))
    size = b.shape(0)[axis]
    if not isinstance(size, int) or (b.has_input(1) and not b.is_const(1)):
        return _run_time_split(b, axis, keepdims)
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
        squeeze = not keepdims
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


def _run_time_split(b: Node, axis: int, keepdims: int) -> Value:
    x = b.input(0)
    dims = list(shape_of(x.type))
    split = None
    if b.has_input(1):
        split = b.input(1)
        if b.dtype(1) != np.int64:
            split = b.emit(relay.CastOp(split, dtype=tensor_type((), np.int64).element_type))
    if split is None and not keepdims:
        del dims[axis]
    else:
        dims[axis] = unknown()
    dims = [d if isinstance(d, int) else unknown() for d in dims]
    element = make_tensor(x.type.element_type, dims)
    op = relay.SplitToSequenceOp(x, split, axis, keepdims, SequenceType(element))
    return Value(ssa=b.emit(op))


@onnx_op("ConcatFromSequence", since=11, structured=True)
def concat_from_sequence(b: Node) -> SSAValue | np.ndarray:
    """The elements joined along `axis`, or stacked on a new axis (`new_axis`); known
    elements are joined at import."""
    new_axis = bool(b.attr("new_axis", 0))
    axis = int(b.attr("axis"))
    if is_run_time(b.value(0)):
        seq = b.value(0).ssa
        if not isinstance(seq.type.element, TensorType):
            raise b.unsupported("ConcatFromSequence of a sequence whose elements' rank is unknown")
        out_rank = seq.type.element.get_num_dims() + new_axis
        if not -out_rank <= axis < out_rank:
            raise b.error(f"axis {axis} is out of range for rank {out_rank}")
        axis %= out_rank
        dims = list(shape_of(seq.type.element))
        if new_axis:
            dims.insert(axis, unknown())
        else:
            dims[axis] = unknown()
        result = fresh_dims(b, make_tensor(seq.type.element.element_type, dims), "d")
        return b.emit(relay.ConcatFromSequenceOp(seq, axis, int(new_axis), result))
    items = b.sequence(0)
    if not items:
        raise b.error("concatenation of an empty sequence")
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


@onnx_op("SequenceMap", since=17, structured=True)
def sequence_map(b: Node) -> list[Value]:
    """The body applied to each position of the input sequences (the other inputs, tensors,
    are passed whole): a `relay.loop` over the first sequence's length whose body takes the
    elements out, converts the body graph once and inserts its outputs into the output
    sequences it carries."""
    body = b.attr("body")
    names = [v.name for v in body.input]
    if len(names) != b.n_inputs:
        raise b.error(f"the body takes {len(names)} inputs for {b.n_inputs} given")
    seqs = {
        i: lift(b, b.value(i), _hint(b, i))
        for i in range(b.n_inputs)
        if b.value(i).items is not None or is_run_time(b.value(i))
    }
    if 0 not in seqs:
        raise b.error("input 0 must be a sequence")
    tensors = {i: b.input(i) for i in range(b.n_inputs) if i not in seqs}
    importer = b.importer

    def convert(block: Block) -> list[SSAValue]:
        """The body on the elements at the block's iteration number."""
        saved, importer.block = importer.block, block
        try:
            bindings = {}
            for i, name in enumerate(names):
                if i in seqs:
                    element = fresh_dims(b, seqs[i].type.element, f"in{i}_")
                    bindings[name] = Value(
                        ssa=b.emit(relay.SeqAtOp(seqs[i], block.args[0], element))
                    )
                else:
                    bindings[name] = Value(ssa=tensors[i])
        finally:
            importer.block = saved
        return importer.convert_region(body, block, bindings)

    loop_args = [TensorType(i64, []), TensorType(i1, [])]
    scratch = Block(arg_types=loop_args)  # the outputs' types, from a first conversion
    kinds = [general([v.type]) for v in convert(scratch)]
    erase_block(scratch)
    out_types = [SequenceType(t) for t in kinds]
    block = Block(arg_types=[*loop_args, *out_types])
    outs = convert(block)
    saved, importer.block = importer.block, block
    try:
        grown = [
            b.emit(relay.SeqInsertOp(s, y, None, t))
            for s, y, t in zip(block.args[2:], outs, out_types)
        ]
    finally:
        importer.block = saved
    block.add_op(relay.YieldOp(block.args[1], *grown))
    empty = [b.emit(relay.SeqConstructOp([], t)) for t in out_types]
    count = b.emit(relay.SeqLengthOp(seqs[0]))
    loop = relay.LoopOp(count, b.constant(np.array(True)), empty, out_types, block)
    b.emit(loop)
    return [Value(ssa=r) for r in loop.outputs]
