"""The runtime's f32 depthwise convolution (select-kernels: an NCHW `relay.nn.conv2d` with
one input channel per group, `#kernel.depthwise`): one function per declaration, its
geometry and epilogue compiled in.

    void @name(ptr x, ptr w, [ptr scale], [ptr shift], [ptr residual], ptr y)

Output plane p (image p / O, channel o = p % O) reads input plane (p / O) * C + o / M
(M = O / C outputs per input channel) and the KH x KW weights of channel o. Per plane:

- the input plane is copied into a zero-padded buffer (PT rows and PL columns before it,
  as many zero rows and columns after it as the windows and the last vector reach); with
  column stride 2 each padded row is stored as its two phases, the even and the odd
  columns, so every tap of a vector of outputs is one contiguous load;
- each vector of an output row is the sum over the taps of a load times the tap's weight
  (fused multiply-adds, the weights broadcast once per plane), then the epilogue
  y = acc * scale[o] + shift[o] (+ residual), relu, and one (masked) store.

The buffer is allocated and zeroed once per call and thread; its padding stays zero since
each plane's copy writes the same interior. From PARALLEL_MIN outputs the planes are split
over the thread pool. The linalg lowering wrote the padded input out (five loops over it),
then read it back in a loop LLVM vectorized only along an output row.
"""

from __future__ import annotations

from xrelay.dialects.kernel import DepthwiseSpec
from xrelay.lowering.kernels.irtext import Writer, concat, first_lanes, splat
from xrelay.lowering.kernels.parallel import split_planes

PARALLEL_MIN = 1 << 14  # outputs from which the planes are split over threads
NEG_INF = "0xFFF0000000000000"
PARAMS = [
    ("ptr", "%x"), ("ptr", "%w"), ("ptr", "%sc"), ("ptr", "%sh"), ("ptr", "%res"),
    ("ptr", "%y"), ("i64", "%planes"),
]  # fmt: skip


def width(spec: DepthwiseSpec, vw: int) -> int:
    """The vector width of the spec's rows: 8 floats for output rows of at most 8 (a
    16-float vector would be more than half padding), else the host's."""
    return 8 if spec.ow <= 8 else vw


def layout(spec: DepthwiseSpec, vw: int) -> tuple[int, int, int]:
    """(rows, phase length, phases) of the padded buffer: its rows cover the input's and
    every window's; each of the `phases` (the column stride) holds what the output vectors
    read (up to the last vector's end) and what the copy writes (whole vectors)."""
    phases = spec.sw
    rows = max(spec.pt + spec.h, (spec.oh - 1) * spec.sh + (spec.kh - 1) * spec.dh + 1)
    reach = -(-spec.ow // vw) * vw + (spec.kw - 1) * spec.dw // phases
    chunk = phases * vw
    written = (spec.pl + phases - 1) // phases + -(-spec.w // chunk) * vw
    length = -(-max(reach, written) // 16) * 16
    return rows, length, phases


def part(w: Writer, name: str, spec: DepthwiseSpec, vw: int) -> None:
    """Emit `name`_part(PARAMS, p0, p1): the planes [p0, p1)."""
    v, m = f"<{vw} x float>", f"<{vw} x i1>"
    rows, length, phases = layout(spec, vw)
    wb = phases * length  # floats per padded row
    taps = spec.kh * spec.kw
    plane_in, plane_out = spec.h * spec.w, spec.oh * spec.ow

    def load(at: str, mask: str) -> str:
        return w.op(
            f"call {v} @llvm.masked.load.v{vw}f32.p0(ptr {at}, i32 4, {m} {mask}, {v} zeroinitializer)"
        )

    with w.function("void", f"{name}_part", [*PARAMS, ("i64", "%p0"), ("i64", "%p1")]):
        floats = rows * wb
        buf = w.op(f"call ptr @aligned_alloc(i64 64, i64 {-(-floats * 4 // 64) * 64})")
        with w.loop("z", "0", str(floats), str(vw)) as z:
            w.do(f"store {v} zeroinitializer, ptr {w.gep(buf, z)}, align 4")
        with w.loop("p", "%p0", "%p1") as p:
            image = w.op(f"sdiv i64 {p}, {spec.o}")
            o = w.op(f"srem i64 {p}, {spec.o}")
            src_plane = w.add(w.mul(image, str(spec.c)), w.op(f"sdiv i64 {o}, {spec.m}"))
            xp = w.gep("%x", w.mul(src_plane, str(plane_in)))
            # the input plane into the buffer's interior
            with w.loop("iy", "0", str(spec.h)) as iy:
                src = w.gep(xp, w.mul(iy, str(spec.w)))
                dst = w.gep(buf, w.mul(w.add(iy, str(spec.pt)), str(wb)))
                if phases == 1:
                    with w.loop("c", "0", str(spec.w), str(vw)) as c:
                        val = load(w.gep(src, c), first_lanes(w, w.sub(str(spec.w), c), vw))
                        at = w.gep(dst, w.add(c, str(spec.pl)))
                        w.do(f"store {v} {val}, ptr {at}, align 4")
                else:
                    evens = ", ".join(f"i32 {2 * t}" for t in range(vw))
                    odds = ", ".join(f"i32 {2 * t + 1}" for t in range(vw))
                    with w.loop("c", "0", str(spec.w), str(2 * vw)) as c:
                        rest = w.sub(str(spec.w), c)
                        lo = load(w.gep(src, c), first_lanes(w, rest, vw))
                        hi = load(
                            w.gep(src, w.add(c, str(vw))),
                            first_lanes(w, w.sub(rest, str(vw)), vw),
                        )
                        pair = concat(w, [lo, hi], vw, "float")
                        half = w.op(f"sdiv i64 {c}, 2")
                        # input column c + 2t is padded column c + 2t + PL
                        for first, lanes in ((0, evens), (1, odds)):
                            col = first + spec.pl
                            val = w.op(
                                f"shufflevector <{2 * vw} x float> {pair}, <{2 * vw} x float> poison, <{vw} x i32> <{lanes}>"
                            )
                            at = w.gep(dst, w.add(half, str((col % 2) * length + col // 2)))
                            w.do(f"store {v} {val}, ptr {at}, align 4")
            weights = [
                splat(w, w.op(f"load float, ptr {w.gep('%w', w.add(w.mul(o, str(taps)), str(t)))}"), vw, "float")
                for t in range(taps)
            ]  # fmt: skip
            scale = shift = None
            if spec.scale:
                scale = splat(w, w.op(f"load float, ptr {w.gep('%sc', o)}"), vw, "float")
            if spec.shift:
                shift = splat(w, w.op(f"load float, ptr {w.gep('%sh', o)}"), vw, "float")
            yp = w.gep("%y", w.mul(p, str(plane_out)))
            rp = w.gep("%res", w.mul(p, str(plane_out))) if spec.residual else None
            with (
                w.loop("oy", "0", str(spec.oh)) as oy,
                w.loop("ox", "0", str(spec.ow), str(vw)) as ox,
            ):
                acc = "zeroinitializer"
                for ti in range(spec.kh):
                    row = w.gep(
                        buf, w.mul(w.add(w.mul(oy, str(spec.sh)), str(ti * spec.dh)), str(wb))
                    )
                    for tj in range(spec.kw):
                        off = tj * spec.dw
                        at = w.gep(row, w.add(ox, str((off % phases) * length + off // phases)))
                        val = w.op(f"load {v}, ptr {at}, align 4")
                        wt = weights[ti * spec.kw + tj]
                        acc = w.op(f"call {v} @llvm.fma.v{vw}f32({v} {val}, {v} {wt}, {v} {acc})")
                keep = first_lanes(w, w.sub(str(spec.ow), ox), vw)
                at = w.add(w.mul(oy, str(spec.ow)), ox)
                if scale is not None:
                    acc = w.op(f"fmul {v} {acc}, {scale}")
                if shift is not None:
                    acc = w.op(f"fadd {v} {acc}, {shift}")
                if rp is not None:
                    acc = w.op(f"fadd {v} {acc}, {load(w.gep(rp, at), keep)}")
                if spec.relu:
                    acc = w.op(f"call {v} @llvm.maximum.v{vw}f32({v} {acc}, {v} zeroinitializer)")
                w.do(
                    f"call void @llvm.masked.store.v{vw}f32.p0({v} {acc}, ptr {w.gep(yp, at)}, i32 4, {m} {keep})"
                )
        w.do(f"call void @free(ptr {buf})")


def runtime_ir(specs: dict[str, DepthwiseSpec], threads: bool, vw: int) -> str:
    """One function per declaration of `specs` (name -> spec) for vector width `vw` (on
    the thread pool with `threads`); the GEMM's header (gemm.HEADER: the fused
    multiply-adds, masked loads and stores, llvm.maximum, smin, aligned_alloc and free)
    must be in the module."""
    w = Writer()
    for name, spec in specs.items():
        part(w, f"@{name}.dw", spec, width(spec, vw))
        outputs = spec.planes * spec.oh * spec.ow

        def worth(w: Writer, big: bool = outputs >= PARALLEL_MIN and spec.planes > 1) -> str:
            return "true" if big else "false"

        split_planes(w, f"@{name}.dw", PARAMS, "%planes", worth, threads)
        flags = (("%sc", spec.scale), ("%sh", spec.shift), ("%res", spec.residual))
        params = [
            ("ptr", "%x"),
            ("ptr", "%w"),
            *(("ptr", p) for p, on in flags if on),
            ("ptr", "%y"),
        ]
        with w.function("void", f"@{name}", params, linkage="dso_local"):
            args = ["ptr %x", "ptr %w", *(f"ptr {p if on else 'null'}" for p, on in flags)]
            w.do(f"call void @{name}.dw({', '.join(args)}, ptr %y, i64 {spec.planes})")
    return w.text()
