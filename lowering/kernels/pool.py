"""The runtime's f32 2-D max and average pools (select-kernels: `relay.nn.max_pool2d`,
`relay.nn.avg_pool2d`, NCHW): one function per window (`Window`: its taps unrolled) and
one wrapper per declaration (`#kernel.pool`).

    void xr_maxpool_3x3s2d1x1(ptr x, ptr y, ptr geo, i64 planes, ptr d)
    void xr_avgpool_2x2s2d1x1(ptr x, ptr y, ptr geo, i64 planes, ptr d)

geo: 13 i64, H, W, OH, OW, KH, KW, SH, SW, DH, DW, PT, PL, and the row buffer's width WB =
(OW - 1) * SW + (KW - 1) * DW + 1. For each of `planes` planes and each output row, the
window's rows are reduced into a row buffer first (WB values, -inf where a column lies in
the padding: the padding never wins), then the window's columns are reduced out of it
(stride 1: vector loads at each tap's offset; stride 2: loads of two vectors whose even
values are kept; other strides value by value). The row buffer stays in L1, so each input
value is read once per window row and each output written once: the linalg lowering's two
passes wrote and read back partial rows, and their padding's columns a cache line per row.
`llvm.maximum` as in the lowering (NaN wins; with 16-float vectors vrangeps, the same
maxima in one instruction, and a plane with a NaN redone). An average pool sums instead
(the padding adds 0) and divides each sum by its divisor d[oy * OW + ox] (the lowering's:
the taps on the input, and on the padding with count_include_pad), as the lowering's
separable passes do (d is unused by a max pool). From PARALLEL_MIN outputs the planes are
split over the thread pool.
"""

from __future__ import annotations

from typing import NamedTuple

from xrelay.dialects.kernel import PoolSpec
from xrelay.lowering.kernels.irtext import Writer, first_lanes, iota, splat
from xrelay.lowering.kernels.parallel import split_planes

GEO = ("H", "W", "OH", "OW", "KH", "KW", "SH", "SW", "DH", "DW", "PT", "PL", "WB")
PARALLEL_MIN = 1 << 14  # outputs from which the planes are split over threads
NEG_INF = "0xFFF0000000000000"
PARAMS = [("ptr", "%x"), ("ptr", "%y"), ("ptr", "%geo"), ("i64", "%planes"), ("ptr", "%d")]


def geometry(spec: PoolSpec) -> list[int]:
    """The 13 values `geo` points at."""
    wb = (spec.ow - 1) * spec.sw + (spec.kw - 1) * spec.dw + 1
    return [spec.h, spec.w, spec.oh, spec.ow, spec.kh, spec.kw, spec.sh, spec.sw, spec.dh,
            spec.dw, spec.pt, spec.pl, wb]  # fmt: skip


class Window(NamedTuple):
    """What a pool function is generated for (the rest of the geometry is read from geo):
    its taps unrolled, so a window's maxima are independent across vectors (a loop over
    the taps chained each vector's maxima, 5 instructions each for NaN and -0)."""

    average: bool
    kh: int
    kw: int
    sw: int
    dh: int
    dw: int


def window(spec: PoolSpec) -> Window:
    return Window(spec.average, spec.kh, spec.kw, spec.sw, spec.dh, spec.dw)


def name(kind: Window) -> str:
    """@xr_maxpool_3x3s2d1x1 and the like (avgpool for an average pool)."""
    pool = "avgpool" if kind.average else "maxpool"
    return f"@xr_{pool}_{kind.kh}x{kind.kw}s{kind.sw}d{kind.dh}x{kind.dw}"


RANGE = "@llvm.x86.avx512.mask.range.ps.512"  # vrangeps (AVX512DQ)
RANGE_IR = (
    f"declare <16 x float> {RANGE}(<16 x float>, <16 x float>, i32, <16 x float>, i16, i32)\n"
)


def part(w: Writer, vw: int, kind: Window) -> None:
    """Emit `name(kind)`_part: the pool on planes [%p0, %p1). Output rows whose window
    rows all lie inside the input load them unconditionally (the rest test each row), and
    so do the row's vectors that lie inside its columns (the rest are masked). With
    16-float vectors a max pool takes its maxima with vrangeps, which orders -0 below +0
    as llvm.maximum does in one instruction (llvm.maximum's NaN and -0 handling took 6),
    and sums every vector it loads on the side: a plane whose sum comes out NaN (a NaN in
    it, or +inf beside -inf) is redone with llvm.maximum. (A pass over the plane looking
    for NaNs first cost half the pool: it read the plane from L2 once more.) SqueezeNet
    1.1's three pools on two threads 0.25 -> 0.21 ms, and before that on one 0.44 -> 0.39
    (from llvm.maximum; xrelay profile); 32 planes of 111 x 111 55 us, as fast as the same
    loops in C with intrinsics."""
    average = kind.average
    v, v2, m = f"<{vw} x float>", f"<{2 * vw} x float>", f"<{vw} x i1>"
    evens = ", ".join(f"i32 {2 * t}" for t in range(vw))
    low = "zeroinitializer" if average else "<" + ", ".join([f"float {NEG_INF}"] * vw) + ">"
    scalar_low = "0.0" if average else NEG_INF

    def exact(acc: str, x: str) -> str:
        if average:
            return w.op(f"fadd {v} {acc}, {x}")
        return w.op(f"call {v} @llvm.maximum.v{vw}f32({v} {acc}, {v} {x})")

    def ranged(acc: str, x: str) -> str:  # (no NaN among the plane's values)
        return w.op(
            f"call {v} {RANGE}({v} {acc}, {v} {x}, i32 5, {v} zeroinitializer, i16 -1, i32 4)"
        )

    with w.function("void", f"{name(kind)}_part", [*PARAMS, ("i64", "%p0"), ("i64", "%p1")]):
        g = {n: w.op(f"load i64, ptr {w.gep('%geo', str(i), 'i64')}") for i, n in enumerate(GEO)}
        # the plane's row maxima: OH rows of `stride` values (WB, and room for the last
        # vectors' reads past it)
        stride = w.mul(w.op(f"sdiv i64 {w.add(g['WB'], str(3 * vw - 1))}, {vw}"), str(vw))
        buf = w.op(f"call ptr @aligned_alloc(i64 64, i64 {w.mul(w.mul(g['OH'], stride), '4')})")
        width = splat(w, w.op(f"trunc i64 {g['W']} to i32"), vw, "i32")
        reach = (kind.kh - 1) * kind.dh  # the window's last row, from its first

        # the row buffer's vectors q (value q is input column q - PL): those whole inside
        # the input's columns, [qa, qb), load without a mask
        end = w.mul(w.op(f"sdiv i64 {w.add(g['WB'], str(vw - 1))}, {vw}"), str(vw))
        qa = w.min(w.mul(w.op(f"sdiv i64 {w.add(g['PL'], str(vw - 1))}, {vw}"), str(vw)), end)
        last = w.sub(w.add(g["W"], g["PL"]), str(vw))  # the last whole vector's q
        past = w.add(w.mul(w.op(f"sdiv i64 {last}, {vw}"), str(vw)), str(vw))
        past = w.op(f"select i1 {w.op(f'icmp slt i64 {last}, 0')}, i64 0, i64 {past}")
        qb = w.op(f"call i64 @llvm.smax.i64(i64 {qa}, i64 {w.min(past, end)})")

        def add_row(combine, acc, xp: str, iy: str, col: str, mask: str | None, total) -> None:
            """acc (a variable) combined with input row iy's vector at column col (the
            lanes `mask`, the rest low; all without one); the vector also added into
            `total` (a variable) if given."""
            at = w.gep(xp, w.add(w.mul(iy, g["W"]), col))
            if mask is None:
                x = w.op(f"load {v}, ptr {at}, align 4")
            else:
                x = w.op(
                    f"call {v} @llvm.masked.load.v{vw}f32.p0(ptr {at}, i32 4, {m} {mask}, {v} {low})"
                )
            w.set(acc, combine(w.get(acc), x))
            if total is not None:
                w.set(total, w.op(f"fadd {v} {w.get(total)}, {x}"))

        def rows(combine, xp: str, oy: str, top: str, checked: bool, totals) -> None:
            """Row oy of the row maxima, the window's rows from input row `top` (each
            tested against the input's rows when `checked`)."""
            for lo, hi, masked in (("0", qa, True), (qa, qb, False), (qb, end, True)):
                with w.loop("q", lo, hi, str(vw)) as q:
                    col = w.sub(q, g["PL"])
                    mask = None
                    if masked:  # (lanes in the padding load low)
                        lanes = w.op(
                            f"add <{vw} x i32> {iota(vw)}, {splat(w, w.op(f'trunc i64 {col} to i32'), vw, 'i32')}"
                        )
                        inside = w.op(f"icmp sge <{vw} x i32> {lanes}, zeroinitializer")
                        mask = w.op(
                            f"and {m} {inside}, {w.op(f'icmp slt <{vw} x i32> {lanes}, {width}')}"
                        )
                    acc = w.var(v, low)
                    for ti in range(kind.kh):
                        iy = w.add(top, str(ti * kind.dh))
                        if checked:
                            ok = w.op(f"and i1 {w.op(f'icmp sge i64 {iy}, 0')}, {w.lt(iy, g['H'])}")
                            with w.if_(ok):
                                add_row(combine, acc, xp, iy, col, mask, totals and totals[ti])
                        else:
                            add_row(combine, acc, xp, iy, col, mask, totals and totals[ti])
                    row = w.gep(buf, w.add(w.mul(oy, stride), q))
                    w.do(f"store {v} {w.get(acc)}, ptr {row}, align 4")

        def vertical(combine, xp: str, totals=None) -> None:
            """Down the window's rows into the row buffer (the maxima stay in registers,
            stored once), each loaded vector also added into `totals` (a variable per
            window row) if given."""
            with w.loop("oy", "0", g["OH"]) as oy:
                top = w.sub(w.mul(oy, g["SH"]), g["PT"])
                whole = w.op(
                    f"and i1 {w.op(f'icmp sge i64 {top}, 0')}, {w.lt(w.add(top, str(reach)), g['H'])}"
                )
                inner, edge, done = w.if_else(whole, "rows")
                w.block(inner)
                rows(combine, xp, oy, top, False, totals)
                w.br(done)
                w.block(edge)
                rows(combine, xp, oy, top, True, totals)
                w.br(done)
                w.block(done)

        def horizontal(combine, yp: str) -> None:
            # along the window's columns: out[ox] = max over tj of row[ox SW + tj DW]
            sw, ones = kind.sw, "<" + ", ".join(["float 1.0"] * vw) + ">"
            if sw in (1, 2):
                whole = w.mul(w.op(f"sdiv i64 {g['OW']}, {vw}"), str(vw))

                def outputs(oy: str, ox: str, keep: str | None) -> None:
                    """Outputs ox.. of row oy: a whole vector, or the lanes `keep`."""
                    result = low
                    base = w.gep(buf, w.add(w.mul(oy, stride), w.mul(ox, str(sw))))
                    for tj in range(kind.kw):
                        at = w.gep(base, str(tj * kind.dw))
                        if sw == 1:
                            x = w.op(f"load {v}, ptr {at}, align 4")
                        else:
                            pair = w.op(f"load {v2}, ptr {at}, align 4")
                            x = w.op(
                                f"shufflevector {v2} {pair}, {v2} poison, <{vw} x i32> <{evens}>"
                            )
                        result = combine(result, x)
                    at = w.add(w.mul(oy, g["OW"]), ox)
                    if average:
                        if keep is None:
                            d = w.op(f"load {v}, ptr {w.gep('%d', at)}, align 4")
                        else:
                            d = w.op(
                                f"call {v} @llvm.masked.load.v{vw}f32.p0(ptr {w.gep('%d', at)}, i32 4, {m} {keep}, {v} {ones})"
                            )
                        result = w.op(f"fdiv {v} {result}, {d}")
                    if keep is None:
                        w.do(f"store {v} {result}, ptr {w.gep(yp, at)}, align 4")
                    else:
                        w.do(
                            f"call void @llvm.masked.store.v{vw}f32.p0({v} {result}, ptr {w.gep(yp, at)}, i32 4, {m} {keep})"
                        )

                # whole vectors, then the row's last lanes under a mask
                keep = first_lanes(w, w.sub(g["OW"], whole), vw)
                tail = w.op(f"icmp slt i64 {whole}, {g['OW']}")
                with w.loop("oy", "0", g["OH"]) as oy:
                    with w.loop("ox", "0", whole, str(vw)) as ox:
                        outputs(oy, ox, None)
                    with w.if_(tail):
                        outputs(oy, whole, keep)
            else:  # other strides: value by value
                with w.loop("oy", "0", g["OH"]) as oy, w.loop("ox", "0", g["OW"]) as ox:
                    one = scalar_low
                    base = w.gep(buf, w.add(w.mul(oy, stride), w.mul(ox, str(sw))))
                    for tj in range(kind.kw):
                        x = w.op(f"load float, ptr {w.gep(base, str(tj * kind.dw))}")
                        if average:
                            one = w.op(f"fadd float {one}, {x}")
                        else:
                            one = w.op(f"call float @llvm.maximum.f32(float {one}, float {x})")
                    at = w.add(w.mul(oy, g["OW"]), ox)
                    if average:
                        d = w.op(f"load float, ptr {w.gep('%d', at)}")
                        one = w.op(f"fdiv float {one}, {d}")
                    w.do(f"store float {one}, ptr {w.gep(yp, at)}")

        with w.loop("p", "%p0", "%p1") as p:
            size = w.mul(g["H"], g["W"])
            xp = w.gep("%x", w.mul(p, size))
            yp = w.gep("%y", w.mul(p, w.mul(g["OH"], g["OW"])))
            if average or vw != 16:
                vertical(exact, xp)
                horizontal(exact, yp)
            else:
                # vrangeps, with every loaded vector summed on the side: a NaN among the
                # plane's values makes the sum NaN (so can +inf beside -inf: then the
                # plane is only redone), and the plane is redone with llvm.maximum
                totals = [w.var(v, "zeroinitializer", "total") for _ in range(kind.kh)]
                vertical(ranged, xp, totals)
                total = w.get(totals[0])
                for t in totals[1:]:
                    total = w.op(f"fadd {v} {total}, {w.get(t)}")
                nan = w.op(f"bitcast {m} {w.op(f'fcmp uno {v} {total}, {total}')} to i{vw}")
                slow, fast, join = w.if_else(w.op(f"icmp ne i{vw} {nan}, 0"), "nan")
                w.block(fast)
                horizontal(ranged, yp)
                w.br(join)
                w.block(slow)
                vertical(exact, xp)
                horizontal(exact, yp)
                w.br(join)
                w.block(join)
        w.do(f"call void @free(ptr {buf})")


def entry(w: Writer, threads: bool, kind: Window) -> None:
    """Emit `name(kind)`: its planes split over the pool's threads from PARALLEL_MIN
    outputs (and two planes)."""

    def worth(w: Writer) -> str:
        oh, ow = (
            w.op(f"load i64, ptr {w.gep('%geo', str(GEO.index(n)), 'i64')}") for n in ("OH", "OW")
        )
        big = w.op(f"icmp sge i64 {w.mul('%planes', w.mul(oh, ow))}, {PARALLEL_MIN}")
        return w.op(f"and i1 {big}, {w.op('icmp sgt i64 %planes, 1')}")

    split_planes(w, name(kind), PARAMS, "%planes", worth, threads)


def wrapper(w: Writer, symbol: str, spec: PoolSpec) -> None:
    """@symbol(x, [d], y), as to-llvm passes the declaration's static buffers (an average
    pool's divisors after its input)."""
    values = ", ".join(f"i64 {v}" for v in geometry(spec))
    w.lines.append(f"@{symbol}.geo = internal constant [{len(GEO)} x i64] [{values}]")
    params = [("ptr", "%x"), *([("ptr", "%d")] if spec.average else []), ("ptr", "%y")]
    d = "%d" if spec.average else "null"
    with w.function("void", f"@{symbol}", params, linkage="dso_local"):
        w.do(
            f"call void {name(window(spec))}(ptr %x, ptr %y, ptr @{symbol}.geo, i64 {spec.planes}, ptr {d})"
        )


def runtime_ir(specs: dict[str, PoolSpec], threads: bool, vw: int) -> str:
    """The max and average pools of the windows `specs` use, for vector width `vw` (on the
    thread pool with `threads`), and the wrappers of `specs` (declaration name -> spec);
    the GEMM's header (gemm.HEADER: the masked loads and stores, llvm.maximum, smin /
    smax, aligned_alloc and free) must be in the module."""
    w = Writer()
    if vw == 16:
        w.lines.append(RANGE_IR)
    for kind in sorted({window(spec) for spec in specs.values()}):
        part(w, vw, kind)
        entry(w, threads, kind)
    for symbol, spec in specs.items():
        wrapper(w, symbol, spec)
    return w.text()
