"""The 8-bit matrix-product runtime: exact i32 products of u8 data and s8 weights, written
as LLVM IR text and linked into every compiled model that calls it (qnn-int-products).

    void xr_igemm_<u>(i64 M, i64 N, i64 K,
                      ptr A, i64 rsa, i64 csa,     A[i, k] = A[i*rsa + k*csa]  (bytes)
                      ptr B, i64 rsb, i64 csb,     B[k, j] = B[k*rsb + j*csb]  (bytes)
                      ptr C, i64 ldc,              C[i, j] = C[i*ldc + j]      (i32, written once)
                      ptr trow, ptr tcol,          i32 added per row / per column, or null
                      i64 apk, i64 mpad, i64 arow0,  A prepacked (apk != 0)
                      i64 bpk, i64 npad, i64 bcol0,  B prepacked
                      i64 flip,                    0x80: the data's bytes are s8 (xor makes u8)
                      ptr Q, ptr qrow, ptr qcol,   requantized bytes, or Q null: C alone
                      i64 qzp, i64 qlo, i64 qhi,
                      ptr geo)                     B: a convolution's implicit im2col matrix

    C = A @ B + trow[i] + tcol[j], exactly (i32; K <= 65,536 keeps every sum in range)

With Q, the last K block writes Q[i*ldc + j] = clamp(roundeven(f32(C[i, j]) * m) + qzp,
qlo, qhi) as bytes instead of C (m = qrow[i] or qcol[j], f32; the null one reads as 1.0):
qnn.requantize rounding half to even, as qnn-legalize writes it, in the tile's registers.
C then holds only the partial sums of earlier K blocks (untouched when K fits in one).

With `geo` (not null) the data operand is a convolution's im2col matrix, made one block at
a time from the input (padded already) it points at (kernels/iconv_pack.py): in xr_igemm_b
B itself, from column bcol0 on (rsb and csb unused); in xr_igemm_a A, its transpose
(pixels as rows, from row arow0 on; rsa and csa unused): a convolution of few pixels,
pixel-major (qnn-int-products).

`<u>` names the unsigned operand, the data: `a` for dense products (A is the data, B the
weight), `b` for convolutions (A is the weight, B the im2col columns). The data's bytes are
read as u8 after `xor flip`; the weight is s8, packed at build time.

Operands are packed in groups of G consecutive k (a 32-bit word per row and group): with
VNNI (G = 4, bytes) one `vpdpbusd` multiplies a word of 4 u8 by 4 s8 and adds the four
products into each i32 lane; otherwise (G = 2, i16 words) the multiply-add of pairs is
written as widening multiplies LLVM matches to `vpmaddwd` (or `vpdpwssd`). Blocking is the
f32 GEMM's (lowering/kernels/gemm.py): KC x NC blocks of B in NR-column panels, MC x KC
blocks of A in 6-row panels, a 6 x NR register tile (12 vector accumulators of VW i32
lanes, NR = 2 VW), edge tiles through a scratch tile (those of at most VW columns on
xr_iukr_half_<u>, half the products: SqueezeNet int8's last 1x1 on 13 x 13 = 5 x 32 + 9
pixels 231 -> 213 us, the model 1.295 -> 1.255 and 1.293 -> 1.265 ms, same-process A/B).
A packed block holds, per panel, kcg words of `width` rows: word (panel, g, row) at
(panel * kcg + g) * width + row; prepacked operands hold the K blocks one after another
(block at word pg * padded rows), as lowering/kernels/prepack.py writes them.
"""

from __future__ import annotations

from collections.abc import Callable

from xrelay.lowering.kernels import amx, amx_conv, vnni_conv
from xrelay.lowering.kernels.gemm import (
    MC,
    NC,
    PARALLEL_MIN,
    k_block,
    offset_or_null,
    split_entry,
)
from xrelay.lowering.kernels.iconv_pack import HEADER as CONV_HEADER
from xrelay.lowering.kernels.iconv_pack import b_block, im2col
from xrelay.lowering.kernels.irtext import Writer, concat
from xrelay.lowering.kernels.prepack import IKC

MR = 6  # the 8-bit micro-kernel's rows (8, as the f32 one has with AVX-512, was slower
# on ResNet-50 int8: 16.4 -> 17.8 ms)
HALF_EDGE = True  # edge tiles of at most VW columns on xr_iukr_half_<u> (A/B switch)
GROUPS = (2, 4)  # k values per 32-bit word: i16 pairs (vpmaddwd), or u8/s8 quads (VNNI)

PARAMS = [
    ("i64", "%M"), ("i64", "%N"), ("i64", "%K"),
    ("ptr", "%a"), ("i64", "%rsa"), ("i64", "%csa"),
    ("ptr", "%b"), ("i64", "%rsb"), ("i64", "%csb"),
    ("ptr", "%c"), ("i64", "%ldc"),
    ("ptr", "%trow"), ("ptr", "%tcol"),
    ("i64", "%apk"), ("i64", "%mpad"), ("i64", "%arow0"),
    ("i64", "%bpk"), ("i64", "%npad"), ("i64", "%bcol0"),
    ("i64", "%flip"),
    ("ptr", "%q"), ("ptr", "%qrow"), ("ptr", "%qcol"),
    ("i64", "%qzp"), ("i64", "%qlo"), ("i64", "%qhi"),
    ("ptr", "%geo"),
]  # fmt: skip

HEADER = """
declare <16 x i32> @llvm.x86.avx512.vpdpbusd.512(<16 x i32>, <16 x i32>, <16 x i32>)
declare float @llvm.roundeven.f32(float)
declare <8 x float> @llvm.roundeven.v8f32(<8 x float>)
declare <16 x float> @llvm.roundeven.v16f32(<16 x float>)
declare <8 x i32> @llvm.masked.load.v8i32.p0(ptr, i32, <8 x i1>, <8 x i32>)
declare <16 x i32> @llvm.masked.load.v16i32.p0(ptr, i32, <16 x i1>, <16 x i32>)
declare void @llvm.masked.store.v8i32.p0(<8 x i32>, ptr, i32, <8 x i1>)
declare void @llvm.masked.store.v16i32.p0(<16 x i32>, ptr, i32, <16 x i1>)
declare void @llvm.masked.store.v8i8.p0(<8 x i8>, ptr, i32, <8 x i1>)
declare void @llvm.masked.store.v16i8.p0(<16 x i8>, ptr, i32, <16 x i1>)
@xr_izeros = internal constant [32 x i32] zeroinitializer, align 64
@xr_iones = internal constant [32 x float] [REPLACE_ONES], align 64
""".replace("REPLACE_ONES", ", ".join(["float 1.0"] * 32))

REQUANT = [("float", "%qzp"), ("float", "%qlo"), ("float", "%qhi")]  # as the tiles take them


def iv(vw: int) -> str:
    return f"<{vw} x i32>"


def splat_i32(w: Writer, scalar: str, vw: int) -> str:
    v = w.op(f"insertelement {iv(vw)} poison, i32 {scalar}, i64 0")
    return w.op(f"shufflevector {iv(vw)} {v}, {iv(vw)} poison, <{vw} x i32> zeroinitializer")


def splat_f32(w: Writer, scalar: str, vw: int) -> str:
    fv = f"<{vw} x float>"
    v = w.op(f"insertelement {fv} poison, float {scalar}, i64 0")
    return w.op(f"shufflevector {fv} {v}, {fv} poison, <{vw} x i32> zeroinitializer")


def multiply_add(w: Writer, acc: str, a: str, b: str, vw: int, group: int, unsigned: str) -> str:
    """acc + the dot products of the G-element words of a and b, lane by lane. `unsigned`
    ("a" or "b") is the operand holding u8 (VNNI's first multiplicand)."""
    v = iv(vw)
    if group == 4:
        u, s = (a, b) if unsigned == "a" else (b, a)
        return w.op(f"call {v} @llvm.x86.avx512.vpdpbusd.512({v} {acc}, {v} {u}, {v} {s})")
    h, wide = f"<{2 * vw} x i16>", f"<{2 * vw} x i32>"
    x = w.op(f"sext {h} {w.op(f'bitcast {v} {a} to {h}')} to {wide}")
    y = w.op(f"sext {h} {w.op(f'bitcast {v} {b} to {h}')} to {wide}")
    p = w.op(f"mul {wide} {x}, {y}")
    even = ", ".join(f"i32 {2 * i}" for i in range(vw))
    odd = ", ".join(f"i32 {2 * i + 1}" for i in range(vw))
    e = w.op(f"shufflevector {wide} {p}, {wide} poison, <{vw} x i32> <{even}>")
    o = w.op(f"shufflevector {wide} {p}, {wide} poison, <{vw} x i32> <{odd}>")
    return w.op(f"add {v} {acc}, {w.op(f'add {v} {e}, {o}')}")


def requantize(w: Writer, acc: str, m: str, n: int) -> str:
    """The bytes of accumulators `acc` (i32, `n` lanes or a scalar for n = 0) times the
    multipliers `m` (f32 of the same shape), rounded half to even, plus %qzp, clamped to
    [%qlo, %qhi] (f32 values of the tile function's parameters)."""
    f, i, b, c = (f"<{n} x {e}>" if n else e for e in ("float", "i32", "i8", "i1"))
    rnd = f"@llvm.roundeven.v{n}f32" if n else "@llvm.roundeven.f32"

    def splat(x: str) -> str:
        if not n:
            return x
        v = w.op(f"insertelement {f} poison, float {x}, i64 0")
        return w.op(f"shufflevector {f} {v}, {f} poison, <{n} x i32> zeroinitializer")

    x = w.op(f"fmul {f} {w.op(f'sitofp {i} {acc} to {f}')}, {m}")
    x = w.op(f"fadd {f} {w.op(f'call {f} {rnd}({f} {x})')}, {splat('%qzp')}")
    lo, hi = splat("%qlo"), splat("%qhi")
    x = w.op(f"select {c} {w.op(f'fcmp olt {f} {x}, {lo}')}, {f} {lo}, {f} {x}")
    x = w.op(f"select {c} {w.op(f'fcmp ogt {f} {x}, {hi}')}, {f} {hi}, {f} {x}")
    return w.op(f"trunc {i} {w.op(f'fptosi {f} {x} to {i}')} to {b}")


def micro_kernel(w: Writer, vw: int, group: int, unsigned: str, halves: int = 2) -> None:
    """xr_iukr_<u>: C[6 x NR] (+)= Ap[kcg words x 6] times Bp[kcg words x NR], then adds
    trow / tcol when %epi != 0; with %q (not null) the tile is requantized into Q's bytes
    (multipliers qrow[r] * qcol[j]: one of them the ones table) instead of stored in C.
    With `halves` 1, xr_iukr_half_<u>: the panel's first VW columns only (an edge tile of
    at most VW columns computes half the products)."""
    nr, v = 2 * vw, iv(vw)
    name = f"@xr_iukr_{unsigned}" if halves == 2 else f"@xr_iukr_half_{unsigned}"
    params = [("i64", "%kcg"), ("ptr", "noalias %ap"), ("ptr", "noalias %bp"), ("ptr", "%c"),
              ("i64", "%ldc"), ("i64", "%acc"), ("i64", "%epi"), ("ptr", "%trow"),
              ("ptr", "%tcol"), ("ptr", "%q"), ("ptr", "%qrow"), ("ptr", "%qcol"),
              *REQUANT]  # fmt: skip
    with w.function("void", name, params):
        accs = [[w.var(v, "zeroinitializer", f"c{r}{j}") for j in range(halves)] for r in range(MR)]
        with w.loop("g", "0", "%kcg") as g:
            bp = w.gep("%bp", w.mul(g, str(nr)), "i32")
            b = [
                w.op(f"load {v}, ptr {w.gep(bp, str(vw * j), 'i32')}, align 4")
                for j in range(halves)
            ]
            ap = w.gep("%ap", w.mul(g, str(MR)), "i32")
            for r in range(MR):
                a = splat_i32(w, w.op(f"load i32, ptr {w.gep(ap, str(r), 'i32')}, align 4"), vw)
                for j in range(halves):
                    cur = w.get(accs[r][j])
                    w.set(accs[r][j], multiply_add(w, cur, a, b[j], vw, group, unsigned))
        rows = [w.gep("%c", w.mul(str(r), "%ldc"), "i32") for r in range(MR)]
        with w.if_(w.op("icmp ne i64 %acc, 0")):
            for r in range(MR):
                for j in range(halves):
                    old = w.op(f"load {v}, ptr {w.gep(rows[r], str(vw * j), 'i32')}, align 4")
                    w.set(accs[r][j], w.op(f"add {v} {w.get(accs[r][j])}, {old}"))
        with w.if_(w.op("icmp ne i64 %epi, 0")):
            tcol = [
                w.op(f"load {v}, ptr {w.gep('%tcol', str(vw * j), 'i32')}, align 4")
                for j in range(halves)
            ]
            for r in range(MR):
                t = splat_i32(w, w.op(f"load i32, ptr {w.gep('%trow', str(r), 'i32')}"), vw)
                for j in range(halves):
                    x = w.op(f"add {v} {w.get(accs[r][j])}, {t}")
                    w.set(accs[r][j], w.op(f"add {v} {x}, {tcol[j]}"))
        plain, quant, join = w.if_else(w.op("icmp eq ptr %q, null"), "store")
        w.block(plain)
        for r in range(MR):
            for j in range(halves):
                ptr = w.gep(rows[r], str(vw * j), "i32")
                w.do(f"store {v} {w.get(accs[r][j])}, ptr {ptr}, align 4")
        w.br(join)
        w.block(quant)
        fv = f"<{vw} x float>"
        qcol = [
            w.op(f"load {fv}, ptr {w.gep('%qcol', str(vw * j))}, align 4") for j in range(halves)
        ]
        for r in range(MR):
            qr = splat_f32(w, w.op(f"load float, ptr {w.gep('%qrow', str(r))}"), vw)
            out = w.gep("%q", w.mul(str(r), "%ldc"), "i8")
            for j in range(halves):
                m = w.op(f"fmul {fv} {qr}, {qcol[j]}")
                bytes_ = requantize(w, w.get(accs[r][j]), m, vw)
                w.do(f"store <{vw} x i8> {bytes_}, ptr {w.gep(out, str(vw * j), 'i8')}, align 1")
        w.br(join)
        w.block(join)


def edge_tile(w: Writer, nr: int) -> None:
    """xr_iedge: the valid mr x nr part of a 6 x NR scratch tile into C (adding C's partial
    sums with %acc, trow / tcol with %epi), or requantized into Q's bytes with %q: vectors
    masked to the valid columns, the micro-kernel's operations in its order."""
    params = [("ptr", "%t"), ("ptr", "%c"), ("i64", "%ldc"), ("i64", "%mr"), ("i64", "%nr"),
              ("i64", "%acc"), ("i64", "%epi"), ("ptr", "%trow"), ("ptr", "%tcol"),
              ("ptr", "%q"), ("ptr", "%qrow"), ("ptr", "%qcol"), *REQUANT]  # fmt: skip
    vw = nr // 2
    v, fv, m = iv(vw), f"<{vw} x float>", f"<{vw} x i1>"

    def masked_load(ptr: str, mask: str, kind: str) -> str:
        t, e = (v, "i32") if kind == "i" else (fv, "f32")
        return w.op(
            f"call {t} @llvm.masked.load.v{vw}{e}.p0(ptr {ptr}, i32 4, {m} {mask}, {t} zeroinitializer)"
        )

    with w.function("void", "@xr_iedge", params):
        acc = w.op("icmp ne i64 %acc, 0")
        epi = w.op("icmp ne i64 %epi, 0")
        plain_store = w.op("icmp eq ptr %q, null")
        limit = splat_i32(w, w.op("trunc i64 %nr to i32"), vw)
        masks = []
        for h in range(2):  # the columns of each half that are inside C
            lanes = "<" + ", ".join(f"i32 {h * vw + k}" for k in range(vw)) + ">"
            masks.append(w.op(f"icmp slt {v} {lanes}, {limit}"))
        with w.loop("i", "0", "%mr") as i:
            row = w.gep("%c", w.mul(i, "%ldc"), "i32")
            qrow = w.gep("%q", w.mul(i, "%ldc"), "i8")
            tr = splat_i32(w, w.op(f"load i32, ptr {w.gep('%trow', i, 'i32')}"), vw)
            qr = splat_f32(w, w.op(f"load float, ptr {w.gep('%qrow', i)}"), vw)
            for h in range(2):
                o, mask = str(h * vw), masks[h]
                tile = w.gep("%t", w.add(w.mul(i, str(nr)), o), "i32")
                x = w.var(v, w.op(f"load {v}, ptr {tile}, align 4"))
                with w.if_(acc):
                    old = masked_load(w.gep(row, o, "i32"), mask, "i")
                    w.set(x, w.op(f"add {v} {w.get(x)}, {old}"))
                with w.if_(epi):
                    tc = masked_load(w.gep("%tcol", o, "i32"), mask, "i")
                    w.set(x, w.op(f"add {v} {w.op(f'add {v} {w.get(x)}, {tr}')}, {tc}"))
                plain, requant, join = w.if_else(plain_store, "store")
                w.block(plain)
                w.do(
                    f"call void @llvm.masked.store.v{vw}i32.p0({v} {w.get(x)}, ptr {w.gep(row, o, 'i32')}, i32 4, {m} {mask})"
                )
                w.br(join)
                w.block(requant)
                mult = w.op(f"fmul {fv} {qr}, {masked_load(w.gep('%qcol', o), mask, 'f')}")
                bytes_ = requantize(w, w.get(x), mult, vw)
                w.do(
                    f"call void @llvm.masked.store.v{vw}i8.p0(<{vw} x i8> {bytes_}, ptr {w.gep(qrow, o, 'i8')}, i32 1, {m} {mask})"
                )
                w.br(join)
                w.block(join)


def element(group: int) -> str:
    return "i8" if group == 4 else "i16"


FLIP8 = "%flip8"  # in a pack function: the flip as an i8


def load_data(w: Writer, src: str, n: int, elem: str) -> str:
    """n data bytes at src as u8 (xor the flip), widened to i16 for `elem` i16."""
    v8 = f"<{n} x i8>"
    x = w.op(f"load {v8}, ptr {src}, align 1")
    f = w.op(f"insertelement {v8} poison, i8 {FLIP8}, i64 0")
    f = w.op(f"shufflevector {v8} {f}, {v8} poison, <{n} x i32> zeroinitializer")
    x = w.op(f"xor {v8} {x}, {f}")
    return w.op(f"zext {v8} {x} to <{n} x i16>") if elem == "i16" else x


def pack(w: Writer, name: str, width: int, group: int) -> None:
    """Pack rows [0, rows) x k [k0, k0 + kcg * G) of data bytes (element (r, k) at
    src[r*rs + k*cs], read as u8 after xor flip) into panels of `width` rows: word (panel,
    g, row) holds the G values of k0 + g*G ... (zero past the last row or past K; i16 for
    G = 2). A full panel whose rows are contiguous (rs == 1) or whose k is (cs == 1) is
    copied with vectors; the rest value by value."""
    elem = element(group)
    params = [("ptr", "%src"), ("i64", "%rs"), ("i64", "%cs"), ("i64", "%rows"),
              ("i64", "%k0"), ("i64", "%kcg"), ("i64", "%K"), ("ptr", "%dst"),
              ("i64", "%flip")]  # fmt: skip
    with w.function("void", name, params):
        w.do(f"{FLIP8} = trunc i64 %flip to i8")
        k_end = w.add("%k0", w.mul("%kcg", str(group)))
        full_k = w.op(f"icmp sle i64 {k_end}, %K")
        with w.loop("p", "0", "%rows", str(width)) as p:
            dst = w.gep("%dst", w.mul(p, "%kcg"), "i32")
            full_rows = w.op(f"icmp sle i64 {w.add(p, str(width))}, %rows")
            full = w.op(f"and i1 {full_rows}, {full_k}")
            rows_unit = w.op(f"and i1 {full_rows}, {w.op('icmp eq i64 %rs, 1')}")
            k_unit = w.op(f"and i1 {full}, {w.op('icmp eq i64 %cs, 1')}")
            col, other, join = w.if_else(rows_unit, "cols")
            w.block(col)  # G loads of `width` contiguous rows' bytes, interleaved; the
            # groups that reach past K (K blocks rounded up: AMX) read zeros there
            n = group * width
            tn, vn = f"<{n} x {elem}>", f"<{width} x {elem}>"
            mask = ", ".join(f"i32 {(i % group) * width + i // group}" for i in range(n))
            inside = w.op(f"sdiv i64 {w.sub('%K', '%k0')}, {group}")  # groups wholly inside K
            inside = w.min("%kcg", w.op(f"call i64 @llvm.smax.i64(i64 {inside}, i64 0)"))

            def store_group(g: str, parts: list[str]) -> None:
                both = concat(w, parts, width, elem)
                inter = w.op(f"shufflevector {tn} {both}, {tn} poison, <{n} x i32> <{mask}>")
                w.do(f"store {tn} {inter}, ptr {w.gep(dst, w.mul(g, str(width)), 'i32')}, align 4")

            def row_at(k: str) -> str:
                return w.gep("%src", w.add(p, w.mul(k, "%cs")), "i8")

            with w.loop("g", "0", inside) as g:
                k = w.add("%k0", w.mul(g, str(group)))
                store_group(g, [load_data(w, row_at(w.add(k, str(t))), width, elem)
                                for t in range(group)])  # fmt: skip
            with w.loop("g", inside, "%kcg") as g:
                k = w.add("%k0", w.mul(g, str(group)))
                parts = []
                for t in range(group):
                    part = w.var(vn, "zeroinitializer", "part")
                    with w.if_(w.op(f"icmp slt i64 {w.add(k, str(t))}, %K")):
                        w.set(part, load_data(w, row_at(w.add(k, str(t))), width, elem))
                    parts.append(w.get(part))
                store_group(g, parts)
            w.br(join)
            w.block(other)
            kpath, slow, kjoin = w.if_else(k_unit, "ks")
            w.block(kpath)  # a word of G contiguous bytes per row and group
            with w.loop("q", "0", str(width)) as q:
                row = w.gep("%src", w.mul(w.add(p, q), "%rs"), "i8")
                with w.loop("g", "0", "%kcg") as g:
                    src = w.gep(row, w.add("%k0", w.mul(g, str(group))), "i8")
                    x = load_data(w, src, group, elem)
                    word = w.gep(dst, w.add(w.mul(g, str(width)), q), "i32")
                    w.do(f"store <{group} x {elem}> {x}, ptr {word}, align 4")
            w.br(kjoin)
            w.block(slow)  # value by value, zero outside
            with w.loop("g", "0", "%kcg") as g, w.loop("q", "0", str(width)) as q:
                r = w.add(p, q)
                inside_r = w.op(f"icmp slt i64 {r}, %rows")
                for t in range(group):
                    k = w.add("%k0", w.add(w.mul(g, str(group)), str(t)))
                    inside = w.op(f"and i1 {inside_r}, {w.op(f'icmp slt i64 {k}, %K')}")
                    out = w.gep(
                        dst, w.add(w.mul(w.add(w.mul(g, str(width)), q), str(group)), str(t)), elem
                    )
                    value = w.var(elem, "0")
                    with w.if_(inside):
                        src = w.gep("%src", w.add(w.mul(r, "%rs"), w.mul(k, "%cs")), "i8")
                        x = w.op(f"xor i8 {w.op(f'load i8, ptr {src}')}, {FLIP8}")
                        if elem == "i16":
                            x = w.op(f"zext i8 {x} to i16")
                        w.set(value, x)
                    w.do(f"store {elem} {w.get(value)}, ptr {out}")
            w.br(kjoin)
            w.block(kjoin)
            w.br(join)
            w.block(join)


def gemm_serial(w: Writer, nr: int, group: int, unsigned: str, name: str = "") -> None:
    kcg_max = IKC // group
    with w.function("void", name or f"@xr_igemm_serial_{unsigned}", PARAMS):
        ap = w.op(f"call ptr @aligned_alloc(i64 64, i64 {MC * kcg_max * 4 + 64})")
        bp = w.op(f"call ptr @aligned_alloc(i64 64, i64 {NC * kcg_max * 4 + nr * kcg_max * 4})")
        tmp = w.op(f"alloca [{MR * nr} x i32], align 64")
        kg_all = w.op(f"sdiv i64 {w.add('%K', str(group - 1))}, {group}")
        zeros = "@xr_izeros"
        trow_null = w.op("icmp eq ptr %trow, null")
        tcol_null = w.op("icmp eq ptr %tcol, null")
        qrow_null = w.op("icmp eq ptr %qrow, null")
        qcol_null = w.op("icmp eq ptr %qcol, null")
        q_null = w.op("icmp eq ptr %q, null")
        requant = ", ".join(
            f"float {w.op(f'sitofp i64 {p} to float')}" for p in ("%qzp", "%qlo", "%qhi")
        )
        conv = w.op("icmp ne ptr %geo, null")
        # a convolution's block of columns (IKC x NC bytes) before packing
        block = w.var("ptr", "null", "cols")
        with w.if_(conv):
            w.set(block, w.op(f"call ptr @aligned_alloc(i64 64, i64 {IKC * NC})"))
        cols = w.get(block)
        # `geo` describes the data: B in xr_igemm_b (a convolution's columns), A in
        # xr_igemm_a (its pixels as rows: pixel-major)
        b_conv = conv if unsigned == "b" else "false"
        plain = w.op(f"and i1 {w.op('icmp eq i64 %bpk, 0')}, {w.op(f'xor i1 {b_conv}, true')}")
        with w.loop("jc", "0", "%N", str(NC)) as jc:
            nc = w.min(str(NC), w.sub("%N", jc))
            kcb = k_block(w, kg_all, kcg_max)  # words (as prepack.k_block packs them)
            with w.loop("pg", "0", kg_all, kcb) as pg:
                kcg = w.min(kcb, w.sub(kg_all, pg))
                k0 = w.mul(pg, str(group))
                acc = w.op(f"zext i1 {w.op(f'icmp ne i64 {pg}, 0')} to i64")
                epi = w.op(f"zext i1 {w.op(f'icmp sge i64 {w.add(pg, kcg)}, {kg_all}')} to i64")
                rows = w.mul(kcg, str(group))
                bblock = b_block(w, jc, nc, pg, k0, rows, kcg, b_conv, plain, cols, bp)
                apk = w.op("icmp ne i64 %apk, 0")
                with w.loop("ic", "0", "%M", str(MC)) as ic:
                    mc = w.min(str(MC), w.sub("%M", ic))
                    a_plain = w.op("icmp eq i64 %apk, 0")
                    if unsigned == "a":  # the data is A: a convolution's pixels, maybe
                        with w.if_(conv):  # implicit im2col: A is B's im2col transposed,
                            # its rows (pixels) arow0 + ic on made as columns, then packed
                            i0 = w.add("%arow0", ic)
                            rows = w.mul(kcg, str(group))
                            w.do(
                                f"call void @xr_iim2col(ptr %a, ptr %geo, i64 {i0}, i64 {k0}, i64 {mc}, i64 {rows}, i64 %K, ptr {cols})"
                            )
                            src = w.gep(cols, w.sub("0", w.mul(k0, mc)), "i8")
                            w.do(
                                f"call void @xr_ipack_a(ptr {src}, i64 1, i64 {mc}, i64 {mc}, i64 {k0}, i64 {kcg}, i64 %K, ptr {ap}, i64 %flip)"
                            )
                        a_plain = w.op(f"and i1 {a_plain}, {w.op(f'xor i1 {conv}, true')}")
                    with w.if_(a_plain):
                        asrc = w.gep("%a", w.mul(ic, "%rsa"), "i8")
                        w.do(
                            f"call void @xr_ipack_a(ptr {asrc}, i64 %rsa, i64 %csa, i64 {mc}, i64 {k0}, i64 {kcg}, i64 %K, ptr {ap}, i64 %flip)"
                        )
                    packed_a = w.gep(
                        "%a", w.add(w.mul(pg, "%mpad"), w.mul(w.add("%arow0", ic), kcg)), "i32"
                    )
                    ablock = w.op(f"select i1 {apk}, ptr {packed_a}, ptr {ap}")
                    with w.loop("jr", "0", nc, str(nr)) as jr:
                        nrv = w.min(str(nr), w.sub(nc, jr))
                        bpp = w.gep(bblock, w.mul(jr, kcg), "i32")
                        with w.loop("ir", "0", mc, str(MR)) as ir:
                            mr = w.min(str(MR), w.sub(mc, ir))
                            app = w.gep(ablock, w.mul(ir, kcg), "i32")
                            i0, j0 = w.add(ic, ir), w.add(jc, jr)
                            ctile = w.gep("%c", w.add(w.mul(i0, "%ldc"), j0), "i32")
                            trow = w.op(
                                f"select i1 {trow_null}, ptr {zeros}, ptr {w.gep('%trow', i0, 'i32')}"
                            )
                            tcol = w.op(
                                f"select i1 {tcol_null}, ptr {zeros}, ptr {w.gep('%tcol', j0, 'i32')}"
                            )
                            # the bytes at the last K block when requantizing, else null
                            not_last = w.op(f"icmp eq i64 {epi}, 0")
                            skip = w.op(f"or i1 {q_null}, {not_last}")
                            qbytes = w.gep("%q", w.add(w.mul(i0, "%ldc"), j0), "i8")
                            qtile = w.op(f"select i1 {skip}, ptr null, ptr {qbytes}")
                            qrow = w.op(
                                f"select i1 {qrow_null}, ptr @xr_iones, ptr {w.gep('%qrow', i0)}"
                            )
                            qcol = w.op(
                                f"select i1 {qcol_null}, ptr @xr_iones, ptr {w.gep('%qcol', j0)}"
                            )
                            quant = f"ptr {qtile}, ptr {qrow}, ptr {qcol}, {requant}"
                            full = w.op(
                                f"and i1 {w.op(f'icmp eq i64 {mr}, {MR}')}, {w.op(f'icmp eq i64 {nrv}, {nr}')}"
                            )
                            then, other, join = w.if_else(full, "full")
                            w.block(then)
                            w.do(
                                f"call void @xr_iukr_{unsigned}(i64 {kcg}, ptr {app}, ptr {bpp}, ptr {ctile}, i64 %ldc, i64 {acc}, i64 {epi}, ptr {trow}, ptr {tcol}, {quant})"
                            )
                            w.br(join)
                            w.block(other)
                            half = w.op(f"icmp sle i64 {nrv}, {nr // 2 if HALF_EDGE else 0}")
                            ukr = w.op(
                                f"select i1 {half}, ptr @xr_iukr_half_{unsigned}, ptr @xr_iukr_{unsigned}"
                            )
                            w.do(
                                f"call void {ukr}(i64 {kcg}, ptr {app}, ptr {bpp}, ptr {tmp}, i64 {nr}, i64 0, i64 0, ptr {zeros}, ptr {zeros}, ptr null, ptr @xr_iones, ptr @xr_iones, {requant})"
                            )
                            w.do(
                                f"call void @xr_iedge(ptr {tmp}, ptr {ctile}, i64 %ldc, i64 {mr}, i64 {nrv}, i64 {acc}, i64 {epi}, ptr {trow}, ptr {tcol}, {quant})"
                            )
                            w.br(join)
                            w.block(join)
        w.do(f"call void @free(ptr {ap})")
        w.do(f"call void @free(ptr {bp})")
        w.do(f"call void @free(ptr {cols})")


def offset_bytes_or_null(w: Writer, ptr: str, index: str) -> str:
    """`ptr` advanced by `index` bytes, or null if it is null."""
    moved = w.gep(ptr, index, "i8")
    return w.op(f"select i1 {w.op(f'icmp eq ptr {ptr}, null')}, ptr null, ptr {moved}")


def _rows(w: Writer, v: dict[str, str], lo: str, count: str) -> dict[str, str]:
    """One thread's rows: A's bytes (unless packed or a convolution's input, which starts
    at arow0), C, Q, the row vectors."""
    geo = w.op(f"icmp ne ptr {v['%geo']}, null")  # A is an input at row arow0 (pixel-major)
    apk = w.op(f"icmp ne i64 {v['%apk']}, 0")
    packed = w.op(f"or i1 {apk}, {geo}")
    moved = w.gep(v["%a"], w.mul(lo, v["%rsa"]), "i8")
    v.update({
        "%M": count, "%a": w.op(f"select i1 {packed}, ptr {v['%a']}, ptr {moved}"),
        "%arow0": w.add(v["%arow0"], lo), "%c": w.gep(v["%c"], w.mul(lo, v["%ldc"]), "i32"),
        "%trow": offset_or_null(w, v["%trow"], lo), "%qrow": offset_or_null(w, v["%qrow"], lo),
        "%q": offset_bytes_or_null(w, v["%q"], w.mul(lo, v["%ldc"])),
    })  # fmt: skip
    return v


def _columns(w: Writer, v: dict[str, str], lo: str, count: str) -> dict[str, str]:
    """One thread's columns: B's bytes (unless packed or a convolution's input, which
    starts at bcol0), C, Q, the column vectors."""
    geo = w.op(f"icmp ne ptr {v['%geo']}, null")
    bpk = w.op(f"icmp ne i64 {v['%bpk']}, 0")
    packed = w.op(f"or i1 {bpk}, {geo}")
    moved = w.gep(v["%b"], w.mul(lo, v["%csb"]), "i8")
    v.update({
        "%N": count, "%b": w.op(f"select i1 {packed}, ptr {v['%b']}, ptr {moved}"),
        "%bcol0": w.add(v["%bcol0"], lo), "%c": w.gep(v["%c"], lo, "i32"),
        "%tcol": offset_or_null(w, v["%tcol"], lo), "%qcol": offset_or_null(w, v["%qcol"], lo),
        "%q": offset_bytes_or_null(w, v["%q"], lo),
    })  # fmt: skip
    return v


def runtime_ir(threads: bool, vw: int, group: int, tiles: bool = False) -> str:
    """`xr_igemm_a` and `xr_igemm_b` for vector width `vw` (i32 lanes) and G = `group`
    (4: VNNI, which needs AVX-512 VNNI and vw 16), on AMX tiles with `tiles`
    (lowering/kernels/amx.py; G = 4, vw 16). It uses gemm.HEADER's declarations
    (aligned_alloc, free, smin, the f32 masked loads): link it after gemm.HEADER or the f32
    runtime, as kernels_ir does."""
    if group not in GROUPS or (group == 4 and vw != 16) or (tiles and group != 4):
        raise ValueError(f"no 8-bit micro-kernel for vector width {vw} and group {group}")
    nr = 2 * vw
    w = Writer()
    if tiles:
        return _tiles_ir(w, threads, nr)
    vnni = group == 4  # convolutions read straight from the input: kernels/vnni_conv.py
    w.lines.append(HEADER + CONV_HEADER + (amx_conv.HEADER if vnni else ""))
    edge_tile(w, nr)
    pack(w, "@xr_ipack_a", MR, group)
    pack(w, "@xr_ipack_b", nr, group)
    im2col(w)
    if vnni:
        amx_conv.band(w)
        vnni_conv.tile(w, vnni_conv.ROWS, requantize)
        vnni_conv.direct_serial(w, PARAMS, vnni_conv.ROWS)
        vnni_conv.pixel_tile(w, vnni_conv.PIXELS, requantize)
        vnni_conv.pixel_serial(w, PARAMS, vnni_conv.PIXELS)
    for unsigned in "ab":
        micro_kernel(w, vw, group, unsigned)
        micro_kernel(w, vw, group, unsigned, halves=1)
        if vnni:  # direct (geometry value 12) or through im2col blocks
            gemm_serial(w, nr, group, unsigned, f"@xr_igemm_blocks_{unsigned}")
            _direct_or_blocks(w, f"@xr_vdirect_{unsigned}", unsigned)
        else:
            gemm_serial(w, nr, group, unsigned)
        # 8-bit products do about 4x the f32 kernel's work per instruction
        split_entry(
            w, f"@xr_igemm_{unsigned}", PARAMS, f"@xr_igemm_serial_{unsigned}", threads, nr,
            4 * PARALLEL_MIN, _rows, _columns, _direct_rows(unsigned) if vnni else MR,
        )  # fmt: skip
    return w.text()


def _direct_rows(unsigned: str) -> Callable[[Writer, dict[str, str]], str]:
    """The rows of a thread's unit in xr_igemm_<unsigned>: a direct convolution's tiles
    (geometry value 12 set; `a`: pixel-major, vnni_conv.PIXELS pixels; `b`: weight-major,
    vnni_conv.ROWS channels), else the micro-kernel's MR rows."""
    direct_rows = vnni_conv.PIXELS if unsigned == "a" else vnni_conv.ROWS

    def unit(w: Writer, v: dict[str, str]) -> str:
        return w.op(f"select i1 {_direct(w, v['%geo'])}, i64 {direct_rows}, i64 {MR}")

    return unit


def _direct(w: Writer, geo: str) -> str:
    """Whether a call's geometry `geo` (null: not a convolution) says `direct` (value 12):
    an i1 (a null geometry reads the zeros table)."""
    none = w.op(f"icmp eq ptr {geo}, null")
    at = w.op(f"select i1 {none}, ptr @xr_izeros, ptr {w.gep(geo, '12', 'i64')}")
    return w.op(f"icmp ne i64 {w.op(f'load i64, ptr {at}')}, 0")


def _tiles_ir(w: Writer, threads: bool, nr: int) -> str:
    """The AMX runtime: igemm's edge tile, B packing and implicit im2col around amx.py's
    micro-tiles."""
    w.lines.append(HEADER + CONV_HEADER + amx.HEADER + amx_conv.HEADER)
    edge_tile(w, nr)
    pack(w, "@xr_ipack_b", nr, 4)
    im2col(w)
    amx.pack_rows(w)
    amx_conv.band(w)
    amx_conv.tile(w)
    amx_conv.slow_tile(w)
    amx_conv.direct_serial(w, PARAMS)
    for unsigned in "ab":
        amx.micro_kernel(w, unsigned)
        amx.slow_kernel(w, unsigned)
        if unsigned == "a":
            amx.gemm_serial(w, unsigned, PARAMS)
        else:  # convolutions: direct (geometry value 12) or through im2col blocks
            amx.gemm_serial(w, unsigned, PARAMS, "@xr_igemm_blocks_b")
            _direct_or_blocks(w, "@xr_tdirect_b")
        split_entry(
            w, f"@xr_igemm_{unsigned}", PARAMS, f"@xr_igemm_serial_{unsigned}", threads, nr,
            4 * PARALLEL_MIN, _rows, _columns, amx.ROWS,
        )  # fmt: skip
    return w.text()


def _direct_or_blocks(w: Writer, direct_fn: str, unsigned: str = "b") -> None:
    """xr_igemm_serial_<u>: a convolution whose geometry says `direct` on `direct_fn`
    (xr_tdirect_b on tiles, kernels/amx_conv.py; xr_vdirect_b and, pixel-major,
    xr_vdirect_a with VNNI, kernels/vnni_conv.py), everything else on
    xr_igemm_blocks_<u>."""
    args = ", ".join(f"{t} {p}" for t, p in PARAMS)
    with w.function("void", f"@xr_igemm_serial_{unsigned}", PARAMS):
        then, other, join = w.if_else(_direct(w, "%geo"), "direct")
        for label, fn in ((then, direct_fn), (other, f"@xr_igemm_blocks_{unsigned}")):
            w.block(label)
            w.do(f"call void {fn}({args})")
            w.br(join)
        w.block(join)
