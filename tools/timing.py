"""Timing for `xrelay bench` and bench/run.py: systems timed in alternating turns, and the
machine's measured peak.

`alternate(calls, runs, seconds, settle)`: warm each system up, then take turns until every
system has at least `runs` runs and `seconds` seconds; each turn first runs its system
untimed for `settle` seconds (thread pools of the previous system spin for tens of
milliseconds after a run and would slow the next one). Returns the run times per system.

`peak_gflops(threads)`: a register-resident FMA loop (the host's widest float vectors, 12
independent accumulators, compiled for this CPU with llvmlite) run on `threads` threads at
once; the FLOP rate of fused multiply-adds the core can sustain, the denominator of
"% of peak". Measured, never assumed: machines of one kind differ (AVX2 or AVX-512).
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable, Mapping
from functools import cache


def alternate(
    calls: Mapping[str, Callable[[], object]], runs: int, seconds: float, settle: float
) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in calls}
    for fn in calls.values():
        fn()  # warm-up
    while any(len(t) < runs or sum(t) < seconds for t in times.values()):
        for system, fn in calls.items():
            start = time.perf_counter()
            while time.perf_counter() - start < settle:  # untimed: the other system's threads park
                fn()
            turn: list[float] = []
            while len(turn) < 3 or sum(turn) < seconds / 4:
                t0 = time.perf_counter()
                fn()
                turn.append(time.perf_counter() - t0)
            times[system] += turn
    return times


ACCUMULATORS = 12


def _fma_loop_ir(width: int) -> str:
    vec = f"<{width} x float>"
    lines = [
        f"declare {vec} @llvm.fma.v{width}f32({vec}, {vec}, {vec})",
        "define void @fma_loop(i64 %n, ptr %out) {",
        "entry:",
        "  br label %loop",
        "loop:",
        "  %i = phi i64 [0, %entry], [%next, %loop]",
    ]
    for k in range(ACCUMULATORS):
        lines.append(
            f"  %a{k} = phi {vec} [splat (float {1.0 + k * 0.0625}), %entry], [%b{k}, %loop]"
        )
    for k in range(ACCUMULATORS):
        lines.append(
            f"  %b{k} = call {vec} @llvm.fma.v{width}f32({vec} %a{k}, "
            f"{vec} splat (float 0.99951171875), {vec} splat (float 0.0009765625))"
        )
    lines += [
        "  %next = add i64 %i, 1",
        "  %done = icmp eq i64 %next, %n",
        "  br i1 %done, label %exit, label %loop",
        "exit:",
    ]
    total = "%b0"
    for k in range(1, ACCUMULATORS):
        lines.append(f"  %s{k} = fadd {vec} {total}, %b{k}")
        total = f"%s{k}"
    lines += [f"  store {vec} {total}, ptr %out, align 4", "  ret void", "}"]
    return "\n".join(lines)


@cache
def _kernel() -> tuple[Callable[[int, int], None], int, object]:
    import llvmlite.binding as llvm
    from xrelay.lowering.jit import host_features, target_machine

    features = set(host_features())
    width = 16 if "avx512f" in features else 8 if "avx" in features else 4
    module = llvm.parse_assembly(_fma_loop_ir(width))
    module.verify()
    engine = llvm.create_mcjit_compiler(module, target_machine())
    engine.finalize_object()
    fn = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p)(
        engine.get_function_address("fma_loop")
    )
    return fn, width, engine


def peak_gflops(threads: int = 1, seconds: float = 0.3) -> float:
    """The measured FMA peak of `threads` cores together, in GFLOP/s (best of 3)."""
    fn, width, _ = _kernel()
    buffers = [(ctypes.c_float * 16)() for _ in range(threads)]
    n = 1 << 20
    start = time.perf_counter()
    fn(n, ctypes.addressof(buffers[0]))
    n = max(1, int(n * seconds / max(time.perf_counter() - start, 1e-6)))
    flops = 2 * width * ACCUMULATORS * n * threads
    best = 0.0
    for _ in range(3):
        workers = [threading.Thread(target=fn, args=(n, ctypes.addressof(b))) for b in buffers]
        t0 = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        best = max(best, flops / (time.perf_counter() - t0) / 1e9)
    return best
