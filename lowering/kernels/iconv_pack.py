"""Implicit im2col for the 8-bit GEMM: a convolution's columns made block by block.

The byte counterpart of kernels/conv_pack.py: B[k, j] = x[c, oy*SH + i*DH, ox*SW + jj*DW],
k = (c, i, jj), j = (oy, ox), of an input qnn-int-products has padded already (with the
zero point, what qnn.conv2d pads with), so every read is inside it. qnn-int-products used
to write all of B out (KH*KW times the input's bytes, through a generic loop of selects)
for the GEMM to read again; now the GEMM makes one KC x NC block of it at a time in a
scratch buffer that stays in cache, and packs that as it packs any B (`xr_ipack_b`).

    void xr_iim2col(ptr x, ptr geo, i64 j0, i64 k0, i64 cols, i64 rows, i64 K, ptr dst)

writes dst[r * cols + j] = B[k0 + r, j0 + j] for r < rows, j < cols (zero for rows past
K, whose weights are zero). `geo` points at the 12 i64 of conv_pack.GEO (PT = PL = 0).

A row of B is, per output row oy it covers, a run of bytes of one input row: with unit
stride copied 32 bytes at a time (the last, partial chunk masked), with stride 2 as the
even bytes of 64 (masked likewise), other strides byte by byte. (A first version read the
unpadded input, one llvm.memcpy between two memsets per run: the calls cost more than
they copied on 7x7 outputs. One before it built each packed panel from masked loads, as
the f32 packer does: 32 bytes per load made its bookkeeping cost more than it saved.)
"""

from __future__ import annotations

from xrelay.lowering.kernels.conv_pack import load_geometry, window_row
from xrelay.lowering.kernels.irtext import Writer, copy_values, first_lanes

PARAMS = [
    ("ptr", "%x"), ("ptr", "%geo"), ("i64", "%j0"), ("i64", "%k0"), ("i64", "%cols"),
    ("i64", "%rows"), ("i64", "%K"), ("ptr", "%dst"),
]  # fmt: skip

CHUNK = 32  # bytes per copy

HEADER = f"""
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
declare <{CHUNK} x i8> @llvm.masked.load.v{CHUNK}i8.p0(ptr, i32, <{CHUNK} x i1>, <{CHUNK} x i8>)
declare <{2 * CHUNK} x i8> @llvm.masked.load.v{2 * CHUNK}i8.p0(ptr, i32, <{2 * CHUNK} x i1>, <{2 * CHUNK} x i8>)
declare void @llvm.masked.store.v{CHUNK}i8.p0(<{CHUNK} x i8>, ptr, i32, <{CHUNK} x i1>)
"""


def im2col(w: Writer) -> None:
    """Emit @xr_iim2col."""
    n, n2 = CHUNK, 2 * CHUNK
    b, b2 = f"<{n} x i8>", f"<{n2} x i8>"
    evens = f"<{n} x i32> <" + ", ".join(f"i32 {2 * i}" for i in range(n)) + ">"

    with w.function("void", "@xr_iim2col", PARAMS):
        g = load_geometry(w)
        unit = w.op(f"icmp eq i64 {g['SW']}, 1")
        two = w.op(f"icmp eq i64 {g['SW']}, 2")
        oy_first = w.op(f"sdiv i64 %j0, {g['OW']}")
        j_end = w.add("%j0", "%cols")
        oy_end = w.op(f"sdiv i64 {w.add(j_end, w.sub(g['OW'], '1'))}, {g['OW']}")
        with w.loop("r", "0", "%rows") as r:
            out = w.gep("%dst", w.mul(r, "%cols"), "i8")
            kk = w.add("%k0", r)
            past, inside, done = w.if_else(w.op(f"icmp sge i64 {kk}, %K"), "past")
            w.block(past)
            w.do(f"call void @llvm.memset.p0.i64(ptr {out}, i8 0, i64 %cols, i1 false)")
            w.br(done)
            w.block(inside)
            xc, rowoff, coloff = window_row(w, g, kk, "%x", "i8")  # (PT = PL = 0)
            with w.loop("oy", oy_first, oy_end) as oy:
                row0 = w.mul(oy, g["OW"])
                a = w.op(f"call i64 @llvm.smax.i64(i64 {w.sub('%j0', row0)}, i64 0)")
                e = w.min(g["OW"], w.sub(j_end, row0))  # this output row's ox in [a, e)
                d = w.gep(out, w.sub(w.add(row0, a), "%j0"), "i8")  # dst of ox = a
                iy = w.add(w.mul(oy, g["SH"]), rowoff)
                src = w.gep(xc, w.add(w.mul(iy, g["W"]), w.add(w.mul(a, g["SW"]), coloff)), "i8")
                count = w.sub(e, a)
                copy, other, joined = w.if_else(unit, "unit")
                w.block(copy)
                copy_values(w, src, d, count, n, "i8")
                w.br(joined)
                w.block(other)
                pair, bytewise, _ = w.if_else(two, "pair")
                w.block(pair)  # ox's byte is byte 2 * (ox - a) of the run
                with w.loop("q", "0", count, str(n)) as q:
                    left = w.sub(count, q)
                    mask = first_lanes(w, left, n)
                    mask2 = first_lanes(w, w.sub(w.add(left, left), "1"), n2)
                    run = w.gep(src, w.add(q, q), "i8")
                    v2 = w.op(
                        f"call {b2} @llvm.masked.load.v{n2}i8.p0(ptr {run}, i32 1, <{n2} x i1> {mask2}, {b2} zeroinitializer)"
                    )
                    v = w.op(f"shufflevector {b2} {v2}, {b2} poison, {evens}")
                    w.do(
                        f"call void @llvm.masked.store.v{n}i8.p0({b} {v}, ptr {w.gep(d, q, 'i8')}, i32 1, <{n} x i1> {mask})"
                    )
                w.br(joined)
                w.block(bytewise)
                with w.loop("t", "0", count) as t:
                    byte = w.op(f"load i8, ptr {w.gep(src, w.mul(t, g['SW']), 'i8')}")
                    w.do(f"store i8 {byte}, ptr {w.gep(d, t, 'i8')}")
                w.br(joined)
                w.block(joined)
            w.br(done)
            w.block(done)


def b_block(
    w: Writer, jc: str, nc: str, pg: str, k0: str, rows: str, words: str, conv: str,
    plain: str, cols: str, bp: str,
) -> str:  # fmt: skip
    """The packed B of the K block at group `pg` (value `k0`) for columns [jc, jc + nc): with
    `conv`, `rows` rows of a convolution's columns (bcol0 + jc on, implicit im2col) made in
    the scratch block `cols`, then packed into `bp` as a row-major B; with `plain`, B's own
    bytes packed into `bp`; else (prepacked) the block in B itself. `words`: groups per
    panel (AMX rounds them up to whole tile rows)."""
    with w.if_(conv):
        j0 = w.add("%bcol0", jc)
        w.do(
            f"call void @xr_iim2col(ptr %b, ptr %geo, i64 {j0}, i64 {k0}, i64 {nc}, i64 {rows}, i64 %K, ptr {cols})"
        )
        src = w.gep(cols, w.sub("0", w.mul(k0, nc)), "i8")  # element (j, k0) first
        w.do(
            f"call void @xr_ipack_b(ptr {src}, i64 1, i64 {nc}, i64 {nc}, i64 {k0}, i64 {words}, i64 %K, ptr {bp}, i64 %flip)"
        )
    with w.if_(plain):
        bsrc = w.gep("%b", w.mul(jc, "%csb"), "i8")
        w.do(
            f"call void @xr_ipack_b(ptr {bsrc}, i64 %csb, i64 %rsb, i64 {nc}, i64 {k0}, i64 {words}, i64 %K, ptr {bp}, i64 %flip)"
        )
    packed = w.gep("%b", w.add(w.mul(pg, "%npad"), w.mul(w.add("%bcol0", jc), words)), "i32")
    return w.op(f"select i1 {w.op('icmp ne i64 %bpk, 0')}, ptr {packed}, ptr {bp}")
