"""`relay.deferred`: a frontend node whose conversion waits for run-time values.

Some graph inputs decide shapes or semantics: a Reshape target, reduction axes, Slice
bounds, TopK's k, Pad widths, Resize sizes. When such an input is a graph input rather than
a constant, the frontend keeps the node as it came (`payload`: the serialized node of
`source`, e.g. an ONNX NodeProto) with all its operands; `value_operands` lists the operands
whose values the conversion reads. Each result has a rank and an element type, and fresh
symbols for its dimensions (they depend on the values).

At run time, specialization (dialects/specialize.py) gives every value operand its value
(a graph input's, as passed to `lib.run`, or a constant's), calls the expander `source`
registered in `EXPANDERS` to convert the node into relay ops, and binds the fresh symbols
to the sizes those ops produce. So each distinct set of values compiles once, with the
op's exact semantics; no lowering ever sees a `relay.deferred`.

    %y = relay.deferred %x, %shape {source = "onnx", op_type = "Reshape",
           payload = "<base64>", value_operands = array<i64: 1>}
        : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32, #relay.dims<"y_0","y_1">>
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import (
    DenseArrayBase,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    prop_def,
    var_operand_def,
    var_result_def,
)
from xrelay.dialects.dims import is_dynamic
from xrelay.errors import Error, ShapeError

# source -> expander(op, values by operand index) -> the results' replacements, inserted
# before `op`. Frontends register theirs when imported (frontends/onnx/deferred.py).
Expander = Callable[["DeferredOp", dict[int, np.ndarray]], Sequence[SSAValue]]
EXPANDERS: dict[str, Expander] = {}


@irdl_op_definition
class DeferredOp(IRDLOperation):
    """A frontend node converted at run time, once its value operands are known."""

    name = "relay.deferred"
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    source = prop_def(StringAttr)
    op_type = prop_def(StringAttr)
    payload = prop_def(StringAttr)
    value_operands = prop_def(DenseArrayBase)

    def __init__(
        self,
        source: str,
        op_type: str,
        payload: bytes,
        operands: Sequence[SSAValue],
        value_operands: Sequence[int],
        result_types: Sequence[Attribute],
    ) -> None:
        super().__init__(
            operands=[list(operands)],
            result_types=[list(result_types)],
            properties={
                "source": StringAttr(source),
                "op_type": StringAttr(op_type),
                "payload": StringAttr(base64.b64encode(payload).decode()),
                "value_operands": DenseArrayBase.from_list(i64, list(value_operands)),
            },
        )

    @property
    def node_bytes(self) -> bytes:
        return base64.b64decode(self.payload.data)

    @property
    def value_indices(self) -> tuple[int, ...]:
        return tuple(int(i) for i in self.value_operands.iter_values())

    def verify_(self) -> None:
        try:
            base64.b64decode(self.payload.data, validate=True)
        except ValueError:
            raise ShapeError(f"'{self.name}': payload is not base64") from None
        for i in self.value_indices:
            if not 0 <= i < len(self.inputs):
                raise ShapeError(
                    f"'{self.name}': value operand {i} out of range ({len(self.inputs)} operands)"
                )
            t = self.inputs[i].type
            assert isinstance(t, TensorType)
            if is_dynamic(t):
                raise ShapeError(
                    f"'{self.name}': value operand {i} must be statically shaped, got {t}"
                )


def expand(op: DeferredOp, values: dict[int, np.ndarray]) -> Sequence[SSAValue]:
    """Convert `op` with its value operands' `values` (see the module docstring)."""
    expander = EXPANDERS.get(op.source.data)
    if expander is None:
        raise Error(
            f"'{op.name}' of source '{op.source.data}': no expander is registered "
            f"(import xrelay.frontends.{op.source.data})"
        )
    return expander(op, values)
