"""Partitioned functions whose target has a codegen are compiled by it and linked in.

For each `func.func` with `Compiler = "target"` in a module about to be lowered, the target's
codegen (see `xrelay.transforms.targets`) returns a native function; the function becomes an
external declaration under a process-unique symbol, its calls follow the rename, and the
JIT resolves the symbol to that address. Functions of targets without codegen are left to be
inlined and compiled with the rest.
"""

from __future__ import annotations

import itertools

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr
from xdsl.rewriter import Rewriter
from xrelay.errors import Error
from xrelay.transforms.partition_graph import COMPILER_ATTR
from xrelay.transforms.targets import ExternalFunction, get_target

_SYMBOLS = itertools.count()


def compile_external(module: ModuleOp) -> dict[str, ExternalFunction]:
    """Replace codegen-target functions by external declarations; returns symbol -> code."""
    linked: dict[str, ExternalFunction] = {}
    renames: dict[str, str] = {}
    for fn in [op for op in module.body.block.ops if isinstance(op, func.FuncOp)]:
        compiler = fn.attributes.get(COMPILER_ATTR)
        if not isinstance(compiler, StringAttr) or not fn.body.blocks:
            continue
        target = get_target(compiler.data)
        if target.codegen is None:
            continue
        try:
            code = target.codegen(fn)
        except Error:
            raise
        except Exception as e:
            raise Error(
                f"codegen of target '{target.name}' failed on @{fn.sym_name.data}: {e}"
            ) from e
        symbol = f"xrelay_ext_{next(_SYMBOLS)}_{fn.sym_name.data}"
        renames[fn.sym_name.data] = symbol
        linked[symbol] = code
        declaration = func.FuncOp.external(
            symbol, list(fn.function_type.inputs.data), list(fn.function_type.outputs.data)
        )
        Rewriter.replace_op(fn, declaration)
    for call in [op for op in module.walk() if isinstance(op, func.CallOp)]:
        name = call.callee.root_reference.data
        if name in renames:
            call.callee = SymbolRefAttr(renames[name])
    return linked
