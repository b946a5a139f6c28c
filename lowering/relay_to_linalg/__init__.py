"""`relay-to-linalg`: every relay op -> linalg on tensors (linalg.generic, linalg.matmul,
linalg.fill) plus tensor.empty / tensor.reshape / tensor.extract and arith constants.

The lowerings live beside the dialect's modules (`elementwise`, `nn`, `tensor`, `reduce`),
one function per op family, in the table `LOWERINGS`. After the pass no relay op is left:
an op without a lowering is an error naming its location.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, IntegerType, ModuleOp, Signedness, TensorType, bf16
from xdsl.ir import Attribute, ParametrizedAttribute, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xrelay.dialects import relay
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
    """An operand or result element type the lowering cannot handle yet: bf16."""
    for value in (*op.operands, *op.results):
        elem = value.type.element_type if isinstance(value.type, TensorType) else None
        if elem == bf16:
            return elem
    return None


def signless(attr: Attribute) -> Attribute:
    """`attr` with every unsigned integer type inside it (tensor, memref and function
    types, dense and integer attributes) made signless."""
    if isinstance(attr, IntegerType):
        if attr.signedness.data == Signedness.UNSIGNED:
            return IntegerType(attr.width.data)
        return attr
    if isinstance(attr, ArrayAttr):
        items = [signless(a) for a in attr.data]
        return attr if all(x is y for x, y in zip(items, attr.data)) else ArrayAttr(items)
    if isinstance(attr, ParametrizedAttribute):
        params = [signless(p) for p in attr.parameters]
        if all(x is y for x, y in zip(params, attr.parameters)):
            return attr
        return type(attr).new(params)
    return attr


def make_signless(module: ModuleOp) -> None:
    """ui8..ui64 -> i8..i64 everywhere. The lowerings encode signedness in the arith ops
    they pick (divui, cmpi ult, extui, uitofp, ...), so after them the storage types are
    signless, as arith and llvm expect."""
    for op in module.walk():
        for r in op.results:
            new = signless(r.type)
            if new is not r.type:
                r._type = new  # xDSL has no type setter
        for table in (op.properties, op.attributes):
            for key, value in table.items():
                table[key] = signless(value)
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    new = signless(arg.type)
                    if new is not arg.type:
                        arg._type = new


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


def check_no_relay_deferred(module: ModuleOp) -> None:
    for op in module.walk():
        if isinstance(op, relay.DeferredOp):
            raise Error(
                f"{location_str(op)}: '{op.name}' ({op.op_type.data}) needs the values of the "
                "inputs it reads: specialize the module first (xrelay.build does, per run)"
            )


def check_no_relay(module: ModuleOp) -> None:
    for op in module.walk():
        if isinstance(op, RelayOp):
            raise Error(f"{location_str(op)}: '{op.name}' survived lowering to linalg")


@dataclass(frozen=True)
class RelayToLinalg(ModulePass):
    """Lower every relay op to linalg on tensors, then make unsigned integer types signless.
    No options."""

    name = "relay-to-linalg"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_no_relay_deferred(op)
        PatternRewriteWalker(relay_to_linalg_patterns()[0], apply_recursively=False).rewrite_module(
            op
        )
        check_no_relay(op)
        make_signless(op)
