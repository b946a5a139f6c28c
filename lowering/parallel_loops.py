"""`parallel-loops`: kernels with enough independent work run on every core.

`outline-kernels` marks a kernel (`xrelay.split = [depth, extent]`) when its linalg op has a
parallel loop that every output is indexed by, and at least MIN_ITERATIONS iterations in
all: the outermost such loop of at least BALANCED_EXTENT iterations, else the longest (an
im2col gather [1, 1, 3, 3, 3, 112, 112] splits its rows, not its 3 channels). After
linalg-to-loops this stage turns the kernel `@k` into

    func.func @k_body(%lo: index, %hi: index, <buffers>)   the loop at `depth` runs [lo, hi)
    func.func private @k(<buffers>) {xrelay.parallel = E}

and `lowering/kernels/parallel.py` defines `@k` in the runtime: it cuts [0, E) into one
contiguous range per thread of libgomp's pool (or calls the body once for [0, E) on one
thread). Each thread writes only the outputs whose index along that loop is in its range, and
runs every other loop in the original order, so results are bit-identical to the serial
kernel. Kernels that store anywhere but their outputs are never split.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.passes import ModulePass

SPLIT_ATTR = "xrelay.split"
PARALLEL_ATTR = "xrelay.parallel"
MIN_ITERATIONS = 1 << 14  # below this, waking the pool costs more than it saves
BALANCED_EXTENT = 16  # a loop this long splits evenly enough over a few threads
DYNAMIC = -1  # the extent of a split loop that is a run-time size


def split_loop(op: Operation) -> tuple[int, int] | tuple[int, int, int] | None:
    """(depth, extent) of the loop of `op` to split across threads, or None. A loop of a
    run-time extent (dynamic shapes) is (depth, DYNAMIC, work): `work` is the product of
    the static extents, and the runtime entry splits only when extent * work reaches
    MIN_ITERATIONS. (A static split of a dynamic kernel is not checked against it: the
    run-time extents are taken as long enough.)"""
    if not isinstance(op, LinalgStructuredOperation):
        return None
    if any(isinstance(inner, memref.StoreOp) for inner in op.walk()):
        return None
    ranges = op.get_static_loop_ranges()
    dynamic = any(r < 0 for r in ranges)
    static_work = math.prod(r for r in ranges if r >= 0)
    if not dynamic and static_work < MIN_ITERATIONS:
        return None
    iterators = [it.data for it in op.get_iterator_types()]
    outputs = [m.data.results for m in op.get_indexing_maps().data[len(op.inputs) :]]
    candidates = [
        (depth, extent)
        for depth, (extent, iterator) in enumerate(zip(ranges, iterators))
        if (extent > 1 or extent < 0)
        and iterator == IteratorType.PARALLEL
        and all(AffineDimExpr(depth) in results for results in outputs)
    ]
    if dynamic:
        # a static loop long enough to balance; else the innermost run-time extent (the
        # outer ones are batches, often 1: [batch, seq, ...] splits its sequence)
        for depth, extent in candidates:
            if extent >= BALANCED_EXTENT:
                return depth, extent
        runtime = [depth for depth, extent in candidates if extent < 0]
        return (runtime[-1], DYNAMIC, static_work) if runtime else None
    for depth, extent in candidates:
        if extent >= BALANCED_EXTENT:
            return depth, extent
    return max(candidates, key=lambda c: c[1], default=None)


def body_name(kernel: str) -> str:
    """The range body of split kernel `kernel`."""
    return f"{kernel}_body"


def _constant(value: SSAValue) -> int | None:
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


def _dynamic_bound(fn: func.FuncOp, value: SSAValue) -> tuple[int, int] | None:
    """(argument, axis) when `value` is `memref.dim` of one of the kernel's arguments."""
    op = value.owner
    if not isinstance(op, memref.DimOp):
        return None
    axis = _constant(op.index)
    source = op.source
    if axis is None or source not in fn.body.block.args:
        return None
    return fn.body.block.args.index(source), axis


def _loop_at(fn: func.FuncOp, depth: int, extent: int) -> scf.ForOp | None:
    """The loop `depth` levels into the kernel's perfect nest, if it runs 0..extent by 1
    (0..a run-time size of an argument when extent is DYNAMIC)."""
    loops = [op for op in fn.body.block.ops if isinstance(op, scf.ForOp)]
    for _ in range(depth):
        if len(loops) != 1:
            return None
        loops = [op for op in loops[0].body.block.ops if isinstance(op, scf.ForOp)]
    if len(loops) != 1:
        return None
    loop = loops[0]
    if extent == DYNAMIC:
        ok = (_constant(loop.lb), _constant(loop.step)) == (0, 1)
        return loop if ok and _dynamic_bound(fn, loop.ub) is not None else None
    bounds = (_constant(loop.lb), _constant(loop.ub), _constant(loop.step))
    return loop if bounds == (0, extent, 1) else None


def parallelize(fn: func.FuncOp, depth: int, extent: int, work: int = 0) -> func.FuncOp | None:
    """Turn kernel `fn` into its range body (in place); returns the declaration that
    replaces it under its old name, or None when the loop nest is not the expected one.
    A DYNAMIC extent is the size its loop runs to, `memref.dim` of an argument: the
    declaration records which (`xrelay.parallel = [argument, axis, work]`)."""
    loop = _loop_at(fn, depth, extent)
    if loop is None or not all(
        isinstance(t, MemRefType | IndexType) for t in fn.function_type.inputs
    ):
        return None
    bound = _dynamic_bound(fn, loop.ub) if extent == DYNAMIC else None
    name = fn.sym_name.data
    old_type = fn.function_type
    block = fn.body.block
    lo = block.insert_arg(IndexType(), 0)
    hi = block.insert_arg(IndexType(), 1)
    loop.operands[0] = lo
    loop.operands[1] = hi
    fn.function_type = FunctionType.from_lists([IndexType(), IndexType(), *old_type.inputs], [])
    fn.sym_name = StringAttr(body_name(name))
    fn.sym_visibility = None  # the runtime module calls it
    decl = func.FuncOp.external(name, list(old_type.inputs), [])
    if bound is None:
        decl.attributes[PARALLEL_ATTR] = IntegerAttr(extent, 64)
    else:
        decl.attributes[PARALLEL_ATTR] = ArrayAttr([IntegerAttr(v, 64) for v in (*bound, work)])
    return decl


@dataclass(frozen=True)
class ParallelLoops(ModulePass):
    """Split marked kernels into a range body and a runtime-parallel entry. No options."""

    name = "parallel-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in [f for f in op.ops if isinstance(f, func.FuncOp)]:
            split = fn.attributes.pop(SPLIT_ATTR, None)
            if not isinstance(split, ArrayAttr) or not fn.body.blocks:
                continue
            depth, extent, *work = (a.value.data for a in split.data)
            decl = parallelize(fn, depth, extent, *work)
            if decl is not None:
                op.body.block.insert_op_before(decl, fn)
