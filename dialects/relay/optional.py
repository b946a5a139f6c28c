"""Run-time optionals: `!relay.opt<T>`, a value of type T (a tensor or a sequence) or none,
decided when the model runs (an ONNX optional graph input, or an Optional that a run-time
branch or loop gives). The VM holds one as the value or None (lowering/vm.py); optionals
never reach compiled segments.

    %o = relay.opt_construct %x : (tensor<3xf32>) -> !relay.opt<tensor<3xf32>>
    %n = relay.opt_construct : () -> !relay.opt<tensor<3xf32>>
    %h = relay.opt_has %o : (!relay.opt<tensor<3xf32>>) -> tensor<i1>
    %x2 = relay.opt_get %o : (!relay.opt<tensor<3xf32>>) -> tensor<3xf32>
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType, i1
from xdsl.ir import Attribute, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    result_def,
    var_operand_def,
)
from xrelay.errors import ShapeError

from .control import compatible
from .sequence import SequenceType


@irdl_attr_definition
class OptionalType(ParametrizedAttribute, TypeAttribute):
    """A value of type `inner` (a tensor or a !relay.seq), or none."""

    name = "relay.opt"

    inner: Attribute

    def __init__(self, inner: Attribute) -> None:
        super().__init__(inner)

    def verify(self) -> None:
        if not isinstance(self.inner, TensorType | SequenceType):
            raise ShapeError(f"!relay.opt holds a tensor or a !relay.seq, not {self.inner}")


def _opt(name: str, value: SSAValue | Attribute, what: str) -> OptionalType:
    t = value.type if isinstance(value, SSAValue) else value
    if not isinstance(t, OptionalType):
        raise ShapeError(f"'{name}' {what} must be a !relay.opt, got {t}")
    return t


class _OptOp(IRDLOperation):
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"


@irdl_op_definition
class OptConstructOp(_OptOp):
    """An optional holding `value`, or none without an operand."""

    name = "relay.opt_construct"
    value = var_operand_def()
    result = result_def(OptionalType)

    def __init__(self, value: Sequence[SSAValue], result_type: OptionalType) -> None:
        super().__init__(operands=[list(value)], result_types=[result_type])

    def verify_(self) -> None:
        t = _opt(self.name, self.result, "result")
        if len(self.value) > 1:
            raise ShapeError(f"'{self.name}' takes at most one value")
        if self.value:
            compatible(self.name, self.value[0].type, t.inner, "value")


@irdl_op_definition
class OptHasOp(_OptOp):
    """Whether the optional holds a value, as a tensor<i1>."""

    name = "relay.opt_has"
    input = operand_def(OptionalType)
    result = result_def(TensorType)

    def __init__(self, value: SSAValue) -> None:
        super().__init__(operands=[value], result_types=[TensorType(i1, [])])

    def verify_(self) -> None:
        _opt(self.name, self.input, "operand")
        if self.result.type != TensorType(i1, []):
            raise ShapeError(f"'{self.name}' result must be tensor<i1>")


@irdl_op_definition
class OptGetOp(_OptOp):
    """The value the optional holds (an error at run time when it holds none)."""

    name = "relay.opt_get"
    input = operand_def(OptionalType)
    result = result_def()

    def __init__(self, value: SSAValue, result_type: Attribute) -> None:
        super().__init__(operands=[value], result_types=[result_type])

    def verify_(self) -> None:
        t = _opt(self.name, self.input, "operand")
        compatible(self.name, self.result.type, t.inner, "result")


OPTIONAL_OPS = [OptConstructOp, OptHasOp, OptGetOp]
