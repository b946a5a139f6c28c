"""Run-time control flow: `relay.if` and `relay.loop`, with regions ending in `relay.yield`.

Regions read values of the enclosing function directly (an ONNX subgraph reads its outer
graph's values the same way). Values that cross a region boundary may change shape: a
dimension that is not the same on every path is a symbol of its own (fresh names chosen by
the frontend), so a type states what is proven and nothing more. The verifier requires the
element types and ranks to agree, and every static dimension too.

    %r = relay.if %cond : (tensor<i1>) -> tensor<?xf32, #relay.dims<"r">> {
      relay.yield %a : tensor<3xf32>
    } else {
      relay.yield %b : tensor<5xf32>
    }

`relay.loop` has ONNX Loop's (and TorchScript prim::Loop's) semantics: operands are the
maximum trip count (tensor<i64>), the initial condition (tensor<i1>) and the initial carried
values; the body's block arguments are the iteration number, the condition and the carried
values; it yields the next condition, the next carried values and one element of each scan
output. The results are the final carried values, then each scan output: its elements
stacked on a new first axis (whose length is the number of iterations run).

    %n, %s = relay.loop %max, %c, %x : (tensor<i64>, tensor<i1>, tensor<2xf32>)
        -> (tensor<2xf32>, tensor<?x2xf32, #relay.dims<"steps">>) {
    ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %xi: tensor<2xf32>):
      ...
      relay.yield %c2, %x2, %x2 : tensor<i1>, tensor<2xf32>, tensor<2xf32>
    }
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType, i1, i64
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import IsTerminator
from xrelay.dialects.dims import shape_of
from xrelay.errors import ShapeError

from .base import fmt_type


@irdl_op_definition
class YieldOp(IRDLOperation):
    """The values a `relay.if` branch or a `relay.loop` body gives back."""

    name = "relay.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator())
    assembly_format = "attr-dict ($values^ `:` type($values))?"

    def __init__(self, *values: SSAValue) -> None:
        super().__init__(operands=[list(values)])


def compatible(name: str, got: Attribute, want: Attribute, what: str) -> None:
    """`got` may stand where `want` is declared: a tensor of the same element type and
    rank, equal in every dimension `want` fixes."""
    from .optional import OptionalType
    from .sequence import SequenceType

    if isinstance(got, OptionalType) and isinstance(want, OptionalType):
        compatible(name, got.inner, want.inner, f"{what}'s value")
        return
    if isinstance(got, SequenceType) and isinstance(want, SequenceType):
        if not want.ranked and got.element.element_type == want.element.element_type:
            return  # elements of any rank
        compatible(name, got.element, want.element, f"{what}'s element")
        return
    ok = isinstance(got, TensorType) and isinstance(want, TensorType)
    ok = ok and got.element_type == want.element_type and got.get_num_dims() == want.get_num_dims()
    if ok:
        for g, w in zip(shape_of(got), shape_of(want)):
            if isinstance(w, int) and g != w:
                ok = False
    if not ok:
        raise ShapeError(f"'{name}' {what} is {fmt_type(got)}, expected {fmt_type(want)}")


def _scalar(name: str, value: SSAValue | Attribute, elem: Attribute, what: str) -> None:
    t = value.type if isinstance(value, SSAValue) else value
    if not isinstance(t, TensorType) or t.get_shape() != () or t.element_type != elem:
        raise ShapeError(f"'{name}' {what} must be tensor<{elem}>, got {fmt_type(t)}")


def _yield_of(name: str, region: Region, what: str) -> YieldOp:
    if len(region.blocks) != 1:
        raise ShapeError(f"'{name}' {what} must have one block")
    last = region.block.last_op
    if not isinstance(last, YieldOp):
        raise ShapeError(f"'{name}' {what} must end with relay.yield")
    return last


@irdl_op_definition
class IfOp(IRDLOperation):
    """Runs `then` when the 0-d boolean `cond` is true, else `else`; the results are what
    the branch run yields."""

    name = "relay.if"
    cond = operand_def(TensorType)
    outputs = var_result_def()
    then_region = region_def("single_block")
    else_region = region_def("single_block")
    assembly_format = (
        "$cond attr-dict `:` functional-type($cond, $outputs) $then_region `else` $else_region"
    )

    def __init__(
        self,
        cond: SSAValue,
        result_types: Sequence[Attribute],
        then_block: Block,
        else_block: Block,
    ) -> None:
        super().__init__(
            operands=[cond],
            result_types=[list(result_types)],
            regions=[Region(then_block), Region(else_block)],
        )

    def verify_(self) -> None:
        _scalar(self.name, self.cond, i1, "condition")
        for region, what in ((self.then_region, "then branch"), (self.else_region, "else branch")):
            if region.block.args:
                raise ShapeError(f"'{self.name}' {what} takes no block arguments")
            values = _yield_of(self.name, region, what).values
            if len(values) != len(self.outputs):
                raise ShapeError(
                    f"'{self.name}' {what} yields {len(values)} values for {len(self.outputs)} results"
                )
            for i, (v, r) in enumerate(zip(values, self.outputs)):
                compatible(self.name, v.type, r.type, f"{what} value {i}")


@irdl_op_definition
class LoopOp(IRDLOperation):
    """ONNX Loop: while `cond` holds and fewer than `max_trip` iterations ran, run the body
    on the carried values; scan outputs stack one element per iteration."""

    name = "relay.loop"
    max_trip = operand_def(TensorType)
    cond = operand_def(TensorType)
    initial = var_operand_def()
    outputs = var_result_def()
    body = region_def("single_block")
    assembly_format = (
        "$max_trip `,` $cond (`,` $initial^)? attr-dict `:` "
        "functional-type(operands, $outputs) $body"
    )

    def __init__(
        self,
        max_trip: SSAValue,
        cond: SSAValue,
        initial: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        body: Block,
    ) -> None:
        super().__init__(
            operands=[max_trip, cond, list(initial)],
            result_types=[list(result_types)],
            regions=[Region(body)],
        )

    @property
    def n_carried(self) -> int:
        return len(self.initial)

    def verify_(self) -> None:
        name, n = self.name, len(self.initial)
        _scalar(name, self.max_trip, i64, "max_trip")
        _scalar(name, self.cond, i1, "condition")
        args = self.body.block.args
        if len(args) != 2 + n:
            raise ShapeError(f"'{name}' body takes {len(args)} arguments, expected {2 + n}")
        _scalar(name, args[0].type, i64, "iteration argument")
        _scalar(name, args[1].type, i1, "condition argument")
        if len(self.outputs) < n:
            raise ShapeError(f"'{name}' has {len(self.outputs)} results for {n} carried values")
        yielded = _yield_of(name, self.body, "body").values
        n_scan = len(self.outputs) - n
        if len(yielded) != 1 + n + n_scan:
            raise ShapeError(
                f"'{name}' body yields {len(yielded)} values, expected {1 + n + n_scan} "
                f"(condition, {n} carried, {n_scan} scan)"
            )
        _scalar(name, yielded[0], i1, "yielded condition")
        for i in range(n):
            arg = args[2 + i].type
            compatible(name, self.initial[i].type, arg, f"initial value {i}")
            compatible(name, yielded[1 + i].type, arg, f"yielded value {i}")
            compatible(name, arg, self.outputs[i].type, f"carried value {i}")
        for i in range(n_scan):
            elem, out = yielded[1 + n + i].type, self.outputs[n + i].type
            if not isinstance(out, TensorType) or out.get_num_dims() < 1:
                raise ShapeError(f"'{name}' scan output {i} must have a leading axis")
            stacked = TensorType(elem.element_type, [1, *elem.get_shape()])  # ranks and types
            if (
                out.element_type != elem.element_type
                or out.get_num_dims() != stacked.get_num_dims()
            ):
                raise ShapeError(
                    f"'{name}' scan output {i} is {fmt_type(out)} for elements {fmt_type(elem)}"
                )
            for g, w in zip(shape_of(elem), shape_of(out)[1:]):
                if isinstance(w, int) and g != w:
                    raise ShapeError(
                        f"'{name}' scan output {i} is {fmt_type(out)} for elements {fmt_type(elem)}"
                    )


CONTROL_OPS = [IfOp, LoopOp, YieldOp]
