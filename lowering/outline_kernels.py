"""`outline-kernels`: move each linalg op on memrefs into its own private function (a
kernel) and call it from where it stood.

Every later stage then works on small functions: xDSL's scf-to-cf is quadratic in the
number of blocks of one region, and LLVM's optimizer in the size of one function, so a
whole model in one function compiles in minutes where per-op kernels take seconds. The
kernel is also the unit that runs in parallel: a kernel with enough independent work is
marked (`xrelay.split`) for `parallel-loops`.

A kernel takes the buffers its op reads or writes (operands and buffers its body loads
from) as arguments; scalar constants it uses are cloned into it. Kernels are named after
the location of the op they came from (`@k12_conv1` for the 13th kernel, node `conv1`).
Ops that are identical up to their operands (the same op, types and constants, as repeated
layers give) call one kernel, named after the first: a ResNet-50 has 299 linalg ops and
48 distinct kernels, so LLVM compiles a sixth of the code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    ArrayAttr,
    FunctionType,
    IntegerAttr,
    ModuleOp,
    NameLoc,
    StringAttr,
)
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xrelay.lowering.parallel_loops import SPLIT_ATTR, split_loop

KERNEL_OPS = (linalg.GenericOp, linalg.FillOp, linalg.MatmulOp)


def _inside(value: SSAValue, root: Operation) -> bool:
    owner = value.owner
    op = owner.parent_op() if isinstance(owner, Block) else owner
    while op is not None:
        if op is root:
            return True
        op = op.parent_op()
    return False


def external_values(root: Operation) -> list[SSAValue]:
    """Values `root` and its nested ops use that are defined outside it, in first-use order."""
    seen: dict[SSAValue, None] = {}
    for op in root.walk():
        for value in op.operands:
            if value not in seen and not _inside(value, root):
                seen[value] = None
    return list(seen)


def _kernel_name(op: Operation, index: int) -> str:
    loc = op.location
    label = loc.desc.data if isinstance(loc, NameLoc) else ""
    label = re.sub(r"[^A-Za-z0-9_]", "_", label)[:40]
    return f"k{index}_{label}" if label else f"k{index}"


def kernel_of(op: Operation, name: str) -> tuple[func.FuncOp, list[SSAValue]]:
    """A private function `name` holding a copy of `op`, and the values to call it with."""
    externals = external_values(op)
    constants = [v for v in externals if isinstance(v.owner, arith.ConstantOp)]
    args = [v for v in externals if v not in constants]
    block = Block(arg_types=[v.type for v in args])
    mapping: dict[SSAValue, SSAValue] = dict(zip(args, block.args))
    for value in constants:
        clone = value.owner.clone()
        block.add_op(clone)
        mapping[value] = clone.results[0]
    block.add_op(op.clone(value_mapper=mapping))
    block.add_op(func.ReturnOp())
    kernel = func.FuncOp(
        name, FunctionType.from_lists(block.arg_types, []), Region(block), visibility="private"
    )
    split = split_loop(op)
    if split is not None:
        kernel.attributes[SPLIT_ATTR] = ArrayAttr([IntegerAttr(v, 64) for v in split])
    return kernel, args


@dataclass(frozen=True)
class OutlineKernels(ModulePass):
    """Outline every linalg op on memrefs into a private kernel function; ops that are
    the same up to their operands share one. No options."""

    name = "outline-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        count = 0
        known: dict[str, str] = {}  # kernel text (under a placeholder name) -> symbol
        for fn in [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks]:
            for inner in list(fn.body.block.ops):
                if not isinstance(inner, KERNEL_OPS):
                    continue
                kernel, args = kernel_of(inner, "kernel")
                key = str(kernel)
                name = known.get(key)
                if name is None:
                    name = known[key] = _kernel_name(inner, count)
                    kernel.sym_name = StringAttr(name)
                    op.body.block.insert_op_before(kernel, fn)
                    count += 1
                call = func.CallOp(name, args, [])
                call.location = inner.location
                Rewriter.replace_op(inner, call)
