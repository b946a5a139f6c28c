"""f32 convolutions with strides 1 or 2 that read B straight from their input: no im2col
panels are packed (`GemmSpec.direct`, chosen by select-kernels where `direct_pays`).

Output pixel (oy, ox) is computed as the virtual column u = (oy - oy0) * Wp + ox of the
input's zero-padded rows (Wp = OW + (KW - 1) * DW / S values each, oy0 the call's first
output row). With stride S the band holds the padded input's S x S phases (rows and
columns = p (mod S)), each R rows of Wp values: tap (i, j) reads phase ((i DH) % S,
(j DW) % S) at row oy + (i DH) / S, value ox + (j DW) / S. Every window tap
k = (c, i, j) is then one offset for all columns,

    off[k] = c S^2 R Wp + phase * R Wp + (i DH / S) * Wp + j DW / S

so the B panel of row k is the NR consecutive values at off[k] + u0: gemm.py's
micro-kernel, as `xr_ukr_d`, loads its two vectors per k there. Columns whose ox >= OW
are computed and dropped. The band (the rows the call's outputs read, for every channel,
zeros around them) is made once per call; the im2col panels it replaces hold about
KH * KW times as many values.

A tile of whole rows of A goes straight into C where the output rows are a tile or more
(OW >= NR, so a tile crosses at most one): its columns below `split` at their place, those
from `from2` (past the row's padding) Wp - OW values before theirs, through two masked
stores (gemm.py's `SplitColumns`); the partial sums of earlier K blocks and the residual
are read the same way. Any other tile (rows shorter than a tile, a row panel that ends
early) goes to the scratch tile, and gemm.py's `xr_edge` stores each run of valid columns
(one output row's share of the tile) into C, adding the partial sums of earlier K blocks
and applying the epilogue, as for an edge tile of the packed path. (Through the scratch
tile, SqueezeNet's 16 -> 64 3 x 3 on 55 x 55 spent 12% of its time in xr_edge: 0.255 ->
0.228 ms.)

A pointwise convolution (1x1, stride 1, no padding; select-kernels where
`direct_pointwise_pays`: many pixels, few output channels) has no band: its rows are the
input's own, so B's row k is read in place at the input's channel k, and every tile goes
straight into C (its virtual columns are its pixels). Only a tile whose NR values would
run past the input's last pixel reads a copy of its columns ([K][NR], zero after them).
Packing B instead copied the whole input at every call, for the few row panels of A that
read it: SqueezeNet's 128 -> 16 squeeze on 55 x 55 0.102 -> 0.065 ms, its 256 -> 32 on
27 x 27 0.079 -> 0.064 (xrelay profile, same process). The first row panel of each tile
prefetches the next tile's B (one row per channel: more streams than the hardware's
prefetchers follow): the 64 -> 16 squeeze 0.051 -> 0.041 ms.

    void xr_gemm_direct(... xr_sgemm's parameters ...)   (geo[12] != 0)

is what `xr_gemm_serial` calls for such a product: this call's columns are the real
pixels bcol0 .. bcol0 + N.
"""

from __future__ import annotations

from xrelay.lowering.kernels.conv_pack import load_geometry
from xrelay.lowering.kernels.gemm import (
    IDENTITY_EPILOGUE,
    KC,
    MC,
    PARAMS,
    Epilogue,
    k_block,
    micro_kernel,
    panel_width,
    row_height,
)
from xrelay.lowering.kernels.irtext import Writer, copy_values, first_lanes

TILE = 32  # the widest micro-kernel tile, which the choice below assumes
STRIDES = (1, 2)  # the strides read directly (2: the band holds the input's phases)
# K from which the tiles that cross an output row (through the scratch tile) cost less
# than packing: a 3x3 stride-2 stem (K 27) took 0.41 -> 0.51 ms read directly, a 7x7 one
# (K 147) 1.19 -> 1.09, a 3x3 one of 16 channels (K 144) 0.28 -> 0.25. Rows shorter than a
# tile send every tile through the scratch tile: 128 -> 128, stride 2, 28 x 28 outputs
# took 1.00 -> 1.05 ms
MIN_K = 64
MAX_EXTRA = 1.05  # virtual tiles per tile of real pixels at most (the dropped columns)

HEADER = """
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
"""


def direct_pays(window: tuple[tuple[int, ...], ...], k: int) -> bool:
    """Is a convolution with this GemmSpec.window (static) and K read directly? Equal
    strides of 1 or 2, a window larger than 1x1, K of at least MIN_K, output rows of a
    whole tile or more (or at most two tiles in all), and not many more tiles of virtual
    columns than of pixels."""
    _, (kh, kw), (sh, sw), (_, dw), _, (oh, ow) = window
    if sh != sw or sh not in STRIDES or kh * kw == 1 or min(oh, ow) < 1 or k < MIN_K:
        return False
    if ow < TILE and oh * ow > 2 * TILE:  # every tile would cross rows: the scratch path
        return False
    wp = ow + (kw - 1) * dw // sw
    virtual = (oh - 1) * wp + ow
    return -(-virtual // TILE) <= MAX_EXTRA * -(-(oh * ow) // TILE)


POINTWISE_MIN_PIXELS = 512  # (fewer: gemm_pixel's)
POINTWISE_MAX_M = MC  # one block of A's rows: B is read from memory once per block
POINTWISE_MIN_K = 64


def direct_pointwise_pays(m: int, n: int, k: int) -> bool:
    """Is a pointwise convolution of `m` output channels, `n` pixels and K = `k` (static)
    read in place?"""
    return 0 < m <= POINTWISE_MAX_M and n >= POINTWISE_MIN_PIXELS and k >= POINTWISE_MIN_K


def gemm_direct(w: Writer, vw: int) -> None:
    """xr_gemm_direct: the band, the offsets, then K blocks x M blocks x tiles of virtual
    columns x row panels, each tile's runs of valid columns stored by xr_edge."""
    nr, height = panel_width(vw), row_height(vw)
    with w.function("void", "@xr_gemm_direct", PARAMS):
        ep = Epilogue(w)
        g = load_geometry(w)
        taps = w.mul(g["KH"], g["KW"])
        channels = w.op(f"sdiv i64 %K, {taps}")
        st = g["SH"]  # = SW (direct_pays)
        reach_w = w.op(f"sdiv i64 {w.mul(w.sub(g['KW'], '1'), g['DW'])}, {st}")
        reach_h = w.op(f"sdiv i64 {w.mul(w.sub(g['KH'], '1'), g['DH'])}, {st}")
        wp = w.add(g["OW"], reach_w)  # a phase row's values
        last = w.add("%bcol0", w.sub("%N", "1"))
        oy0 = w.op(f"sdiv i64 %bcol0, {g['OW']}")
        oy1 = w.op(f"sdiv i64 {last}, {g['OW']}")
        rows = w.add(w.sub(oy1, oy0), w.add(reach_h, "1"))  # a phase's rows
        plane = w.mul(rows, wp)  # floats per phase of a channel
        chan = w.mul(w.mul(st, st), plane)  # floats per channel of the band
        floats = w.add(w.mul(channels, chan), str(2 * nr))  # reads run past the last row
        # a pointwise convolution (1x1, stride 1, no padding) reads its input in place: the
        # band would be a copy of it (its rows are the input's, its channels H*W apart)
        inplace = w.op(f"icmp eq i64 {taps}, 1")
        for a, b in (("PT", "0"), ("PL", "0"), ("SH", "1"), ("OH", g["H"]), ("OW", g["W"])):
            inplace = w.op(f"and i1 {inplace}, {w.op(f'icmp eq i64 {g[a]}, {b}')}")
        floats = w.op(f"select i1 {inplace}, i64 {2 * nr}, i64 {floats}")
        made = w.op(f"call ptr @aligned_alloc(i64 64, i64 {w.mul(w.add(floats, '15'), '4')})")
        with w.if_(w.op(f"xor i1 {inplace}, true")):
            w.do(f"call void @llvm.memset.p0.i64(ptr {made}, i8 0, i64 {w.mul(floats, '4')}, i1 0)")
            _fill_band(w, g, made, channels, st, rows, wp, plane, chan, oy0, vw)
        hw = w.mul(g["H"], g["W"])
        band = w.op(f"select i1 {inplace}, ptr {w.gep('%b', w.mul(oy0, g['W']))}, ptr {made}")
        chan = w.op(f"select i1 {inplace}, i64 {hw}, i64 {chan}")
        # off[k] for k = (c, i, j): tap (i, j) reads phase ((i DH) % s, (j DW) % s) at row
        # (i DH) / s and value (j DW) / s of the output's
        off = w.op(f"call ptr @aligned_alloc(i64 64, i64 {w.mul(w.add('%K', '8'), '8')})")
        with w.loop("k", "0", "%K") as k:
            tap = w.op(f"srem i64 {k}, {taps}")
            di = w.mul(w.op(f"sdiv i64 {tap}, {g['KW']}"), g["DH"])
            dj = w.mul(w.op(f"srem i64 {tap}, {g['KW']}"), g["DW"])
            phase = w.add(w.mul(w.op(f"srem i64 {di}, {st}"), st), w.op(f"srem i64 {dj}, {st}"))
            at = w.add(w.mul(w.op(f"sdiv i64 {k}, {taps}"), chan), w.mul(phase, plane))
            inner = w.mul(w.op(f"sdiv i64 {di}, {st}"), wp)
            at = w.add(at, w.add(inner, w.op(f"sdiv i64 {dj}, {st}")))
            w.do(f"store i64 {at}, ptr {w.gep(off, k, 'i64')}")
        ap = w.op(f"call ptr @aligned_alloc(i64 64, i64 {MC * KC * 4})")
        tmp = w.alloca(f"[{height * nr} x float]", "tile")
        u_first = w.op(f"srem i64 %bcol0, {g['OW']}")
        u_end = w.add(w.mul(w.sub(oy1, oy0), wp), w.add(w.op(f"srem i64 {last}, {g['OW']}"), "1"))
        # in place, a tile whose NR values run past the input's last pixel reads a copy of
        # its columns instead ([K][NR], zeros after them; offsets k NR)
        u_tail = w.add(
            u_first, w.mul(w.op(f"sdiv i64 {w.sub(w.sub(u_end, '1'), u_first)}, {nr}"), str(nr))
        )
        past = w.op(f"icmp sgt i64 {w.add(w.add(w.mul(oy0, g['W']), u_tail), str(nr))}, {hw}")
        tailed = w.op(f"and i1 {inplace}, {past}")
        tail_floats = w.op(f"select i1 {tailed}, i64 {w.mul('%K', str(nr))}, i64 {nr}")
        tail = w.op(f"call ptr @aligned_alloc(i64 64, i64 {w.mul(tail_floats, '4')})")
        off2 = w.op(f"call ptr @aligned_alloc(i64 64, i64 {w.mul(w.add('%K', '8'), '8')})")
        with w.if_(tailed):
            w.do(
                f"call void @llvm.memset.p0.i64(ptr {tail}, i8 0, i64 {w.mul(tail_floats, '4')}, i1 0)"
            )
            have = w.sub(u_end, u_tail)
            with w.loop("kt", "0", "%K") as kt:
                src = w.gep(band, w.add(w.mul(kt, chan), u_tail))
                copy_values(w, src, w.gep(tail, w.mul(kt, str(nr))), have, vw)
                w.do(f"store i64 {w.mul(kt, str(nr))}, ptr {w.gep(off2, kt, 'i64')}")
        apk = w.op("icmp ne i64 %apk, 0")
        kcb = k_block(w, "%K")  # (as prepack.k_block_f32 packs the weight)
        with w.loop("pc", "0", "%K", kcb) as pc:
            kc = w.min(kcb, w.sub("%K", pc))
            acc = w.op(f"zext i1 {w.op(f'icmp ne i64 {pc}, 0')} to i64")
            epi = w.op(f"zext i1 {w.op(f'icmp sge i64 {w.add(pc, kc)}, %K')} to i64")
            offs = w.gep(off, pc, "i64")
            offs2 = w.gep(off2, pc, "i64")
            with w.loop("ic", "0", "%M", str(MC)) as ic:
                mc = w.min(str(MC), w.sub("%M", ic))
                with w.if_(w.op(f"xor i1 {apk}, true")):
                    asrc = w.gep("%a", w.add(w.mul(ic, "%rsa"), w.mul(pc, "%csa")))
                    w.do(
                        f"call void @xr_pack_a(ptr {asrc}, i64 %rsa, i64 %csa, i64 {mc}, i64 {kc}, ptr {ap})"
                    )
                packed = w.gep("%a", w.add(w.mul(pc, "%mpad"), w.mul(w.add("%arow0", ic), kc)))
                ablock = w.op(f"select i1 {apk}, ptr {packed}, ptr {ap}")
                with w.loop("u0", u_first, u_end, str(nr)) as u0:
                    stop = w.min(w.add(u0, str(nr)), u_end)
                    with w.loop("ir", "0", mc, str(height)) as ir:
                        mr = w.min(str(height), w.sub(mc, ir))
                        i0 = w.add(ic, ir)
                        at_tail = w.op(f"and i1 {tailed}, {w.op(f'icmp eq i64 {u0}, {u_tail}')}")
                        bp = w.op(f"select i1 {at_tail}, ptr {tail}, ptr {w.gep(band, u0)}")
                        ob = w.op(f"select i1 {at_tail}, ptr {offs2}, ptr {offs}")
                        # the first row panel fetches the next tile's B
                        pfn = w.op(f"zext i1 {w.op(f'icmp eq i64 {ir}, 0')} to i64")
                        pf = f"ptr null, i64 {pfn}"
                        ukr = f"call void @xr_ukr_d(i64 {kc}, ptr {w.gep(ablock, w.mul(ir, kc))}, ptr {bp}, ptr {ob}"
                        # a tile of whole rows of A (and output rows of a tile or more: it
                        # crosses at most one) goes straight into C, split where it crosses
                        ox = w.op(f"srem i64 {u0}, {wp}")
                        count = w.sub(stop, u0)
                        split = w.min(w.sub(g["OW"], ox), count)
                        # (rows of a band without padding columns are contiguous in C)
                        direct = w.op(f"icmp sge i64 {g['OW']}, {nr}")
                        no_gap = w.op(f"icmp eq i64 {wp}, {g['OW']}")
                        direct = w.op(f"or i1 {direct}, {no_gap}")
                        direct = w.op(f"and i1 {direct}, {w.op(f'icmp eq i64 {mr}, {height}')}")
                        then, other, join = w.if_else(direct, "direct")
                        w.block(then)
                        oy = w.add(oy0, w.op(f"sdiv i64 {u0}, {wp}"))
                        j = w.sub(w.add(w.mul(oy, g["OW"]), ox), "%bcol0")
                        ctile = w.gep("%c", w.add(w.mul(i0, "%ldc"), j))
                        cols = f"i64 {split}, i64 {w.sub(wp, ox)}, i64 {count}, i64 {w.sub(wp, g['OW'])}"
                        w.do(
                            f"{ukr}, ptr {ctile}, i64 %ldc, i64 {acc}, i64 {epi}, {pf}, {ep.at(i0, j)}, {cols})"
                        )
                        w.br(join)
                        w.block(other)
                        whole = f"i64 {nr}, i64 {nr}, i64 {nr}, i64 0"
                        w.do(
                            f"{ukr}, ptr {tmp}, i64 {nr}, i64 0, i64 0, {pf}, {IDENTITY_EPILOGUE}, {whole})"
                        )
                        _store_runs(w, ep, g, tmp, u0, stop, wp, oy0, i0, mr, acc, epi)
                        w.br(join)
                        w.block(join)
        for p in (ap, off, made, tail, off2):
            w.do(f"call void @free(ptr {p})")


def _fill_band(w: Writer, g, band, channels, st, rows, wp, plane, chan, oy0, vw: int) -> None:
    """The band (zeroed): phase (pi, pj) of channel c holds, at row r and value q, the
    padded input's row (oy0 + r) S + pi and column q S + pj, i.e. input row
    (oy0 + r) S + pi - PT and column q S + pj - PL where those lie inside the input. With
    S = 1 each row is one copy; with S = 2 an input row gives both column phases: 2 VW
    values loaded (masked to the input), their even and odd ones stored."""
    then, other, join = w.if_else(w.op(f"icmp eq i64 {st}, 1"), "unit")
    w.block(then)
    lo = w.op(f"call i64 @llvm.smax.i64(i64 {g['PL']}, i64 0)")  # the first value inside
    skip = w.sub(lo, g["PL"])  # input columns before it
    count = w.min(w.sub(g["W"], skip), w.sub(wp, lo))
    some = w.op(f"icmp sgt i64 {count}, 0")
    with w.if_(some), w.loop("c", "0", channels) as c, w.loop("r", "0", rows) as r:
        iy = w.sub(w.add(oy0, r), g["PT"])
        with w.if_(w.op(f"and i1 {w.op(f'icmp sge i64 {iy}, 0')}, {w.lt(iy, g['H'])}")):
            src = w.gep("%b", w.add(w.mul(w.add(w.mul(c, g["H"]), iy), g["W"]), skip))
            dst = w.gep(band, w.add(w.add(w.mul(c, chan), w.mul(r, wp)), lo))
            copy_values(w, src, dst, count, vw)
    w.br(join)
    w.block(other)  # S = 2
    n2, v, v2 = 2 * vw, f"<{vw} x float>", f"<{2 * vw} x float>"
    evens = ", ".join(f"i32 {2 * t}" for t in range(vw))
    odds = ", ".join(f"i32 {2 * t + 1}" for t in range(vw))
    ones = "<" + ", ".join(["i1 true"] * n2) + ">"
    with (
        w.loop("c", "0", channels) as c,
        w.loop("pi", "0", "2") as pi,
        w.loop("r", "0", rows) as r,
    ):
        iy = w.sub(w.add(w.mul(w.add(oy0, r), "2"), pi), g["PT"])
        with w.if_(w.op(f"and i1 {w.op(f'icmp sge i64 {iy}, 0')}, {w.lt(iy, g['H'])}")):
            row = w.gep("%b", w.mul(w.add(w.mul(c, g["H"]), iy), g["W"]))
            dst = w.gep(
                band, w.add(w.add(w.mul(c, chan), w.mul(w.mul(pi, "2"), plane)), w.mul(r, wp))
            )
            with w.loop("q0", "0", wp, str(vw)) as q0:
                base = w.sub(w.mul(q0, "2"), g["PL"])  # the input column of lane 0
                lo_t = w.op(f"call i64 @llvm.smax.i64(i64 {w.sub('0', base)}, i64 0)")
                hi_t = w.op(f"call i64 @llvm.smax.i64(i64 {w.sub(g['W'], base)}, i64 0)")
                before = first_lanes(w, lo_t, n2)  # lanes left of the input
                inside = w.op(f"xor <{n2} x i1> {before}, {ones}")
                inside = w.op(f"and <{n2} x i1> {inside}, {first_lanes(w, hi_t, n2)}")
                run = w.op(
                    f"call {v2} @llvm.masked.load.v{n2}f32.p0(ptr {w.gep(row, base)}, i32 4, <{n2} x i1> {inside}, {v2} zeroinitializer)"
                )
                keep = first_lanes(w, w.sub(wp, q0), vw)
                for pj, lanes in ((0, evens), (1, odds)):
                    part = w.op(f"shufflevector {v2} {run}, {v2} poison, <{vw} x i32> <{lanes}>")
                    at = w.gep(dst, w.add(w.mul(str(pj), plane), q0))
                    w.do(
                        f"call void @llvm.masked.store.v{vw}f32.p0({v} {part}, ptr {at}, i32 4, <{vw} x i1> {keep})"
                    )
    w.br(join)
    w.block(join)


def _store_runs(w: Writer, ep: Epilogue, g, tmp, u0, stop, wp, oy0, i0, mr, acc, epi) -> None:
    """xr_edge for each run of valid columns of the tile at virtual column u0 (up to
    `stop`): one output row's share, ox < OW."""
    u = w.var("i64", u0, "u")
    head, body, done = w.label("run.head"), w.label("run.body"), w.label("run.done")
    w.br(head)
    w.block(head)
    cur = w.get(u)
    w.do(f"br i1 {w.lt(cur, stop)}, label %{body}, label %{done}")
    w.block(body)
    r = w.op(f"sdiv i64 {cur}, {wp}")
    ox = w.op(f"srem i64 {cur}, {wp}")
    valid = w.lt(ox, g["OW"])
    then, other, _ = w.if_else(valid, "run")  # (both go back to the head)
    w.block(then)
    n = w.min(w.sub(g["OW"], ox), w.sub(stop, cur))
    j = w.sub(w.add(w.mul(w.add(oy0, r), g["OW"]), ox), "%bcol0")  # the call's column
    ctile = w.gep("%c", w.add(w.mul(i0, "%ldc"), j))
    w.do(
        f"call void @xr_edge(ptr {w.gep(tmp, w.sub(cur, u0))}, ptr {ctile}, i64 %ldc, i64 {mr}, i64 {n}, i64 {acc}, i64 {epi}, {ep.at(i0, j)})"
    )
    w.set(u, w.add(cur, n))
    w.br(head)
    w.block(other)  # the padding's columns: to the next row
    w.set(u, w.mul(w.add(r, "1"), wp))
    w.br(head)
    w.block(done)


def runtime_ir(vw: int) -> str:
    """xr_gemm_direct and its micro-kernel; they call gemm.runtime_ir's xr_edge and
    xr_pack_a, which must be in the same module."""
    w = Writer()
    w.lines.append(HEADER)
    micro_kernel(w, vw, direct=True)
    gemm_direct(w, vw)
    return w.text()
