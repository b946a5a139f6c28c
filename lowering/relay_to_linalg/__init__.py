"""`relay-to-linalg`: every relay op -> linalg on tensors (linalg.generic, linalg.matmul,
linalg.fill) plus tensor.empty / tensor.reshape / tensor.extract and arith constants.

The lowerings live beside the dialect's modules (`elementwise`, `nn`, `tensor`, `reduce`),
one function per op family, in the table `LOWERINGS`. After the pass no relay op is left:
an op without a lowering is an error naming its location.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerType, ModuleOp, Signedness, TensorType, bf16
from xdsl.ir import Attribute, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xrelay.dialects.relay import RelayOp
from xrelay.errors import Error, ShapeError
from xrelay.ir import location_str
from xrelay.lowering.relay_to_linalg import elementwise, nn, reduce, tensor
from xrelay.lowering.relay_to_linalg.builder import Emitter, Lowering

LOWERINGS: dict[type[RelayOp], Lowering] = {
    **elementwise.LOWERINGS,
    **nn.LOWERINGS,
    **tensor.LOWERINGS,
    **reduce.LOWERINGS,
}


def unsupported_element_type(op: RelayOp) -> Attribute | None:
    """An operand or result element type the lowering cannot handle yet: unsigned integers
    (arith works on signless ones) and bf16."""
    for value in (*op.operands, *op.results):
        elem = value.type.element_type if isinstance(value.type, TensorType) else None
        if elem == bf16:
            return elem
        if isinstance(elem, IntegerType) and elem.signedness.data != Signedness.SIGNLESS:
            return elem
    return None


class LowerRelayOp(RewritePattern):
    """Replace a relay op by the ops its lowering function inserts before it."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: RelayOp, rewriter: PatternRewriter, /) -> None:
        lower = LOWERINGS.get(type(op))
        if lower is None:
            raise Error(f"{location_str(op)}: no lowering to linalg for '{op.name}'")
        elem = unsupported_element_type(op)
        if elem is not None:
            raise Error(
                f"{location_str(op)}: cannot lower '{op.name}': element type {elem} is not supported yet"
            )
        try:
            out = lower(Emitter(op), op)
        except ShapeError as e:
            raise Error(f"{location_str(op)}: cannot lower '{op.name}': {e}") from None
        results = [out] if isinstance(out, SSAValue) else list(out)
        rewriter.replace(op, [], results)


def relay_to_linalg_patterns() -> list[RewritePattern]:
    return [LowerRelayOp()]


def check_no_relay(module: ModuleOp) -> None:
    for op in module.walk():
        if isinstance(op, RelayOp):
            raise Error(f"{location_str(op)}: '{op.name}' survived lowering to linalg")


@dataclass(frozen=True)
class RelayToLinalg(ModulePass):
    """Lower every relay op to linalg on tensors. No options."""

    name = "relay-to-linalg"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(relay_to_linalg_patterns()[0], apply_recursively=False).rewrite_module(
            op
        )
        check_no_relay(op)
