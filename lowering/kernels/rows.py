"""The runtime's f32 layer norm, softmax, log-softmax and global pools along contiguous
rows (select-kernels: `relay.nn.layer_norm` over trailing axes, `relay.nn.softmax` and
`relay.nn.log_softmax` along the last axis, NCHW `relay.nn.global_avg_pool2d` and
`global_max_pool2d` over each plane, `relay.max` and `relay.min` over trailing axes;
static shapes).

    void xr_layer_norm(ptr x, ptr gamma, ptr beta, ptr y, i64 rows, i64 n, ptr eps)
    void xr_softmax(ptr x, ptr y, i64 rows, i64 n)
    void xr_log_softmax(ptr x, ptr y, i64 rows, i64 n)
    void xr_row_mean(ptr x, ptr y, i64 rows, i64 n)      y[r] = sum(row r) / n
    void xr_row_max(ptr x, ptr y, i64 rows, i64 n)       y[r] = max(row r)
    void xr_row_min(ptr x, ptr y, i64 rows, i64 n)       y[r] = min(row r)

One call per op, each row in a few vector passes while it stays in L1. The linalg
lowering took five or six loop nests per op (each a parallel region of its own), and
its sums, a chain of scalar additions, did not vectorize: a layer norm of 128 x 768 took
80 us, BERT-base's 25 layer norms and 12 softmaxes 3.8 of its 84 ms.

The operations are the lowering's, in its order, except the order of the sums: each sums
vw-lane partial sums (the layer norm's: four vectors of them over the row's whole
vectors, the rest into the first, added pairwise), then the lanes in order.

    layer norm:   mean = sum(x) / n,  var = sum((x - mean)^2) / n,
                  y = (x - mean) * (1 / sqrt(var + eps)) * gamma + beta
    softmax:      m = max(x) (NaN wins, from -inf),  e = exp(x - m),  y = e / sum(e)
    log-softmax:  y = (x - m) - log(sum(e))

exp is expand-math's polynomial, operation for operation; the softmax's leaves out
the steps that only change x > 0 (its x - max is at most 0 or NaN: the same values),
BERT-base's 12 x 128 rows of 128 89.7 -> 77.2 us. A row's tail is read through
masks: as zeros for the layer norm's sum, as the mean for its squares (they add 0), as
-inf for the softmax (exp gives 0).
From PARALLEL_MIN values the rows are split over the thread pool.
"""

from __future__ import annotations

import struct

import numpy as np
from xrelay.dialects.kernel import RowSpec
from xrelay.lowering.expand_math import (
    EXP_C,
    EXP_HI,
    EXP_LO,
    LN2_HI,
    LN2_LO,
    LOG2E,
)
from xrelay.lowering.kernels.irtext import Writer, first_lanes, splat
from xrelay.lowering.kernels.parallel import split_planes

PARALLEL_MIN = 1 << 14  # values from which the rows are split over threads
EXP_AT_MOST_ZERO = True  # (tests compare with the full exp)
UNROLL = 4  # partial-sum vectors over a row's whole vectors
NEG_INF = "0xFFF0000000000000"
POS_INF = "0x7FF0000000000000"

HEADER = """
declare float @llvm.vector.reduce.fadd.v{vw}f32(float, <{vw} x float>)
declare float @llvm.vector.reduce.fmaximum.v{vw}f32(<{vw} x float>)
declare float @llvm.vector.reduce.fminimum.v{vw}f32(<{vw} x float>)
declare <{vw} x float> @llvm.minimum.v{vw}f32(<{vw} x float>, <{vw} x float>)
declare <{vw} x float> @llvm.roundeven.v{vw}f32(<{vw} x float>)
declare <{vw} x float> @llvm.fma.v{vw}f32(<{vw} x float>, <{vw} x float>, <{vw} x float>)
declare float @llvm.sqrt.f32(float)
declare float @llvm.log.f32(float)
"""


def f32(value: float) -> str:
    """An f32 constant in LLVM's notation (the double of the f32-rounded value)."""
    bits = struct.unpack("<Q", struct.pack("<d", float(np.float32(value))))[0]
    return f"0x{bits:016X}"


# the kernel of each RowSpec.kind
NAMES = {"layer_norm": "@xr_layer_norm", "softmax": "@xr_softmax",
         "log_softmax": "@xr_log_softmax", "mean": "@xr_row_mean", "max": "@xr_row_max",
         "min": "@xr_row_min"}  # fmt: skip


class _Vec:
    """Vector operations of width vw on <vw x float>."""

    def __init__(self, w: Writer, vw: int) -> None:
        self.w, self.vw, self.t = w, vw, f"<{vw} x float>"

    def splat(self, scalar: str) -> str:
        return splat(self.w, scalar, self.vw, "float")

    def const(self, value: float) -> str:
        return self.splat(f32(value))

    def bin(self, op: str, a: str, b: str) -> str:
        return self.w.op(f"{op} {self.t} {a}, {b}")

    def call(self, fn: str, *args: str) -> str:
        t = self.t
        return self.w.op(
            f"call {t} @llvm.{fn}.v{self.vw}f32({', '.join(f'{t} {a}' for a in args)})"
        )

    def select(self, cond: str, a: str, b: str) -> str:
        return self.w.op(f"select <{self.vw} x i1> {cond}, {self.t} {a}, {self.t} {b}")

    def cmp(self, pred: str, a: str, b: str) -> str:
        return self.w.op(f"fcmp {pred} {self.t} {a}, {b}")

    def load(self, ptr: str, mask: str, fill: str) -> str:
        t, m = self.t, f"<{self.vw} x i1>"
        return self.w.op(
            f"call {t} @llvm.masked.load.v{self.vw}f32.p0(ptr {ptr}, i32 4, {m} {mask}, {t} {fill})"
        )

    def store(self, value: str, ptr: str, mask: str) -> None:
        t, m = self.t, f"<{self.vw} x i1>"
        self.w.do(
            f"call void @llvm.masked.store.v{self.vw}f32.p0({t} {value}, ptr {ptr}, i32 4, {m} {mask})"
        )

    def exp(self, x: str, at_most_zero: bool = False) -> str:
        """expand_math.exp, operation for operation. `at_most_zero`: x is known to be at
        most 0 or NaN (a softmax's x - max): the operations that can only change a larger
        x (the clamp at EXP_HI, the exponent's cap at 127 and its factor 2, +inf above
        EXP_HI) are left out, which gives the same values for such x."""
        c = self.const
        low = self.select(self.cmp("ogt", c(EXP_LO), x), c(EXP_LO), x)  # (expand_math.clamp)
        xc = low if at_most_zero else self.select(self.cmp("olt", c(EXP_HI), low), c(EXP_HI), low)
        n = self.call("roundeven", self.bin("fmul", xc, c(LOG2E)))
        n = self.select(self.cmp("uno", n, n), c(0.0), n)
        r = self.bin(
            "fsub",
            self.bin("fsub", xc, self.bin("fmul", n, c(LN2_HI))),
            self.bin("fmul", n, c(LN2_LO)),
        )
        acc = c(EXP_C[-1])
        for k in reversed(EXP_C[:-1]):
            acc = self.call("fma", acc, r, c(k))  # (expand_math's Horner steps)
        p = self.bin(
            "fadd", self.bin("fadd", c(1.0), r), self.bin("fmul", self.bin("fmul", r, r), acc)
        )
        w, vw = self.w, self.vw
        top = n if at_most_zero else self.select(self.cmp("olt", c(127.0), n), c(127.0), n)
        bits = w.op(f"fptosi {self.t} {top} to <{vw} x i32>")
        ints = lambda v: "<" + ", ".join([f"i32 {v}"] * vw) + ">"
        bits = w.op(f"shl <{vw} x i32> {w.op(f'add <{vw} x i32> {bits}, {ints(127)}')}, {ints(23)}")
        y = self.bin("fmul", p, w.op(f"bitcast <{vw} x i32> {bits} to {self.t}"))
        if not at_most_zero:
            y = self.bin("fmul", y, self.select(self.cmp("ogt", n, c(127.0)), c(2.0), c(1.0)))
            y = self.select(self.cmp("ogt", x, c(EXP_HI)), self.splat(POS_INF), y)
        return self.select(self.cmp("olt", x, c(EXP_LO)), c(0.0), y)


def _fold(w: Writer, v: _Vec, row: str, n: str, fill: str, step, extreme: str = "") -> str:
    """Reduce a row of n values: `step(acc, x)` over UNROLL partial vectors (from 0, or
    from `fill` for an `extreme`, "maximum" or "minimum") along the whole vectors, the tail
    (masked, lanes past n read as `fill`) into the first; the partial vectors added (or
    their extreme) pairwise, then their lanes in order."""
    vw = v.vw
    block = vw * UNROLL
    whole = w.mul(w.op(f"sdiv i64 {n}, {block}"), str(block))
    accs = [w.var(v.t, fill if extreme else v.const(0.0), "acc") for _ in range(UNROLL)]
    with w.loop("q", "0", whole, str(block)) as q:
        for u in range(UNROLL):
            x = w.op(f"load {v.t}, ptr {w.gep(row, w.add(q, str(u * vw)))}, align 4")
            w.set(accs[u], step(w.get(accs[u]), x))
    with w.loop("q", whole, n, str(vw)) as q:
        x = v.load(w.gep(row, q), first_lanes(w, w.sub(n, q), vw), fill)
        w.set(accs[0], step(w.get(accs[0]), x))
    parts = [w.get(a) for a in accs]
    while len(parts) > 1:
        pairs = zip(parts[::2], parts[1::2])
        parts = [v.call(extreme, a, b) if extreme else v.bin("fadd", a, b) for a, b in pairs]
    if extreme:
        reduce = f"@llvm.vector.reduce.f{extreme}.v{vw}f32"
        return w.op(f"call float {reduce}({v.t} {parts[0]})")
    return w.op(f"call float @llvm.vector.reduce.fadd.v{vw}f32(float -0.0, {v.t} {parts[0]})")


def _sum(w: Writer, v: _Vec, row: str, n: str) -> str:
    return _fold(w, v, row, n, v.const(0.0), lambda a, x: v.bin("fadd", a, x))


def _max(w: Writer, v: _Vec, row: str, n: str) -> str:
    """The row's maximum (NaN wins; -inf past n)."""
    return _fold(w, v, row, n, v.splat(NEG_INF), lambda a, x: v.call("maximum", a, x), "maximum")


def _min(w: Writer, v: _Vec, row: str, n: str) -> str:
    """The row's minimum (NaN wins; +inf past n)."""
    return _fold(w, v, row, n, v.splat(POS_INF), lambda a, x: v.call("minimum", a, x), "minimum")


def _map(w: Writer, v: _Vec, n: str, body) -> None:
    """body(q, mask) for each vector of a row (the last masked)."""
    with w.loop("q", "0", n, str(v.vw)) as q:
        body(q, first_lanes(w, w.sub(n, q), v.vw))


LN_PARAMS = [("ptr", "%x"), ("ptr", "%g"), ("ptr", "%b"), ("ptr", "%y"), ("i64", "%rows"),
             ("i64", "%n"), ("ptr", "%eps")]  # fmt: skip
SM_PARAMS = [("ptr", "%x"), ("ptr", "%y"), ("i64", "%rows"), ("i64", "%n")]


def layer_norm(w: Writer, vw: int, threads: bool) -> None:
    v = _Vec(w, vw)
    fn = NAMES["layer_norm"]
    with w.function("void", f"{fn}_part", [*LN_PARAMS, ("i64", "%p0"), ("i64", "%p1")]):
        count = w.op("sitofp i64 %n to float")
        eps = w.op("load float, ptr %eps")
        zero = v.const(0.0)
        with w.loop("r", "%p0", "%p1") as r:
            row, out = w.gep("%x", w.mul(r, "%n")), w.gep("%y", w.mul(r, "%n"))
            mean = w.op(f"fdiv float {_sum(w, v, row, '%n')}, {count}")
            m = v.splat(mean)

            def squares(acc: str, x: str) -> str:
                d = v.bin("fsub", x, m)
                return v.bin("fadd", acc, v.bin("fmul", d, d))

            # the tail's lanes read as the mean: their squares add 0
            var_total = _fold(w, v, row, "%n", m, squares)
            var = w.op(f"fdiv float {var_total}, {count}")
            root = w.op(f"call float @llvm.sqrt.f32(float {w.op(f'fadd float {var}, {eps}')})")
            inv = v.splat(w.op(f"fdiv float 1.0, {root}"))

            def normalize(q: str, mask: str) -> None:
                x = v.load(w.gep(row, q), mask, zero)
                y = v.bin(
                    "fmul",
                    v.bin("fmul", v.bin("fsub", x, m), inv),
                    v.load(w.gep("%g", q), mask, zero),
                )
                y = v.bin("fadd", y, v.load(w.gep("%b", q), mask, zero))
                v.store(y, w.gep(out, q), mask)

            _map(w, v, "%n", normalize)
    split_planes(w, fn, LN_PARAMS, "%rows", _worth, threads)


def softmax(w: Writer, vw: int, log: bool, threads: bool) -> None:
    v = _Vec(w, vw)
    fn = NAMES["log_softmax" if log else "softmax"]
    with w.function("void", f"{fn}_part", [*SM_PARAMS, ("i64", "%p0"), ("i64", "%p1")]):
        low = v.splat(NEG_INF)
        with w.loop("r", "%p0", "%p1") as r:
            row, out = w.gep("%x", w.mul(r, "%n")), w.gep("%y", w.mul(r, "%n"))
            m = v.splat(_max(w, v, row, "%n"))
            acc = w.var(v.t, v.const(0.0), "acc")

            def exps(q: str, mask: str) -> None:
                e = v.exp(v.bin("fsub", v.load(w.gep(row, q), mask, low), m), EXP_AT_MOST_ZERO)
                if not log:
                    v.store(e, w.gep(out, q), mask)
                w.set(acc, v.bin("fadd", w.get(acc), e))

            _map(w, v, "%n", exps)
            s = w.op(
                f"call float @llvm.vector.reduce.fadd.v{vw}f32(float -0.0, {v.t} {w.get(acc)})"
            )
            if log:
                shift = v.splat(w.op(f"call float @llvm.log.f32(float {s})"))

                def finish(q: str, mask: str) -> None:
                    x = v.load(w.gep(row, q), mask, low)
                    v.store(v.bin("fsub", v.bin("fsub", x, m), shift), w.gep(out, q), mask)

            else:
                d = v.splat(s)

                def finish(q: str, mask: str) -> None:
                    e = v.load(w.gep(out, q), mask, low)
                    v.store(v.bin("fdiv", e, d), w.gep(out, q), mask)

            _map(w, v, "%n", finish)
    split_planes(w, fn, SM_PARAMS, "%rows", _worth, threads)


def reduce_rows(w: Writer, vw: int, kind: str, threads: bool) -> None:
    """@xr_row_mean / @xr_row_max / @xr_row_min: y[r] = sum(row r) / n, or its maximum or
    minimum (NaN wins)."""
    v = _Vec(w, vw)
    fn = NAMES[kind]
    params = [*SM_PARAMS, ("i64", "%p0"), ("i64", "%p1")]
    with w.function("void", f"{fn}_part", params), w.loop("r", "%p0", "%p1") as r:
        row = w.gep("%x", w.mul(r, "%n"))
        if kind == "max":
            y = _max(w, v, row, "%n")
        elif kind == "min":
            y = _min(w, v, row, "%n")
        else:
            y = w.op(f"fdiv float {_sum(w, v, row, '%n')}, {w.op('sitofp i64 %n to float')}")
        w.do(f"store float {y}, ptr {w.gep('%y', r)}")
    split_planes(w, fn, SM_PARAMS, "%rows", _worth, threads)


def _worth(w: Writer) -> str:
    big = w.op(f"icmp sge i64 {w.mul('%rows', '%n')}, {PARALLEL_MIN}")
    return w.op(f"and i1 {big}, {w.op('icmp sgt i64 %rows, 1')}")


def wrapper(w: Writer, symbol: str, spec: RowSpec) -> None:
    """@symbol(x, [gamma, beta], y), as to-llvm passes the declaration's static buffers."""
    if spec.kind == "layer_norm":
        w.lines.append(f"@{symbol}.eps = internal constant float {f32(float(spec.epsilon))}")
        params = [("ptr", "%x"), ("ptr", "%g"), ("ptr", "%b"), ("ptr", "%y")]
        with w.function("void", f"@{symbol}", params, linkage="dso_local"):
            w.do(
                f"call void {NAMES['layer_norm']}(ptr %x, ptr %g, ptr %b, ptr %y, i64 {spec.rows}, i64 {spec.n}, ptr @{symbol}.eps)"
            )
        return
    with w.function("void", f"@{symbol}", [("ptr", "%x"), ("ptr", "%y")], linkage="dso_local"):
        w.do(f"call void {NAMES[spec.kind]}(ptr %x, ptr %y, i64 {spec.rows}, i64 {spec.n})")


def runtime_ir(specs: dict[str, RowSpec], threads: bool, vw: int, declared: str = "") -> str:
    """The row kernels `specs` use (declaration name -> spec) for vector width `vw` (on the
    thread pool with `threads`) and their wrappers, after the runtime text `declared`
    (gemm.HEADER's masked loads and stores and llvm.maximum among it; the intrinsics it
    declares already are not declared again)."""
    w = Writer()
    header = HEADER.format(vw=vw).splitlines()
    w.lines += [line for line in header if line.split("(")[0] not in declared]
    kinds = {spec.kind for spec in specs.values()}
    if "layer_norm" in kinds:
        layer_norm(w, vw, threads)
    for kind, log in (("softmax", False), ("log_softmax", True)):
        if kind in kinds:
            softmax(w, vw, log, threads)
    for kind in ("mean", "max", "min"):
        if kind in kinds:
            reduce_rows(w, vw, kind, threads)
    for symbol, spec in specs.items():
        wrapper(w, symbol, spec)
    return w.text()
