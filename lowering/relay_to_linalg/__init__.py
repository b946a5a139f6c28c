"""`relay-to-linalg`: every relay op -> linalg on tensors (linalg.generic, linalg.matmul,
linalg.fill) plus tensor.empty / tensor.reshape / tensor.extract and arith constants.

The lowerings live beside the dialect's modules (`elementwise`, `nn`, `tensor`, `reduce`),
one function per op family, in the table `LOWERINGS`. After the pass no relay op is left:
an op without a lowering is an error naming its location.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, IntegerType, ModuleOp, Signedness, TensorType, bf16
from xdsl.ir import Attribute, Operation, ParametrizedAttribute, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xrelay.dialects import dims, relay
from xrelay.dialects.relay import RelayOp
from xrelay.errors import Error, ShapeError
from xrelay.ir import location_str
from xrelay.lowering.dynamic_sizes import DynamicUnsupported, SymbolSizes, is_dynamic_function
from xrelay.lowering.relay_to_linalg import elementwise, nn, reduce, tensor, winograd
from xrelay.lowering.relay_to_linalg.builder import Emitter, Lowering

LOWERINGS: dict[type[RelayOp], Lowering] = {
    **elementwise.LOWERINGS,
    **nn.LOWERINGS,
    **tensor.LOWERINGS,
    **reduce.LOWERINGS,
    **winograd.LOWERINGS,
}

# The lowerings that handle dynamic dimensions (sizes from `Emitter.sizes`): an op with a
# dynamic operand or result and a lowering not listed is `DynamicUnsupported`, and build
# compiles such a module once per binding of its symbols instead.
DYNAMIC_LOWERINGS: frozenset[Lowering] = frozenset(
    {
        *elementwise.DYNAMIC,
        *nn.DYNAMIC,
        *tensor.DYNAMIC,
        *reduce.DYNAMIC,
    }
)


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


def has_dynamic_types(op: Operation) -> bool:
    return any(dims.is_dynamic(v.type) for v in (*op.operands, *op.results))


class LowerRelayOp(RewritePattern):
    """Replace a relay op by the ops its lowering function inserts before it."""

    def __init__(self) -> None:
        self.sizes: dict[Operation, SymbolSizes] = {}  # per dynamic function

    def sizes_for(self, op: Operation) -> SymbolSizes | None:
        fn = op.parent_op()
        while fn is not None and not isinstance(fn, func.FuncOp):
            fn = fn.parent_op()
        if fn is None or not is_dynamic_function(fn):
            return None
        if fn not in self.sizes:
            self.sizes[fn] = SymbolSizes(fn)
        return self.sizes[fn]

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
        dynamic = has_dynamic_types(op)
        if dynamic and lower not in DYNAMIC_LOWERINGS:
            raise DynamicUnsupported(
                f"{location_str(op)}: '{op.name}' has no lowering for dynamic dimensions yet"
            )
        try:
            out = lower(Emitter(op, self.sizes_for(op) if dynamic else None), op)
        except DynamicUnsupported as e:
            raise DynamicUnsupported(f"{location_str(op)}: '{op.name}': {e}") from None
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
