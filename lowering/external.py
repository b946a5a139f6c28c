"""`link-external`: partitioned functions whose target has a codegen are compiled by it
and linked in.

For each `func.func` with `Compiler = "target"` in a module about to be lowered, the
function becomes an external declaration under a process-unique symbol and its calls follow
the rename. Under `build` (a BuildContext) the target's codegen (see
`xrelay.transforms.targets`) also returns a native function, kept in `ctx.externals`, and
the JIT resolves the symbol to its address. Functions of targets without codegen are left
to be inlined and compiled with the rest.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xrelay.errors import Error
from xrelay.lowering.context import BuildContext
from xrelay.transforms.partition_graph import COMPILER_ATTR
from xrelay.transforms.targets import ExternalFunction, Target, get_target

_SYMBOLS = itertools.count()


def compile_external(module: ModuleOp, codegen: bool = True) -> dict[str, ExternalFunction]:
    """Replace codegen-target functions by external declarations; returns symbol -> code
    (empty without `codegen`: the IR changes alone)."""
    linked: dict[str, ExternalFunction] = {}
    renames: dict[str, str] = {}
    for fn in [op for op in module.body.block.ops if isinstance(op, func.FuncOp)]:
        compiler = fn.attributes.get(COMPILER_ATTR)
        if not isinstance(compiler, StringAttr) or not fn.body.blocks:
            continue
        target = get_target(compiler.data)
        if target.codegen is None:
            continue
        symbol = f"xrelay_ext_{next(_SYMBOLS)}_{fn.sym_name.data}"
        renames[fn.sym_name.data] = symbol
        declaration = func.FuncOp.external(
            symbol, list(fn.function_type.inputs.data), list(fn.function_type.outputs.data)
        )
        if codegen:
            linked[symbol] = _codegen(target, fn)
        Rewriter.replace_op(fn, declaration)
    for call in [op for op in module.walk() if isinstance(op, func.CallOp)]:
        name = call.callee.root_reference.data
        if name in renames:
            call.callee = SymbolRefAttr(renames[name])
    return linked


def _codegen(target: Target, fn: func.FuncOp) -> ExternalFunction:
    assert target.codegen is not None
    try:
        return target.codegen(fn)
    except Error:
        raise
    except Exception as e:
        raise Error(f"codegen of target '{target.name}' failed on @{fn.sym_name.data}: {e}") from e


@dataclass(frozen=True)
class LinkExternal(ModulePass):
    """Functions of targets with a codegen -> external declarations (compiled under
    `build`). No options."""

    name = "link-external"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        linked = compile_external(op, codegen=isinstance(ctx, BuildContext))
        if isinstance(ctx, BuildContext):
            ctx.externals.update(linked)
