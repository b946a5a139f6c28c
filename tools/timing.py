"""Timing for `xrelay bench` and bench/run.py: systems timed in alternating turns, and the
machine's measured peak.

`alternate(calls, runs, seconds, settle)`: warm each system up, then take turns until every
system has at least `runs` runs and `seconds` seconds; each turn first runs its system
untimed for `settle` seconds (thread pools of the previous system spin for tens of
milliseconds after a run and would slow the next one). Returns the run times per system.

Rounds (one turn of every system) run while the machine is in its best state only: on a
virtual machine the two CPUs may sit on one die (sharing a cache) at one moment and on two
dies the next, which makes every multi-threaded run 1.5x slower (seen: SqueezeNet 3.7 <->
6.1 ms, flipping every few seconds to minutes, onnxruntime alike). `round_trip_ns()` (a
cache line passed between two threads, the cost of every handoff between cores) is taken
before and after each round; a round is kept when both are at most twice the best round
trip the run has seen (or `best_round_trip`, a caller's earlier best: a process that sees
only the slow state keeps nothing then). `alternate(..., stats=d)` fills `d` with the
rounds kept and dropped (and the dropped rounds' times, `dropped_times`); rounds go on
until every system has its runs in kept rounds or `patience` rounds were dropped, after
which every round counts (`stats["all_rounds"]`).

`peak_gflops(threads)`: a register-resident FMA loop (the host's widest float vectors, 12
independent accumulators, compiled for this CPU with llvmlite) run on `threads` threads at
once; the FLOP rate of fused multiply-adds the core can sustain, the denominator of
"% of peak". Measured, never assumed: machines of one kind differ (AVX2 or AVX-512).
"""

from __future__ import annotations

import ctypes
import math
import os
import threading
import time
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any


def alternate(
    calls: Mapping[str, Callable[[], object]],
    runs: int,
    seconds: float,
    settle: float,
    stats: dict | None = None,
    patience: int = 20,
    best_round_trip: float = math.inf,
) -> dict[str, list[float]]:
    for fn in calls.values():
        fn()  # warm-up
    check = _round_trip_kernel() is not None
    rounds: list[tuple[float, float, dict[str, list[float]]]] = []
    best = best_round_trip  # from earlier measurements (another process's), if any

    def kept() -> list[dict[str, list[float]]]:  # (against the best seen so far)
        return [r for before, after, r in rounds if max(before, after) <= 2 * best]

    def enough(chosen: list[dict[str, list[float]]]) -> bool:
        return all(
            sum(len(r[s]) for r in chosen) >= runs and sum(sum(r[s]) for r in chosen) >= seconds
            for s in calls
        )

    while True:
        chosen = kept()
        dropped = len(rounds) - len(chosen)
        if enough(chosen) or (dropped >= patience and enough([r for *_, r in rounds])):
            break
        before = round_trip_ns() if check else 0.0
        this: dict[str, list[float]] = {}
        for system, fn in calls.items():
            start = time.perf_counter()
            while time.perf_counter() - start < settle:  # untimed: the other system's threads park
                fn()
            turn: list[float] = []
            while len(turn) < 3 or sum(turn) < seconds / 4:
                t0 = time.perf_counter()
                fn()
                turn.append(time.perf_counter() - t0)
            this[system] = turn
        after = round_trip_ns() if check else 0.0
        best = min(best, before, after)
        rounds.append((before, after, this))
    use_all = not enough(chosen)
    dropped_rounds = [] if use_all else [r for b, a, r in rounds if max(b, a) > 2 * best]
    if use_all:
        chosen = [r for *_, r in rounds]
    if stats is not None:
        stats.update(
            rounds=len(rounds), kept=len(chosen), all_rounds=use_all, best_round_trip_ns=best
        )
        if dropped_rounds:  # the other state's times, for what they show
            stats["dropped_times"] = {s: [t for r in dropped_rounds for t in r[s]] for s in calls}
    return {s: [t for r in chosen for t in r[s]] for s in calls}


def _round_trip_ir() -> str:
    """@pp(counter, n, parity): n times, wait for the counter to equal 2 i + parity, then
    add one: two threads with parities 0 and 1 pass the counter's line back and forth."""
    return """
define void @pp(ptr %c, i64 %n, i64 %parity) {
entry:
  br label %outer
outer:
  %i = phi i64 [0, %entry], [%i1, %done]
  %twice = shl i64 %i, 1
  %want = add i64 %twice, %parity
  br label %spin
spin:
  %v = load atomic i64, ptr %c acquire, align 8
  %ok = icmp eq i64 %v, %want
  br i1 %ok, label %done, label %spin
done:
  %next = add i64 %want, 1
  store atomic i64 %next, ptr %c release, align 8
  %i1 = add i64 %i, 1
  %end = icmp eq i64 %i1, %n
  br i1 %end, label %exit, label %outer
exit:
  ret void
}
"""


@cache
def _round_trip_kernel() -> tuple[Callable[[int, int, int], None], object] | None:
    """The ping-pong function, or None with fewer than two CPUs (a spinning thread would
    wait for a time slice of the other at every handoff)."""
    if len(os.sched_getaffinity(0)) < 2:
        return None
    return _jitted(_round_trip_ir(), "pp", ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


def _jitted(ir: str, name: str, *argtypes: Any) -> tuple[Callable[..., None], object]:
    """Function `name` (returning void) of the LLVM module `ir`, compiled for this CPU
    with MCJIT, and its engine (which must outlive the function)."""
    import llvmlite.binding as llvm
    from xrelay.lowering.jit import target_machine

    module = llvm.parse_assembly(ir)
    module.verify()
    engine = llvm.create_mcjit_compiler(module, target_machine())
    engine.finalize_object()
    return ctypes.CFUNCTYPE(None, *argtypes)(engine.get_function_address(name)), engine


def round_trip_ns(n: int = 2000) -> float:
    """Nanoseconds for a cache line to go from one thread to another and back (best of 3
    runs of `n` round trips; about 0.1 us between cores sharing a cache, 0.4 between dies
    of a virtual machine's host seen here); 0.0 with fewer than two CPUs."""
    kernel = _round_trip_kernel()
    if kernel is None:
        return 0.0
    fn, _ = kernel
    best = math.inf
    for _ in range(3):
        counter = (ctypes.c_int64 * 16)()  # its own 128 bytes: no neighbour on the line
        threads = [
            threading.Thread(target=fn, args=(ctypes.addressof(counter), n, parity))
            for parity in (0, 1)
        ]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        best = min(best, (time.perf_counter() - t0) / n * 1e9)
    return best


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
    from xrelay.lowering.jit import host_features

    features = set(host_features())
    width = 16 if "avx512f" in features else 8 if "avx" in features else 4
    fn, engine = _jitted(_fma_loop_ir(width), "fma_loop", ctypes.c_int64, ctypes.c_void_p)
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
