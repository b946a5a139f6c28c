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

Concatenations go in place: an input of a concatenation along an axis with only size-1
axes before it (batch 1 along channels) is one contiguous run of the result's bytes, so
where the result and every input are buffers planned here (not a graph input, not one
buffer twice), each input is placed inside the result at its byte offset and the copy is
dropped: producers write straight into their slices. Nested concatenations (DenseNet's,
each layer concatenating all earlier features) make one buffer; it lives from the first
use of any of its parts to the last. relay-to-linalg marks a concatenation's generic
(`CONCAT_ATTR`), and only a kernel that is still a plain copy (a select between its loads)
qualifies.

The arena is a zero-initialised global that the runtime module defines
(lowering/kernels/wrappers.py), allocated once when the code is loaded, so its pages are
touched on the first run only. A compiled function therefore must not run twice at the same
time; `Library.run` holds a lock. Allocations inside loops or branches are left alone.

Buffers of run-time size (dynamic shapes) cannot have static offsets: `plan_dynamic` gives
`@main` two more arguments, an arena and a table of offsets, makes each such buffer a view
of the arena at the offset it loads from the table, and records every buffer's size (its
dimensions' expressions, from bufferize's `xrelay.dims`) and span in the module
(`xrelay.dynamic_plan`). `RuntimePlan` then runs `place` on the sizes of each run's binding
(cached per binding) and `Library` passes the arena and the table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    i8,
    i64,
)
from xdsl.dialects.builtin import UnitAttr as Uninitialized
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xrelay.dialects.dims import products
from xrelay.lowering.bufferize import DIMS_ATTR
from xrelay.lowering.relay_to_linalg.tensor import CONCAT_ATTR
from xrelay.lowering.to_llvm import byte_size
from xrelay.signature import NAME_ATTR

ALIGN = 64
ARENA_PREFIX = "xr_arena_"
DYNAMIC_PLAN_ATTR = "xrelay.dynamic_plan"  # module attribute: plan_dynamic's buffers


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


def _selects_loads(value: SSAValue, loads: set[Operation]) -> bool:
    """Whether `value` is one of `loads`, or a select between such values."""
    op = value.owner
    if isinstance(op, arith.SelectOp):
        return _selects_loads(op.lhs, loads) and _selects_loads(op.rhs, loads)
    return op in loads


def _concatenation(call: func.CallOp, kernels: dict[str, func.FuncOp]):
    """For a call of a concatenation kernel (relay-to-linalg's CONCAT_ATTR) whose inputs
    are each one contiguous run of the result's bytes (every axis before the concatenated
    one has size 1): (the result operand, [(input operand, its byte offset in the result)]);
    None for any other call."""
    kernel = kernels.get(call.callee.root_reference.data)
    if kernel is None or len(kernel.body.blocks) != 1:
        return None
    generics = [op for op in kernel.body.block.ops if isinstance(op, linalg.GenericOp)]
    if len(generics) != 1 or CONCAT_ATTR not in generics[0].attributes:
        return None
    generic = generics[0]
    axis, *starts = generic.attributes[CONCAT_ATTR].get_values()  # type: ignore[union-attr]
    args = kernel.body.block.args
    out = generic.outputs[0]
    loads = [op for op in generic.body.walk() if isinstance(op, memref.LoadOp)]
    if not _selects_loads(generic.body.block.last_op.operands[0], set(loads)):
        return None  # the body computes more than a copy (a consumer fused into it)
    if out not in args or len(loads) != len(starts) or any(ld.memref not in args for ld in loads):
        return None
    out_type = out.type
    assert isinstance(out_type, MemRefType)
    shape = out_type.get_shape()
    if int(np.prod(shape[:axis])) != 1:
        return None
    row = int(np.prod(shape[axis + 1 :])) * byte_size(out_type.element_type)
    operands = list(call.arguments)
    parts = [(operands[args.index(ld.memref)], start * row) for ld, start in zip(loads, starts)]
    return operands[args.index(out)], parts


def _row_major(view: memref.ReinterpretCastOp) -> bool:
    """Whether the view reads its source from offset 0 with row-major strides."""
    t = view.result.type
    assert isinstance(t, MemRefType)
    return t.get_offset() == 0 and t.get_strides() == MemRefType.strides_for_shape(t.get_shape())


def _concatenate_in_place(block: Block, allocs: list[memref.AllocOp], kernels) -> tuple:
    """Concatenation in place: each input of a concatenation (an input of its own, planned
    here) is placed in the result's bytes, so its producer writes straight into its slice
    and the copy goes. Returns (each alloc's (root index, byte offset in the root), the
    calls that go)."""
    index = {alloc.memref: k for k, alloc in enumerate(allocs)}

    def buffer(value: SSAValue) -> int | None:
        """The planned alloc whose bytes `value` is all of (itself, or a reshape view)."""
        while isinstance(value.owner, memref.ReinterpretCastOp):
            view = value.owner
            source = view.source.type
            assert isinstance(source, MemRefType) and isinstance(view.result.type, MemRefType)
            if _bytes(source) != _bytes(view.result.type) or not _row_major(view):
                return None
            value = view.source
        return index.get(value)

    parent = [(k, 0) for k in range(len(allocs))]  # (the buffer holding k, k's offset in it)

    def root(k: int) -> tuple[int, int]:
        offset = 0
        while parent[k][0] != k:
            offset += parent[k][1]
            k = parent[k][0]
        return k, offset

    erased = []
    for op in block.ops:
        found = _concatenation(op, kernels) if isinstance(op, func.CallOp) else None
        if found is None or found[0] not in index:
            continue
        result = index[found[0]]
        members = [(buffer(value), offset) for value, offset in found[1]]
        ks = [k for k, _ in members]
        if None in ks or len(set(ks)) != len(ks) or result in ks:
            continue  # a graph input, a view, or one buffer twice: the copy stays
        if any(parent[k][0] != k or root(result)[0] == k for k in ks):
            continue  # already placed in another concatenation
        for k, offset in members:
            parent[k] = (result, offset)
        erased.append(op)
    return [root(k) for k in range(len(allocs))], erased


def _erase_uncalled(module: ModuleOp, names: set[str]) -> None:
    """Erase the kernels among `names` that nothing calls any more."""
    if not names:
        return
    called = {op.callee.root_reference.data for op in module.walk() if isinstance(op, func.CallOp)}
    for op in list(module.ops):
        if isinstance(op, func.FuncOp) and op.sym_name.data in names - called:
            module.body.block.erase_op(op)


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
    kernels = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    roots, erased = _concatenate_in_place(block, allocs, kernels)
    # a buffer holding others lives from the first of their uses to the last
    group = [list(span) for span in spans]
    for k, (r, _) in enumerate(roots):
        if r != k:
            group[r][1] = min(group[r][1], spans[k][1])
            group[r][2] = max(group[r][2], spans[k][2])
    held = [k for k in range(len(allocs)) if roots[k][0] == k]
    placed, total = place([tuple(group[k]) for k in held])
    at = dict(zip(held, placed))
    offsets = [at[r] + offset for r, offset in roots]
    for call in erased:
        Rewriter.erase_op(call)
    _erase_uncalled(module, {call.callee.root_reference.data for call in erased})
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


def plan_dynamic(module: ModuleOp, fn: func.FuncOp) -> int:
    """Place the top-level allocations of run-time size in an arena `fn` receives, at
    offsets it reads from a table it receives: two trailing arguments (`memref<?xi8>`,
    `memref<Nxi64>`). The module's DYNAMIC_PLAN_ATTR lists each buffer's size (the
    expressions of its dimensions, its element size) and span, so the caller plans the
    offsets per run with `RuntimePlan` (the same placement, on the sizes of that run).
    Returns how many buffers it placed."""
    block = fn.body.block
    position = {op: i for i, op in enumerate(block.ops)}
    allocs, entries, deallocs = [], [], []
    for op in block.ops:
        dims_attr = op.attributes.get(DIMS_ATTR) if isinstance(op, memref.AllocOp) else None
        if dims_attr is None or not op.dynamic_sizes:
            continue
        span = _span(op, block, position)
        if span is None:
            continue
        t = op.memref.type
        exprs = iter(dims_attr.data)
        factors = [next(exprs) if d == DYNAMIC_INDEX else str(d) for d in t.get_shape()]
        entries.append([*factors, byte_size(t.element_type), span[0], span[1]])
        allocs.append(op)
        deallocs += span[2]
    if not allocs:
        return 0
    arena = block.insert_arg(MemRefType(i8, [DYNAMIC_INDEX]), len(block.args))
    table = block.insert_arg(MemRefType(i64, [len(allocs)]), len(block.args))
    fn.function_type = FunctionType.from_lists([a.type for a in block.args], [])
    if fn.arg_attrs is not None:
        names = [DictionaryAttr({NAME_ATTR: StringAttr(n)}) for n in ("xr_arena", "xr_offsets")]
        fn.arg_attrs = ArrayAttr([*fn.arg_attrs.data, *names])
    for k, alloc in enumerate(allocs):
        slot = arith.ConstantOp(IntegerAttr(k, IndexType()))
        offset = memref.LoadOp.get(table, [slot])
        shift = arith.IndexCastOp(offset, IndexType())
        view = memref.ViewOp(arena, shift, list(alloc.dynamic_sizes), alloc.memref.type)
        Rewriter.replace_op(alloc, [slot, offset, shift, view], [view.result])
    for dealloc in deallocs:
        Rewriter.erase_op(dealloc)
    module.attributes[DYNAMIC_PLAN_ATTR] = ArrayAttr(
        [
            ArrayAttr([IntegerAttr(v, 64) if isinstance(v, int) else StringAttr(v) for v in e])
            for e in entries
        ]
    )
    return len(allocs)


def read_dynamic_plan(module: ModuleOp) -> list[list[str | int]]:
    """The entries plan_dynamic recorded ([] when there are none)."""
    attr = module.attributes.get(DYNAMIC_PLAN_ATTR)
    if not isinstance(attr, ArrayAttr):
        return []
    return [
        [v.data if isinstance(v, StringAttr) else v.value.data for v in e.data] for e in attr.data
    ]


class RuntimePlan:
    """The offsets of plan_dynamic's buffers for the sizes of one run: each buffer's bytes
    from its dimensions' expressions (compiled once to a Python function of the symbols),
    then `place` as for a static arena. The last few plans are kept per binding."""

    def __init__(self, entries: list[list[str | int]]) -> None:
        # per buffer: its dimensions, its element size, then its span
        self.spans = [(int(e[-2]), int(e[-1])) for e in entries]
        self._bytes = products([e[:-2] for e in entries])
        self.names: list[str] = self._bytes.names  # type: ignore[attr-defined]
        self._plans: dict[tuple[int, ...], tuple[np.ndarray, int]] = {}

    def offsets(self, binding: dict[str, int]) -> tuple[np.ndarray, int]:
        """(the offset of each buffer as int64, the arena's size in bytes)."""
        key = tuple(int(binding[n]) for n in self.names)
        plan = self._plans.get(key)
        if plan is None:
            sizes = [max(ALIGN, -(-b // ALIGN) * ALIGN) for b in self._bytes(binding)]
            offsets, total = place([(n, lo, hi) for n, (lo, hi) in zip(sizes, self.spans)])
            plan = (np.array(offsets, np.int64), int(total))
            if len(self._plans) >= 16:
                self._plans.pop(next(iter(self._plans)))
            self._plans[key] = plan
        return plan


@dataclass(frozen=True)
class PlanBuffers(ModulePass):
    """Give each function's temporaries offsets in one static arena. No options."""

    name = "plan-buffers"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks]:
            plan_function(op, fn)
            if fn.sym_name.data == "main":  # buffers of run-time size, planned per run
                plan_dynamic(op, fn)
