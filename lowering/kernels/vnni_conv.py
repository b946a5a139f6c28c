"""8-bit convolutions of stride 1 or 2 on AVX-512 VNNI without im2col: `xr_vdirect_b`
(weight-major) and `xr_vdirect_a` (pixel-major), the serial parts of `xr_igemm_b` /
`xr_igemm_a` on a VNNI build when their geometry's 13th value (`direct`) is set
(qnn-int-products: `vnni_direct`, unit dilation, input channels a multiple of 4).

Both read the band (amx_conv's xr_tband: the input's channels in 4-byte words of four,
[C / 4][phases][rows][Wq], padded with the zero point as it is made, once per call) and
accumulate the whole K, tap by tap and word by word, in registers (two vectors per row
of the tile).

Weight-major (KH x KW > 1), the AMX direct convolution's scheme (kernels/amx_conv.py) on
an 8 x 32 register tile: the output is computed on the padded input's grid (virtual column
p = oy * Wq + ox, the columns with ox >= OW computed and dropped), so tap (i, j) of a
tile's 32 columns reads 32 consecutive words of the band, one offset for the whole tap:
two vectors of 16 words straight from the band, eight weight words broadcast. A
requantized tile stores its bytes from its registers, one masked store per row and output
row it covers; an i32 one goes through a scratch tile and xr_iedge.

Pixel-major (few pixels and a long K: windows whose weight-major tiles would drop many
columns, and 1x1s): 7 pixels x 32 channels, each pixel's word broadcast from its own
virtual column (nothing dropped), two vectors of the weight's 32 channels; the threads
split the pixels in whole tiles of 7 (igemm's `_direct_rows`). Its result is stored
channel-major, as the convolution's NCHW output (geometry value 14, GemmSpec.pixel_major):
the tile's bytes transposed in registers, each channel's pixels one masked store (the
transpose back it replaced cost ResNet-50 int8 about 16 us per 14 x 14 convolution).

im2col's blocks (kernels/iconv_pack.py) cost more than the products on small outputs:
ResNet-50 int8's 3 x 3 convolutions of 7 x 7 pixels took 0.49 ms against 0.33 for the
same product as a plain matrix (0.32 pixel-major direct).

The weight is packed at build time by prepack.pack_direct_rows(width, block 4): K ordered
(i, j, c) with c padded to a multiple of 4, per panel of `width` rows (8 weight-major, 32
pixel-major) the words of each (tap, g) together.
"""

from __future__ import annotations

from collections.abc import Callable

from xrelay.lowering.kernels.amx_conv import band_buffer, edge_runs, for_runs
from xrelay.lowering.kernels.conv_pack import load_geometry
from xrelay.lowering.kernels.irtext import Writer, concat, lane_range, splat

ROWS = 8  # a weight-major tile's output channels: 64 and 128 in whole tiles (6 left 2 and 4 of
# 66 and 132 computed; same-process A/B: 3 x 3 convolutions of 64 channels on 56 x 56
# 290 -> 282 us, of 128 on 28 x 28 310 -> 301; ResNet-50 int8 -0.8 %, both orders)
PIXELS = 7  # a pixel-major tile's pixels: ResNet-50's 7 x 7, 14 x 14 and 28 x 28 outputs in
# whole tiles (6 left 1, 2 or 4 pixels over; same-process A/B, 3 x 3 convolutions of 7 x 7
# and 14 x 14 pixels 305 -> 278 and 292 -> 287 us; 14 pixels spilled: 286 -> 322)
COLS = 32  # a tile's virtual columns (two vectors of 16 i32 lanes)
REGISTER_EPILOGUE = True  # requantized tiles store their bytes from registers (A/B switch)
V = "<16 x i32>"

# `offs`: each tap's offset in the band (words; _tap_offsets makes the table once a call)
TILE_PARAMS = [("ptr", "%ap"), ("ptr", "%buf"), ("i64", "%boff"), ("i64", "%plane"),
               ("ptr", "%offs"), ("i64", "%taps"), ("i64", "%Wq"), ("i64", "%G"),
               ("ptr", "%t")]  # fmt: skip
# the requantizing epilogue's: the rows' bytes (Q at the panel's first row, or null: the
# tile goes to t), trow / qrow at that row, valid rows, the tile's first virtual column,
# OW, the call's output pixels [j0, j1), and igemm's REQUANT
EPILOGUE_PARAMS = [("ptr", "%q"), ("i64", "%ldc"), ("ptr", "%trow"), ("ptr", "%qrow"),
                   ("i64", "%mrows"), ("i64", "%jv"), ("i64", "%OW"),
                   ("i64", "%j0"), ("i64", "%j1"), ("float", "%qzp"), ("float", "%qlo"),
                   ("float", "%qhi")]  # fmt: skip


def _tap_offsets(w: Writer, g: dict[str, str], Wq: str, PQ: str) -> str:
    """The table of each tap's offset in the band (i64 words, tap i * KW + j): phase
    (i % S, j % S) of PQ words, row i / S and column j / S of it. Made once per call: the
    tiles' tap loops read it (their own divisions by S cost a small K's tile a third)."""
    KH, KW, S = g["KH"], g["KW"], g["SH"]
    offs = w.op(f"alloca i64, i64 {w.mul(KH, KW)}, align 8")
    with w.loop("i", "0", KH) as i, w.loop("j", "0", KW) as j:
        phase = w.add(w.mul(w.op(f"urem i64 {i}, {S}"), S), w.op(f"urem i64 {j}, {S}"))
        within = w.add(w.mul(w.op(f"udiv i64 {i}, {S}"), Wq), w.op(f"udiv i64 {j}, {S}"))
        at = w.gep(offs, w.add(w.mul(i, KW), j), "i64")
        w.do(f"store i64 {w.add(w.mul(phase, PQ), within)}, ptr {at}")
    return offs


def _products(w: Writer, mr: int, step: Callable[[str, str, str], tuple[list[str], list[str]]],
              words_are_data: bool) -> list[list[tuple[str, str]]]:  # fmt: skip
    """The mr x 2 accumulators of a tile over every tap (offset %offs[tap]) and channel
    word g < %G: step(tap, off, g) gives the mr broadcast words and the two vectors of 16
    words; `words_are_data`: the words are the band's (u8, VNNI's first operand), else
    the vectors are."""
    accs = [[w.var(V, "zeroinitializer", f"c{r}{h}") for h in range(2)] for r in range(mr)]
    with w.loop("tap", "0", "%taps") as tap:
        off = w.op(f"load i64, ptr {w.gep('%offs', tap, 'i64')}")
        with w.loop("g", "0", "%G") as g:
            words, vectors = step(tap, off, g)
            for r in range(mr):
                one = w.op(f"insertelement {V} poison, i32 {words[r]}, i64 0")
                a = w.op(f"shufflevector {V} {one}, {V} poison, <16 x i32> zeroinitializer")
                for h in range(2):
                    u, s8 = (a, vectors[h]) if words_are_data else (vectors[h], a)
                    acc = w.op(
                        f"call {V} @llvm.x86.avx512.vpdpbusd.512({V} {w.get(accs[r][h])}, {V} {u}, {V} {s8})"
                    )
                    w.set(accs[r][h], acc)
    return accs


def _vectors(w: Writer, at: str) -> list[str]:
    """The two vectors of 16 words at `at`."""
    return [w.op(f"load {V}, ptr {w.gep(at, str(16 * h), 'i32')}, align 4") for h in (0, 1)]


def _word(w: Writer, at: str) -> str:
    return w.op(f"load i32, ptr {at}, align 4")


def tile(w: Writer, mr: int, requantize: Callable[[Writer, str, str, int], str]) -> None:
    """xr_vdirect_tile: the mr x 32 i32 tile of an mr-row panel `ap` and virtual columns
    boff.. of the band, over every tap (i, j) (in phase (i % S, j % S) of PQ words, row
    i / S and column j / S) and every channel word g < G. With %q null it goes to t (rows
    32 apart); else each row plus trow, times qrow, is requantized in registers
    (`requantize`: igemm's, operation for operation as xr_iedge does it) and its bytes are
    stored run by run of valid columns (one masked store per row and output row)."""
    with w.function("void", "@xr_vdirect_tile", TILE_PARAMS + EPILOGUE_PARAMS):

        def step(tap: str, off: str, g: str) -> tuple[list[str], list[str]]:
            band = w.gep("%buf", w.add("%boff", w.add(off, w.mul(g, "%plane"))), "i32")
            ap = w.gep("%ap", w.mul(w.add(w.mul(tap, "%G"), g), str(mr)), "i32")
            return [_word(w, w.gep(ap, str(r), "i32")) for r in range(mr)], _vectors(w, band)

        accs = _products(w, mr, step, words_are_data=False)
        plain, quant, done = w.if_else(w.op("icmp eq ptr %q, null"), "plain")
        w.block(plain)
        for r in range(mr):
            for h in range(2):
                at = w.gep("%t", str(r * COLS + 16 * h), "i32")
                w.do(f"store {V} {w.get(accs[r][h])}, ptr {at}, align 4")
        w.br(done)
        w.block(quant)
        rows = []
        for r in range(mr):
            t = w.op(f"load i32, ptr {w.gep('%trow', str(r), 'i32')}")
            t = splat(w, t, 16, "i32")
            qr = w.op(f"load float, ptr {w.gep('%qrow', str(r))}")
            m = splat(w, w.op(f"fmul float {qr}, 1.0"), 16, "float")  # (x qcol: ones)
            halves = []
            for h in range(2):  # (+ tcol, all zeros, as xr_iedge adds it)
                x = w.op(f"add {V} {w.op(f'add {V} {w.get(accs[r][h])}, {t}')}, zeroinitializer")
                halves.append(requantize(w, x, m, 16))
            rows.append(concat(w, halves, 16, "i8"))

        def store(col: str, ja: str, jb: str) -> None:  # lane c: pixel ja + c - col
            mask = lane_range(w, col, w.add(col, w.sub(jb, ja)), COLS)
            at = w.gep("%q", w.sub(w.sub(ja, "%j0"), col), "i8")
            for r in range(mr):
                with w.if_(w.op(f"icmp slt i64 {r}, %mrows")):
                    dst = w.gep(at, w.mul(str(r), "%ldc"), "i8")
                    w.do(
                        f"call void @llvm.masked.store.v32i8.p0(<32 x i8> {rows[r]}, ptr {dst}, i32 1, <32 x i1> {mask})"
                    )

        for_runs(w, "%jv", COLS, "%Wq", "%OW", "%j0", "%j1", store)
        w.br(done)
        w.block(done)


def direct_serial(w: Writer, params: list[tuple[str, str]], mr: int) -> None:
    """xr_vdirect_b (igemm's parameters): rows [arow0, arow0 + M) of the prepacked weight
    (panels of mr rows), output pixels [bcol0, bcol0 + N) (C, Q and the row vectors
    already offset to them, as the serial parts get them)."""
    with w.function("void", "@xr_vdirect_b", params):
        g, j0, j1 = load_geometry(w), "%bcol0", w.add("%bcol0", "%N")
        b, G, offs = _band(w, g, "%b", j0, j1)
        KH, KW, OW, Wq = g["KH"], g["KW"], g["OW"], b["Wq"]
        plane, buf, base = b["plane"], b["buf"], b["base"]
        panel_words = w.mul(w.mul(w.mul(KH, KW), G), str(mr))
        tmp = w.op(f"alloca [{mr * COLS + COLS} x i32], align 64")  # + a row: offset reads
        v0, v1 = b["v0"], b["v1"]
        nulls = {p: w.op(f"icmp eq ptr %{p}, null") for p in ("trow", "qrow", "q")}
        requant = ", ".join(
            f"float {w.op(f'sitofp i64 {p} to float')}" for p in ("%qzp", "%qlo", "%qhi")
        )
        with w.loop("ir", "0", "%M", str(mr)) as ir, w.loop("jv", v0, v1, str(COLS)) as jv:
            m_here = w.min(str(mr), w.sub("%M", ir))
            panel = w.op(f"sdiv i64 {w.add('%arow0', ir)}, {mr}")
            ap = w.gep("%a", w.mul(panel, panel_words), "i32")
            trow = w.gep("%trow", ir, "i32")
            trow = w.op(f"select i1 {nulls['trow']}, ptr @xr_izeros, ptr {trow}")
            qrow = w.gep("%qrow", ir)
            qrow = w.op(f"select i1 {nulls['qrow']}, ptr @xr_iones, ptr {qrow}")
            qpanel = w.gep("%q", w.mul(ir, "%ldc"), "i8")
            in_tile = nulls["q"] if REGISTER_EPILOGUE else "true"
            qpanel = w.op(f"select i1 {in_tile}, ptr null, ptr {qpanel}")
            w.do(
                f"call void @xr_vdirect_tile(ptr {ap}, ptr {buf}, i64 {w.sub(jv, base)}, "
                f"i64 {plane}, ptr {offs}, i64 {w.mul(KH, KW)}, i64 {Wq}, i64 {G}, ptr {tmp}, "
                f"ptr {qpanel}, i64 %ldc, ptr {trow}, ptr {qrow}, i64 {m_here}, i64 {jv}, "
                f"i64 {OW}, i64 {j0}, i64 {j1}, {requant})"
            )

            with w.if_(in_tile):  # the i32 C (or bytes) from t, run by run of valid columns
                args = (tmp, ir, m_here, trow, qrow, nulls["q"], requant)
                edge_runs(w, jv, COLS, Wq, OW, j0, j1, *args)
        w.do(f"call void @free(ptr {buf})")


def _band(w: Writer, g: dict[str, str], x: str, j0: str, j1: str) -> tuple[dict, str, str]:
    """amx_conv.band_buffer's band of the output pixels [j0, j1) in words of 4 channels,
    the channel words G per tap and the table of tap offsets."""
    b = band_buffer(w, g, x, j0, j1, 4)
    return b, w.op(f"sdiv i64 {b['Cp']}, 4"), _tap_offsets(w, g, b["Wq"], b["PQ"])


# %ldc: the row stride (pixels) of C and Q, or with %cm the channel stride: channel-major
PIXEL_PARAMS = [("ptr", "%bp"), ("ptr", "%buf"), ("ptr", "%pos"), ("i64", "%plane"),
                ("ptr", "%offs"), ("i64", "%taps"), ("i64", "%G"),
                ("ptr", "%c"), ("ptr", "%q"), ("i64", "%ldc"), ("i1", "%cm"),
                ("ptr", "%tcol"), ("ptr", "%qcol"), ("i64", "%mrows"), ("i64", "%ncols"),
                ("float", "%qzp"), ("float", "%qlo"), ("float", "%qhi")]  # fmt: skip
B64 = "<64 x i8>"


def _channel_major_bytes(w: Writer, rows: list[str]) -> None:
    """Store the tile's bytes (`rows`: each pixel's <32 x i8>, at most 8 pixels) channel by
    channel: channel c's pixels [0, mrows) at %q + c %ldc, for c < ncols. Pixels two to a
    <64 x i8>, transposed eight channels at a time by two-source byte shuffles (VBMI's
    vpermt2b) and a blend; each channel one masked 8-byte store."""
    zero = "zeroinitializer"
    rows = rows + [zero] * (8 - len(rows))
    pairs = [concat(w, [rows[2 * k], rows[2 * k + 1]], 32, "i8") for k in range(4)]
    mask = lane_range(w, "0", "%mrows", 8)
    for g in range(4):  # channels 8g .. 8g + 7, byte c * 8 + p of `both`
        # pixel p's channel 8g + c in its pair of pairs
        def source(p: int, c: int, g: int = g) -> int:
            return (p % 4 // 2) * 64 + (p % 2) * 32 + 8 * g + c

        low, high = (
            ", ".join(
                f"i32 {source(p, c)}" if (p < 4) == lower else "i32 poison"
                for c in range(8)
                for p in range(8)
            )
            for lower in (True, False)
        )
        a = w.op(f"shufflevector {B64} {pairs[0]}, {B64} {pairs[1]}, <64 x i32> <{low}>")
        b = w.op(f"shufflevector {B64} {pairs[2]}, {B64} {pairs[3]}, <64 x i32> <{high}>")
        pick = ", ".join(f"i32 {o if o % 8 < 4 else 64 + o}" for o in range(64))
        both = w.op(f"shufflevector {B64} {a}, {B64} {b}, <64 x i32> <{pick}>")
        for c in range(8):
            with w.if_(w.op(f"icmp slt i64 {8 * g + c}, %ncols")):
                lanes = ", ".join(f"i32 {8 * c + p}" for p in range(8))
                piece = w.op(f"shufflevector {B64} {both}, {B64} poison, <8 x i32> <{lanes}>")
                at = w.gep("%q", w.mul(str(8 * g + c), "%ldc"), "i8")
                w.do(
                    f"call void @llvm.masked.store.v8i8.p0(<8 x i8> {piece}, ptr {at}, i32 1, <8 x i1> {mask})"
                )


def _channel_major_words(w: Writer, accs: list[list[str]]) -> None:
    """Store the tile's i32 values (`accs`: each pixel's two vectors of 16 channels)
    channel by channel: channel c's pixels [0, mrows) at %c + c %ldc, for c < ncols
    (through a scratch tile, value by value: a rare path, small code)."""
    tmp = w.alloca(f"[{len(accs) * COLS} x i32]", "words")
    for r, halves in enumerate(accs):
        for h, vec in enumerate(halves):
            w.do(f"store {V} {vec}, ptr {w.gep(tmp, str(r * COLS + 16 * h), 'i32')}, align 64")
    with w.loop("c", "0", "%ncols") as c, w.loop("r", "0", "%mrows") as r:
        x = w.op(f"load i32, ptr {w.gep(tmp, w.add(w.mul(r, str(COLS)), c), 'i32')}")
        w.do(f"store i32 {x}, ptr {w.gep('%c', w.add(w.mul(c, '%ldc'), r), 'i32')}, align 4")


def pixel_tile(w: Writer, mr: int, requantize: Callable[[Writer, str, str, int], str]) -> None:
    """xr_vdirect_ptile: an mr-pixel x 32-channel tile of a pixel-major convolution:
    pixel r's words read from the band at its virtual column pos[r] (plus the tap's
    offset and g planes), broadcast, times the weight panel `bp` ([tap, g][32 channels]
    words), over every tap and channel word; then tcol added and, with %q, requantized by
    qcol into Q's bytes (as igemm's micro-kernel does, its trow zeros and qrow ones), else
    stored as i32 into C: rows below mrows, columns below ncols."""
    with w.function("void", "@xr_vdirect_ptile", PIXEL_PARAMS):
        rows = [
            w.gep("%buf", w.op(f"load i64, ptr {w.gep('%pos', str(r), 'i64')}"), "i32")
            for r in range(mr)
        ]

        def step(tap: str, off: str, g: str) -> tuple[list[str], list[str]]:
            at = w.add(off, w.mul(g, "%plane"))
            bp = w.gep("%bp", w.mul(w.add(w.mul(tap, "%G"), g), str(COLS)), "i32")
            return [_word(w, w.gep(rows[r], at, "i32")) for r in range(mr)], _vectors(w, bp)

        accs = _products(w, mr, step, words_are_data=True)
        masks = [lane_range(w, "0", w.sub("%ncols", str(16 * h)), 16) for h in range(2)]
        fv = "<16 x float>"
        tcol, qcol = [], []
        for h in range(2):
            t_at, q_at = w.gep("%tcol", str(16 * h), "i32"), w.gep("%qcol", str(16 * h))
            tcol.append(w.op(
                f"call {V} @llvm.masked.load.v16i32.p0(ptr {t_at}, i32 4, <16 x i1> {masks[h]}, {V} zeroinitializer)"
            ))  # fmt: skip
            qc = w.op(
                f"call {fv} @llvm.masked.load.v16f32.p0(ptr {q_at}, i32 4, <16 x i1> {masks[h]}, {fv} zeroinitializer)"
            )
            qcol.append(w.op(f"fmul {fv} {splat(w, '1.0', 16, 'float')}, {qc}"))  # (x qrow: ones)
        cm_block, rm_block, done = w.if_else("%cm", "cm")
        w.block(cm_block)  # channel-major
        sums = [[w.op(f"add {V} {w.get(accs[r][h])}, {tcol[h]}") for h in range(2)]
                for r in range(mr)]  # fmt: skip
        words, byte_block, cm_done = w.if_else(w.op("icmp eq ptr %q, null"), "words")
        w.block(words)
        _channel_major_words(w, sums)
        w.br(cm_done)
        w.block(byte_block)
        rows = [
            concat(w, [requantize(w, sums[r][h], qcol[h], 16) for h in range(2)], 16, "i8")
            for r in range(mr)
        ]
        _channel_major_bytes(w, rows)
        w.br(cm_done)
        w.block(cm_done)
        w.br(done)
        w.block(rm_block)
        plain, quant, rm_done = w.if_else(w.op("icmp eq ptr %q, null"), "plain")
        for block, to_bytes in ((plain, False), (quant, True)):
            w.block(block)
            for r in range(mr):
                with w.if_(w.op(f"icmp slt i64 {r}, %mrows")):
                    for h in range(2):  # (+ trow, zeros, as the micro-kernel adds it)
                        x = w.op(
                            f"add {V} {w.op(f'add {V} {w.get(accs[r][h])}, zeroinitializer')}, {tcol[h]}"
                        )
                        at = w.add(w.mul(str(r), "%ldc"), str(16 * h))
                        if to_bytes:
                            y = requantize(w, x, qcol[h], 16)
                            w.do(
                                f"call void @llvm.masked.store.v16i8.p0(<16 x i8> {y}, ptr {w.gep('%q', at, 'i8')}, i32 1, <16 x i1> {masks[h]})"
                            )
                        else:
                            w.do(
                                f"call void @llvm.masked.store.v16i32.p0({V} {x}, ptr {w.gep('%c', at, 'i32')}, i32 4, <16 x i1> {masks[h]})"
                            )
            w.br(rm_done)
        w.block(rm_done)
        w.br(done)
        w.block(done)


def pixel_serial(w: Writer, params: list[tuple[str, str]], mr: int) -> None:
    """xr_vdirect_a (igemm's parameters): a pixel-major convolution's output pixels
    [arow0, arow0 + M) (rows) x channels [bcol0, bcol0 + N) of the weight prepacked in
    panels of 32 channels (columns; C, Q and the column vectors already offset to them, as
    the serial parts get them), its data read from the band of those pixels' rows."""
    with w.function("void", "@xr_vdirect_a", params):
        g, j0, j1 = load_geometry(w), "%arow0", w.add("%arow0", "%M")
        b, G, offs = _band(w, g, "%a", j0, j1)
        KH, KW, OW, Wq = g["KH"], g["KW"], g["OW"], b["Wq"]
        panel_words = w.mul(w.mul(w.mul(KH, KW), G), str(COLS))
        pos = w.op(f"alloca [{mr} x i64], align 64")
        nulls = {p: w.op(f"icmp eq ptr %{p}, null") for p in ("tcol", "qcol", "q")}
        requant = ", ".join(
            f"float {w.op(f'sitofp i64 {p} to float')}" for p in ("%qzp", "%qlo", "%qhi")
        )
        # geometry value 14: C and Q channel-major ([channels][OH x OW], GemmSpec.pixel_major),
        # C and Q then point at the call's first pixel and channel as a row-major [M, ldc]
        # would (the threads' slices): their element (0, 0) is at C - (arow0 ldc + bcol0)
        cm_flag = w.op(f"load i64, ptr {w.gep('%geo', '14', 'i64')}")
        cm = w.op(f"icmp ne i64 {cm_flag}, 0")
        P = w.mul(g["OH"], OW)
        first = w.add(w.mul("%arow0", "%ldc"), "%bcol0")
        with w.loop("jr", "0", "%N", str(COLS)) as jr:
            panel = w.op(f"sdiv i64 {w.add('%bcol0', jr)}, {COLS}")
            bp = w.gep("%b", w.mul(panel, panel_words), "i32")
            ncols = w.min(str(COLS), w.sub("%N", jr))
            tcol = w.gep("%tcol", jr, "i32")
            tcol = w.op(f"select i1 {nulls['tcol']}, ptr @xr_izeros, ptr {tcol}")
            qcol = w.gep("%qcol", jr)
            qcol = w.op(f"select i1 {nulls['qcol']}, ptr @xr_iones, ptr {qcol}")
            with w.loop("ir", "0", "%M", str(mr)) as ir:
                m_here = w.min(str(mr), w.sub("%M", ir))
                for r in range(mr):  # pixel (oy, ox) at virtual column oy Wq + ox (the last
                    # pixel again for rows past M)
                    p = w.add(j0, w.add(ir, w.min(str(r), w.sub(m_here, "1"))))
                    oy, ox = w.op(f"sdiv i64 {p}, {OW}"), w.op(f"srem i64 {p}, {OW}")
                    at = w.sub(w.add(w.mul(oy, Wq), ox), b["base"])
                    w.do(f"store i64 {at}, ptr {w.gep(pos, str(r), 'i64')}")
                rm_at = w.add(w.mul(ir, "%ldc"), jr)
                cm_at = w.sub(w.add(w.mul(w.add("%bcol0", jr), P), w.add("%arow0", ir)), first)
                at = w.op(f"select i1 {cm}, i64 {cm_at}, i64 {rm_at}")
                ld = w.op(f"select i1 {cm}, i64 {P}, i64 %ldc")
                q = w.op(f"select i1 {nulls['q']}, ptr null, ptr {w.gep('%q', at, 'i8')}")
                w.do(
                    f"call void @xr_vdirect_ptile(ptr {bp}, ptr {b['buf']}, ptr {pos}, "
                    f"i64 {b['plane']}, ptr {offs}, i64 {w.mul(KH, KW)}, i64 {G}, "
                    f"ptr {w.gep('%c', at, 'i32')}, ptr {q}, i64 {ld}, i1 {cm}, "
                    f"ptr {tcol}, ptr {qcol}, i64 {m_here}, i64 {ncols}, {requant})"
                )
        w.do(f"call void @free(ptr {b['buf']})")
