"""The f32 matrix-product runtime, written as LLVM IR text and linked into every compiled
model that calls it.

    void xr_sgemm(i64 M, i64 N, i64 K,
                  ptr A, i64 rsa, i64 csa,      A[i, k] = A[i*rsa + k*csa]
                  ptr B, i64 rsb, i64 csb,      B[k, j] = B[k*rsb + j*csb]
                  ptr C, i64 ldc,               C[i, j] = C[i*ldc + j]   (written once)
                  ptr srow, ptr trow,           per-row scale / shift (length M) or null
                  ptr scol, ptr tcol,           per-column scale / shift (length N) or null
                  ptr R, i64 ldr,               residual R[i*ldr + j] or null
                  i64 relu,
                  i64 apk, i64 mpad, i64 arow0, A prepacked (apk != 0): see below
                  i64 bpk, i64 npad, i64 bcol0, B prepacked likewise
                  ptr ps, ptr pt,               B's prologue (length K) or null: see below
                  ptr geo)                      a convolution's geometry, or null

    C = max?((A @ B) * srow[i] * scol[j] + trow[i] + tcol[j] + R[i, j], 0)

The product is blocked BLIS-style: B is packed in KC x NC blocks of NR-column panels, A in
MC x KC blocks of MR-row panels, and an MR x NR register-blocked micro-kernel (2 MR `<VW x
float>` accumulators, broadcast-and-FMA per k) computes each tile. VW, the vector width,
follows the target: 16 floats with AVX-512 (NR = 32, MR = 8), else 8 (NR = 16, MR = 6:
`row_height`); the epilogue (scale, shift,
residual, relu) is applied in registers after the tile's last K block, so C is written once.
Edge tiles go through an MR x NR scratch tile. With M <= 3 (matrix-vector shapes) nothing is
packed: each output is a dot product along K, or rows of B are accumulated along N.

Operands that are the same at every run (weights) are packed once at build time
(`lowering/kernels/prepack.py`), K block by K block (`k_block`: the fewest blocks of at most
KC, of equal length): A as [blocks][mpad/MR][kc][MR], B as [blocks][npad/NR][kc][NR] (mpad,
npad: M and N rounded up to the panel width); arow0 and bcol0
say where this call's rows or columns start in them. Only the packed path (M > 3) reads them.

With `geo` non-null, B is the implicit im2col matrix of a convolution whose input is `b`
(lowering/kernels/conv_pack.py): its panels are packed from the input, columns counted
from bcol0 (rsb and csb are unused).

With `ps` non-null (a plain B: a batch_norm, scale and relu before a 1x1 convolution), B[k, j] is
read as max(B[k, j] * ps[k] + pt[k], 0), applied as B's panels are packed
(`xr_pack_b_pro`), so the normalized values are never written out.

Work is split over threads (libgomp's GOMP_parallel, a persistent pool) along N in
NR-column units, or along M in MR-row units when M has more tiles; products under
PARALLEL_MIN multiply-adds run on the calling thread. Without libgomp everything is serial.
"""

from __future__ import annotations

from collections.abc import Callable

from xrelay.errors import Error
from xrelay.lowering.kernels.conv_pack import GEO, pack_conv
from xrelay.lowering.kernels.conv_pack import HEADER as CONV_HEADER
from xrelay.lowering.kernels.irtext import Writer, floor, floor_zero
from xrelay.lowering.kernels.parallel import launch, team, unpack

MR_AVX2, MR_AVX512 = 6, 8  # micro-kernel rows: see row_height
# KC: the longest K block. A product's K is cut into as few blocks as that allows, of equal
# length (k_block), so that C's partial sums are read back as seldom as that allows:
# same-process A/B against blocks of 256, BERT-base 112.9 -> 106.8 ms (K = 768 in one
# block, 3072 in three), the MLP 6.93 -> 6.73 (784 in one), ResNet-50 42.38 -> 42.21
KC, MC, NC = 1024, 144, 1024


def k_block(w: Writer, k: str, most: int | None = None) -> str:
    """K per block for a product of K = `k`: the fewest blocks of at most `most` (KC), of
    equal length (the last one shorter by what the division leaves), as prepack.even_block
    packs a prepacked operand."""
    most = KC if most is None else most
    blocks = w.op(f"sdiv i64 {w.add(k, str(most - 1))}, {most}")
    blocks = w.op(f"select i1 {w.op(f'icmp slt i64 {blocks}, 1')}, i64 1, i64 {blocks}")
    return w.op(f"sdiv i64 {w.add(k, w.sub(blocks, '1'))}, {blocks}")


WIDTHS = (8, 16)  # vector widths (floats) the micro-kernel is generated for
PARALLEL_MIN = 1 << 17  # multiply-adds
TILE_PREFETCH = True  # the next tile's rows of C and residual (Epilogue.prefetch_rows)

NEG_INF = "0xFFF0000000000000"
V8 = "<8 x float>"  # the matrix-vector path

PARAMS = [
    ("i64", "%M"), ("i64", "%N"), ("i64", "%K"),
    ("ptr", "%a"), ("i64", "%rsa"), ("i64", "%csa"),
    ("ptr", "%b"), ("i64", "%rsb"), ("i64", "%csb"),
    ("ptr", "%c"), ("i64", "%ldc"),
    ("ptr", "%srow"), ("ptr", "%trow"), ("ptr", "%scol"), ("ptr", "%tcol"),
    ("ptr", "%res"), ("i64", "%ldr"), ("i64", "%relu"),
    ("i64", "%apk"), ("i64", "%mpad"), ("i64", "%arow0"),
    ("i64", "%bpk"), ("i64", "%npad"), ("i64", "%bcol0"),
    ("ptr", "%ps"), ("ptr", "%pt"),
    ("ptr", "%geo"),
]  # fmt: skip
ARGS = ", ".join(f"{t} {n}" for t, n in PARAMS)
SIGNATURE = ", ".join(t for t, _ in PARAMS)

PREFETCH = [("ptr", "%pf"), ("i64", "%pfn")]  # the micro-kernel's prefetch stream
EPILOGUE = [("ptr", "%srow"), ("ptr", "%trow"), ("ptr", "%scol"), ("ptr", "%tcol"),
            ("ptr", "%res"), ("i64", "%ldr"), ("float", "%lo")]  # fmt: skip

HEADER = """
declare void @llvm.prefetch.p0(ptr, i32, i32, i32)
declare float @llvm.fma.f32(float, float, float)
declare <8 x float> @llvm.fma.v8f32(<8 x float>, <8 x float>, <8 x float>)
declare <16 x float> @llvm.fma.v16f32(<16 x float>, <16 x float>, <16 x float>)
declare float @llvm.maximum.f32(float, float)
declare <8 x float> @llvm.masked.load.v8f32.p0(ptr, i32, <8 x i1>, <8 x float>)
declare <16 x float> @llvm.masked.load.v16f32.p0(ptr, i32, <16 x i1>, <16 x float>)
declare void @llvm.masked.store.v8f32.p0(<8 x float>, ptr, i32, <8 x i1>)
declare void @llvm.masked.store.v16f32.p0(<16 x float>, ptr, i32, <16 x i1>)
declare <8 x float> @llvm.maximum.v8f32(<8 x float>, <8 x float>)
declare <16 x float> @llvm.maximum.v16f32(<16 x float>, <16 x float>)
declare float @llvm.vector.reduce.fadd.v8f32(float, <8 x float>)
declare i64 @llvm.smin.i64(i64, i64)
declare i64 @llvm.smax.i64(i64, i64)
declare ptr @aligned_alloc(i64, i64)
declare void @free(ptr)
@xr_ones = internal constant [32 x float] [{ones}], align 64
@xr_zeros = internal constant [32 x float] zeroinitializer, align 64
""".format(ones=", ".join(["float 1.0"] * 32))


def vec(vw: int) -> str:
    return f"<{vw} x float>"


def splat(w: Writer, scalar: str, vw: int = 8) -> str:
    v = w.op(f"insertelement {vec(vw)} poison, float {scalar}, i64 0")
    return w.op(f"shufflevector {vec(vw)} {v}, {vec(vw)} poison, <{vw} x i32> zeroinitializer")


def load8(w: Writer, ptr: str, align: int = 4, vw: int = 8) -> str:
    return w.op(f"load {vec(vw)}, ptr {ptr}, align {align}")


def micro_kernel(
    w: Writer,
    vw: int,
    direct: bool = False,
    pixels: bool = False,
    rows: int | None = None,
    stem: str | None = None,
) -> None:
    """xr_ukr: C[MR x NR] (+)= Ap[kc x MR] panel times Bp[kc x NR] panel, then the epilogue
    when %epi != 0. kc >= 1. NR = 2 * vw: two vectors per row. With `direct`, xr_ukr_d:
    B's row k is the NR values at %bp + %off[k] (kernels/gemm_direct.py). With `pixels`,
    xr_ukr_px: A is not packed, A[r, k] is %ap[%base[r] + %off[k]] (kernels/gemm_pixel.py:
    a pixel's value of a window tap). Iteration k < %pfn fetches line k of %pf into L2
    (`prefetch_stream`); xr_ukr_d instead fetches the next tile's row k (%bp + %off[k] +
    NR) into L1 when %pfn != 0 (%pf unused). With `rows` (fewer than MR), xr_ukr_h<rows> / xr_ukr_px_h<rows>:
    a tile of that many rows, A's panel still MR rows wide (a last tile's rows, from any
    row of it: kernels/gemm_pixel.py). `stem`: another name than these (a copy of its
    own: kernels/gemm_pixel.py)."""
    nr, v, height = 2 * vw, vec(vw), row_height(vw)
    count = rows or height
    fma = f"@llvm.fma.v{vw}f32"
    params = [("i64", "%kc"), ("ptr", "noalias %ap"), ("ptr", "noalias %bp"), ("ptr", "%c"),
              ("i64", "%ldc"), ("i64", "%acc"), ("i64", "%epi"), *PREFETCH, *EPILOGUE]  # fmt: skip
    if direct:  # the tile's columns in C (SplitColumns)
        params.insert(3, ("ptr", "%off"))
        params += [("i64", "%split"), ("i64", "%from2"), ("i64", "%count"), ("i64", "%gap")]
    if pixels:
        params[2:2] = [("ptr", "noalias %off"), ("ptr", "noalias %base")]
    name = stem or ("@xr_ukr_d" if direct else "@xr_ukr_px" if pixels else "@xr_ukr")
    if rows:
        name += f"_h{rows}"
    with w.function("void", name, params):
        if pixels:  # each row's first value, in registers
            corners = [
                w.gep("%ap", w.op(f"load i64, ptr {w.gep('%base', str(r), 'i64')}"))
                for r in range(count)
            ]
        accs = [[w.var(v, "zeroinitializer", f"c{r}{j}") for j in range(2)] for r in range(count)]
        with w.loop("k", "0", "%kc") as k:
            if direct:
                bp = w.gep("%bp", w.op(f"load i64, ptr {w.gep('%off', k, 'i64')}"))
                # %pfn != 0: the next tile's row k (NR values on), which no stream
                # prefetcher follows (a row per channel)
                with w.if_(w.op("icmp ne i64 %pfn, 0")):
                    for q in range(0, nr, 16):
                        w.do(
                            f"call void @llvm.prefetch.p0(ptr {w.gep(bp, str(nr + q))}, i32 0, i32 3, i32 1)"
                        )
            else:
                with w.if_(w.op(f"icmp slt i64 {k}, %pfn")):
                    w.do(
                        f"call void @llvm.prefetch.p0(ptr {w.gep('%pf', w.mul(k, '16'))}, i32 0, i32 2, i32 1)"
                    )
                bp = w.gep("%bp", w.mul(k, str(nr)))
            # prepacked params need not be aligned
            b = [load8(w, bp, vw=vw), load8(w, w.gep(bp, str(vw)), vw=vw)]
            if pixels:
                o = w.op(f"load i64, ptr {w.gep('%off', k, 'i64')}")
                at = [w.gep(corner, o) for corner in corners]
            else:
                ap = w.gep("%ap", w.mul(k, str(height)))
                at = [w.gep(ap, str(r)) for r in range(count)]
            for r in range(count):
                a = splat(w, w.op(f"load float, ptr {at[r]}, align 4"), vw)
                for j in range(2):
                    cur = w.get(accs[r][j])
                    w.set(accs[r][j], w.op(f"call {v} {fma}({v} {a}, {v} {b[j]}, {v} {cur})"))
        c_rows = [w.gep("%c", w.mul(str(r), "%ldc")) for r in range(count)]
        if not direct:
            _finish(w, vw, accs, c_rows, PlainColumns(w, vw))
            return
        # a tile that crosses an output row (kernels/gemm_direct.py): two masked stores
        whole, split, join = w.if_else(w.op(f"icmp sge i64 %split, {nr}"), "whole")
        w.block(whole)
        _finish(w, vw, accs, c_rows, PlainColumns(w, vw))
        w.br(join)
        w.block(split)
        _finish(w, vw, accs, c_rows, SplitColumns(w, vw))
        w.br(join)
        w.block(join)


class Columns:
    """How the micro-kernel's epilogue reads and writes a row's half `h` (vw columns at
    `ptr` + h vw) of C, the residual and the per-column vectors."""

    def load(self, ptr: str, h: int, identity: str | None = None) -> str: ...

    def store(self, value: str, ptr: str, h: int) -> None: ...


class PlainColumns(Columns):
    def __init__(self, w: Writer, vw: int) -> None:
        self.w, self.vw = w, vw

    def load(self, ptr: str, h: int, identity: str | None = None) -> str:
        return load8(self.w, self.w.gep(ptr, str(self.vw * h)), vw=self.vw)

    def store(self, value: str, ptr: str, h: int) -> None:
        w = self.w
        w.do(f"store {vec(self.vw)} {value}, ptr {w.gep(ptr, str(self.vw * h))}, align 4")


class SplitColumns(Columns):
    """xr_ukr_d's tile across an output row: columns below %split are the first row's, at
    their place; those from %from2 up to %count the next row's, %gap values before theirs
    (the virtual row's padding, between the two, is dropped)."""

    def __init__(self, w: Writer, vw: int) -> None:
        self.w, self.vw = w, vw
        iv = f"<{vw} x i32>"

        def bound(name: str) -> str:
            x = w.op(f"insertelement {iv} poison, i32 {w.op(f'trunc i64 {name} to i32')}, i64 0")
            return w.op(f"shufflevector {iv} {x}, {iv} poison, {iv} zeroinitializer")

        split, from2, count = bound("%split"), bound("%from2"), bound("%count")
        self.first, self.second = [], []
        for h in range(2):
            lanes = "<" + ", ".join(f"i32 {h * vw + q}" for q in range(vw)) + ">"
            self.first.append(w.op(f"icmp slt {iv} {lanes}, {split}"))
            later = w.op(f"icmp sge {iv} {lanes}, {from2}")
            inside = w.op(f"icmp slt {iv} {lanes}, {count}")
            self.second.append(w.op(f"and <{vw} x i1> {later}, {inside}"))
        self.back = w.sub("0", "%gap")

    def _parts(self, ptr: str, h: int, back: str | None = None) -> tuple[str, str]:
        w = self.w
        at = w.gep(ptr, str(self.vw * h))
        return at, w.gep(at, back or self.back)

    def load(self, ptr: str, h: int, identity: str | None = None) -> str:
        """(`identity`: the constant that stands for a missing vector, whose values are
        the same at every column: read unshifted.)"""
        w, v, m = self.w, vec(self.vw), f"<{self.vw} x i1>"
        back = None
        if identity is not None:
            same = w.op(f"icmp eq ptr {ptr}, {identity}")
            back = w.op(f"select i1 {same}, i64 0, i64 {self.back}")
        out = []
        for at, mask in zip(self._parts(ptr, h, back), (self.first[h], self.second[h])):
            out.append(w.op(
                f"call {v} @llvm.masked.load.v{self.vw}f32.p0(ptr {at}, i32 4, {m} {mask}, {v} zeroinitializer)"
            ))  # fmt: skip
        return w.op(f"select {m} {self.first[h]}, {v} {out[0]}, {v} {out[1]}")

    def store(self, value: str, ptr: str, h: int) -> None:
        w, v, m = self.w, vec(self.vw), f"<{self.vw} x i1>"
        for at, mask in zip(self._parts(ptr, h), (self.first[h], self.second[h])):
            w.do(
                f"call void @llvm.masked.store.v{self.vw}f32.p0({v} {value}, ptr {at}, i32 4, {m} {mask})"
            )


def _finish(w: Writer, vw: int, accs, rows: list[str], cols: Columns) -> None:
    """The micro-kernel's end: earlier K blocks' partial sums added (%acc), the epilogue
    (%epi), the tile stored."""
    v, height = vec(vw), len(rows)
    with w.if_(w.op("icmp ne i64 %acc, 0")):
        for r in range(height):
            for j in range(2):
                old = cols.load(rows[r], j)
                w.set(accs[r][j], w.op(f"fadd {v} {w.get(accs[r][j])}, {old}"))
    with w.if_(w.op("icmp ne i64 %epi, 0")):
        lo, zero = splat(w, "%lo", vw), splat(w, floor_zero(w, "%lo"), vw)
        scol = [cols.load("%scol", j, "@xr_ones") for j in range(2)]
        tcol = [cols.load("%tcol", j, "@xr_zeros") for j in range(2)]
        for r in range(height):
            s = splat(w, w.op(f"load float, ptr {w.gep('%srow', str(r))}"), vw)
            t = splat(w, w.op(f"load float, ptr {w.gep('%trow', str(r))}"), vw)
            res_row = w.gep("%res", w.mul(str(r), "%ldr"))
            for j in range(2):
                x = w.op(f"fmul {v} {w.get(accs[r][j])}, {s}")
                x = w.op(f"fmul {v} {x}, {scol[j]}")
                x = w.op(f"fadd {v} {x}, {t}")
                x = w.op(f"fadd {v} {x}, {tcol[j]}")
                x = w.op(f"fadd {v} {x}, {cols.load(res_row, j, '@xr_zeros')}")
                w.set(accs[r][j], floor(w, v, x, lo, zero))
    for r in range(height):
        for j in range(2):
            cols.store(w.get(accs[r][j]), rows[r], j)


def edge_tile(w: Writer, NR: int) -> None:
    """xr_edge: copy the valid mr x nr part of an MR x NR scratch tile into C, adding C's
    partial sums (%acc) and applying the epilogue (%epi): vectors masked to the valid
    columns, the same operations in the same order as the micro-kernel's epilogue."""
    params = [("ptr", "%t"), ("ptr", "%c"), ("i64", "%ldc"), ("i64", "%mr"), ("i64", "%nr"),
              ("i64", "%acc"), ("i64", "%epi"), *EPILOGUE]  # fmt: skip
    vw = NR // 2
    v, m, iv = vec(vw), f"<{vw} x i1>", f"<{vw} x i32>"

    def masked_load(ptr: str, mask: str) -> str:
        return w.op(
            f"call {v} @llvm.masked.load.v{vw}f32.p0(ptr {ptr}, i32 4, {m} {mask}, {v} zeroinitializer)"
        )

    with w.function("void", "@xr_edge", params):
        acc = w.op("icmp ne i64 %acc, 0")
        epi = w.op("icmp ne i64 %epi, 0")
        lo, zero = splat(w, "%lo", vw), splat(w, floor_zero(w, "%lo"), vw)
        nr32 = w.op("trunc i64 %nr to i32")
        limit = w.op(f"insertelement {iv} poison, i32 {nr32}, i64 0")
        limit = w.op(f"shufflevector {iv} {limit}, {iv} poison, {iv} zeroinitializer")
        masks = []
        for h in range(2):  # the columns of each half that are inside C
            lanes = "<" + ", ".join(f"i32 {h * vw + q}" for q in range(vw)) + ">"
            masks.append(w.op(f"icmp slt {iv} {lanes}, {limit}"))
        with w.loop("i", "0", "%mr") as i:
            row = w.gep("%c", w.mul(i, "%ldc"))
            s_row = splat(w, w.op(f"load float, ptr {w.gep('%srow', i)}"), vw)
            t_row = splat(w, w.op(f"load float, ptr {w.gep('%trow', i)}"), vw)
            res_row = w.gep("%res", w.mul(i, "%ldr"))
            for h in range(2):
                o, mask = str(h * vw), masks[h]
                x = w.var(v, load8(w, w.gep("%t", w.add(w.mul(i, str(NR)), o)), vw=vw))
                with w.if_(acc):
                    w.set(x, w.op(f"fadd {v} {w.get(x)}, {masked_load(w.gep(row, o), mask)}"))
                with w.if_(epi):
                    y = w.op(f"fmul {v} {w.get(x)}, {s_row}")
                    y = w.op(f"fmul {v} {y}, {masked_load(w.gep('%scol', o), mask)}")
                    y = w.op(f"fadd {v} {y}, {t_row}")
                    y = w.op(f"fadd {v} {y}, {masked_load(w.gep('%tcol', o), mask)}")
                    y = w.op(f"fadd {v} {y}, {masked_load(w.gep(res_row, o), mask)}")
                    w.set(x, floor(w, v, y, lo, zero))
                w.do(
                    f"call void @llvm.masked.store.v{vw}f32.p0({v} {w.get(x)}, ptr {w.gep(row, o)}, i32 4, {m} {mask})"
                )


def pack(w: Writer, name: str, width: int, prologue: bool = False) -> None:
    """Pack an `rows x kc` block (element (r, k) at src[r*rs + k*cs]) into panels of `width`
    rows: panel p holds, for each k, `width` consecutive values (zero past the last row).
    Reads run along whichever of r and k has unit stride: with rs == 1 the full panels are
    filled k by k, each source row read contiguously across all of them (B of a
    convolution: rows of im2col columns or of the input, which a panel-by-panel walk would
    read as kc strided streams). With `prologue` (B's panels only: width 16 or 32) the
    function takes two more pointers, %ps and %pt (the block's first k), and packs
    max(x * ps[k] + pt[k], 0) instead of x."""
    params = [("ptr", "%src"), ("i64", "%rs"), ("i64", "%cs"), ("i64", "%rows"), ("i64", "%kc"),
              ("ptr", "%dst")]  # fmt: skip
    if prologue:
        params += [("ptr", "%ps"), ("ptr", "%pt")]
    vw = 16 if width % 16 == 0 else 8
    v = vec(vw)

    def pro(x: str, k: str, lanes: int) -> str:
        """x (a float or <lanes x float>) through the prologue of row k."""
        if not prologue:
            return x
        ty = f"<{lanes} x float>" if lanes > 1 else "float"
        s = w.op(f"load float, ptr {w.gep('%ps', k)}")
        t = w.op(f"load float, ptr {w.gep('%pt', k)}")
        if lanes > 1:
            s, t = splat(w, s, lanes), splat(w, t, lanes)
        y = w.op(f"fadd {ty} {w.op(f'fmul {ty} {x}, {s}')}, {t}")
        zero = "zeroinitializer" if lanes > 1 else "0.0"
        return floor(w, ty, y, zero, zero)

    assert not prologue or width % 8 == 0
    with w.function("void", name, params):
        last = w.sub("%rows", "1")
        unit_r = w.op("icmp eq i64 %rs, 1")
        full_rows = w.mul(w.op(f"sdiv i64 %rows, {width}"), str(width))
        start = w.op(f"select i1 {unit_r}, i64 {full_rows}, i64 0")
        # full panels with contiguous rows: vector copies, k outer
        with w.if_(unit_r), w.loop("k", "0", "%kc") as k:
            src = w.gep("%src", w.mul(k, "%cs"))
            d = w.gep("%dst", w.mul(k, str(width)))
            with w.loop("p", "0", full_rows, str(width)) as p:
                s_p, d_p = w.gep(src, p), w.gep(d, w.mul(p, "%kc"))
                if width % 8:  # A's 6-row panels (AVX2): scalar copies
                    for q in range(width):
                        x = w.op(f"load float, ptr {w.gep(s_p, str(q))}")
                        w.do(f"store float {x}, ptr {w.gep(d_p, str(q))}")
                else:
                    for h in range(0, width, vw):
                        x = pro(load8(w, w.gep(s_p, str(h)), vw=vw), k, vw)
                        w.do(f"store {v} {x}, ptr {w.gep(d_p, str(h))}, align 4")
        if width % 8 == 0 and not prologue:  # full panels with contiguous k (A of a
            # dense product, B of one whose B is stored [N, K]: attention's q k^T): 8 x 8
            # blocks read as rows, transposed in registers, written as 8 k of 8 rows each
            # (B's panels value by value took BERT-base int8's q k^T 0.160 -> 0.136 ms)
            unit_k = w.op(f"and i1 {w.op('icmp eq i64 %cs, 1')}, {w.op('icmp ne i64 %rs, 1')}")
            kc8 = w.op("and i64 %kc, -8")
            with w.if_(unit_k), w.loop("p", "0", full_rows, str(width)) as p:
                dst = w.gep("%dst", w.mul(p, "%kc"))
                for g in range(0, width, 8):  # the panel's groups of 8 rows
                    src = w.gep("%src", w.mul(w.add(p, str(g)), "%rs"))
                    with w.loop("k", "0", kc8, "8") as k:
                        rows = [
                            load8(w, w.gep(src, w.add(w.mul(str(q), "%rs"), k))) for q in range(8)
                        ]
                        for q, col in enumerate(transpose8(w, rows)):
                            at = w.add(w.mul(w.add(k, str(q)), str(width)), str(g))
                            w.do(f"store {V8} {col}, ptr {w.gep(dst, at)}, align 4")
                    with w.loop("k", kc8, "%kc") as k, w.loop("q", "0", "8") as q:
                        x = w.op(f"load float, ptr {w.gep(src, w.add(w.mul(q, '%rs'), k))}")
                        at = w.add(w.mul(k, str(width)), w.add(q, str(g)))
                        w.do(f"store float {x}, ptr {w.gep(dst, at)}")
            start = w.op(f"select i1 {unit_k}, i64 {full_rows}, i64 {start}")
        with w.loop("p", start, "%rows", str(width)) as p:  # the rest: one value at a time
            dst = w.gep("%dst", w.mul(p, "%kc"))
            for q in range(width):  # r outer when k has unit stride: contiguous reads
                r = w.add(p, str(q))
                inside = w.op(f"icmp slt i64 {r}, %rows")
                row = w.gep(
                    "%src", w.mul(w.op(f"call i64 @llvm.smin.i64(i64 {r}, i64 {last})"), "%rs")
                )
                with w.loop("k", "0", "%kc") as k:
                    step = w.mul(k, "%cs")
                    x = pro(w.op(f"load float, ptr {w.gep(row, step)}"), k, 1)
                    x = w.op(f"select i1 {inside}, float {x}, float 0.0")
                    w.do(f"store float {x}, ptr {w.gep(dst, w.add(w.mul(k, str(width)), str(q)))}")


def prefetch_lines(w: Writer, base: str, first: str, count: str) -> None:
    """Fetch `count` cache lines (16 floats each) from line `first` of `base` into L2."""
    with w.loop("pf", first, w.add(first, count)) as line:
        w.do(
            f"call void @llvm.prefetch.p0(ptr {w.gep(base, w.mul(line, '16'))}, i32 0, i32 2, i32 1)"
        )


def prefetch_stream(w: Writer, base: str, first: str, count: str, kc: str) -> str:
    """The micro-kernel's prefetch arguments for `count` lines from line `first` of `base`:
    one line per k iteration, spread over the tile's arithmetic (a burst of fetches before
    it stalls the core until they are in flight); lines past kc are fetched now."""
    n = w.min(count, kc)
    prefetch_lines(w, base, w.add(first, n), w.sub(count, n))
    return f"ptr {w.gep(base, w.mul(first, '16'))}, i64 {n}"


def transpose8(w: Writer, rows: list[str]) -> list[str]:
    """The columns of the 8 x 8 block whose rows are `rows` (<8 x float> each): 24
    two-source shuffles (unpack, shufps, perm2f128 on x86)."""

    def shuf(a: str, b: str, lanes: list[int]) -> str:
        mask = ", ".join(f"i32 {i}" for i in lanes)
        return w.op(f"shufflevector {V8} {a}, {V8} {b}, <8 x i32> <{mask}>")

    lo, hi = [0, 8, 1, 9, 4, 12, 5, 13], [2, 10, 3, 11, 6, 14, 7, 15]
    t = [shuf(rows[i], rows[i + 1], m) for i in range(0, 8, 2) for m in (lo, hi)]
    even, odd = [0, 1, 8, 9, 4, 5, 12, 13], [2, 3, 10, 11, 6, 7, 14, 15]
    u = [shuf(t[i + j], t[i + j + 2], m) for i in (0, 4) for j in (0, 1) for m in (even, odd)]
    first, second = [0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15]
    return [shuf(u[q % 4], u[q % 4 + 4], first if q < 4 else second) for q in range(8)]


class Epilogue:
    """The epilogue pointers with nulls replaced by identities (ones, zeros), so that the
    kernels always read them; per-tile pointers advance only where the pointer was real."""

    def __init__(self, w: Writer) -> None:
        self.w = w
        self.parts = {}
        for name, identity in (("srow", "@xr_ones"), ("trow", "@xr_zeros"), ("scol", "@xr_ones"),
                               ("tcol", "@xr_zeros"), ("res", "@xr_zeros")):  # fmt: skip
            isnull = w.op(f"icmp eq ptr %{name}, null")
            base = w.op(f"select i1 {isnull}, ptr {identity}, ptr %{name}")
            step = w.op(f"select i1 {isnull}, i64 0, i64 1")
            self.parts[name] = (base, step)
        self.ldr = w.op(f"select i1 {w.op('icmp eq ptr %res, null')}, i64 0, i64 %ldr")
        relu = w.op("icmp ne i64 %relu, 0")
        self.lo = w.op(f"select i1 {relu}, float 0.0, float {NEG_INF}")
        self.zero = floor_zero(w, self.lo)  # what irtext.floor adds

    def at(self, i: str, j: str) -> str:
        """The epilogue arguments for the tile whose first element is C[i, j]."""
        w = self.w
        out = []
        for name, index in (("srow", i), ("trow", i), ("scol", j), ("tcol", j)):
            base, step = self.parts[name]
            out.append(f"ptr {w.gep(base, w.mul(index, step))}")
        base, step = self.parts["res"]
        out.append(f"ptr {w.gep(base, w.mul(w.add(w.mul(i, self.ldr), j), step))}")
        out += [f"i64 {self.ldr}", f"float {self.lo}"]
        return ", ".join(out)

    def prefetch_rows(self, i: str, j: str, rows: int, width: int) -> None:
        """Fetch into L1 the `rows` x `width` block at (i, j) of C (for writing) and of the
        residual, if any: a tile's rows lie ldc apart, each a stream of its own, more than
        the hardware's prefetchers follow, so each row's lines would miss on the tile's
        stores and residual loads (3 per row: `width` floats span 3 lines unaligned)."""
        w = self.w
        spots = [str(o) for o in (0, 16, width - 1)]
        for r in range(rows):
            row = w.gep("%c", w.add(w.mul(w.add(i, str(r)), "%ldc"), j))
            for o in spots:
                w.do(f"call void @llvm.prefetch.p0(ptr {w.gep(row, o)}, i32 1, i32 3, i32 1)")
        with w.if_(w.op("icmp ne ptr %res, null")):
            for r in range(rows):
                row = w.gep("%res", w.add(w.mul(w.add(i, str(r)), "%ldr"), j))
                for o in spots:
                    w.do(f"call void @llvm.prefetch.p0(ptr {w.gep(row, o)}, i32 0, i32 3, i32 1)")


NO_PREFETCH = "ptr null, i64 0"
IDENTITY_EPILOGUE = (
    "ptr @xr_ones, ptr @xr_zeros, ptr @xr_ones, ptr @xr_zeros, ptr @xr_zeros, i64 0, "
    f"float {NEG_INF}"
)


def gemm_serial(w: Writer, NR: int, prologue: bool = False, direct: bool = False) -> None:
    height = row_height(NR // 2)
    with w.function("void", "@xr_gemm_serial", PARAMS):
        if direct:  # a convolution read straight from its input (kernels/gemm_direct.py):
            # the geometry's value after conv_pack.GEO is set
            names = ", ".join(f"{t} {n}" for t, n in PARAMS)
            with w.if_(w.op("icmp ne ptr %geo, null")):
                flag = w.op(f"load i64, ptr {w.gep('%geo', str(len(GEO)), 'i64')}")
                with w.if_(w.op(f"icmp ne i64 {flag}, 0")):
                    w.do(f"call void @xr_gemm_direct({names})")
                    w.do("ret void")
                    w.block(w.label("dead"))  # (the if's branch to its join follows)
        ep = Epilogue(w)
        ap = w.op(f"call ptr @aligned_alloc(i64 64, i64 {MC * KC * 4})")
        bp = w.op(f"call ptr @aligned_alloc(i64 64, i64 {KC * NC * 4})")
        tmp = w.op(f"alloca [{height * NR} x float], align 32")
        conv = w.op("icmp ne ptr %geo, null")  # B: a convolution's implicit im2col matrix
        plain = w.op(f"and i1 {w.op('icmp eq i64 %bpk, 0')}, {w.op(f'xor i1 {conv}, true')}")
        with w.loop("jc", "0", "%N", str(NC)) as jc:
            nc = w.min(str(NC), w.sub("%N", jc))
            kcb = k_block(w, "%K")
            with w.loop("pc", "0", "%K", kcb) as pc:
                kc = w.min(kcb, w.sub("%K", pc))
                acc = w.op(f"zext i1 {w.op(f'icmp ne i64 {pc}, 0')} to i64")
                epi = w.op(f"zext i1 {w.op(f'icmp sge i64 {w.add(pc, kc)}, %K')} to i64")
                with w.if_(conv):  # implicit im2col: columns bcol0 + jc of the input's
                    j0 = w.add("%bcol0", jc)
                    w.do(
                        f"call void @xr_pack_conv(ptr %b, ptr %geo, i64 {j0}, i64 {pc}, i64 {nc}, i64 {kc}, ptr {bp})"
                    )
                with w.if_(plain):
                    bsrc = w.gep("%b", w.add(w.mul(pc, "%rsb"), w.mul(jc, "%csb")))
                    # B's panels are its columns: "rows" of the packed block are j, stride csb
                    args = f"ptr {bsrc}, i64 %csb, i64 %rsb, i64 {nc}, i64 {kc}, ptr {bp}"
                    if prologue:
                        then, other, join = w.if_else(w.op("icmp ne ptr %ps, null"), "pro")
                        w.block(then)
                        ps, pt = w.gep("%ps", pc), w.gep("%pt", pc)
                        w.do(f"call void @xr_pack_b_pro({args}, ptr {ps}, ptr {pt})")
                        w.br(join)
                        w.block(other)
                    w.do(f"call void @xr_pack_b({args})")
                    if prologue:
                        w.br(join)
                        w.block(join)
                # prepacked: block pc starts at pc * npad, column j0 at j0 * kc within it
                bpk = w.op("icmp ne i64 %bpk, 0")
                bblock = w.op(
                    f"select i1 {bpk}, ptr {w.gep('%b', w.add(w.mul(pc, '%npad'), w.mul(w.add('%bcol0', jc), kc)))}, ptr {bp}"
                )
                apk = w.op("icmp ne i64 %apk, 0")
                with w.loop("ic", "0", "%M", str(MC)) as ic:
                    mc = w.min(str(MC), w.sub("%M", ic))
                    with w.if_(w.op("icmp eq i64 %apk, 0")):
                        asrc = w.gep("%a", w.add(w.mul(ic, "%rsa"), w.mul(pc, "%csa")))
                        w.do(
                            f"call void @xr_pack_a(ptr {asrc}, i64 %rsa, i64 %csa, i64 {mc}, i64 {kc}, ptr {ap})"
                        )
                    ablock = w.op(
                        f"select i1 {apk}, ptr {w.gep('%a', w.add(w.mul(pc, '%mpad'), w.mul(w.add('%arow0', ic), kc)))}, ptr {ap}"
                    )
                    with w.loop("jr", "0", nc, str(NR)) as jr:
                        nr = w.min(str(NR), w.sub(nc, jr))
                        bpp = w.gep(bblock, w.mul(jr, kc))
                        # a prepacked B (weights, read once per run from memory): the
                        # next panel's cache lines fetched into L2, a share per row tile
                        nxt = w.gep(bpp, w.mul(kc, str(NR)))
                        tiles = w.op(f"sdiv i64 {w.add(mc, str(height - 1))}, {height}")
                        total = w.op(f"select i1 {bpk}, i64 {w.mul(kc, str(NR // 16))}, i64 0")
                        share = w.op(f"sdiv i64 {w.add(total, w.sub(tiles, '1'))}, {tiles}")
                        with w.loop("ir", "0", mc, str(height)) as ir:
                            first = w.mul(w.op(f"sdiv i64 {ir}, {height}"), share)
                            mr = w.min(str(height), w.sub(mc, ir))
                            app = w.gep(ablock, w.mul(ir, kc))
                            # a prepacked A (convolution weights) on the first column
                            # panel: its next row panel (the next block's first after
                            # the last) fetched into L2 during the tile, B's share now
                            cold = w.op(f"and i1 {apk}, {w.op(f'icmp eq i64 {jr}, 0')}")
                            floats = w.add(w.mul(kc, str(height)), "15")
                            a_lines = w.op(f"sdiv i64 {floats}, 16")  # the panel's lines
                            prefetch_lines(
                                w, nxt, first, w.op(f"select i1 {cold}, i64 {share}, i64 0")
                            )
                            pbase = w.op(
                                f"select i1 {cold}, ptr {w.gep(app, w.mul(kc, str(height)))}, ptr {w.gep(nxt, w.mul(first, '16'))}"
                            )
                            pf = prefetch_stream(
                                w,
                                pbase,
                                "0",
                                w.op(f"select i1 {cold}, i64 {a_lines}, i64 {share}"),
                                kc,
                            )
                            i0, j0 = w.add(ic, ir), w.add(jc, jr)
                            if TILE_PREFETCH:
                                # the next tile's rows of C and the residual, during this one
                                more = w.op(f"icmp slt i64 {w.add(ir, str(height))}, {mc}")
                                ni = w.op(
                                    f"select i1 {more}, i64 {w.add(i0, str(height))}, i64 {ic}"
                                )
                                nj = w.op(f"select i1 {more}, i64 {j0}, i64 {w.add(j0, str(NR))}")
                                ep.prefetch_rows(ni, nj, height, NR)
                            ctile = w.gep("%c", w.add(w.mul(i0, "%ldc"), j0))
                            args = ep.at(i0, j0)
                            full = w.op(
                                f"and i1 {w.op(f'icmp eq i64 {mr}, {height}')}, {w.op(f'icmp eq i64 {nr}, {NR}')}"
                            )
                            then, other, join = w.if_else(full, "full")
                            w.block(then)
                            w.do(
                                f"call void @xr_ukr(i64 {kc}, ptr {app}, ptr {bpp}, ptr {ctile}, i64 %ldc, i64 {acc}, i64 {epi}, {pf}, {args})"
                            )
                            w.br(join)
                            w.block(other)
                            w.do(
                                f"call void @xr_ukr(i64 {kc}, ptr {app}, ptr {bpp}, ptr {tmp}, i64 {NR}, i64 0, i64 0, {pf}, {IDENTITY_EPILOGUE})"
                            )
                            w.do(
                                f"call void @xr_edge(ptr {tmp}, ptr {ctile}, i64 %ldc, i64 {mr}, i64 {nr}, i64 {acc}, i64 {epi}, {args})"
                            )
                            w.br(join)
                            w.block(join)
        w.do(f"call void @free(ptr {ap})")
        w.do(f"call void @free(ptr {bp})")


def gemv(w: Writer) -> None:
    """Few rows: no packing. With B's columns contiguous (rsb == 1), each C[i, j] is a dot
    product along K; otherwise C's row accumulates a[i, k] * B[k, :] over k."""
    with w.function("void", "@xr_gemv", PARAMS):
        ep = Epilogue(w)
        w.do("br label %choose")
        w.block("choose")
        dots = w.op("icmp eq i64 %rsb, 1")
        then, other, join = w.if_else(dots, "dots")
        w.block(then)
        k8 = w.mul(w.op("sdiv i64 %K, 8"), "8")
        k32 = w.mul(w.op("sdiv i64 %K, 32"), "32")
        unit = w.op("icmp eq i64 %csa, 1")
        with w.loop("i", "0", "%M") as i, w.loop("j", "0", "%N") as j:
            arow = w.gep("%a", w.mul(i, "%rsa"))
            bcol = w.gep("%b", w.mul(j, "%csb"))

            def fma(acc: tuple[str, str], k: str) -> None:
                x = load8(w, w.gep(arow, k))
                y = load8(w, w.gep(bcol, k))
                w.set(
                    acc, w.op(f"call {V8} @llvm.fma.v8f32({V8} {x}, {V8} {y}, {V8} {w.get(acc)})")
                )

            # four independent sums along K (one would wait on each FMA's latency), then
            # the rest 8 at a time
            parts = [w.var(V8, "zeroinitializer", "d") for _ in range(4)]
            with w.if_(unit), w.loop("k", "0", k32, "32") as k:
                for q, part in enumerate(parts):
                    fma(part, w.add(k, str(8 * q)))
            low = w.op(f"fadd {V8} {w.get(parts[0])}, {w.get(parts[1])}")
            high = w.op(f"fadd {V8} {w.get(parts[2])}, {w.get(parts[3])}")
            vacc = w.var(V8, w.op(f"fadd {V8} {low}, {high}"), "d")
            with w.if_(unit), w.loop("k", k32, k8, "8") as k:
                fma(vacc, k)
            s = w.var(
                "float",
                w.op(f"call float @llvm.vector.reduce.fadd.v8f32(float 0.0, {V8} {w.get(vacc)})"),
            )
            start = w.op(f"select i1 {unit}, i64 {k8}, i64 0")
            with w.loop("k", start, "%K") as k:
                x = w.op(f"load float, ptr {w.gep(arow, w.mul(k, '%csa'))}")
                y = w.op(f"load float, ptr {w.gep(bcol, k)}")
                w.set(s, w.op(f"call float @llvm.fma.f32(float {x}, float {y}, float {w.get(s)})"))
            v = scalar_epilogue_at(w, ep, w.get(s), i, j)
            w.do(f"store float {v}, ptr {w.gep('%c', w.add(w.mul(i, '%ldc'), j))}")
        w.br(join)
        w.block(other)
        n8 = w.mul(w.op("sdiv i64 %N, 8"), "8")
        unitn = w.op("icmp eq i64 %csb, 1")
        with w.loop("i", "0", "%M") as i:
            crow = w.gep("%c", w.mul(i, "%ldc"))
            with w.loop("j", "0", "%N") as j:
                w.do(f"store float 0.0, ptr {w.gep(crow, j)}")
            with w.loop("k", "0", "%K") as k:
                a = w.op(
                    f"load float, ptr {w.gep('%a', w.add(w.mul(i, '%rsa'), w.mul(k, '%csa')))}"
                )
                brow = w.gep("%b", w.mul(k, "%rsb"))
                with w.if_(unitn):
                    va = splat(w, a)
                    with w.loop("j", "0", n8, "8") as j:
                        cp = w.gep(crow, j)
                        w.do(
                            f"store {V8} {w.op(f'call {V8} @llvm.fma.v8f32({V8} {va}, {V8} {load8(w, w.gep(brow, j))}, {V8} {load8(w, cp)})')}, ptr {cp}, align 4"
                        )
                start = w.op(f"select i1 {unitn}, i64 {n8}, i64 0")
                with w.loop("j", start, "%N") as j:
                    cp = w.gep(crow, j)
                    y = w.op(f"load float, ptr {w.gep(brow, w.mul(j, '%csb'))}")
                    old = w.op(f"load float, ptr {cp}")
                    new = w.op(f"call float @llvm.fma.f32(float {a}, float {y}, float {old})")
                    w.do(f"store float {new}, ptr {cp}")
            with w.loop("j", "0", "%N") as j:
                cp = w.gep(crow, j)
                w.do(
                    f"store float {scalar_epilogue_at(w, ep, w.op(f'load float, ptr {cp}'), i, j)}, ptr {cp}"
                )
        w.br(join)
        w.block(join)


def scalar_epilogue_at(w: Writer, ep: Epilogue, v: str, i: str, j: str) -> str:
    """The epilogue of C[i, j] from the whole-matrix pointers of `ep`: v * srow[i] *
    scol[j] + trow[i] + tcol[j] + res[i*ldr + j], then max with lo."""

    def load(name: str, index: str) -> str:
        base, step = ep.parts[name]
        return w.op(f"load float, ptr {w.gep(base, w.mul(index, step))}")

    v = w.op(f"fmul float {v}, {load('srow', i)}")
    v = w.op(f"fmul float {v}, {load('scol', j)}")
    v = w.op(f"fadd float {v}, {load('trow', i)}")
    v = w.op(f"fadd float {v}, {load('tcol', j)}")
    v = w.op(f"fadd float {v}, {load('res', w.add(w.mul(i, ep.ldr), j))}")
    return floor(w, "float", v, ep.lo, ep.zero)


def serial_entry(w: Writer) -> None:
    """xr_gemm_part: gemv for M <= 3 on unpacked operands, the packed product otherwise
    (a prepacked operand with a run-time M of 3 or less, or B's prologue: gemv reads plain
    layouts only)."""
    with w.function("void", "@xr_gemm_part", PARAMS, linkage="dso_local"):
        names = ", ".join(f"{t} {n}" for t, n in PARAMS)
        few = w.op("icmp sle i64 %M, 3")
        plain = w.op(f"icmp eq i64 {w.op('or i64 %apk, %bpk')}, 0")
        plain = w.op(f"and i1 {plain}, {w.op('icmp eq ptr %geo, null')}")
        plain = w.op(f"and i1 {plain}, {w.op('icmp eq ptr %ps, null')}")
        then, other, join = w.if_else(w.op(f"and i1 {few}, {plain}"), "few")
        w.block(then)
        w.do(f"call void @xr_gemv({names})")
        w.br(join)
        w.block(other)
        w.do(f"call void @xr_gemm_serial({names})")
        w.br(join)
        w.block(join)


Slicer = Callable[[Writer, dict[str, str], str, str], dict[str, str]]


def offset_or_null(w: Writer, ptr: str, index: str) -> str:
    """`ptr` advanced by `index` 4-byte elements (f32 or i32), or null if it is null."""
    isnull = w.op(f"icmp eq ptr {ptr}, null")
    return w.op(
        f"select i1 {isnull}, ptr null, ptr {w.op(f'getelementptr float, ptr {ptr}, i64 {index}')}"
    )


def split_entry(
    w: Writer,
    name: str,
    params: list[tuple[str, str]],
    serial: str,
    threads: bool,
    nr: int,
    min_macs: int,
    rows: Slicer,
    columns: Slicer,
    mr: int | Callable[[Writer, dict[str, str]], str],
) -> None:
    """`name` (taking `params`, which include %M %N %K): `serial` on the calling thread for
    products under `min_macs` multiply-adds or one thread, else split over libgomp's pool
    along N in `nr`-column units, or along M in `mr`-row units when M has more tiles (never
    for matrix-vector shapes; `mr` may be a function of the call's arguments giving the
    unit as an i64 value). `rows(w, args, lo, count)` / `columns(...)` give the serial
    call's arguments for one thread's rows / columns [lo, lo + count)."""

    def m_unit(values: dict[str, str]) -> str:
        return str(mr) if isinstance(mr, int) else mr(w, values)

    n = len(params)
    names = ", ".join(f"{t} {p}" for t, p in params)
    worker = f"{name}_worker"
    if threads:
        with w.function("void", worker, [("ptr", "%ctx")]):
            vals = dict(zip((p for _, p in params), unpack(w, params)))
            tid, nt = team(w)
            split = w.op(f"load i64, ptr {w.gep('%ctx', str(n), 'i64')}")
            by_m = w.op(f"icmp ne i64 {split}, 0")
            unit = w.op(f"select i1 {by_m}, i64 {m_unit(vals)}, i64 {nr}")
            total = w.op(f"select i1 {by_m}, i64 {vals['%M']}, i64 {vals['%N']}")
            tiles = w.op(f"sdiv i64 {w.add(total, w.sub(unit, '1'))}, {unit}")
            per = w.mul(w.op(f"sdiv i64 {w.add(tiles, w.sub(nt, '1'))}, {nt}"), unit)
            lo = w.min(w.mul(tid, per), total)
            count = w.sub(w.min(w.add(lo, per), total), lo)
            with w.if_(w.op(f"icmp sgt i64 {count}, 0")):
                then, other, join = w.if_else(by_m, "bym")
                for block, slicer in ((then, rows), (other, columns)):
                    w.block(block)
                    v = slicer(w, dict(vals), lo, count)
                    w.do(f"call void {serial}({', '.join(f'{t} {v[p]}' for t, p in params)})")
                    w.br(join)
                w.block(join)
    with w.function("void", name, params, linkage="dso_local"):
        if not threads:
            w.do(f"call void {serial}({names})")
            return
        macs = w.mul(w.mul("%M", "%N"), "%K")
        threads_now = w.op(f"sext i32 {w.op('load i32, ptr @xr_num_threads')} to i64")
        small = w.op(f"icmp slt i64 {macs}, {min_macs}")
        alone = w.op(f"or i1 {small}, {w.op(f'icmp sle i64 {threads_now}, 1')}")
        then, other, join = w.if_else(alone, "serial")
        w.block(then)
        w.do(f"call void {serial}({names})")
        w.br(join)
        w.block(other)
        unit = m_unit({p: p for _, p in params})
        mt = w.op(f"sdiv i64 {w.add('%M', w.sub(unit, '1'))}, {unit}")
        ntiles = w.op(f"sdiv i64 {w.add('%N', str(nr - 1))}, {nr}")
        by_m = w.op(f"and i1 {w.op(f'icmp sgt i64 {mt}, {ntiles}')}, {w.op('icmp sgt i64 %M, 3')}")
        team_size = w.op(f"trunc i64 {threads_now} to i32")
        launch(w, worker, params, team_size, [w.op(f"zext i1 {by_m} to i64")])
        w.br(join)
        w.block(join)


def _rows(w: Writer, v: dict[str, str], lo: str, count: str) -> dict[str, str]:
    """One thread's rows of xr_sgemm: A (unless packed), C, the row vectors, the residual."""
    packed = w.op(f"icmp ne i64 {v['%apk']}, 0")
    moved = w.gep(v["%a"], w.mul(lo, v["%rsa"]))
    res = offset_or_null(w, v["%res"], w.mul(lo, v["%ldr"]))
    v.update({
        "%M": count, "%a": w.op(f"select i1 {packed}, ptr {v['%a']}, ptr {moved}"),
        "%arow0": w.add(v["%arow0"], lo), "%c": w.gep(v["%c"], w.mul(lo, v["%ldc"])),
        "%srow": offset_or_null(w, v["%srow"], lo), "%trow": offset_or_null(w, v["%trow"], lo),
        "%res": res,
    })  # fmt: skip
    return v


def _columns(w: Writer, v: dict[str, str], lo: str, count: str) -> dict[str, str]:
    """One thread's columns of xr_sgemm: B (unless packed), C, the column vectors, the
    residual."""
    # a prepacked B or a convolution's input (packed from bcol0 on) is not offset
    bpk, geo = v["%bpk"], v["%geo"]
    packed = w.op(f"or i1 {w.op(f'icmp ne i64 {bpk}, 0')}, {w.op(f'icmp ne ptr {geo}, null')}")
    moved = w.gep(v["%b"], w.mul(lo, v["%csb"]))
    v.update({
        "%N": count, "%b": w.op(f"select i1 {packed}, ptr {v['%b']}, ptr {moved}"),
        "%bcol0": w.add(v["%bcol0"], lo), "%c": w.gep(v["%c"], lo),
        "%scol": offset_or_null(w, v["%scol"], lo), "%tcol": offset_or_null(w, v["%tcol"], lo),
        "%res": offset_or_null(w, v["%res"], lo),
    })  # fmt: skip
    return v


def panel_width(vw: int) -> int:
    """NR, the micro-kernel's tile width (and B's packed panel width) for vector width vw."""
    if vw not in WIDTHS:
        raise Error(f"no GEMM micro-kernel for vector width {vw} (8 or 16)")
    return 2 * vw


def row_height(vw: int) -> int:
    """MR, the micro-kernel's tile height (and A's packed panel height) for vector width
    vw: 8 rows with AVX-512 (16 accumulators of its 32 registers), 6 with AVX2 (12 of 16).
    8 rows also divide the channel counts of most convolutions (64, 128...), which 6 rows
    leave an edge tile of."""
    return MR_AVX512 if vw >= 16 else MR_AVX2


def runtime_ir(threads: bool, vw: int = 8, prologue: bool = False, direct: bool = False) -> str:
    """`xr_sgemm` and its helpers for vector width `vw` (the thread pool is declared by
    kernels/parallel.py); with `prologue`, also B's packing through a prologue (some call
    passes `ps`); with `direct`, the dispatch to kernels/gemm_direct.py's
    `xr_gemm_direct` (which the module must then hold)."""
    nr = panel_width(vw)
    w = Writer()
    w.lines.append(HEADER + CONV_HEADER)
    micro_kernel(w, vw)
    edge_tile(w, nr)
    pack(w, "@xr_pack_a", row_height(vw))
    pack(w, "@xr_pack_b", nr)
    if prologue:
        pack(w, "@xr_pack_b_pro", nr, prologue=True)
    pack_conv(w, nr, vw)
    gemm_serial(w, nr, prologue, direct)
    gemv(w)
    serial_entry(w)
    split_entry(
        w, "@xr_sgemm", PARAMS, "@xr_gemm_part", threads, nr, PARALLEL_MIN, _rows, _columns,
        row_height(vw),
    )  # fmt: skip
    return w.text()
