"""The runtime entry of each kernel `parallel-loops` split (lowering/parallel_loops.py).

    void @k(ptr buf0, ..., ptr bufN)            what main calls, as before
      one thread (or no libgomp): @k_body(0, E, buf0, ..., bufN)
      else GOMP_parallel(@k.worker, [buf0, ..., bufN], xr_num_threads)
    void @k.worker(ptr ctx)                     thread t of T: @k_body(E*t/T, E*(t+1)/T, ...)

POOL_IR declares libgomp's entry points and `@xr_num_threads`, which every runtime entry
reads and `Library` sets from XRELAY_NUM_THREADS once the code is loaded.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xrelay.lowering.kernels.irtext import Writer
from xrelay.lowering.parallel_loops import PARALLEL_ATTR, body_name

POOL_IR = """
declare void @GOMP_parallel(ptr, ptr, i32, i32)
declare i32 @omp_get_thread_num()
declare i32 @omp_get_num_threads()
"""
THREADS_IR = "@xr_num_threads = dso_local global i32 1, align 4\n"


def pool_ir(threads: bool) -> str:
    """libgomp's entry points (with threads) and the thread count every entry reads."""
    return (POOL_IR if threads else "") + THREADS_IR


def team(w: Writer) -> tuple[str, str]:
    """In a worker: (this thread's number, the team's size), as i64."""
    tid = w.op(f"sext i32 {w.op('call i32 @omp_get_thread_num()')} to i64")
    nt = w.op(f"sext i32 {w.op('call i32 @omp_get_num_threads()')} to i64")
    return tid, nt


def parallel_specs(module: ModuleOp) -> dict[str, tuple[str, int, int]]:
    """The split kernels of a module (before to-llvm): symbol -> (body, extent, buffers)."""
    specs = {}
    for op in module.ops:
        if isinstance(op, func.FuncOp) and not op.body.blocks:
            extent = op.attributes.get(PARALLEL_ATTR)
            if isinstance(extent, IntegerAttr):
                name = op.sym_name.data
                buffers = len(op.function_type.inputs)
                specs[name] = (body_name(name), extent.value.data, buffers)
    return specs


def entry(w: Writer, name: str, body: str, extent: int, buffers: int, threads: bool) -> None:
    ptrs = [f"%a{i}" for i in range(buffers)]
    w.lines.append(f"declare void @{body}(i64, i64{''.join(', ptr' for _ in ptrs)})")

    def call(lo: str, hi: str, args: list[str]) -> None:
        w.do(f"call void @{body}(i64 {lo}, i64 {hi}{''.join(f', ptr {a}' for a in args)})")

    if threads:
        with w.function("void", f"@{name}.worker", [("ptr", "%ctx")]):
            args = [w.op(f"load ptr, ptr {w.gep('%ctx', str(i), 'ptr')}") for i in range(buffers)]
            tid, nt = team(w)
            lo = w.op(f"sdiv i64 {w.mul(tid, str(extent))}, {nt}")
            hi = w.op(f"sdiv i64 {w.mul(w.add(tid, '1'), str(extent))}, {nt}")
            with w.if_(w.lt(lo, hi)):
                call(lo, hi, args)
    with w.function("void", f"@{name}", [("ptr", p) for p in ptrs], linkage="dso_local"):
        if not threads:
            call("0", str(extent), ptrs)
            return
        count = w.op("load i32, ptr @xr_num_threads")
        pool, alone, join = w.if_else(w.op(f"icmp sgt i32 {count}, 1"), "pool")
        w.block(pool)
        ctx = w.alloca(f"[{max(buffers, 1)} x ptr]", "ctx")
        for i, p in enumerate(ptrs):
            w.do(f"store ptr {p}, ptr {w.gep(ctx, str(i), 'ptr')}")
        w.do(f"call void @GOMP_parallel(ptr @{name}.worker, ptr {ctx}, i32 {count}, i32 0)")
        w.br(join)
        w.block(alone)
        call("0", str(extent), ptrs)
        w.br(join)
        w.block(join)


def parallel_ir(module: ModuleOp, threads: bool) -> str:
    """The runtime entries of the module's split kernels ('' if there is none)."""
    w = Writer()
    for name, (body, extent, buffers) in parallel_specs(module).items():
        entry(w, name, body, extent, buffers, threads)
    return w.text() if w.lines else ""
