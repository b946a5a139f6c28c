"""`plan-buffers`: the temporary buffers of a function share one static arena.

bufferize gives every value its own `memref.alloc`, freed before return, so a run used to
allocate (and the kernel to page in) every intermediate of the model afresh. This stage
computes, for each top-level allocation of a function with a static shape, the span of
top-level ops that touch it (through reshape views too), and packs the buffers into one
arena: two buffers share bytes only when their spans do not overlap (an op that reads one
and writes the other keeps them apart). Largest first, each buffer takes the lowest 64-byte
aligned offset free over its span.

    %b = memref.alloc() : memref<1x64x56x56xf32>  ...  memref.dealloc %b
      ->
    memref.global "private" @xr_arena_main : memref<Nxi8> = uninitialized
    %a = memref.get_global @xr_arena_main : memref<Nxi8>
    %b = memref.view %a[%offset][] : memref<Nxi8> to memref<1x64x56x56xf32>

The arena is a zero-initialised global that the runtime module defines
(lowering/kernels/wrappers.py), allocated once when the code is loaded, so its pages are
touched on the first run only. A compiled function therefore must not run twice at the same
time; `Library.run` holds a lock. Allocations inside loops or branches are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp, StringAttr, i8
from xdsl.dialects.builtin import UnitAttr as Uninitialized
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xrelay.lowering.to_llvm import byte_size

ALIGN = 64
ARENA_PREFIX = "xr_arena_"


def _top(op: Operation, block: Block) -> Operation:
    while op.parent_block() is not block:
        parent = op.parent_op()
        assert parent is not None
        op = parent
    return op


def _bytes(t: MemRefType) -> int:
    size = int(np.prod(t.get_shape())) * byte_size(t.element_type)
    return max(ALIGN, -(-size // ALIGN) * ALIGN)


def _span(alloc: memref.AllocOp, block: Block, position: dict[Operation, int]):
    """(first, last) top-level positions that use the buffer or its views, its deallocs;
    None when a use makes the buffer unplannable (it is returned)."""
    first, last, deallocs = None, None, []
    pending: list[SSAValue] = [alloc.memref]
    while pending:
        value = pending.pop()
        for use in value.uses:
            user = use.operation
            if isinstance(user, memref.DeallocOp):
                deallocs.append(user)
                continue
            if isinstance(user, func.ReturnOp):
                return None
            if isinstance(user, memref.ReinterpretCastOp):
                pending.append(user.result)
                continue
            at = position[_top(user, block)]
            first = at if first is None else min(first, at)
            last = at if last is None else max(last, at)
    if first is None:
        first = last = position[alloc]
    return first, last, deallocs


def place(spans: list[tuple[int, int, int]]) -> tuple[list[int], int]:
    """Offsets for buffers given as (size, first, last), and the arena size."""
    offsets = [0] * len(spans)
    placed: list[int] = []
    for i in sorted(range(len(spans)), key=lambda k: (-spans[k][0], spans[k][1])):
        size, first, last = spans[i]
        busy = sorted(
            (offsets[j], offsets[j] + spans[j][0])
            for j in placed
            if spans[j][1] <= last and first <= spans[j][2]
        )
        offset = 0
        for lo, hi in busy:
            if offset + size <= lo:
                break
            offset = max(offset, hi)
        offsets[i] = offset
        placed.append(i)
    total = max((offsets[i] + spans[i][0] for i in range(len(spans))), default=0)
    return offsets, total


def plan_function(module: ModuleOp, fn: func.FuncOp) -> int:
    """Move the top-level allocations of `fn` into an arena; returns the arena size."""
    block = fn.body.block
    position = {op: i for i, op in enumerate(block.ops)}
    allocs, spans, deallocs = [], [], []
    for op in block.ops:
        if isinstance(op, memref.AllocOp) and not op.dynamic_sizes:
            span = _span(op, block, position)
            if span is not None:
                allocs.append(op)
                spans.append((_bytes(op.memref.type), span[0], span[1]))
                deallocs += span[2]
    if not allocs:
        return 0
    offsets, total = place(spans)
    arena_type = MemRefType(i8, [total])
    name = ARENA_PREFIX + fn.sym_name.data
    arena = memref.GlobalOp.get(StringAttr(name), arena_type, Uninitialized(), alignment=ALIGN)
    module.body.block.insert_op_before(arena, fn)
    base = memref.GetGlobalOp(name, arena_type)
    Rewriter.insert_op(base, InsertPoint.at_start(block))
    for alloc, offset in zip(allocs, offsets):
        shift = arith.ConstantOp(IntegerAttr(offset, IndexType()))
        view = memref.ViewOp(base, shift, [], alloc.memref.type)
        Rewriter.replace_op(alloc, [shift, view], [view.result])
    for dealloc in deallocs:
        Rewriter.erase_op(dealloc)
    return total


def arena_definitions(module: ModuleOp) -> str:
    """LLVM IR defining the module's arenas (for the runtime module)."""
    lines = []
    for op in module.ops:
        if isinstance(op, memref.GlobalOp) and isinstance(op.initial_value, Uninitialized):
            size = op.type.get_shape()[0]
            lines.append(
                f"@{op.sym_name.data} = dso_local global [{size} x i8] zeroinitializer, align {ALIGN}"
            )
    return "".join(line + "\n" for line in lines)


@dataclass(frozen=True)
class PlanBuffers(ModulePass):
    """Give each function's temporaries offsets in one static arena. No options."""

    name = "plan-buffers"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks]:
            plan_function(op, fn)
