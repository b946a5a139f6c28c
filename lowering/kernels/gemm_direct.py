"""f32 convolutions with unit strides that read B straight from their input: no im2col
panels are packed (`GemmSpec.direct`, chosen by select-kernels where `direct_pays`).

Output pixel (oy, ox) is computed as the virtual column u = (oy - oy0) * Wp + ox of the
input's zero-padded rows (Wp = OW + (KW - 1) * DW values each, oy0 the call's first output
row). Every window tap k = (c, i, j) is then one offset for all columns,

    off[k] = c * R * Wp + i * DH * Wp + j * DW        (R padded rows per channel)

so the B panel of row k is the NR consecutive values at off[k] + u0: the micro-kernel
(`xr_ukr_d`) loads its two vectors per k there. Columns whose ox >= OW are computed and
dropped. The padded rows (the *band*: the rows the call's outputs read, for every channel,
zeros around them) are copied once per call; the im2col panels they replace hold KH * KW
times as many values and were packed for every K block.

Each tile goes to the scratch tile; gemm.py's `xr_edge` stores each run of valid columns
(one output row's share of the tile) into C, adding the partial sums of earlier K blocks
and applying the epilogue, as for an edge tile of the packed path.

    void xr_gemm_direct(... xr_sgemm's parameters ...)   (geo[12] != 0)

is what `xr_gemm_serial` calls for such a product: this call's columns are the real
pixels bcol0 .. bcol0 + N.
"""

from __future__ import annotations

from xrelay.lowering.kernels.conv_pack import load_geometry
from xrelay.lowering.kernels.gemm import (
    KC,
    MC,
    PARAMS,
    Epilogue,
    load8,
    panel_width,
    row_height,
    splat,
    vec,
)
from xrelay.lowering.kernels.irtext import Writer

TILE = 32  # the widest micro-kernel tile, which the choice below assumes
MAX_EXTRA = 1.05  # virtual tiles per tile of real pixels at most (the dropped columns)

HEADER = """
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
"""


def direct_pays(window: tuple[tuple[int, ...], ...]) -> bool:
    """Is a convolution with this GemmSpec.window (static) read directly? Unit strides, a
    window larger than 1x1, and not many more tiles of virtual columns than of pixels."""
    _, (kh, kw), strides, (_, dw), _, (oh, ow) = window
    if tuple(strides) != (1, 1) or kh * kw == 1 or min(oh, ow) < 1:
        return False
    wp = ow + (kw - 1) * dw
    virtual = (oh - 1) * wp + ow
    return -(-virtual // TILE) <= MAX_EXTRA * -(-(oh * ow) // TILE)


def micro_kernel_d(w: Writer, vw: int) -> None:
    """xr_ukr_d: T[MR x NR] = Ap[kc x MR] panel times the NR values at src + off[k] for
    each k (two vectors), written to the scratch tile T (row stride NR). kc >= 1."""
    nr, v, height = panel_width(vw), vec(vw), row_height(vw)
    fma = f"@llvm.fma.v{vw}f32"
    params = [("i64", "%kc"), ("ptr", "noalias %ap"), ("ptr", "%src"), ("ptr", "%off"),
              ("ptr", "%t")]  # fmt: skip
    with w.function("void", "@xr_ukr_d", params):
        accs = [[w.var(v, "zeroinitializer", f"c{r}{j}") for j in range(2)] for r in range(height)]
        with w.loop("k", "0", "%kc") as k:
            bp = w.gep("%src", w.op(f"load i64, ptr {w.gep('%off', k, 'i64')}"))
            b = [load8(w, bp, vw=vw), load8(w, w.gep(bp, str(vw)), vw=vw)]
            ap = w.gep("%ap", w.mul(k, str(height)))
            for r in range(height):
                a = splat(w, w.op(f"load float, ptr {w.gep(ap, str(r))}, align 4"), vw)
                for j in range(2):
                    cur = w.get(accs[r][j])
                    w.set(accs[r][j], w.op(f"call {v} {fma}({v} {a}, {v} {b[j]}, {v} {cur})"))
        for r in range(height):
            for j in range(2):
                out = w.gep("%t", str(r * nr + j * vw))
                w.do(f"store {v} {w.get(accs[r][j])}, ptr {out}, align 4")


def gemm_direct(w: Writer, vw: int) -> None:
    """xr_gemm_direct: the band, the offsets, then K blocks x M blocks x tiles of virtual
    columns x row panels, each tile's runs of valid columns stored by xr_edge."""
    nr, height = panel_width(vw), row_height(vw)
    with w.function("void", "@xr_gemm_direct", PARAMS):
        ep = Epilogue(w)
        g = load_geometry(w)
        taps = w.mul(g["KH"], g["KW"])
        channels = w.op(f"sdiv i64 %K, {taps}")
        wp = w.add(g["OW"], w.mul(w.sub(g["KW"], "1"), g["DW"]))
        last = w.add("%bcol0", w.sub("%N", "1"))
        oy0 = w.op(f"sdiv i64 %bcol0, {g['OW']}")
        oy1 = w.op(f"sdiv i64 {last}, {g['OW']}")
        rows = w.add(w.sub(oy1, oy0), w.add(w.mul(w.sub(g["KH"], "1"), g["DH"]), "1"))
        plane = w.mul(rows, wp)  # floats per channel of the band
        floats = w.add(w.mul(channels, plane), str(2 * nr))  # reads run past the last row
        band = w.op(f"call ptr @aligned_alloc(i64 64, i64 {w.mul(w.add(floats, '15'), '4')})")
        w.do(f"call void @llvm.memset.p0.i64(ptr {band}, i8 0, i64 {w.mul(floats, '4')}, i1 0)")
        # the band: padded row b of channel c is input row oy0 + b - PT, its value q input
        # column q - PL (zero outside the input)
        lo = w.op(f"call i64 @llvm.smax.i64(i64 {g['PL']}, i64 0)")  # first value inside
        skip = w.sub(lo, g["PL"])  # input columns before it
        count = w.min(w.sub(g["W"], skip), w.sub(wp, lo))
        some = w.op(f"icmp sgt i64 {count}, 0")
        with w.if_(some), w.loop("c", "0", channels) as c, w.loop("r", "0", rows) as r:
            iy = w.sub(w.add(oy0, r), g["PT"])
            inside = w.op(f"and i1 {w.op(f'icmp sge i64 {iy}, 0')}, {w.lt(iy, g['H'])}")
            with w.if_(inside):
                src = w.gep("%b", w.add(w.mul(w.add(w.mul(c, g["H"]), iy), g["W"]), skip))
                dst = w.gep(band, w.add(w.add(w.mul(c, plane), w.mul(r, wp)), lo))
                w.do(
                    f"call void @llvm.memcpy.p0.p0.i64(ptr {dst}, ptr {src}, i64 {w.mul(count, '4')}, i1 0)"
                )
        # off[k] for k = (c, i, j)
        off = w.op(f"call ptr @aligned_alloc(i64 64, i64 {w.mul(w.add('%K', '8'), '8')})")
        with w.loop("k", "0", "%K") as k:
            tap = w.op(f"srem i64 {k}, {taps}")
            i = w.op(f"sdiv i64 {tap}, {g['KW']}")
            j = w.op(f"srem i64 {tap}, {g['KW']}")
            at = w.mul(w.op(f"sdiv i64 {k}, {taps}"), plane)
            at = w.add(at, w.add(w.mul(w.mul(i, g["DH"]), wp), w.mul(j, g["DW"])))
            w.do(f"store i64 {at}, ptr {w.gep(off, k, 'i64')}")
        ap = w.op(f"call ptr @aligned_alloc(i64 64, i64 {MC * KC * 4})")
        tmp = w.alloca(f"[{height * nr} x float]", "tile")
        u_first = w.op(f"srem i64 %bcol0, {g['OW']}")
        u_end = w.add(w.mul(w.sub(oy1, oy0), wp), w.add(w.op(f"srem i64 {last}, {g['OW']}"), "1"))
        apk = w.op("icmp ne i64 %apk, 0")
        with w.loop("pc", "0", "%K", str(KC)) as pc:
            kc = w.min(str(KC), w.sub("%K", pc))
            acc = w.op(f"zext i1 {w.op(f'icmp ne i64 {pc}, 0')} to i64")
            epi = w.op(f"zext i1 {w.op(f'icmp sge i64 {w.add(pc, kc)}, %K')} to i64")
            offs = w.gep(off, pc, "i64")
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
                        w.do(
                            f"call void @xr_ukr_d(i64 {kc}, ptr {w.gep(ablock, w.mul(ir, kc))}, ptr {w.gep(band, u0)}, ptr {offs}, ptr {tmp})"
                        )
                        _store_runs(w, ep, g, tmp, u0, stop, wp, oy0, i0, mr, acc, epi)
        for p in (ap, off, band):
            w.do(f"call void @free(ptr {p})")


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
    micro_kernel_d(w, vw)
    gemm_direct(w, vw)
    return w.text()
