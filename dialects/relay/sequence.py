"""Run-time sequences: `!relay.seq<tensor<...>>`, a list of tensors whose length and
element sizes are known only when the model runs (an ONNX sequence that is a graph input or
output, carried through a run-time loop, or edited at a position computed at run time).

The element type gives what every element shares: the element type and rank, and the
dimensions that are the same for all (`?` where they may differ). An op that takes a
tensor out (`relay.seq_at`, `relay.concat_from_sequence`) declares its result type with
fresh symbols where the sizes are not known, so ops after it infer their shapes as for any
dynamic dimension. The VM holds a sequence as a list of arrays (lowering/vm.py); sequences
never reach compiled segments.

    %s = relay.seq_construct %a, %b : (tensor<2xf32>, tensor<3xf32>) -> !relay.seq<tensor<?xf32>>
    %n = relay.seq_length %s : (!relay.seq<tensor<?xf32>>) -> tensor<i64>
    %x = relay.seq_at %s, %i : (!relay.seq<tensor<?xf32>>, tensor<i64>) -> tensor<?xf32, #relay.dims<"at_0">>
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IntegerAttr, TensorType, UnrankedTensorType, i64
from xdsl.ir import Attribute, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xrelay.dialects.dims import shape_of
from xrelay.errors import ShapeError

from .base import fmt_type


@irdl_attr_definition
class SequenceType(ParametrizedAttribute, TypeAttribute):
    """A run-time list of tensors that share `element`'s element type and rank (and its
    static dimensions)."""

    name = "relay.seq"

    element: Attribute  # a TensorType, or an UnrankedTensorType when the rank is not known

    def __init__(self, element: TensorType | UnrankedTensorType) -> None:
        super().__init__(element)

    def verify(self) -> None:
        if not isinstance(self.element, TensorType | UnrankedTensorType):
            raise ShapeError(f"!relay.seq holds tensors, not {self.element}")

    @property
    def ranked(self) -> bool:
        return isinstance(self.element, TensorType)


def fits(name: str, t: Attribute, element: TensorType, what: str) -> None:
    """A tensor of type `t` may be an element of a sequence of `element`s."""
    if isinstance(element, UnrankedTensorType):
        if (
            isinstance(t, TensorType | UnrankedTensorType)
            and t.element_type == element.element_type
        ):
            return
        raise ShapeError(f"'{name}' {what} is {t}, which is not a {element} element")
    if isinstance(t, UnrankedTensorType):
        raise ShapeError(f"'{name}' {what} is {t}, which is not a {fmt_type(element)} element")
    ok = isinstance(t, TensorType) and t.element_type == element.element_type
    ok = ok and t.get_num_dims() == element.get_num_dims()
    if ok:
        ok = all(g == w for g, w in zip(shape_of(t), shape_of(element)) if isinstance(w, int))
    if not ok:
        raise ShapeError(
            f"'{name}' {what} is {fmt_type(t)}, which is not a {fmt_type(element)} element"
        )


def _seq(name: str, value: SSAValue | Attribute, what: str = "sequence") -> SequenceType:
    t = value.type if isinstance(value, SSAValue) else value
    if not isinstance(t, SequenceType):
        raise ShapeError(f"'{name}' {what} must be a !relay.seq, got {t}")
    return t


def _position(name: str, value: SSAValue | None) -> None:
    if value is not None and (
        not isinstance(value.type, TensorType)
        or value.type.get_shape() not in ((), (1,))
        or value.type.element_type != i64
    ):
        raise ShapeError(f"'{name}' position must be tensor<i64>, got {fmt_type(value.type)}")


class _SeqOp(IRDLOperation):
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"


@irdl_op_definition
class SeqConstructOp(_SeqOp):
    """A sequence of the given tensors (none: an empty sequence)."""

    name = "relay.seq_construct"
    items = var_operand_def(TensorType)
    result = result_def(SequenceType)

    def __init__(self, items: Sequence[SSAValue], result_type: SequenceType) -> None:
        super().__init__(operands=[list(items)], result_types=[result_type])

    def verify_(self) -> None:
        element = _seq(self.name, self.result, "result").element
        for i, v in enumerate(self.items):
            fits(self.name, v.type, element, f"operand {i}")


@irdl_op_definition
class SeqInsertOp(_SeqOp):
    """The sequence with `item` inserted before `position` (negative: from the back;
    absent: at the end)."""

    name = "relay.seq_insert"
    seq = operand_def(SequenceType)
    item = operand_def(TensorType)
    position = opt_operand_def(TensorType)
    result = result_def(SequenceType)

    def __init__(
        self,
        seq: SSAValue,
        item: SSAValue,
        position: SSAValue | None,
        result_type: SequenceType | None = None,
    ) -> None:
        super().__init__(
            operands=[seq, item, [] if position is None else [position]],
            result_types=[result_type or seq.type],
        )

    def verify_(self) -> None:
        """The result's element type holds the sequence's elements and the item."""
        element = _seq(self.name, self.result, "result").element
        fits(self.name, _seq(self.name, self.seq).element, element, "sequence's element type")
        fits(self.name, self.item.type, element, "item")
        _position(self.name, self.position)


@irdl_op_definition
class SeqEraseOp(_SeqOp):
    """The sequence without the element at `position` (absent: the last)."""

    name = "relay.seq_erase"
    seq = operand_def(SequenceType)
    position = opt_operand_def(TensorType)
    result = result_def(SequenceType)

    def __init__(self, seq: SSAValue, position: SSAValue | None) -> None:
        super().__init__(
            operands=[seq, [] if position is None else [position]], result_types=[seq.type]
        )

    def verify_(self) -> None:
        t = _seq(self.name, self.seq)
        _position(self.name, self.position)
        if self.result.type != t:
            raise ShapeError(f"'{self.name}' result must be {t}, got {self.result.type}")


@irdl_op_definition
class SeqAtOp(_SeqOp):
    """The element at `position` (negative: from the back)."""

    name = "relay.seq_at"
    seq = operand_def(SequenceType)
    position = operand_def(TensorType)
    result = result_def(TensorType)

    def __init__(self, seq: SSAValue, position: SSAValue, result_type: TensorType) -> None:
        super().__init__(operands=[seq, position], result_types=[result_type])

    def verify_(self) -> None:
        t = _seq(self.name, self.seq)
        _position(self.name, self.position)
        fits(self.name, self.result.type, t.element, "result")


@irdl_op_definition
class SeqLengthOp(_SeqOp):
    """The number of elements, as a tensor<i64>."""

    name = "relay.seq_length"
    seq = operand_def(SequenceType)
    result = result_def(TensorType)

    def __init__(self, seq: SSAValue) -> None:
        super().__init__(operands=[seq], result_types=[TensorType(i64, [])])

    def verify_(self) -> None:
        _seq(self.name, self.seq)
        if self.result.type != TensorType(i64, []):
            raise ShapeError(f"'{self.name}' result must be tensor<i64>")


@irdl_op_definition
class ConcatFromSequenceOp(_SeqOp):
    """The elements joined along `axis`, or stacked on a new axis `axis` (`new_axis` = 1)."""

    name = "relay.concat_from_sequence"
    seq = operand_def(SequenceType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr)
    new_axis = prop_def(IntegerAttr)

    def __init__(self, seq: SSAValue, axis: int, new_axis: int, result_type: TensorType) -> None:
        super().__init__(
            operands=[seq],
            result_types=[result_type],
            properties={"axis": IntegerAttr(axis, i64), "new_axis": IntegerAttr(new_axis, i64)},
        )

    def verify_(self) -> None:
        element = _seq(self.name, self.seq).element
        if not isinstance(element, TensorType):
            raise ShapeError(
                f"'{self.name}' needs the elements' rank: the sequence is {self.seq.type}"
            )
        rank = element.get_num_dims() + self.new_axis.value.data
        if not isinstance(self.result.type, TensorType) or self.result.type.get_num_dims() != rank:
            raise ShapeError(f"'{self.name}' result must have rank {rank}")
        if self.result.type.element_type != element.element_type:
            raise ShapeError(f"'{self.name}' result must hold {element.element_type}")
        if not 0 <= self.axis.value.data < rank:
            raise ShapeError(
                f"'{self.name}' axis {self.axis.value.data} is out of range for rank {rank}"
            )


@irdl_op_definition
class SplitToSequenceOp(_SeqOp):
    """Pieces of `data` along `axis`: of the sizes `split` lists (1-d), of one size (0-d;
    the last piece shorter), or without `split` of size 1, squeezed unless `keepdims`."""

    name = "relay.split_to_sequence"
    data = operand_def(TensorType)
    split = opt_operand_def(TensorType)
    result = result_def(SequenceType)
    axis = prop_def(IntegerAttr)
    keepdims = prop_def(IntegerAttr)

    def __init__(
        self,
        data: SSAValue,
        split: SSAValue | None,
        axis: int,
        keepdims: int,
        result_type: SequenceType,
    ) -> None:
        super().__init__(
            operands=[data, [] if split is None else [split]],
            result_types=[result_type],
            properties={"axis": IntegerAttr(axis, i64), "keepdims": IntegerAttr(keepdims, i64)},
        )

    def verify_(self) -> None:
        element = _seq(self.name, self.result, "result").element
        rank = self.data.type.get_num_dims()
        if not 0 <= self.axis.value.data < rank:
            raise ShapeError(
                f"'{self.name}' axis {self.axis.value.data} is out of range for rank {rank}"
            )
        squeezed = self.split is None and not self.keepdims.value.data
        if (
            element.get_num_dims() != rank - squeezed
            or element.element_type != self.data.type.element_type
        ):
            raise ShapeError(
                f"'{self.name}' elements must be rank-{rank - squeezed} {self.data.type.element_type}"
            )
        if self.split is not None and (
            self.split.type.get_num_dims() > 1 or self.split.type.element_type != i64
        ):
            raise ShapeError(f"'{self.name}' split must be a 0-d or 1-d i64 tensor")


SEQUENCE_OPS = [
    SeqConstructOp,
    SeqInsertOp,
    SeqEraseOp,
    SeqAtOp,
    SeqLengthOp,
    ConcatFromSequenceOp,
    SplitToSequenceOp,
]
