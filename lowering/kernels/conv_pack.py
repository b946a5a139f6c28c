"""Implicit im2col: the f32 GEMM packs a convolution's B operand straight from its input.

A convolution [C, H, W] -> [O, OH, OW] (one image, one group) is the product of its weight
[O, C*KH*KW] and the column matrix B[k, j] = x[c, oy*SH + i*DH - PT, ox*SW + jj*DW - PL]
(zero outside the input), k = (c, i, jj), j = (oy, ox). `select-kernels` used to write B
out (KH*KW times the input) and the GEMM then read it again to pack it; here the GEMM's
B packing builds its NR-column panels from the input directly, so B never exists.

    void xr_pack_conv(ptr x, ptr geo, i64 j0, i64 k0, i64 cols, i64 kc, ptr dst)

packs rows k0 .. k0+kc and columns j0 .. j0+cols of B into `dst` in the layout
`xr_pack_b` writes (panel p holds, for each k, NR consecutive columns; zero past `cols`).
`geo` points at 12 i64: H, W, KH, KW, SH, SW, DH, DW, PT, PL, OH, OW.

Each panel is filled VW columns at a time. The columns of one chunk lie in one or more
output rows; each row's share is one masked load (unit stride: consecutive input values),
a masked load of twice as many values whose even ones it keeps (stride 2), or a masked
gather (other strides), masked to the lanes of that row whose input column and row are
inside the input, so padding costs nothing but the mask.
"""

from __future__ import annotations

from xrelay.lowering.kernels.irtext import Writer

GEO = ("H", "W", "KH", "KW", "SH", "SW", "DH", "DW", "PT", "PL", "OH", "OW")

# (the masked loads of one vector are declared by gemm.HEADER, which the edge tiles use too)
HEADER = """
declare <8 x float> @llvm.masked.gather.v8f32.v8p0(<8 x ptr>, i32, <8 x i1>, <8 x float>)
declare <16 x float> @llvm.masked.gather.v16f32.v16p0(<16 x ptr>, i32, <16 x i1>, <16 x float>)
declare <32 x float> @llvm.masked.load.v32f32.p0(ptr, i32, <32 x i1>, <32 x float>)
"""


def geometry(window: tuple[tuple[int, ...], ...]) -> list[int]:
    """GemmSpec.window ((H, W), (KH, KW), (SH, SW), (DH, DW), (PT, PL), (OH, OW)) as the
    12 values `geo` points at."""
    return [v for pair in window for v in pair]


def load_geometry(w: Writer) -> dict[str, str]:
    """In a function with parameter %geo: its 12 values by name (GEO)."""
    return {n: w.op(f"load i64, ptr {w.gep('%geo', str(i), 'i64')}") for i, n in enumerate(GEO)}


def window_row(w: Writer, g: dict[str, str], kk: str, x: str, elem: str) -> tuple[str, ...]:
    """Row `kk` of the im2col matrix, k = (c, i, jj): the input's channel c (a pointer into
    `x`, elements of type `elem`), and its window tap's row and column offsets
    i*DH - PT, jj*DW - PL."""
    khw = w.mul(g["KH"], g["KW"])
    r = w.op(f"srem i64 {kk}, {khw}")
    xc = w.gep(x, w.mul(w.op(f"sdiv i64 {kk}, {khw}"), w.mul(g["H"], g["W"])), elem)
    rowoff = w.sub(w.mul(w.op(f"sdiv i64 {r}, {g['KW']}"), g["DH"]), g["PT"])
    coloff = w.sub(w.mul(w.op(f"srem i64 {r}, {g['KW']}"), g["DW"]), g["PL"])
    return xc, rowoff, coloff


def pack_conv(w: Writer, nr: int, vw: int) -> None:
    """Emit @xr_pack_conv for panels of `nr` columns filled `vw` lanes at a time."""
    v, m, iv = f"<{vw} x float>", f"<{vw} x i1>", f"<{vw} x i32>"
    v2 = f"<{2 * vw} x float>"
    # mask lane l on value 2l, odd values off; the even values back to VW lanes
    interleave = (
        f"<{2 * vw} x i32> <"
        + ", ".join(f"i32 {i // 2 if i % 2 == 0 else vw}" for i in range(2 * vw))
        + ">"
    )
    evens = f"<{vw} x i32> <" + ", ".join(f"i32 {2 * i}" for i in range(vw)) + ">"
    iota = "<" + ", ".join(f"i32 {i}" for i in range(vw)) + ">"
    params = [("ptr", "%x"), ("ptr", "%geo"), ("i64", "%j0"), ("i64", "%k0"), ("i64", "%cols"),
              ("i64", "%kc"), ("ptr", "%dst")]  # fmt: skip

    def splat(scalar: str) -> str:
        one = w.op(f"insertelement {iv} poison, i32 {scalar}, i64 0")
        return w.op(f"shufflevector {iv} {one}, {iv} poison, {iv} zeroinitializer")

    def i32(x: str) -> str:
        return w.op(f"trunc i64 {x} to i32")

    with w.function("void", "@xr_pack_conv", params):
        g = load_geometry(w)
        oy0 = w.op(f"sdiv i64 %j0, {g['OW']}")
        ox0 = w.op(f"srem i64 %j0, {g['OW']}")
        panels = w.op(f"sdiv i64 {w.add('%cols', str(nr - 1))}, {nr}")
        unit = w.op(f"icmp eq i64 {g['SW']}, 1")
        two = w.op(f"icmp eq i64 {g['SW']}, 2")
        w_v, sw_v = splat(i32(g["W"])), splat(i32(g["SW"]))
        cols_v = splat(i32("%cols"))
        with w.loop("k", "0", "%kc") as k:
            xc, rowoff, coloff = window_row(w, g, w.add("%k0", k), "%x", "float")
            oy, ox = w.var("i64", oy0, "oy"), w.var("i64", ox0, "ox")
            with w.loop("p", "0", panels) as p:
                for h in range(nr // vw):
                    first = w.add(w.mul(p, str(nr)), str(h * vw))  # the chunk's first column
                    acc = w.var(v, "zeroinitializer", "acc")
                    lane = w.var("i64", "0", "lane")
                    head, body, done = (w.label(s) for s in ("seg.head", "seg.body", "seg.done"))
                    w.br(head)
                    w.block(head)
                    l0 = w.get(lane)
                    more = w.op(f"and i1 {w.lt(l0, str(vw))}, {w.lt(w.add(first, l0), '%cols')}")
                    w.do(f"br i1 {more}, label %{body}, label %{done}")
                    w.block(body)
                    y, xo = w.get(oy), w.get(ox)
                    seg = w.min(w.sub(str(vw), l0), w.sub(g["OW"], xo))  # this row's lanes
                    iy = w.add(w.mul(y, g["SH"]), rowoff)
                    row_ok = w.op(f"and i1 {w.op(f'icmp sge i64 {iy}, 0')}, {w.lt(iy, g['H'])}")
                    ix0 = w.add(w.mul(xo, g["SW"]), coloff)  # input column of lane l0
                    t = w.op(f"sub {iv} {iota}, {splat(i32(l0))}")  # lane - l0
                    ix = w.op(f"add {iv} {w.op(f'mul {iv} {t}, {sw_v}')}, {splat(i32(ix0))}")
                    mask = w.op(f"icmp sge {iv} {t}, zeroinitializer")
                    for cond in (
                        f"icmp slt {iv} {t}, {splat(i32(seg))}",
                        f"icmp sge {iv} {ix}, zeroinitializer",
                        f"icmp slt {iv} {ix}, {w_v}",
                        f"icmp slt {iv} {w.op(f'add {iv} {iota}, {splat(i32(first))}')}, {cols_v}",
                    ):
                        mask = w.op(f"and {m} {mask}, {w.op(cond)}")
                    row_m = w.op(f"insertelement {m} poison, i1 {row_ok}, i64 0")
                    row_m = w.op(
                        f"shufflevector {m} {row_m}, {m} poison, <{vw} x i32> zeroinitializer"
                    )
                    mask = w.op(f"and {m} {mask}, {row_m}")
                    # lane l reads x[c, iy, ix0 + (l - l0) * SW]; base is lane 0's address
                    base = w.gep(xc, w.sub(w.add(w.mul(iy, g["W"]), ix0), w.mul(l0, g["SW"])))
                    old = w.get(acc)
                    then, other, join = w.if_else(unit, "unit")
                    w.block(then)
                    loaded = w.op(
                        f"call {v} @llvm.masked.load.v{vw}f32.p0(ptr {base}, i32 4, {m} {mask}, {v} {old})"
                    )
                    w.set(acc, loaded)
                    w.br(join)
                    w.block(other)
                    pair, other, _ = w.if_else(two, "pair")
                    w.block(pair)  # stride 2: lane l is value 2l of a run twice as long
                    m2 = w.op(f"shufflevector {m} {mask}, {m} zeroinitializer, {interleave}")
                    run = w.op(
                        f"call {v2} @llvm.masked.load.v{2 * vw}f32.p0(ptr {base}, i32 4, <{2 * vw} x i1> {m2}, {v2} zeroinitializer)"
                    )
                    even = w.op(f"shufflevector {v2} {run}, {v2} poison, {evens}")
                    w.set(acc, w.op(f"select {m} {mask}, {v} {even}, {v} {old}"))
                    w.br(join)
                    w.block(other)
                    lanes = w.op(f"sext {iv} {w.op(f'mul {iv} {iota}, {sw_v}')} to <{vw} x i64>")
                    ptrs = w.op(f"getelementptr float, ptr {base}, <{vw} x i64> {lanes}")
                    gathered = w.op(
                        f"call {v} @llvm.masked.gather.v{vw}f32.v{vw}p0(<{vw} x ptr> {ptrs}, i32 4, {m} {mask}, {v} {old})"
                    )
                    w.set(acc, gathered)
                    w.br(join)
                    w.block(join)
                    # advance: the next row starts at lane l0 + seg when this row ended
                    nx = w.add(xo, seg)
                    wrap = w.op(f"icmp sge i64 {nx}, {g['OW']}")
                    w.set(ox, w.op(f"select i1 {wrap}, i64 0, i64 {nx}"))
                    w.set(oy, w.op(f"select i1 {wrap}, i64 {w.add(y, '1')}, i64 {y}"))
                    w.set(lane, w.add(l0, seg))
                    w.br(head)
                    w.block(done)
                    d = w.gep(
                        "%dst",
                        w.add(
                            w.mul(p, w.mul("%kc", str(nr))), w.add(w.mul(k, str(nr)), str(h * vw))
                        ),
                    )
                    w.do(f"store {v} {w.get(acc)}, ptr {d}, align 4")
