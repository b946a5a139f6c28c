"""The runtime's f32 Winograd transforms (select-kernels: `relay.nn.winograd_input` and
`relay.nn.winograd_output`, `#kernel.winograd`; the matrices in dialects/winograd.py):
one function per declaration, its geometry and epilogue compiled in.

    void @name(ptr x, ptr v)                                    input transform
    void @name(ptr m, [ptr scale], [ptr shift], [ptr residual], ptr y)   output transform

A unit of work is a plane (an image's channel). Per plane and row of tiles, one vector of
tiles at a time (a lane per tile):

- input: the plane is first copied into a zero-padded buffer as its m column phases
  (padded.py), so value (y, x) of a vector of tiles is one contiguous load; each tile d
  becomes B^T d B in registers (the rows' pass, then the columns', as the lowering sums
  them) and the alpha^2 values are stored, each into its term's [TH, TW + 1] rows (the
  extra tile of a row is scratch that the product skips);
- output: the alpha^2 products of a vector of tiles are loaded, each becomes A^T M A in
  registers, and each of its m output rows is interleaved back into output order (tile
  t's column x is column m t + x) and stored with the epilogue y * scale[k] + shift[k]
  (+ residual), relu, cropped to [OH, OW] by masks.

The linalg lowering wrote the padded input (five loops), each transform's half-way result
and the uncropped output to memory, one pass each. From PARALLEL_MIN values the planes are
split over the thread pool.
"""

from __future__ import annotations

import numpy as np
from xrelay.dialects import winograd
from xrelay.dialects.kernel import WinogradSpec
from xrelay.lowering.kernels import epilogue
from xrelay.lowering.kernels.irtext import Writer, concat, first_lanes, splat
from xrelay.lowering.kernels.padded import copy_plane, written
from xrelay.lowering.kernels.parallel import split_planes

PARALLEL_MIN = 1 << 14  # transformed values from which the planes are split over threads


def width(tiles: int, vw: int) -> int:
    """The vector width for rows of `tiles` tiles: 8 floats for at most 8 tiles."""
    return 8 if tiles <= 8 else vw


def _combine(w: Writer, vw: int, row: np.ndarray, values: list[str]) -> str:
    """sum_j row[j] * values[j] in order, the zero coefficients skipped (a product by 1 or
    -1 is an add or a subtract)."""
    v = f"<{vw} x float>"
    acc = None
    for coef, value in zip(row, values):
        if coef == 0:
            continue
        if coef in (1, -1):
            term = value
        else:
            term = w.op(f"fmul {v} {value}, {splat(w, repr(float(coef)), vw, 'float')}")
        if acc is None:
            acc = term if coef != -1 else w.op(f"fneg {v} {term}")
        else:
            acc = w.op(f"{'fsub' if coef == -1 else 'fadd'} {v} {acc}, {term}")
    assert acc is not None
    return acc


def _transform(w: Writer, vw: int, p: np.ndarray, q: np.ndarray, d: list[list[str]]) -> list:
    """P d Q^T for the vectors d[y][x]: the rows' pass (over y) first, then the columns'."""
    rows = [[_combine(w, vw, p[a], [d[y][x] for y in range(len(d))]) for x in range(len(d[0]))]
            for a in range(p.shape[0])]  # fmt: skip
    return [[_combine(w, vw, q[b], r) for b in range(q.shape[0])] for r in rows]


def input_part(w: Writer, name: str, spec: WinogradSpec, vw: int) -> None:
    """Emit `name`_part(%x, %v, %planes, %p0, %p1)."""
    v = f"<{vw} x float>"
    m, alpha = spec.m, spec.m + 2
    tw1 = spec.tw + 1
    rows = max(spec.th * m + 2, spec.top + spec.h)
    reach = -(-tw1 // vw) * vw + (alpha - 1) // m
    length = -(-max(reach, written(spec.w, spec.left, m, vw)) // 16) * 16
    row_floats = m * length
    floats = rows * row_floats
    bt = winograd.input_transform(m)
    term = spec.planes * spec.th * tw1  # floats per term
    params = [("ptr", "%x"), ("ptr", "%v"), ("i64", "%planes"), ("i64", "%p0"), ("i64", "%p1")]
    with w.function("void", f"{name}_part", params):
        buf = w.op(f"call ptr @aligned_alloc(i64 64, i64 {-(-floats * 4 // 64) * 64})")
        with w.loop("z", "0", str(floats), str(vw)) as z:
            w.do(f"store {v} zeroinitializer, ptr {w.gep(buf, z)}, align 4")
        with w.loop("p", "%p0", "%p1") as p:
            src = w.gep("%x", w.mul(p, str(spec.h * spec.w)))
            size, before = (spec.h, spec.w), (spec.top, spec.left)
            copy_plane(w, vw, src, buf, size, before, m, length)
            plane = w.gep("%v", w.mul(p, str(spec.th * tw1)))
            with w.loop("i", "0", str(spec.th)) as i, w.loop("j", "0", str(tw1), str(vw)) as j:
                top = w.gep(buf, w.mul(i, str(m * row_floats)))
                d = [
                    [
                        w.op(
                            f"load {v}, ptr {w.gep(top, w.add(j, str(y * row_floats + (x % m) * length + x // m)))}, align 4"
                        )
                        for x in range(alpha)
                    ]
                    for y in range(alpha)
                ]
                out = _transform(w, vw, bt, bt, d)
                keep = first_lanes(w, w.sub(str(tw1), j), vw)
                at = w.add(w.mul(i, str(tw1)), j)
                for a in range(alpha):
                    for b in range(alpha):
                        dst = w.gep(plane, w.add(at, str((a * alpha + b) * term)))
                        w.do(
                            f"call void @llvm.masked.store.v{vw}f32.p0({v} {out[a][b]}, ptr {dst}, i32 4, <{vw} x i1> {keep})"
                        )
        w.do(f"call void @free(ptr {buf})")


def output_part(w: Writer, name: str, spec: WinogradSpec, vw: int) -> None:
    """Emit `name`_part(%m, %sc, %sh, %res, %y, %planes, %p0, %p1)."""
    v, mask_t = f"<{vw} x float>", f"<{vw} x i1>"
    m, alpha = spec.m, spec.m + 2
    oh, ow = spec.h, spec.w
    at_m = winograd.output_transform(m)
    term = spec.planes * spec.th * spec.tw
    params = [("ptr", "%mm"), ("ptr", "%sc"), ("ptr", "%sh"), ("ptr", "%res"), ("ptr", "%y"),
              ("i64", "%planes"), ("i64", "%p0"), ("i64", "%p1")]  # fmt: skip
    interleave = ", ".join(f"i32 {(t % m) * vw + t // m}" for t in range(m * vw))
    with w.function("void", f"{name}_part", params), w.loop("p", "%p0", "%p1") as p:
        k = w.op(f"srem i64 {p}, {spec.channels}")
        scale = shift = None
        if spec.scale:
            scale = splat(w, w.op(f"load float, ptr {w.gep('%sc', k)}"), vw, "float")
        if spec.shift:
            shift = splat(w, w.op(f"load float, ptr {w.gep('%sh', k)}"), vw, "float")
        plane = w.gep("%mm", w.mul(p, str(spec.th * spec.tw)))
        out_plane = w.mul(p, str(oh * ow))
        with w.loop("i", "0", str(spec.th)) as i, w.loop("j", "0", str(spec.tw), str(vw)) as j:
            keep = first_lanes(w, w.sub(str(spec.tw), j), vw)
            at = w.add(w.mul(i, str(spec.tw)), j)
            prods = [
                [
                    w.op(
                        f"call {v} @llvm.masked.load.v{vw}f32.p0(ptr {w.gep(plane, w.add(at, str((a * alpha + b) * term)))}, i32 4, {mask_t} {keep}, {v} zeroinitializer)"
                    )
                    for b in range(alpha)
                ]
                for a in range(alpha)
            ]
            o = _transform(w, vw, at_m, at_m, prods)  # o[y][x]: the tiles' (y, x)
            for y in range(m):
                row = w.add(w.mul(i, str(m)), str(y))
                whole = concat(w, o[y], vw, "float")
                mixed = w.op(
                    f"shufflevector <{m * vw} x float> {whole}, <{m * vw} x float> poison, <{m * vw} x i32> <{interleave}>"
                )
                with w.if_(w.lt(row, str(oh))):
                    for q in range(m):
                        lanes = ", ".join(f"i32 {q * vw + t}" for t in range(vw))
                        val = w.op(
                            f"shufflevector <{m * vw} x float> {mixed}, <{m * vw} x float> poison, <{vw} x i32> <{lanes}>"
                        )
                        col = w.add(w.mul(j, str(m)), str(q * vw))
                        store = first_lanes(w, w.sub(str(ow), col), vw)
                        where = w.add(out_plane, w.add(w.mul(row, str(ow)), col))
                        epilogue.store(w, vw, val, where, store, spec, scale, shift)


def runtime_ir(specs: dict[str, WinogradSpec], threads: bool, vw: int) -> str:
    """One function per declaration of `specs` (name -> spec) for vector width `vw` (on
    the thread pool with `threads`); the GEMM's header (gemm.HEADER: the masked loads and
    stores, llvm.maximum, smin, aligned_alloc and free) must be in the module."""
    w = Writer()
    for name, spec in specs.items():
        entry = f"@{name}.wino"
        values = spec.planes * spec.th * spec.tw * (spec.m + 2) ** 2
        big = values >= PARALLEL_MIN and spec.planes > 1

        def worth(w: Writer, big: bool = big) -> str:
            return "true" if big else "false"

        if spec.output:
            output_part(w, entry, spec, width(spec.tw, vw))
            params = [("ptr", "%mm"), ("ptr", "%sc"), ("ptr", "%sh"), ("ptr", "%res"),
                      ("ptr", "%y"), ("i64", "%planes")]  # fmt: skip
            split_planes(w, entry, params, "%planes", worth, threads)
            epilogue.wrapper(w, name, entry, ["%mm"], spec, spec.planes)
        else:
            input_part(w, entry, spec, width(spec.tw + 1, vw))
            params = [("ptr", "%x"), ("ptr", "%v"), ("i64", "%planes")]
            split_planes(w, entry, params, "%planes", worth, threads)
            with w.function("void", f"@{name}", params[:2], linkage="dso_local"):
                w.do(f"call void {entry}(ptr %x, ptr %v, i64 {spec.planes})")
    return w.text()
