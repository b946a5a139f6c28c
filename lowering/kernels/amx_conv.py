"""8-bit convolutions of stride 1 or 2 on AMX tiles without im2col: `xr_tdirect_b`, the
serial part of `xr_igemm_b` when its geometry's 13th value (`direct`) is set
(qnn-int-products does that for an AMX build's KH x KW > 1, unit-dilation convolutions
with enough channels).

The trick is to compute the output on the padded input's grid: output pixel (oy, ox) is
virtual column p = oy * Wq + ox (Wq = OW + KW - 1, the padded width the window reads;
columns with ox >= OW are computed and dropped), and tap (i, j) of every column reads
input word p + i * Wq + j: one offset for the whole tap. With the input's channels
interleaved in groups of 4 (a 32-bit word holds channels 4g..4g+3 of one pixel: the
`band`, [C / 4][rows][Wq] words made once per call for the output rows the call covers,
padded with the zero point as it is made), the 16 columns of a B tile for tap (i, j) and
channel groups g..g+15 are 16 consecutive words of each group's plane: a tile load with
the planes' stride, straight from the band. Nothing is packed per K block, and the whole
K (taps x channels, in steps of 64 channels) accumulates in the tile registers before one
epilogue (igemm's xr_iedge, run by run of valid columns). Row panels are the outer loop,
so a panel's weights stay in L1 while the band streams.

Stride 2 splits the input into its 4 phases (even / odd rows and columns): tap (i, j)
reads phase (i % 2, j % 2) at row oy + i / 2, column ox + j / 2, again one offset per tap
on a grid of width OW + (KW - 1) / 2 (the band holds the phases one after another).

A (the weight) is packed at build time (prepack.pack_direct_rows): K ordered (i, j, c)
with c padded to a multiple of 64 (zero weights), rows padded to 32, tile-major: per
panel of 32 rows, each step's 32 rows of 64 bytes together (2 KB). Input channels past C
read as zero in the band (their weights are zero anyway).
"""

from __future__ import annotations

from collections.abc import Callable

from xrelay.lowering.kernels.amx import ROWS, TILE
from xrelay.lowering.kernels.conv_pack import load_geometry
from xrelay.lowering.kernels.irtext import Writer, concat, lane_range, splat

STEP_BYTES = ROWS * 64  # one step of a 32-row panel: 32 rows x 64 bytes
SLACK = ROWS  # words after each plane: the last block's dropped columns read there
FIRST16 = "<16 x i32> <" + ", ".join(f"i32 {i}" for i in range(16)) + ">"
EVENS16 = "<16 x i32> <" + ", ".join(f"i32 {2 * i}" for i in range(16)) + ">"
INTERLEAVE = "<" + ", ".join(f"i32 {(k % 4) * 16 + k // 4}" for k in range(64)) + ">"

HEADER = """
declare <16 x i8> @llvm.masked.load.v16i8.p0(ptr, i32, <16 x i1>, <16 x i8>)
"""  # (the 32-byte one is iconv_pack's)


def band(w: Writer) -> None:
    """xr_tband(x, C, Cp, H, W, PT, PL, S, KH, KW, oy0, rows, Wq, dst, plane, flip, fill):
    for stride S (1 or 2) the S x S phases of the input x [C][H][W] padded by PT rows and
    PL columns (bytes, xor flip; `fill` outside the input) that a KH x KW window reads (a
    1x1 one only phase (0, 0)): phase (a, b) row r and column q hold padded row
    S (oy0 + r) + a, column S q + b, for r < rows, q < Wq -> dst[g][a][b][r][q] words of
    channels 4g..4g+3 (zero past C), each group's plane `plane` words apart: 16 columns at
    a time, four channel rows interleaved (with S = 2 the even bytes of 32). A chunk
    wholly inside the input is four plain loads (channels past C zeroed); rows outside it are
    the fill word; only the chunks at the input's left and right edges are masked (the
    masks made from scalar bit ranges). (All of it masked, with vector compares for the
    masks and a stride test per channel, took 0.4-0.8 ns a byte: a third of ResNet-50
    int8's stride-2 convolutions.)"""
    params = [("ptr", "%x"), ("i64", "%C"), ("i64", "%Cp"), ("i64", "%H"), ("i64", "%W"),
              ("i64", "%PT"), ("i64", "%PL"), ("i64", "%S"), ("i64", "%KH"), ("i64", "%KW"),
              ("i64", "%oy0"), ("i64", "%rows"), ("i64", "%Wq"), ("ptr", "%dst"),
              ("i64", "%plane"), ("i64", "%flip"), ("i64", "%fill")]  # fmt: skip
    v, v2 = "<16 x i8>", "<32 x i8>"

    with w.function("void", "@xr_tband", params):
        fv = splat(w, w.op("trunc i64 %flip to i8"), 16, "i8")
        fill8 = w.op("trunc i64 %fill to i8")
        pad = splat(w, fill8, 16, "i8")
        two = w.op("icmp eq i64 %S, 2")
        span = w.op(f"select i1 {two}, i64 32, i64 16")  # input bytes a chunk reads
        phase_rows = w.mul("%rows", "%Wq")
        hw = w.mul("%H", "%W")
        with w.loop("g", "0", w.op("sdiv i64 %Cp, 4")) as g:
            chans, word = [], "0"
            for i in range(4):
                c = w.add(w.mul(g, "4"), str(i))
                real = w.op(f"icmp slt i64 {c}, %C")
                cm = w.op(f"select i1 {real}, i64 {c}, i64 0")  # an address inside x
                chans.append((real, w.gep("%x", w.mul(cm, hw), "i8")))
                byte = w.op(f"select i1 {real}, i64 {w.op('and i64 %fill, 255')}, i64 0")
                word = w.op(f"or i64 {word}, {w.op(f'shl i64 {byte}, {8 * i}')}")
            fill_word = splat(w, w.op(f"trunc i64 {word} to i32"), 16, "i32")
            with (
                w.loop("a", "0", w.min("%S", "%KH")) as a,  # the phases some tap reads
                w.loop("b", "0", w.min("%S", "%KW")) as b,
                w.loop("r", "0", "%rows") as r,
            ):
                phase = w.add(w.mul(a, "%S"), b)
                first = w.add(w.mul(g, "%plane"), w.add(w.mul(phase, phase_rows), w.mul(r, "%Wq")))
                out = w.gep("%dst", first, "i32")
                iy = w.sub(w.add(w.mul(w.add("%oy0", r), "%S"), a), "%PT")  # the input's row
                inside = w.op(
                    f"and i1 {w.op(f'icmp sge i64 {iy}, 0')}, {w.op(f'icmp slt i64 {iy}, %H')}"
                )
                # a row's last chunk may run into the next row's words, written after it
                within, outside, done = w.if_else(inside, "row")
                w.block(within)
                rowoff = w.mul(iy, "%W")
                with w.loop("q", "0", "%Wq", "16") as q:
                    ix = w.sub(w.add(w.mul(q, "%S"), b), "%PL")  # the input column of lane 0
                    clear = w.op(f"icmp sge i64 {ix}, 0")
                    clear = w.op(f"and i1 {clear}, {w.op(f'icmp sle i64 {w.add(ix, span)}, %W')}")
                    plain, edge, joined = w.if_else(clear, "plain")
                    w.block(plain)
                    rows_ = []
                    for real, at in chans:
                        src = w.gep(at, w.add(rowoff, ix), "i8")
                        pair, unit, got = w.if_else(two, "pair")
                        w.block(pair)
                        x2 = w.op(f"load {v2}, ptr {src}, align 1")
                        even = w.op(f"shufflevector {v2} {x2}, {v2} poison, {EVENS16}")
                        w.br(got)
                        w.block(unit)
                        x1 = w.op(f"load {v}, ptr {src}, align 1")
                        w.br(got)
                        w.block(got)
                        x = w.op(f"phi {v} [ {even}, %{pair} ], [ {x1}, %{unit} ]")
                        x = w.op(f"xor {v} {x}, {fv}")
                        rows_.append(w.op(f"select i1 {real}, {v} {x}, {v} zeroinitializer"))
                    _store_words(w, rows_, out, q)
                    w.br(joined)
                    w.block(edge)  # lanes l with 0 <= ix + l < W (bytes ix + S l)
                    to_end = w.sub("%W", ix)
                    mask2 = lane_range(w, w.sub("0", ix), to_end, 32)
                    mask = lane_range(w, w.sub("0", ix), to_end, 16)
                    halves = [
                        w.op(f"sdiv i64 {w.add(e, '1')}, 2") for e in (w.sub("0", ix), to_end)
                    ]
                    lanes = w.op(
                        f"select i1 {two}, <16 x i1> {lane_range(w, *halves, 16)}, <16 x i1> {mask}"
                    )
                    rows_ = []
                    for real, at in chans:
                        src = w.gep(at, w.add(rowoff, ix), "i8")
                        pair, unit, got = w.if_else(two, "pair")
                        w.block(pair)
                        x2 = w.op(
                            f"call {v2} @llvm.masked.load.v32i8.p0(ptr {src}, i32 1, <32 x i1> {mask2}, {v2} zeroinitializer)"
                        )
                        even = w.op(f"shufflevector {v2} {x2}, {v2} poison, {EVENS16}")
                        w.br(got)
                        w.block(unit)
                        x1 = w.op(
                            f"call {v} @llvm.masked.load.v16i8.p0(ptr {src}, i32 1, <16 x i1> {mask}, {v} zeroinitializer)"
                        )
                        w.br(got)
                        w.block(got)
                        x = w.op(f"phi {v} [ {even}, %{pair} ], [ {x1}, %{unit} ]")
                        x = w.op(
                            f"select <16 x i1> {lanes}, {v} {w.op(f'xor {v} {x}, {fv}')}, {v} {pad}"
                        )
                        rows_.append(w.op(f"select i1 {real}, {v} {x}, {v} zeroinitializer"))
                    _store_words(w, rows_, out, q)
                    w.br(joined)
                    w.block(joined)
                w.br(done)
                w.block(outside)  # a padding row: the fill word (zero past C)
                with w.loop("q", "0", "%Wq", "16") as q:
                    at = w.gep(out, q, "i32")
                    w.do(f"store <16 x i32> {fill_word}, ptr {at}, align 1")
                w.br(done)
                w.block(done)


def _store_words(w: Writer, rows: list[str], out: str, q: str) -> None:
    """Four channel rows of 16 bytes as 16 words of four bytes at out[q]."""
    both = concat(w, rows, 16, "i8")
    words = w.op(f"shufflevector <64 x i8> {both}, <64 x i8> poison, <64 x i32> {INTERLEAVE}")
    w.do(f"store <64 x i8> {words}, ptr {w.gep(out, q, 'i32')}, align 1")


TILE_PARAMS = [("ptr", "%ap"), ("ptr", "%buf"), ("i64", "%boff"), ("i64", "%plane"),
               ("i64", "%KH"), ("i64", "%KW"), ("i64", "%Wq"), ("i64", "%CB"),
               ("i64", "%S"), ("i64", "%PQ"), ("ptr", "%t")]  # fmt: skip


def _steps(w: Writer, body) -> None:
    """for each tap (i, j) and channel block cb: body(a0, b0), A's step and B's first
    word of the tile (columns boff.. of the tap's offset: in phase (i % S, j % S), of PQ
    words, row i / S and column j / S)."""
    with w.loop("i", "0", "%KH") as i, w.loop("j", "0", "%KW") as j:
        phase = w.add(w.mul(w.op(f"urem i64 {i}, %S"), "%S"), w.op(f"urem i64 {j}, %S"))
        within = w.add(w.mul(w.op(f"udiv i64 {i}, %S"), "%Wq"), w.op(f"udiv i64 {j}, %S"))
        off = w.add("%boff", w.add(w.mul(phase, "%PQ"), within))
        tap = w.add(w.mul(i, "%KW"), j)
        with w.loop("cb", "0", "%CB") as cb:
            s = w.add(w.mul(tap, "%CB"), cb)
            a0 = w.gep("%ap", w.mul(s, str(STEP_BYTES)), "i8")
            b0 = w.gep("%buf", w.add(w.mul(w.mul(cb, str(TILE)), "%plane"), off), "i32")
            body(a0, b0)


def tile(w: Writer) -> None:
    """xr_tdirect_tile: the 32 x 32 i32 tile t (rows 128 bytes apart) of a 32-row panel
    `ap` and virtual columns boff.. of the band, over every tap and channel block."""
    with w.function("void", "@xr_tdirect_tile", TILE_PARAMS):
        for c in range(4):
            w.do(f"call void @llvm.x86.tilezero(i8 {c})")
        stride = w.mul("%plane", "4")

        def step(a0: str, b0: str) -> None:
            w.do(f"call void @llvm.x86.tileloadd64(i8 4, ptr {a0}, i64 64)")
            w.do(
                f"call void @llvm.x86.tileloadd64(i8 5, ptr {w.gep(a0, str(TILE * 64), 'i8')}, i64 64)"
            )
            w.do(f"call void @llvm.x86.tileloadd64(i8 6, ptr {b0}, i64 {stride})")
            w.do(
                f"call void @llvm.x86.tileloadd64(i8 7, ptr {w.gep(b0, str(TILE), 'i32')}, i64 {stride})"
            )
            for c, (a, b) in enumerate(((4, 6), (4, 7), (5, 6), (5, 7))):
                w.do(f"call void @llvm.x86.tdpbsud(i8 {c}, i8 {a}, i8 {b})")

        _steps(w, step)
        for c in range(4):
            at = w.gep("%t", str((c // 2) * TILE * ROWS + (c % 2) * TILE), "i32")
            w.do(f"call void @llvm.x86.tilestored64(i8 {c}, ptr {at}, i64 {ROWS * 4})")


def slow_tile(w: Writer) -> None:
    """xr_tdirect_tile_slow: the same tile with scalar loops (the OS refused AMX)."""
    with w.function("void", "@xr_tdirect_tile_slow", TILE_PARAMS):
        with w.loop("z", "0", str(ROWS * ROWS)) as z:
            w.do(f"store i32 0, ptr {w.gep('%t', z, 'i32')}")

        def step(a0: str, b0: str) -> None:
            with (
                w.loop("r", "0", str(ROWS)) as r,
                w.loop("c", "0", str(ROWS)) as c,
                w.loop("k", "0", "64") as k,
            ):
                pa = w.gep(a0, w.add(w.mul(r, "64"), k), "i8")
                g, byte = w.op(f"sdiv i64 {k}, 4"), w.op(f"srem i64 {k}, 4")
                word = w.add(w.mul(g, "%plane"), c)
                pb = w.gep(w.gep(b0, word, "i32"), byte, "i8")
                x = w.op(f"sext i8 {w.op(f'load i8, ptr {pa}')} to i32")
                y = w.op(f"zext i8 {w.op(f'load i8, ptr {pb}')} to i32")
                at = w.gep("%t", w.add(w.mul(r, str(ROWS)), c), "i32")
                old = w.op(f"load i32, ptr {at}")
                prod = w.op(f"mul i32 {x}, {y}")
                w.do(f"store i32 {w.op(f'add i32 {old}, {prod}')}, ptr {at}")

        _steps(w, step)


def direct_serial(w: Writer, params: list[tuple[str, str]]) -> None:
    """xr_tdirect_b (igemm's parameters): rows [arow0, arow0 + M) of the prepacked
    weight, output pixels [bcol0, bcol0 + N) (C, Q and the row vectors already offset to
    them, as the serial parts get them)."""
    with w.function("void", "@xr_tdirect_b", params):
        g = load_geometry(w)
        KH, KW, OW, S = g["KH"], g["KW"], g["OW"], g["SH"]
        j0, j1 = "%bcol0", w.add("%bcol0", "%N")
        b = band_buffer(w, g, "%b", j0, j1, 64)
        Wq, PQ, plane, buf, base = b["Wq"], b["PQ"], b["plane"], b["buf"], b["base"]
        CB = w.op(f"sdiv i64 {b['Cp']}, 64")
        steps = w.mul(w.mul(KH, KW), CB)
        ready = w.op("call i1 @xr_amx_ready()")
        with w.if_(ready):
            w.do("call void @llvm.x86.ldtilecfg(ptr @xr_amx_config)")
        tmp = w.op(f"alloca [{ROWS * ROWS + ROWS} x i32], align 64")  # + a row: offset reads
        v0, v1 = b["v0"], b["v1"]
        nulls = {p: w.op(f"icmp eq ptr %{p}, null") for p in ("trow", "qrow", "q")}
        requant = ", ".join(
            f"float {w.op(f'sitofp i64 {p} to float')}" for p in ("%qzp", "%qlo", "%qhi")
        )
        with w.loop("ir", "0", "%M", str(ROWS)) as ir, w.loop("jv", v0, v1, str(ROWS)) as jv:
            mr = w.min(str(ROWS), w.sub("%M", ir))
            panel = w.op(f"sdiv i64 {w.add('%arow0', ir)}, {ROWS}")
            ap = w.gep("%a", w.mul(w.mul(panel, steps), str(STEP_BYTES)), "i8")
            args = (
                f"ptr {ap}, ptr {buf}, i64 {w.sub(jv, base)}, i64 {plane}, i64 {KH}, "
                f"i64 {KW}, i64 {Wq}, i64 {CB}, i64 {S}, i64 {PQ}, ptr {tmp}"
            )
            fast, slow, join = w.if_else(ready, "amx")
            for label, kernel in ((fast, "xr_tdirect_tile"), (slow, "xr_tdirect_tile_slow")):
                w.block(label)
                w.do(f"call void @{kernel}({args})")
                w.br(join)
            w.block(join)
            trow = w.gep("%trow", ir, "i32")
            trow = w.op(f"select i1 {nulls['trow']}, ptr @xr_izeros, ptr {trow}")
            qrow = w.gep("%qrow", ir)
            qrow = w.op(f"select i1 {nulls['qrow']}, ptr @xr_iones, ptr {qrow}")
            edge_runs(w, jv, ROWS, Wq, OW, j0, j1, tmp, ir, mr, trow, qrow, nulls["q"], requant)
        with w.if_(ready):
            w.do("call void @llvm.x86.tilerelease()")
        w.do(f"call void @free(ptr {buf})")


def band_buffer(
    w: Writer, g: dict[str, str], x: str, j0: str, j1: str, block: int
) -> dict[str, str]:
    """The band (xr_tband, in a buffer to free) of the output pixels [j0, j1) of the
    convolution `g` describes (in a function with igemm's %K, %geo and %flip), its
    channels padded to a multiple of `block`: values C, Cp, the grid width Wq, the phase
    size PQ, the plane stride, `buf`, the band's first virtual column `base` and the
    virtual columns [v0, v1) of the pixels."""
    H, W, KH, KW, OW, S = g["H"], g["W"], g["KH"], g["KW"], g["OW"], g["SH"]
    fill = w.op(f"load i64, ptr {w.gep('%geo', '13', 'i64')}")
    C = w.op(f"sdiv i64 %K, {w.mul(KH, KW)}")
    Cp = w.op(f"and i64 {w.add(C, str(block - 1))}, -{block}")
    Wq = w.add(OW, w.op(f"sdiv i64 {w.sub(KW, '1')}, {S}"))  # a phase's columns the window reads
    oy0 = w.op(f"sdiv i64 {j0}, {OW}")
    last = w.sub(j1, "1")
    oy1 = w.op(f"sdiv i64 {last}, {OW}")
    rows = w.add(w.sub(oy1, oy0), w.add(w.op(f"sdiv i64 {w.sub(KH, '1')}, {S}"), "1"))
    PQ = w.mul(rows, Wq)
    plane = w.add(w.mul(w.mul(S, S), PQ), str(SLACK))
    size = w.op(f"and i64 {w.add(w.mul(Cp, plane), '63')}, -64")
    buf = w.op(f"call ptr @aligned_alloc(i64 64, i64 {size})")  # Cp / 4 planes of words
    w.do(
        f"call void @xr_tband(ptr {x}, i64 {C}, i64 {Cp}, i64 {H}, i64 {W}, i64 {g['PT']}, "
        f"i64 {g['PL']}, i64 {S}, i64 {KH}, i64 {KW}, i64 {oy0}, i64 {rows}, i64 {Wq}, "
        f"ptr {buf}, i64 {plane}, i64 %flip, i64 {fill})"
    )
    base = w.mul(oy0, Wq)
    v0 = w.add(base, w.op(f"srem i64 {j0}, {OW}"))
    v1 = w.add(w.add(w.mul(oy1, Wq), w.op(f"srem i64 {last}, {OW}")), "1")
    return {"C": C, "Cp": Cp, "Wq": Wq, "PQ": PQ, "plane": plane, "buf": buf, "base": base,
            "v0": v0, "v1": v1}  # fmt: skip


def for_runs(
    w: Writer, jv: str, cols: int, Wq: str, OW: str, j0: str, j1: str,
    body: Callable[[str, str, str], None],
) -> None:  # fmt: skip
    """body(col, ja, jb) for each output row the `cols` virtual columns from jv cover: its
    run of output pixels [ja, jb) within [j0, j1), starting at the tile's column `col`."""
    oy_a = w.op(f"sdiv i64 {jv}, {Wq}")
    oy_b = w.add(w.op(f"sdiv i64 {w.add(jv, str(cols - 1))}, {Wq}"), "1")
    with w.loop("oy", oy_a, oy_b) as oy:
        row0 = w.mul(oy, Wq)
        p_a = w.op(f"call i64 @llvm.smax.i64(i64 {jv}, i64 {row0})")
        p_b = w.min(w.add(jv, str(cols)), w.add(row0, OW))
        jrow = w.mul(oy, OW)  # as output pixels, within this call's [j0, j1)
        ja = w.op(f"call i64 @llvm.smax.i64(i64 {w.add(jrow, w.sub(p_a, row0))}, i64 {j0})")
        jb = w.min(w.add(jrow, w.sub(p_b, row0)), j1)
        with w.if_(w.op(f"icmp sgt i64 {jb}, {ja}")):
            body(w.sub(w.add(row0, w.sub(ja, jrow)), jv), ja, jb)


def edge_runs(
    w: Writer, jv: str, cols: int, Wq: str, OW: str, j0: str, j1: str, tmp: str, ir: str,
    mr: str, trow: str, qrow: str, q_null: str, requant: str,
) -> None:  # fmt: skip
    """The scratch tile `tmp` (rows `cols` apart) of the rows from `ir` (mr of them) and
    the virtual columns from jv, run by run of valid columns, through igemm's xr_iedge
    into C, or requantized into Q (in a function with igemm's %c, %q and %ldc)."""

    def store(col: str, ja: str, jb: str) -> None:
        at = w.add(w.mul(ir, "%ldc"), w.sub(ja, j0))
        ctile = w.gep("%c", at, "i32")
        qtile = w.op(f"select i1 {q_null}, ptr null, ptr {w.gep('%q', at, 'i8')}")
        w.do(
            f"call void @xr_iedge(ptr {w.gep(tmp, col, 'i32')}, ptr {ctile}, i64 %ldc, "
            f"i64 {mr}, i64 {w.sub(jb, ja)}, i64 0, i64 1, ptr {trow}, ptr @xr_izeros, "
            f"ptr {qtile}, ptr {qrow}, ptr @xr_iones, {requant})"
        )

    for_runs(w, jv, cols, Wq, OW, j0, j1, store)
