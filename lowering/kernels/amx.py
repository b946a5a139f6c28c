"""The 8-bit GEMM on AMX tiles (Intel AMX-INT8): `xr_igemm_a` and `xr_igemm_b` with the
arguments and results of lowering/kernels/igemm.py, for hosts whose CPU and OS have AMX
(`jit.amx_tiles`; qnn-int-products then packs weights for it).

A micro-tile is 32 x 32 i32: 2 x 2 tiles of 16 x 16 (tiles 0-3), each step multiplying two
16-row tiles of A (tiles 4, 5: 16 rows x 64 bytes, 64 k values per row) by two tiles of B
(tiles 6, 7: 16 words of 4 k values per row, 16 rows = 64 k) with `tdpbusd` (A the u8
data, B the s8 weight: xr_igemm_a) or `tdpbsud` (A the s8 weight, B the u8 data: a
convolution's columns, xr_igemm_b). Products are exact in i32, as igemm's.

Layouts, per K block of AMX_KC values (kcg = its groups of 4 values, rounded up to 16 so every
step is a whole tile; zeros past K):
- A: rows padded to 32, tile-major in panels of 32 rows: each step's 32 rows of 64 bytes
  (16 words) together, word (row, g) of a panel at ((g / 16) * 32 + row) * 16 + g % 16, so
  a tile is 1 KB read in order. Packed at run time from
  the data (xr_tpack_a) or at build time from a convolution's weight
  (prepack.pack_tile_rows).
- B: igemm's panels of 32 columns, word (panel, g, column) at (panel * kcg + g) * 32 +
  column: a tile is 16 rows of 64 bytes, 128 bytes apart. Packed by igemm's xr_ipack_b (or
  its implicit im2col) or at build time (prepack.pack_words with `multiple` 16).

Each tile goes through a 32 x 32 scratch tile (AMX stores tiles to memory) and igemm's
xr_iedge, which adds partial sums and the correction vectors and stores C or requantizes
into Q. The serial part loads the tile configuration (every tile 16 rows of 64 bytes) and
releases it when done. Linux lets a process use AMX's tile data only after asking
(arch_prctl ARCH_REQ_XCOMP_PERM); the runtime asks once (xr_amx_ready), and if the OS
refuses it computes the same tiles with scalar loops (xr_tukr_slow_<u>), slowly but exactly.
"""

from __future__ import annotations

from xrelay.lowering.kernels.gemm import NC
from xrelay.lowering.kernels.iconv_pack import b_block
from xrelay.lowering.kernels.irtext import Writer, first_lanes, splat
from xrelay.lowering.kernels.prepack import AMX_KC

TILE = 16  # rows of a tile (and groups per step: 64 bytes a row)
ROWS = 32  # the micro-tile's rows and columns: 2 x 2 tiles
MC = 128  # rows of A packed at once (a multiple of ROWS)
ARCH_PRCTL, REQ_XCOMP_PERM, XTILEDATA = 158, 0x1023, 18

_COLSB = "".join("\\40\\00" if t < 8 else "\\00\\00" for t in range(16))
_ROWS = "".join("\\10" if t < 8 else "\\00" for t in range(16))
CONFIG = "\\01" + "\\00" * 15 + _COLSB + _ROWS  # palette 1; tiles 0-7: 16 rows x 64 bytes

HEADER = f"""
declare void @llvm.x86.ldtilecfg(ptr)
declare void @llvm.x86.tilerelease()
declare void @llvm.x86.tilezero(i8 immarg)
declare void @llvm.x86.tileloadd64(i8 immarg, ptr, i64)
declare void @llvm.x86.tilestored64(i8 immarg, ptr, i64)
declare void @llvm.x86.tdpbusd(i8 immarg, i8 immarg, i8 immarg)
declare void @llvm.x86.tdpbsud(i8 immarg, i8 immarg, i8 immarg)
declare i64 @syscall(i64, ...)
@xr_amx_config = internal constant [64 x i8] c"{CONFIG}", align 64
@xr_amx_state = internal global i32 0

define internal i1 @xr_amx_ready() nounwind {{
entry:
  %s = load atomic i32, ptr @xr_amx_state monotonic, align 4
  %known = icmp ne i32 %s, 0
  br i1 %known, label %done, label %ask
ask:
  %r = call i64 (i64, ...) @syscall(i64 {ARCH_PRCTL}, i64 {REQ_XCOMP_PERM}, i64 {XTILEDATA})
  %ok = icmp eq i64 %r, 0
  %v = select i1 %ok, i32 1, i32 -1
  store atomic i32 %v, ptr @xr_amx_state monotonic, align 4
  br label %done
done:
  %f = phi i32 [ %s, %entry ], [ %v, %ask ]
  %ready = icmp eq i32 %f, 1
  ret i1 %ready
}}
"""


def micro_kernel(w: Writer, unsigned: str) -> None:
    """xr_tukr_<u>(kcg, ap, bp, t): the 32 x 32 i32 tile t (rows 128 bytes apart) =
    Ap[32 rows x kcg words] times Bp[kcg words x 32 columns]; kcg a multiple of 16."""
    dp = "@llvm.x86.tdpbusd" if unsigned == "a" else "@llvm.x86.tdpbsud"
    params = [("i64", "%kcg"), ("ptr", "%ap"), ("ptr", "%bp"), ("ptr", "%t")]
    with w.function("void", f"@xr_tukr_{unsigned}", params):
        for c in range(4):
            w.do(f"call void @llvm.x86.tilezero(i8 {c})")
        with w.loop("s", "0", "%kcg", str(TILE)) as s:
            a0 = w.gep("%ap", w.mul(s, str(ROWS)), "i32")  # step s / 16: 32 rows of 64 bytes
            w.do(f"call void @llvm.x86.tileloadd64(i8 4, ptr {a0}, i64 64)")
            a1 = w.gep(a0, str(TILE * TILE), "i32")
            w.do(f"call void @llvm.x86.tileloadd64(i8 5, ptr {a1}, i64 64)")
            b0 = w.gep("%bp", w.mul(s, str(ROWS)), "i32")
            w.do(f"call void @llvm.x86.tileloadd64(i8 6, ptr {b0}, i64 {ROWS * 4})")
            b1 = w.gep(b0, str(TILE), "i32")
            w.do(f"call void @llvm.x86.tileloadd64(i8 7, ptr {b1}, i64 {ROWS * 4})")
            for c, (a, b) in enumerate(((4, 6), (4, 7), (5, 6), (5, 7))):
                w.do(f"call void {dp}(i8 {c}, i8 {a}, i8 {b})")
        for c in range(4):
            at = w.gep("%t", str((c // 2) * TILE * ROWS + (c % 2) * TILE), "i32")
            w.do(f"call void @llvm.x86.tilestored64(i8 {c}, ptr {at}, i64 {ROWS * 4})")


def slow_kernel(w: Writer, unsigned: str) -> None:
    """xr_tukr_slow_<u>: xr_tukr_<u>'s tile with scalar loops (the OS refused AMX)."""
    ext_a, ext_b = ("zext", "sext") if unsigned == "a" else ("sext", "zext")
    params = [("i64", "%kcg"), ("ptr", "%ap"), ("ptr", "%bp"), ("ptr", "%t")]
    with (
        w.function("void", f"@xr_tukr_slow_{unsigned}", params),
        w.loop("r", "0", str(ROWS)) as r,
        w.loop("c", "0", str(ROWS)) as c,
    ):
        acc = w.var("i32", "0", "acc")
        arow = w.gep("%ap", w.mul(r, "64"), "i8")
        with w.loop("k", "0", w.mul("%kcg", "4")) as k:
            g = w.op(f"sdiv i64 {k}, 4")
            bk = w.add(w.mul(w.add(w.mul(g, str(ROWS)), c), "4"), w.op(f"srem i64 {k}, 4"))
            at = w.add(w.mul(w.op(f"sdiv i64 {k}, 64"), str(ROWS * 64)), w.op(f"srem i64 {k}, 64"))
            pa, pb = w.gep(arow, at, "i8"), w.gep("%bp", bk, "i8")
            x = w.op(f"{ext_a} i8 {w.op(f'load i8, ptr {pa}')} to i32")
            y = w.op(f"{ext_b} i8 {w.op(f'load i8, ptr {pb}')} to i32")
            w.set(acc, w.op(f"add i32 {w.get(acc)}, {w.op(f'mul i32 {x}, {y}')}"))
        w.do(f"store i32 {w.get(acc)}, ptr {w.gep('%t', w.add(w.mul(r, str(ROWS)), c), 'i32')}")


def pack_rows(w: Writer) -> None:
    """xr_tpack_a(src, rs, cs, rows, k0, kcg, K, dst, flip): rows [0, rows) padded to 32,
    k [k0, k0 + 4 kcg), of data bytes (element (r, k) at src[r*rs + k*cs], xor flip) ->
    A's tile-major layout (see above), zero past the rows and past K. A row whose k is
    contiguous is copied 64 bytes at a time (masked at K), a padding row zeroed so."""
    params = [("ptr", "%src"), ("i64", "%rs"), ("i64", "%cs"), ("i64", "%rows"),
              ("i64", "%k0"), ("i64", "%kcg"), ("i64", "%K"), ("ptr", "%dst"),
              ("i64", "%flip")]  # fmt: skip
    with w.function("void", "@xr_tpack_a", params):
        flip = w.op("trunc i64 %flip to i8")
        v = "<64 x i8>"
        fv = splat(w, flip, 64, "i8")
        bytes_ = w.mul("%kcg", "4")
        unit_k = w.op("icmp eq i64 %cs, 1")
        inside_k = w.op(f"icmp sle i64 {w.add('%k0', bytes_)}, %K")
        padded = w.op(f"and i64 {w.add('%rows', str(ROWS - 1))}, {-ROWS}")
        with w.loop("r", "0", padded) as r:
            panel = w.op(f"and i64 {r}, {-ROWS}")  # the row's panel, then its 64 bytes
            first = w.add(w.mul(panel, bytes_), w.mul(w.op(f"and i64 {r}, {ROWS - 1}"), "64"))
            out = w.gep("%dst", first, "i8")
            inside = w.op(f"icmp slt i64 {r}, %rows")
            row = w.gep("%src", w.add(w.mul(r, "%rs"), w.mul("%k0", "%cs")), "i8")
            padding = w.op(f"xor i1 {inside}, true")
            fast, slow, join = w.if_else(w.op(f"or i1 {padding}, {unit_k}"), "row")
            w.block(fast)  # 64 bytes at a time
            whole = w.op(f"and i1 {inside}, {inside_k}")
            plain, masked, copied = w.if_else(whole, "whole")
            w.block(plain)
            with w.loop("o", "0", bytes_, "64") as o:
                x = w.op(f"load {v}, ptr {w.gep(row, o, 'i8')}, align 1")
                at = w.mul(o, str(ROWS))  # chunk o / 64 follows 32 rows' chunks o / 64 - 1
                w.do(f"store {v} {w.op(f'xor {v} {x}, {fv}')}, ptr {w.gep(out, at, 'i8')}, align 1")
            w.br(copied)
            w.block(masked)  # the lanes before K (none in a padding row)
            with w.loop("o", "0", bytes_, "64") as o:
                left = w.sub("%K", w.add("%k0", o))
                mask = first_lanes(w, w.op(f"select i1 {inside}, i64 {left}, i64 0"), 64)
                x = w.op(
                    f"call {v} @llvm.masked.load.v64i8.p0(ptr {w.gep(row, o, 'i8')}, i32 1, <64 x i1> {mask}, {v} zeroinitializer)"
                )
                x = w.op(
                    f"select <64 x i1> {mask}, {v} {w.op(f'xor {v} {x}, {fv}')}, {v} zeroinitializer"
                )
                w.do(f"store {v} {x}, ptr {w.gep(out, w.mul(o, str(ROWS)), 'i8')}, align 1")
            w.br(copied)
            w.block(copied)
            w.br(join)
            w.block(slow)
            with w.loop("o", "0", bytes_) as o:
                value = w.var("i8", "0", "val")
                k = w.add("%k0", o)
                with w.if_(w.op(f"and i1 {inside}, {w.op(f'icmp slt i64 {k}, %K')}")):
                    x = w.op(f"load i8, ptr {w.gep(row, w.mul(o, '%cs'), 'i8')}")
                    w.set(value, w.op(f"xor i8 {x}, {flip}"))
                at = w.add(w.mul(w.op(f"and i64 {o}, -64"), str(ROWS)), w.op(f"and i64 {o}, 63"))
                w.do(f"store i8 {w.get(value)}, ptr {w.gep(out, at, 'i8')}")
            w.br(join)
            w.block(join)


def gemm_serial(
    w: Writer, unsigned: str, params: list[tuple[str, str]], name: str | None = None
) -> None:
    """xr_igemm_serial_<u> on tiles: igemm's blocking with 32 x 32 micro-tiles, every tile
    through the scratch tile and xr_iedge. xr_igemm_a takes no convolution (`geo` null:
    qnn-int-products makes no pixel-major product for AMX)."""
    kcg_max = AMX_KC // 4
    with w.function("void", name or f"@xr_igemm_serial_{unsigned}", params):
        ready = w.op("call i1 @xr_amx_ready()")
        with w.if_(ready):
            w.do("call void @llvm.x86.ldtilecfg(ptr @xr_amx_config)")
        ap = w.op(f"call ptr @aligned_alloc(i64 64, i64 {MC * kcg_max * 4})")
        bp = w.op(f"call ptr @aligned_alloc(i64 64, i64 {NC * kcg_max * 4 + ROWS * kcg_max * 4})")
        tmp = w.op(f"alloca [{ROWS * ROWS} x i32], align 64")
        kg_all = w.op(f"sdiv i64 {w.add('%K', '3')}, 4")
        zeros, ones = "@xr_izeros", "@xr_iones"
        nulls = {p: w.op(f"icmp eq ptr %{p}, null") for p in ("trow", "tcol", "qrow", "qcol", "q")}
        requant = ", ".join(
            f"float {w.op(f'sitofp i64 {p} to float')}" for p in ("%qzp", "%qlo", "%qhi")
        )
        conv = w.op("icmp ne ptr %geo, null") if unsigned == "b" else "false"
        block = w.var("ptr", "null", "cols")
        with w.if_(conv):
            w.set(block, w.op(f"call ptr @aligned_alloc(i64 64, i64 {AMX_KC * NC})"))
        cols = w.get(block)
        plain = w.op(f"and i1 {w.op('icmp eq i64 %bpk, 0')}, {w.op(f'xor i1 {conv}, true')}")
        with w.loop("jc", "0", "%N", str(NC)) as jc:
            nc = w.min(str(NC), w.sub("%N", jc))
            with w.loop("pg", "0", kg_all, str(kcg_max)) as pg:
                kcg = w.min(str(kcg_max), w.sub(kg_all, pg))
                kcgp = w.op(f"and i64 {w.add(kcg, str(TILE - 1))}, {-TILE}")
                k0 = w.mul(pg, "4")
                acc = w.op(f"zext i1 {w.op(f'icmp ne i64 {pg}, 0')} to i64")
                epi = w.op(f"zext i1 {w.op(f'icmp sge i64 {w.add(pg, kcg)}, {kg_all}')} to i64")
                rows = w.mul(kcg, "4")
                bblock = b_block(w, jc, nc, pg, k0, rows, kcgp, conv, plain, cols, bp)
                with w.loop("ic", "0", "%M", str(MC)) as ic:
                    mc = w.min(str(MC), w.sub("%M", ic))
                    with w.if_(w.op("icmp eq i64 %apk, 0")):
                        asrc = w.gep("%a", w.mul(ic, "%rsa"), "i8")
                        w.do(
                            f"call void @xr_tpack_a(ptr {asrc}, i64 %rsa, i64 %csa, i64 {mc}, i64 {k0}, i64 {kcgp}, i64 %K, ptr {ap}, i64 %flip)"
                        )
                    packed_a = w.gep(
                        "%a", w.add(w.mul(pg, "%mpad"), w.mul(w.add("%arow0", ic), kcgp)), "i32"
                    )
                    ablock = w.op(
                        f"select i1 {w.op('icmp ne i64 %apk, 0')}, ptr {packed_a}, ptr {ap}"
                    )
                    with w.loop("jr", "0", nc, str(ROWS)) as jr:
                        nrv = w.min(str(ROWS), w.sub(nc, jr))
                        bpp = w.gep(bblock, w.mul(jr, kcgp), "i32")
                        with w.loop("ir", "0", mc, str(ROWS)) as ir:
                            mr = w.min(str(ROWS), w.sub(mc, ir))
                            app = w.gep(ablock, w.mul(ir, kcgp), "i32")
                            i0, j0 = w.add(ic, ir), w.add(jc, jr)
                            fast, slow, join = w.if_else(ready, "amx")
                            for label, kernel in ((fast, "xr_tukr"), (slow, "xr_tukr_slow")):
                                w.block(label)
                                w.do(
                                    f"call void @{kernel}_{unsigned}(i64 {kcgp}, ptr {app}, ptr {bpp}, ptr {tmp})"
                                )
                                w.br(join)
                            w.block(join)
                            ctile = w.gep("%c", w.add(w.mul(i0, "%ldc"), j0), "i32")

                            def vector(p: str, index: str, default: str) -> str:
                                at = w.gep(f"%{p}", index, "i32")
                                return w.op(f"select i1 {nulls[p]}, ptr {default}, ptr {at}")

                            last = w.op(f"icmp ne i64 {epi}, 0")
                            has_q = w.op(f"xor i1 {nulls['q']}, true")
                            store_q = w.op(f"and i1 {has_q}, {last}")
                            qbytes = w.gep("%q", w.add(w.mul(i0, "%ldc"), j0), "i8")
                            qtile = w.op(f"select i1 {store_q}, ptr {qbytes}, ptr null")
                            w.do(
                                f"call void @xr_iedge(ptr {tmp}, ptr {ctile}, i64 %ldc, i64 {mr}, i64 {nrv}, i64 {acc}, i64 {epi}, "
                                f"ptr {vector('trow', i0, zeros)}, ptr {vector('tcol', j0, zeros)}, ptr {qtile}, "
                                f"ptr {vector('qrow', i0, ones)}, ptr {vector('qcol', j0, ones)}, {requant})"
                            )
        with w.if_(ready):
            w.do("call void @llvm.x86.tilerelease()")
        w.do(f"call void @free(ptr {ap})")
        w.do(f"call void @free(ptr {bp})")
        w.do(f"call void @free(ptr {cols})")
