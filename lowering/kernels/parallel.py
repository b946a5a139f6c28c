"""The runtime entry of each kernel `parallel-loops` split (lowering/parallel_loops.py).

    void @k(ptr buf0, ..., ptr bufN)            what main calls, as before
      one thread (or no libgomp): @k_body(0, E, buf0, ..., bufN)
      else GOMP_parallel(@k.worker, [buf0, ..., bufN], xr_num_threads)
    void @k.worker(ptr ctx)                     thread t of T: @k_body(E*t/T, E*(t+1)/T, ...)

With dynamic shapes a buffer is followed by its run-time sizes (as to-llvm passes it), and
E can be one of them: the entry then splits only when E times the loop nest's static work
reaches MIN_ITERATIONS.

POOL_IR declares libgomp's entry points and `@xr_num_threads`, which every runtime entry
reads and `Library` sets from XRELAY_NUM_THREADS once the code is loaded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, ArrayAttr, IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import Attribute
from xrelay.lowering.kernels.irtext import Writer
from xrelay.lowering.parallel_loops import MIN_ITERATIONS, PARALLEL_ATTR, body_name

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


def parallel_specs(module: ModuleOp) -> dict[str, tuple[str, Any, list[Attribute]]]:
    """The split kernels of a module (before to-llvm): symbol -> (body, extent, argument
    types); the extent is an int, or (argument, axis, static work) for a run-time one."""
    specs = {}
    for op in module.ops:
        if isinstance(op, func.FuncOp) and not op.body.blocks:
            extent = op.attributes.get(PARALLEL_ATTR)
            name = op.sym_name.data
            types = list(op.function_type.inputs)
            if isinstance(extent, IntegerAttr):
                specs[name] = (body_name(name), extent.value.data, types)
            elif isinstance(extent, ArrayAttr):
                specs[name] = (body_name(name), tuple(a.value.data for a in extent.data), types)
    return specs


def parameters(types: list[Attribute]) -> tuple[list[tuple[str, str]], dict[tuple[int, int], str]]:
    """The LLVM parameters of a kernel taking `types` as to-llvm passes them (a memref is a
    pointer then its dynamic sizes, an index an i64), and the parameter holding each
    (argument, axis) dynamic size."""
    params: list[tuple[str, str]] = []
    sizes: dict[tuple[int, int], str] = {}
    for i, t in enumerate(types):
        if isinstance(t, MemRefType):
            params.append(("ptr", f"%a{len(params)}"))
            for axis, d in enumerate(t.get_shape()):
                if d == DYNAMIC_INDEX:
                    sizes[(i, axis)] = f"%a{len(params)}"
                    params.append(("i64", sizes[(i, axis)]))
        else:
            params.append(("i64", f"%a{len(params)}"))
    return params, sizes


def launch(
    w: Writer, worker: str, params: list[tuple[str, str]], team_size: str, extra: list[str] = ()
) -> None:
    """Run `worker` on `team_size` (an i32) threads of the pool; its context array holds
    `params` (pointers as integers), then the i64 values `extra`."""
    ctx = w.alloca(f"[{max(len(params) + len(extra), 1)} x i64]", "ctx")
    values = [p if t == "i64" else w.op(f"ptrtoint ptr {p} to i64") for t, p in params]
    for k, value in enumerate([*values, *extra]):
        w.do(f"store i64 {value}, ptr {w.gep(ctx, str(k), 'i64')}")
    w.do(f"call void @GOMP_parallel(ptr {worker}, ptr {ctx}, i32 {team_size}, i32 0)")


def split_planes(
    w: Writer,
    name: str,
    params: list[tuple[str, str]],
    planes: str,
    worth: Callable[[Writer], str],
    threads: bool,
) -> None:
    """Emit `name` (taking `params`): `name`_part(params..., p0, p1) over planes
    [0, `planes`) (a parameter), split evenly over the pool's threads when `worth(w)` (an
    i1 computed in the entry from its parameters) holds and more than one thread runs."""
    part = f"{name}_part"
    names = ", ".join(f"{t} {p}" for t, p in params)
    if threads:
        with w.function("void", f"{name}_worker", [("ptr", "%ctx")]):
            vals = dict(zip((p for _, p in params), unpack(w, params)))
            tid, nt = team(w)
            lo = w.op(f"sdiv i64 {w.mul(tid, vals[planes])}, {nt}")
            hi = w.op(f"sdiv i64 {w.mul(w.add(tid, '1'), vals[planes])}, {nt}")
            args = ", ".join(f"{t} {vals[p]}" for t, p in params)
            w.do(f"call void {part}({args}, i64 {lo}, i64 {hi})")
    with w.function("void", name, params):
        if not threads:
            w.do(f"call void {part}({names}, i64 0, i64 {planes})")
            return
        count = w.op("load i32, ptr @xr_num_threads")
        many = w.op(f"and i1 {worth(w)}, {w.op(f'icmp sgt i32 {count}, 1')}")
        here = lambda: w.do(f"call void {part}({names}, i64 0, i64 {planes})")
        launch_or_run(w, many, f"{name}_worker", params, count, here)


def launch_or_run(
    w: Writer,
    many: str,
    worker: str,
    params: list[tuple[str, str]],
    count: str,
    here: Callable[[], None],
) -> None:
    """If `many` (an i1): `worker` on `count` threads of the pool (`launch`); else what
    `here()` emits, on the calling thread."""
    pool, alone, join = w.if_else(many, "pool")
    w.block(pool)
    launch(w, worker, params, count)
    w.br(join)
    w.block(alone)
    here()
    w.br(join)
    w.block(join)


def unpack(w: Writer, params: list[tuple[str, str]], named: bool = False) -> list[str]:
    """In a worker: the values `launch` stored for `params`, read from %ctx (`named`: each
    defined under its parameter's name)."""
    values = []
    for k, (t, p) in enumerate(params):
        slot = w.gep("%ctx", str(k), "i64")
        if named and t == "i64":
            w.do(f"{p} = load i64, ptr {slot}")
            values.append(p)
            continue
        raw = w.op(f"load i64, ptr {slot}")
        if t == "i64":
            values.append(raw)
        elif named:
            w.do(f"{p} = inttoptr i64 {raw} to ptr")
            values.append(p)
        else:
            values.append(w.op(f"inttoptr i64 {raw} to ptr"))
    return values


def entry(
    w: Writer, name: str, body: str, extent: Any, types: list[Attribute], threads: bool
) -> None:
    params, sizes = parameters(types)
    w.lines.append(f"declare void @{body}(i64, i64{''.join(f', {t}' for t, _ in params)})")

    def call(lo: str, hi: str, args: list[str]) -> None:
        typed = "".join(f", {t} {a}" for (t, _), a in zip(params, args))
        w.do(f"call void @{body}(i64 {lo}, i64 {hi}{typed})")

    def total(args: list[str]) -> str:
        """The split loop's extent: a constant, or the size parameter it runs to."""
        if isinstance(extent, int):
            return str(extent)
        arg, axis, _ = extent
        return args[[n for _, n in params].index(sizes[(arg, axis)])]

    names = [n for _, n in params]
    if threads:
        with w.function("void", f"@{name}.worker", [("ptr", "%ctx")]):
            args = unpack(w, params)
            tid, nt = team(w)
            n = total(args)
            lo = w.op(f"sdiv i64 {w.mul(tid, n)}, {nt}")
            hi = w.op(f"sdiv i64 {w.mul(w.add(tid, '1'), n)}, {nt}")
            with w.if_(w.lt(lo, hi)):
                call(lo, hi, args)
    with w.function("void", f"@{name}", params, linkage="dso_local"):
        n = total(names)
        if not threads:
            call("0", n, names)
            return
        count = w.op("load i32, ptr @xr_num_threads")
        many = w.op(f"icmp sgt i32 {count}, 1")
        if not isinstance(extent, int):  # enough work at this size to wake the pool?
            work = w.mul(n, str(max(extent[2], 1)))
            many = w.op(f"and i1 {many}, {w.op(f'icmp sge i64 {work}, {MIN_ITERATIONS}')}")
        launch_or_run(w, many, f"@{name}.worker", params, count, lambda: call("0", n, names))


def parallel_ir(module: ModuleOp, threads: bool) -> str:
    """The runtime entries of the module's split kernels ('' if there is none)."""
    w = Writer()
    for name, (body, extent, types) in parallel_specs(module).items():
        entry(w, name, body, extent, types, threads)
    return w.text() if w.lines else ""
