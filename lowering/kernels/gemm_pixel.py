"""f32 convolutions of few output pixels, run pixel-major (`GemmSpec.pixel_major`, chosen
by prepack-weights where `pixel_major_pays`).

A convolution's product C[o, p] = sum_k W[o, k] B[k, p] (B: the input, or its implicit
im2col) puts the output pixels along the micro-kernel's NR-wide rows: a 7 x 7 output (49
pixels) fills two 32-column panels, 64 columns computed for 49. Here the same product runs
transposed, T[p, o] = sum_k B[k, p] W[o, k]: channels along the vectors (the weight,
prepacked as A in NR-row panels, read as B's panels are), pixels broadcast 8 at a time (MR
rows): 49 pixels are 7 tiles of 8 (56 rows). A window's im2col is never packed: gemm.py's
micro-kernel, as `xr_ukr_px`, broadcasts B[k, p] straight from the input, at src + off[k]
+ base[p], where off[k] is the window tap k = (c, i, j)'s offset c*plane + i*DH*row + j*DW
and base[p] pixel p's window corner oy*SH*row + ox*SW; windows that reach outside the
input read a zero-padded copy of it (`src`, made per call). A pointwise convolution
comes with a 1x1 window (select-kernels), so its pixels are broadcast from its input too:
packing them, each thread packed all of them per call. A pointwise product without a
window (one with B's prologue) has its pixels packed per K block into MR-row panels
(contiguous copies, through the prologue if any: `xr_pm_pack_a`) for the plain micro-kernel.

T, ceil(N / MR) * MR x ceil(M / NR) * NR partial sums, is a scratch of the call; after the
last K block it is transposed back into C in 8 x 8 blocks, the epilogue applied per channel
row and the stores masked to the pixels. Each sum is the micro-kernel's chain over one K
block (KC, as the packed path's) added to the earlier blocks' as in `xr_gemm_serial`, and
the epilogue's operations come in its order: C is the same, bit for bit.

    void xr_sgemm_pm(... xr_sgemm's parameters ...)

with M the channels (rows of C, from arow0 on: a multiple of NR), N the pixels (from bcol0
on), `a` the packed weight (apk != 0, mpad a multiple of NR), `b` the input (geo non-null:
a window; else B[k, j] = b[k*rsb + j*csb], through the prologue when ps is non-null).
Threads split the channels in NR units, or the pixels in MR units where those are more.
16-float vectors only (AVX-512: MR 8, NR 32).
"""

from __future__ import annotations

from xrelay.errors import Error
from xrelay.lowering.kernels.conv_pack import load_geometry
from xrelay.lowering.kernels.gemm import (
    IDENTITY_EPILOGUE,
    KC,
    PARALLEL_MIN,
    PARAMS,
    V8,
    Epilogue,
    _columns,
    _rows,
    k_block,
    load8,
    micro_kernel,
    pack,
    panel_width,
    prefetch_stream,
    row_height,
    splat,
    split_entry,
    transpose8,
)
from xrelay.lowering.kernels.irtext import Writer, copy_values, floor

MAX_PIXELS = 256  # pixels per image at most (14 x 14: 196)
# the 32-column panels' rows computed over the 8-row panels' at least: 49 pixels 64 / 56,
# 196 224 / 200, 169 192 / 176; 784 (28 x 28) 800 / 784 is not worth the transpose
MIN_GAIN = 1.08
MIN_CHANNELS = 32  # output channels (one panel) at least
# a pointwise product's reduction at least: the transposed store costs per output value what
# the saved columns return per K (48 -> 192 1x1 on 13 x 13: 0.030 ms packed, 0.034
# pixel-major; 128 -> 512 0.101 / 0.115; 256 -> 1024 on 14 x 14 even; 2048 -> 512 on 7 x 7
# 0.51 / 0.42)
MIN_POINTWISE_K = 256
# Winograd's products (a term's K is the input channels; winograd-convs' floors come first):
# same-process A/B of 256 against 32, whole models: SqueezeNet 3.18 -> 3.03 ms, ResNet-50
# 29.6 -> 29.2, Inception v1 10.46 -> 10.15, DenseNet-121 22.6 -> 21.9, VGG-19 86.1 -> 80.8
MIN_WINOGRAD_K = 32
WIDE_WINDOW = 9  # taps: wider windows run pixel-major at any pixel count up to
MAX_WINDOW_PIXELS = 4096  # (T, the partial sums' scratch, grows with the pixels)

# the prefix of its copies of gemm.py's plain micro-kernel and A's packing ("@xr_": the
# GEMM's own, the product's part then one with the GEMM's)
OWN = "@xr_pm_"
M8 = "<8 x i1>"


TAIL_ROWS = (4, 2, 1)  # the heights a last tile of fewer than MR pixels runs in


def _padded(n: int, width: int) -> int:
    return -(-n // width) * width


def pixel_major_pays(
    m: int, n: int, k: int, taps: int, strided: bool, vw: int, winograd: bool = False
) -> bool:
    """Is a convolution of `m` output channels, `n` pixels per image, K = `k` and `taps`
    window taps (all static) faster pixel-major on vector width `vw`? Few pixels that
    fill the 32-wide panels badly; a window with one panel of output channels (32), whose
    im2col panels would serve only 4 row tiles (DenseNet-121's 128 -> 32 3 x 3 on 28 x 28:
    0.28 -> 0.23 ms; winograd-convs leaves it these below THIN_MIN_TILES); or a window
    wider than 3 x 3, whose im2col panels cost more to pack than its pixels' broadcasts
    (Inception v1's 32 -> 96 5 x 5 convolution on 27 x 27: 0.49 -> 0.39 ms; 16 -> 32:
    0.139 -> 0.085). Not a strided 1x1 one: the packed path copies its input's every other
    value as cheaply, and reading it in place was slower (ResNet-50's 1024 -> 2048
    projection 0.99 -> 1.05 ms); nor a 1x1 one with K under MIN_POINTWISE_K, nor (`winograd`)
    Winograd's products with K under MIN_WINOGRAD_K."""
    if vw != 16 or min(m, n, k) <= 0 or m < MIN_CHANNELS:
        return False
    if taps == 1 and (strided or k < (MIN_WINOGRAD_K if winograd else MIN_POINTWISE_K)):
        return False
    if taps > WIDE_WINDOW or (taps > 1 and m <= panel_width(vw)):
        return n <= MAX_WINDOW_PIXELS
    nr, mr = panel_width(vw), row_height(vw)
    return n <= MAX_PIXELS and _padded(n, nr) >= MIN_GAIN * _padded(n, mr)


def _transposed_store(w: Writer, ep: Epilogue, t: str, ldt: str) -> None:
    """C[o, p] (o < M, p < N) from T[p, o]: 8 x 8 blocks transposed in registers, each
    channel's 8 pixels through the epilogue (the micro-kernel's operations in its order)
    into one masked store. Channels outer, each's scale and shift splat once. The usual
    convolution's epilogue (per-channel scale and shift, maybe relu) skips the identities
    of the others: times 1.0 is exact, and the two additions of 0.0 are one (both only
    turn -0.0 into 0.0)."""
    iota = "<" + ", ".join(f"i64 {i}" for i in range(8)) + ">"

    def masked_load(ptr: str, mask: str) -> str:
        return w.op(
            f"call {V8} @llvm.masked.load.v8f32.p0(ptr {ptr}, i32 4, {M8} {mask}, {V8} zeroinitializer)"
        )

    s_base, s_step = ep.parts["scol"]
    t_base, t_step = ep.parts["tcol"]
    r_base, r_step = ep.parts["res"]
    sr_base, sr_step = ep.parts["srow"]
    tr_base, tr_step = ep.parts["trow"]
    identity = [
        w.op(f"icmp eq ptr {s_base}, @xr_ones"),
        w.op(f"icmp eq ptr {t_base}, @xr_zeros"),
        w.op(f"icmp eq ptr {r_base}, @xr_zeros"),
    ]
    rows_only = w.op(f"and i1 {w.op(f'and i1 {identity[0]}, {identity[1]}')}, {identity[2]}")
    relu = w.op(f"fcmp oeq float {ep.lo}, 0.0")
    lo, zero = splat(w, ep.lo, 8), splat(w, ep.zero, 8)
    last = w.sub("%M", "1")

    def blocks(kind: str) -> None:
        with w.loop("o0", "0", "%M", "8") as o0:
            chans = [w.min(w.add(o0, str(q)), last) for q in range(8)]  # (loads stay in M)
            scale = [
                splat(w, w.op(f"load float, ptr {w.gep(sr_base, w.mul(o, sr_step))}"), 8)
                for o in chans
            ]
            shift = [
                splat(w, w.op(f"load float, ptr {w.gep(tr_base, w.mul(o, tr_step))}"), 8)
                for o in chans
            ]
            with w.loop("p0", "0", "%N", "8") as p0:
                left = w.op(f"insertelement <8 x i64> poison, i64 {w.sub('%N', p0)}, i64 0")
                left = w.op(
                    f"shufflevector <8 x i64> {left}, <8 x i64> poison, <8 x i32> zeroinitializer"
                )
                mask = w.op(f"icmp slt <8 x i64> {iota}, {left}")
                rows = [
                    load8(w, w.gep(t, w.add(w.mul(w.add(p0, str(q)), ldt), o0))) for q in range(8)
                ]
                cols = transpose8(w, rows)
                if kind == "any":
                    scol = masked_load(w.gep(s_base, w.mul(p0, s_step)), mask)
                    tcol = masked_load(w.gep(t_base, w.mul(p0, t_step)), mask)
                for q in range(8):
                    o = w.add(o0, str(q))
                    with w.if_(w.lt(o, "%M"), "chan"):
                        y = w.op(f"fmul {V8} {cols[q]}, {scale[q]}")
                        if kind == "any":
                            y = w.op(f"fmul {V8} {y}, {scol}")
                            y = w.op(f"fadd {V8} {y}, {shift[q]}")
                            y = w.op(f"fadd {V8} {y}, {tcol}")
                            at = w.mul(w.add(w.mul(o, ep.ldr), p0), r_step)
                            y = w.op(f"fadd {V8} {y}, {masked_load(w.gep(r_base, at), mask)}")
                            y = floor(w, V8, y, lo, zero)
                        else:
                            y = w.op(f"fadd {V8} {y}, {shift[q]}")
                            y = w.op(f"fadd {V8} {y}, zeroinitializer")
                            if kind == "relu":
                                y = floor(w, V8, y, "zeroinitializer", "zeroinitializer")
                        dst = w.gep("%c", w.add(w.mul(o, "%ldc"), p0))
                        w.do(
                            f"call void @llvm.masked.store.v8f32.p0({V8} {y}, ptr {dst}, i32 4, {M8} {mask})"
                        )

    usual, other, join = w.if_else(rows_only, "rows")
    w.block(usual)
    with_relu, plain, done = w.if_else(relu, "relu")
    w.block(with_relu)
    blocks("relu")
    w.br(done)
    w.block(plain)
    blocks("plain")
    w.br(done)
    w.block(done)
    w.br(join)
    w.block(other)
    blocks("any")
    w.br(join)
    w.block(join)


def _window_source(w: Writer, off: str, base: str, mr: str) -> tuple[str, str]:
    """A window's source, its tap offsets (off) and its pixels' corners (base, `mr` of
    them): the input itself when every window lies inside it, else a zero-padded copy.
    Returns (src, the copy's buffer, which the caller frees)."""
    g = load_geometry(w)
    taps = w.mul(g["KH"], g["KW"])
    channels = w.op(f"sdiv i64 %K, {taps}")
    # the rows and columns the windows cover, from -PT and -PL
    hp = w.add(w.mul(w.sub(g["OH"], "1"), g["SH"]), w.add(w.mul(w.sub(g["KH"], "1"), g["DH"]), "1"))
    wp = w.add(w.mul(w.sub(g["OW"], "1"), g["SW"]), w.add(w.mul(w.sub(g["KW"], "1"), g["DW"]), "1"))
    pads = w.op(f"or i64 {g['PT']}, {g['PL']}")
    below = w.op(f"icmp sgt i64 {w.sub(hp, g['PT'])}, {g['H']}")
    right = w.op(f"icmp sgt i64 {w.sub(wp, g['PL'])}, {g['W']}")
    over = w.op(f"or i1 {below}, {right}")
    copy = w.op(f"or i1 {w.op(f'icmp ne i64 {pads}, 0')}, {over}")
    rs = w.op(f"select i1 {copy}, i64 {wp}, i64 {g['W']}")  # the source's row stride
    plane = w.op(f"select i1 {copy}, i64 {w.mul(hp, wp)}, i64 {w.mul(g['H'], g['W'])}")
    floats = w.mul(channels, plane)
    size = w.op(f"select i1 {copy}, i64 {w.mul(w.add(floats, '16'), '4')}, i64 64")
    pad_src = w.op(f"call ptr @aligned_alloc(i64 64, i64 {size})")
    with w.if_(copy):
        w.do(f"call void @llvm.memset.p0.i64(ptr {pad_src}, i8 0, i64 {w.mul(floats, '4')}, i1 0)")
        # band column q is input column q - PL: the columns inside both
        lo = w.op(f"call i64 @llvm.smax.i64(i64 {g['PL']}, i64 0)")
        skip = w.sub(lo, g["PL"])
        count = w.min(w.sub(g["W"], skip), w.sub(wp, lo))
        some = w.op(f"icmp sgt i64 {count}, 0")
        with w.if_(some), w.loop("c", "0", channels) as c, w.loop("r", "0", hp) as r:
            iy = w.sub(r, g["PT"])
            inside = w.op(f"and i1 {w.op(f'icmp sge i64 {iy}, 0')}, {w.lt(iy, g['H'])}")
            with w.if_(inside):
                src = w.gep("%b", w.add(w.mul(w.add(w.mul(c, g["H"]), iy), g["W"]), skip))
                dst = w.gep(pad_src, w.add(w.add(w.mul(c, plane), w.mul(r, wp)), lo))
                copy_values(w, src, dst, count, 16)
    # off[k] for k = (c, i, j), in that order
    with w.loop("c", "0", channels) as c, w.loop("i", "0", g["KH"]) as i:
        row = w.add(w.mul(c, plane), w.mul(w.mul(i, g["DH"]), rs))
        k0 = w.mul(w.add(w.mul(c, g["KH"]), i), g["KW"])
        with w.loop("j", "0", g["KW"]) as j:
            at = w.add(row, w.mul(j, g["DW"]))
            w.do(f"store i64 {at}, ptr {w.gep(off, w.add(k0, j), 'i64')}")
    # pixel p = bcol0 + q's corner, (oy, ox) stepped along; pixels past N repeat the
    # last (their rows are dropped)
    oy = w.var("i64", w.op(f"sdiv i64 %bcol0, {g['OW']}"), "oy")
    ox = w.var("i64", w.op(f"srem i64 %bcol0, {g['OW']}"), "ox")
    corner = w.var("i64", "0", "corner")
    with w.loop("q", "0", mr) as q:
        with w.if_(w.lt(q, "%N"), "pixel"):
            y, x = w.get(oy), w.get(ox)
            w.set(corner, w.add(w.mul(w.mul(y, g["SH"]), rs), w.mul(x, g["SW"])))
            nx = w.add(x, "1")
            wrap = w.op(f"icmp sge i64 {nx}, {g['OW']}")
            w.set(ox, w.op(f"select i1 {wrap}, i64 0, i64 {nx}"))
            w.set(oy, w.op(f"select i1 {wrap}, i64 {w.add(y, '1')}, i64 {y}"))
        w.do(f"store i64 {w.get(corner)}, ptr {w.gep(base, q, 'i64')}")
    return w.op(f"select i1 {copy}, ptr {pad_src}, ptr %b"), pad_src


def _blocks(w: Writer, nr: int, mr: int, ldt: str, t: str, tiles: str, block) -> None:
    """K blocks x channel panels x pixel tiles. `block(kc, pc, acc)` is emitted once per K
    block and returns `tile(kc, acc, wp, ir, at, pf, rows)`, emitted per tile (weight panel
    wp, first pixel ir, T at `at`, prefetch arguments pf; `rows` None for a whole tile of
    MR pixels, else the tile's first pixel is row ir of its panel and it has `rows`); the
    next channel panel's lines are fetched into L2, a share per pixel tile, during the
    tile's arithmetic. A last tile of fewer than MR pixels runs as tiles of 4, 2 and 1
    rows (TAIL_ROWS): computing all MR rows of it cost a whole tile for 1 pixel (7 x 7
    outputs: 49 pixels in 7 tiles of 8 rows, 56 computed)."""
    kcb = k_block(w, "%K")
    with w.loop("pc", "0", "%K", kcb) as pc:
        kc = w.min(kcb, w.sub("%K", pc))
        acc = w.op(f"zext i1 {w.op(f'icmp ne i64 {pc}, 0')} to i64")
        share = w.op(f"sdiv i64 {w.add(w.mul(kc, str(nr // 16)), w.sub(tiles, '1'))}, {tiles}")
        tile = block(kc, pc, acc)
        with w.loop("jr", "0", "%M", str(nr)) as jr:
            # block pc of the packed weight starts at pc * mpad, row arow0 + jr of it at
            # (arow0 + jr) * kc
            wp = w.gep("%a", w.add(w.mul(pc, "%mpad"), w.mul(w.add("%arow0", jr), kc)))
            nxt = w.gep(wp, w.mul(kc, str(nr)))
            # (TAIL_ROWS empty: the last tile computed whole, its rows past N unused)
            whole = w.mul(tiles, str(mr))
            if TAIL_ROWS:
                whole = w.mul(w.op(f"sdiv i64 %N, {mr}"), str(mr))
            with w.loop("ir", "0", whole, str(mr)) as ir:
                first = w.mul(w.op(f"sdiv i64 {ir}, {mr}"), share)
                pf = prefetch_stream(w, nxt, first, share, kc)
                tile(kc, acc, wp, ir, w.gep(t, w.add(w.mul(ir, ldt), jr)), pf, None)
            if TAIL_ROWS:
                left = w.sub("%N", whole)
                with w.if_(w.op(f"icmp sgt i64 {left}, 0")):
                    first = w.mul(w.op(f"sdiv i64 {whole}, {mr}"), share)
                    pf = prefetch_stream(w, nxt, first, share, kc)
                    for rows in TAIL_ROWS:  # 4, then 2, then 1: the rows before are done
                        r0 = w.op(f"and i64 {left}, {mr - 2 * rows}")
                        with w.if_(w.op(f"icmp ne i64 {w.op(f'and i64 {left}, {rows}')}, 0")):
                            at = w.gep(t, w.add(w.mul(w.add(whole, r0), ldt), jr))
                            tile(kc, acc, wp, whole, at, pf, (r0, rows))


def gemm_pixel(w: Writer, vw: int, prologue: bool) -> None:
    """xr_gemm_pm: T by K blocks x channel panels x pixel tiles, then T transposed into
    C. A window's pixels are read in place (`xr_ukr_px`); a pointwise product's are packed
    per K block into MR-row panels (contiguous copies, through the prologue if any) for
    gemm.py's micro-kernel."""
    nr, mr = panel_width(vw), row_height(vw)
    assert (nr, mr) == (32, 8) and TAIL_ROWS in ((), (4, 2, 1))  # (the tail's r0 below)
    # internal: a wrapper that splits a batch over threads (Winograd's terms) calls it on
    # each, and LLVM inlines it there with the product's sizes as constants (exported, so
    # that the runtime's part stayed the same from model to model, SqueezeNet ran 2.5-3.9 %
    # slower in a same-process A/B; lowering/runtime_ahead.py compiles the GEMM's part
    # ahead, not this one)
    with w.function("void", "@xr_gemm_pm", PARAMS):
        ep = Epilogue(w)
        ldt = w.mul(w.op(f"sdiv i64 {w.add('%M', str(nr - 1))}, {nr}"), str(nr))
        prow = w.mul(w.op(f"sdiv i64 {w.add('%N', str(mr - 1))}, {mr}"), str(mr))
        tiles = w.op(f"sdiv i64 {prow}, {mr}")
        t = w.op(f"call ptr @aligned_alloc(i64 64, i64 {w.mul(w.mul(prow, ldt), '4')})")
        then, other, join = w.if_else(w.op("icmp ne ptr %geo, null"), "window")
        w.block(then)
        off = w.op(f"call ptr @aligned_alloc(i64 64, i64 {w.mul(w.add('%K', '8'), '8')})")
        base = w.op(f"call ptr @aligned_alloc(i64 64, i64 {w.mul(prow, '8')})")
        src, copy = _window_source(w, off, base, prow)

        def window(kc: str, pc: str, acc: str):
            offs = w.gep(off, pc, "i64")

            def tile(kc: str, acc: str, wp: str, ir: str, at: str, pf: str, part) -> None:
                name, first = "@xr_ukr_px", ir
                if part is not None:
                    name, first = f"@xr_ukr_px_h{part[1]}", w.add(ir, part[0])
                w.do(
                    f"call void {name}(i64 {kc}, ptr {src}, ptr {offs}, ptr {w.gep(base, first, 'i64')}, ptr {wp}, ptr {at}, i64 {ldt}, i64 {acc}, i64 0, {pf}, {IDENTITY_EPILOGUE})"
                )

            return tile

        _blocks(w, nr, mr, ldt, t, tiles, window)
        for p in (off, base, copy):
            w.do(f"call void @free(ptr {p})")
        w.br(join)
        w.block(other)
        ap = w.op(f"call ptr @aligned_alloc(i64 64, i64 {w.mul(w.mul(prow, str(KC)), '4')})")

        def pointwise(kc: str, pc: str, acc: str):
            # B's rows pc on, all N columns, as MR-row panels of pixels (B read transposed)
            args = f"ptr {w.gep('%b', w.mul(pc, '%rsb'))}, i64 %csb, i64 %rsb, i64 %N, i64 {kc}, ptr {ap}"
            if prologue:
                plain, pro, done = w.if_else(w.op("icmp eq ptr %ps, null"), "pro")
                w.block(pro)
                w.do(
                    f"call void @xr_pack_a_pro({args}, ptr {w.gep('%ps', pc)}, ptr {w.gep('%pt', pc)})"
                )
                w.br(done)
                w.block(plain)
            w.do(f"call void {OWN}pack_a({args})")
            if prologue:
                w.br(done)
                w.block(done)

            def tile(kc: str, acc: str, wp: str, ir: str, at: str, pf: str, part) -> None:
                name, panel = f"{OWN}ukr", w.gep(ap, w.mul(ir, kc))
                if part is not None:  # rows part[0].. of the panel (MR floats per k)
                    name, panel = f"{OWN}ukr_h{part[1]}", w.gep(panel, part[0])
                w.do(
                    f"call void {name}(i64 {kc}, ptr {panel}, ptr {wp}, ptr {at}, i64 {ldt}, i64 {acc}, i64 0, {pf}, {IDENTITY_EPILOGUE})"
                )

            return tile

        _blocks(w, nr, mr, ldt, t, tiles, pointwise)
        w.do(f"call void @free(ptr {ap})")
        w.br(join)
        w.block(join)
        _transposed_store(w, ep, t, ldt)
        w.do(f"call void @free(ptr {t})")


def runtime_ir(threads: bool, vw: int, prologue: bool) -> str:
    """xr_sgemm_pm, its serial part and micro-kernel (gemm.runtime_ir's declarations
    must be in the same module)."""
    if vw != 16:
        raise Error(f"no pixel-major GEMM for vector width {vw} (16 only)")
    w = Writer()
    # copies of its own of the plain micro-kernel and A's packing (`OWN`), not the GEMM's
    # internal ones: the product's functions and the wrappers that inline xr_gemm_pm (a
    # batch split over threads) then make a part of the module apart from the GEMM's
    # (split_module), which runtime_ahead compiles while the passes run (ResNet-50: LLVM's
    # time after the passes 1.6-1.9 -> 0.8-1.34 s; the products within 1 % in a
    # same-process A/B)
    if OWN != "@xr_":
        micro_kernel(w, vw, stem=f"{OWN}ukr")
        pack(w, f"{OWN}pack_a", row_height(vw))
    micro_kernel(w, vw, pixels=True)
    for rows in TAIL_ROWS:
        micro_kernel(w, vw, pixels=True, rows=rows)
        micro_kernel(w, vw, rows=rows, stem=f"{OWN}ukr")
    if prologue:
        pack(w, "@xr_pack_a_pro", row_height(vw), prologue=True)
    gemm_pixel(w, vw, prologue)
    # threads split the channels in NR units (the weight's panels), or the pixels in MR
    # units where those are more
    split_entry(
        w, "@xr_sgemm_pm", PARAMS, "@xr_gemm_pm", threads, row_height(vw), PARALLEL_MIN,
        _rows, _columns, panel_width(vw),
    )  # fmt: skip
    return w.text()
