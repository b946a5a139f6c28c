"""The runtime's f32 convolution for few input channels per group (select-kernels:
`#kernel.narrow_conv`): depthwise convolutions (one input channel per group) and stems
(three input channels), NCHW, whose GEMM would have 1-4 input channels' taps per product
(K of 9 to 147): too short to pay for a tile's loads and stores. One function per
declaration, its geometry and epilogue compiled in.

    void @name(ptr x, ptr w, [ptr scale], [ptr shift], [ptr residual], ptr y)

A unit of work is an image, a group and a block of OB of its OG output channels. Per unit:

- the group's CG input planes are copied into a zero-padded buffer (PT rows and PL columns
  before each, as many zero rows and columns after it as the windows and the last vectors
  reach); with column stride 2 each padded row is stored as its two phases, the even and
  the odd columns (padded.py), so every tap of a vector of outputs is one contiguous
  load. A thread copies a group once for all its consecutive units of that group;
- for each output row, one or two vectors of it at a time (its last step only as many
  as are left): each tap (c, i, j) is one load,
  multiplied into the OB channels' sums with the tap's weights (fused multiply-adds, the
  weights broadcast; for a depthwise convolution once per unit), then the epilogue
  y = acc * scale[o] + shift[o] (+ residual), relu, and one (masked) store per vector.

The buffer is allocated and zeroed once per call and thread; its padding stays zero since
each copy writes the same interior. From PARALLEL_MIN outputs the units are split over
the thread pool. Output rows end in a masked vector: the GEMM's 32-column tiles crossed
output rows and went through a scratch tile there.
"""

from __future__ import annotations

from xrelay.dialects.kernel import NarrowConvSpec
from xrelay.lowering.kernels import epilogue
from xrelay.lowering.kernels.irtext import Writer, first_lanes, splat
from xrelay.lowering.kernels.padded import copy_plane, written
from xrelay.lowering.kernels.parallel import split_planes

PARALLEL_MIN = 1 << 14  # outputs from which the units are split over threads
MAX_CG = 4  # input channels per group (select-kernels: narrow_conv_spec)
ROLLED = 32  # taps (CG x KH x KW) above which the window's rows are a loop
PARAMS = [
    ("ptr", "%x"), ("ptr", "%w"), ("ptr", "%sc"), ("ptr", "%sh"), ("ptr", "%res"),
    ("ptr", "%y"), ("i64", "%units"),
]  # fmt: skip


def block(og: int) -> int:
    """OB: the output channels of a unit, the largest divisor of OG up to 8."""
    return max(d for d in range(1, min(og, 8) + 1) if og % d == 0)


def width(spec: NarrowConvSpec, vw: int) -> int:
    """The vector width of the spec's rows: 8 floats for output rows of at most 8 (a
    16-float vector would be more than half padding), else the host's."""
    return 8 if spec.ow <= 8 else vw


def layout(spec: NarrowConvSpec, vw: int) -> tuple[int, int, int]:
    """(rows, phase length, phases) of one padded plane: its rows cover the input's and
    every window's; each of the `phases` (the column stride) holds what the output vectors
    read (up to the last pair of vectors' end) and what the copy writes (whole vectors)."""
    phases = spec.sw
    rows = max(spec.pt + spec.h, (spec.oh - 1) * spec.sh + (spec.kh - 1) * spec.dh + 1)
    reach = -(-spec.ow // (2 * vw)) * 2 * vw + (spec.kw - 1) * spec.dw // phases
    length = -(-max(reach, written(spec.w, spec.pl, phases, vw)) // 16) * 16
    return rows, length, phases


def part(w: Writer, name: str, spec: NarrowConvSpec, vw: int, registers: int = 32) -> None:
    """Emit `name`_part(PARAMS, p0, p1): the units [p0, p1), in `vw`-float vectors of which
    the target has `registers` (16 with AVX2, 32 with AVX-512)."""
    v = f"<{vw} x float>"
    rows, length, phases = layout(spec, vw)
    wb = phases * length  # floats per padded row
    plane = rows * wb  # floats per padded plane
    taps = spec.cg * spec.kh * spec.kw
    ob = block(spec.og)
    blocks = spec.og // ob
    per_image = spec.groups * blocks
    o_all = spec.groups * spec.og
    plane_in, plane_out = spec.h * spec.w, spec.oh * spec.ow
    fma = f"@llvm.fma.v{vw}f32"
    # two vectors of a row at a time where the sums fit the registers (and the row has two)
    pairs = 2 if spec.ow > vw and 2 * ob + 3 <= registers else 1
    keep_weights = taps * ob <= 9  # a depthwise unit's weights stay in registers
    # large windows (7x7 stems) loop over their rows: fully unrolled, LLVM took 0.8 s
    rolled = taps > ROLLED

    with w.function("void", f"{name}_part", [*PARAMS, ("i64", "%p0"), ("i64", "%p1")]):
        floats = spec.cg * plane
        buf = w.op(f"call ptr @aligned_alloc(i64 64, i64 {-(-floats * 4 // 64) * 64})")
        with w.loop("z", "0", str(floats), str(vw)) as z:
            w.do(f"store {v} zeroinitializer, ptr {w.gep(buf, z)}, align 4")
        loaded = w.var("i64", "-1", "loaded")  # the (image, group) in the buffer
        with w.loop("u", "%p0", "%p1") as u:
            image = w.op(f"sdiv i64 {u}, {per_image}")
            rem = w.op(f"srem i64 {u}, {per_image}")
            group = w.op(f"sdiv i64 {rem}, {blocks}")
            first_o = w.add(
                w.mul(group, str(spec.og)), w.mul(w.op(f"srem i64 {rem}, {blocks}"), str(ob))
            )
            key = w.add(w.mul(image, str(spec.groups)), group)
            with w.if_(w.op(f"icmp ne i64 {key}, {w.get(loaded)}")):
                w.set(loaded, key)
                xp = w.gep("%x", w.mul(w.mul(key, str(spec.cg)), str(plane_in)))
                for c in range(spec.cg):
                    src, dst = w.gep(xp, str(c * plane_in)), w.gep(buf, str(c * plane))
                    size, before = (spec.h, spec.w), (spec.pt, spec.pl)
                    copy_plane(w, vw, src, dst, size, before, phases, length)
            wbase = w.gep("%w", w.mul(first_o, str(taps)))

            def weight(b: int, t: int) -> str:
                at = w.gep(wbase, str(b * taps + t))
                return splat(w, w.op(f"load float, ptr {at}"), vw, "float")

            kept = (
                [[weight(b, t) for t in range(taps)] for b in range(ob)] if keep_weights else None
            )

            def tap(accs: list[list[str]], c: int, ti: str, first: str, oy: str, ox: str) -> None:
                """Window row `ti` of input channel c (its taps' weights from index
                `first` on) into the sums `accs` (a vector each of len(accs[0]) along the
                output row from ox), in place."""
                pairs = len(accs[0])
                r = w.add(w.mul(oy, str(spec.sh)), w.mul(ti, str(spec.dh)))
                row = w.gep(buf, w.add(w.mul(r, str(wb)), str(c * plane)))
                for tj in range(spec.kw):
                    off = tj * spec.dw
                    at = w.gep(row, w.add(ox, str((off % phases) * length + off // phases)))
                    xs = [
                        w.op(f"load {v}, ptr {w.gep(at, str(q * vw))}, align 4")
                        for q in range(pairs)
                    ]
                    for b in range(ob):
                        if kept:
                            wt = kept[b][int(first) + tj]
                        else:
                            at_w = w.gep(wbase, w.add(first, str(b * taps + tj)))
                            wt = splat(w, w.op(f"load float, ptr {at_w}"), vw, "float")
                        for q in range(pairs):
                            accs[b][q] = w.op(
                                f"call {v} {fma}({v} {xs[q]}, {v} {wt}, {v} {accs[b][q]})"
                            )

            scales, shifts = [], []
            for b in range(ob):
                o = w.add(first_o, str(b))
                if spec.scale:
                    scales.append(splat(w, w.op(f"load float, ptr {w.gep('%sc', o)}"), vw, "float"))
                if spec.shift:
                    shifts.append(splat(w, w.op(f"load float, ptr {w.gep('%sh', o)}"), vw, "float"))
            out0 = w.mul(w.add(w.mul(image, str(o_all)), first_o), str(plane_out))

            def step(oy: str, ox: str, pairs: int) -> None:
                """Outputs [ox, ox + pairs * vw) of row oy (the last vector masked)."""
                if rolled:  # the window's rows a loop, the sums in variables
                    sums = [[w.var(v, "zeroinitializer", "acc") for _ in range(pairs)]
                            for _ in range(ob)]  # fmt: skip
                    with w.loop("ti", "0", str(spec.kh)) as ti:
                        accs = [[w.get(a) for a in row] for row in sums]
                        for c in range(spec.cg):
                            first = w.add(str(c * spec.kh * spec.kw), w.mul(ti, str(spec.kw)))
                            tap(accs, c, ti, first, oy, ox)
                        for row, values in zip(sums, accs):
                            for a, value in zip(row, values):
                                w.set(a, value)
                    accs = [[w.get(a) for a in row] for row in sums]
                else:
                    accs = [["zeroinitializer"] * pairs for _ in range(ob)]
                    for c in range(spec.cg):
                        for ti in range(spec.kh):
                            tap(accs, c, str(ti), str((c * spec.kh + ti) * spec.kw), oy, ox)
                for q in range(pairs):
                    col = w.add(ox, str(q * vw))
                    keep = first_lanes(w, w.sub(str(spec.ow), col), vw)
                    at = w.add(w.mul(oy, str(spec.ow)), col)
                    for b in range(ob):
                        where = w.add(w.add(out0, str(b * plane_out)), at)
                        shift = shifts[b] if spec.shift else None
                        scale = scales[b] if spec.scale else None
                        epilogue.store(w, vw, accs[b][q], where, keep, spec, scale, shift)

            # whole steps of `pairs` vectors, then the rest of the row in one step of as
            # many as it needs (a step of two over the end computed a masked vector for
            # nothing: ResNet-50's 7 x 7 stem, 112 columns, 1.08 -> 0.98 ms; 3 x 3 on 224
            # 0.417 -> 0.397)
            full = spec.ow // (pairs * vw) * pairs * vw
            rest = -(-(spec.ow - full) // vw)
            with w.loop("oy", "0", str(spec.oh)) as oy:
                if full:
                    with w.loop("ox", "0", str(full), str(pairs * vw)) as ox:
                        step(oy, ox, pairs)
                if rest:
                    step(oy, str(full), rest)
        w.do(f"call void @free(ptr {buf})")


def units(spec: NarrowConvSpec) -> int:
    """The units of work: images x groups x blocks of OB output channels."""
    return spec.n * spec.groups * (spec.og // block(spec.og))


def runtime_ir(specs: dict[str, NarrowConvSpec], threads: bool, vw: int) -> str:
    """One function per declaration of `specs` (name -> spec) for vector width `vw` (on
    the thread pool with `threads`); the GEMM's header (gemm.HEADER: the fused
    multiply-adds, masked loads and stores, llvm.maximum, smin, aligned_alloc and free)
    must be in the module."""
    w = Writer()
    for name, spec in specs.items():
        part(w, f"@{name}.conv", spec, width(spec, vw), 32 if vw == 16 else 16)
        count = units(spec)
        outputs = spec.n * spec.groups * spec.og * spec.oh * spec.ow
        big = outputs >= PARALLEL_MIN and count > 1

        def worth(w: Writer, big: bool = big) -> str:
            return "true" if big else "false"

        split_planes(w, f"@{name}.conv", PARAMS, "%units", worth, threads)
        epilogue.wrapper(w, name, f"@{name}.conv", ["%x", "%w"], spec, count)
    return w.text()
