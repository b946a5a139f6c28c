"""`inline-calls`: replace each `func.call` of a function defined in the module by a copy of
its body, then erase the functions no call reaches any more (other than @main).

Composite functions (from `merge-composite`) and partitioned regions stay separate functions
through the relay passes; lowering flattens them back into @main first, so every later stage
sees one relay function. A call of an external declaration is left alone.

Before:
    %y = func.call @composite_dense_bias_0(%x) : (tensor<2x4xf32>) -> tensor<2x3xf32>
    func.func private @composite_dense_bias_0(%a: tensor<2x4xf32>) -> tensor<2x3xf32> {...}
After:
    %w = relay.constant ...
    %d = relay.nn.dense %x, %w : ...
    %y = relay.add %d, %b : ...
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter


def inline_call(call: func.CallOp, callee: func.FuncOp) -> None:
    mapping: dict[SSAValue, SSAValue] = dict(zip(callee.body.block.args, call.arguments))
    for op in callee.body.block.ops:
        if isinstance(op, func.ReturnOp):
            for old, new in zip(call.results, op.arguments):
                old.replace_all_uses_with(mapping[new])
            break
        clone = op.clone(value_mapper=mapping)
        Rewriter.insert_op(clone, InsertPoint.before(call))
        mapping.update(zip(op.results, clone.results))
    Rewriter.erase_op(call)


def inline_calls(module: ModuleOp) -> None:
    functions = {
        op.sym_name.data: op
        for op in module.body.block.ops
        if isinstance(op, func.FuncOp) and op.body.blocks
    }
    changed = True
    while changed:  # callees may call further functions
        changed = False
        for call in [op for op in module.walk() if isinstance(op, func.CallOp)]:
            callee = functions.get(call.callee.root_reference.data)
            if callee is not None and callee is not call.parent_op():
                inline_call(call, callee)
                changed = True
    erase_uncalled(module, functions)


def erase_uncalled(module: ModuleOp, functions: dict[str, func.FuncOp]) -> None:
    """Erase those of `functions` (other than @main) that no call in `module` reaches."""
    called = {op.callee.root_reference.data for op in module.walk() if isinstance(op, func.CallOp)}
    for name, fn in functions.items():
        if name != "main" and name not in called:
            Rewriter.erase_op(fn)


@dataclass(frozen=True)
class InlineCalls(ModulePass):
    """Inline calls of functions defined in the module. No options."""

    name = "inline-calls"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        inline_calls(op)
