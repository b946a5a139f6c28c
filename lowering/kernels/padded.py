"""A plane copied into a zero-padded buffer as its column phases, for the runtime's window
kernels (narrow_conv.py, winograd.py).

With `phases` = s, padded column p (input column p - PL) is stored in phase p % s at
index p // s, each phase a row of `length` floats, s of them per padded row; PT rows come
first. A window read at stride s then loads one contiguous vector per tap: output column
j's tap at offset t reads phase t % s at index j + t // s. The copy writes only the
input's cells (and zeros past a row's end, from masked loads), so a buffer zeroed once
keeps its padding for every plane copied into it.
"""

from __future__ import annotations

from xrelay.lowering.kernels.irtext import Writer, concat, first_lanes


def copy_plane(
    w: Writer,
    vw: int,
    src: str,
    dst: str,
    size: tuple[int, int],
    before: tuple[int, int],
    phases: int,
    length: int,
) -> None:
    """The plane at `src` (`size` = (H, W) floats, rows contiguous) into the padded buffer
    at `dst` (`before` = (PT, PL)); phases 1, 2 or 4."""
    v, m = f"<{vw} x float>", f"<{vw} x i1>"
    (h, width), (pt, pl) = size, before
    row_floats = phases * length

    def load(at: str, count: str) -> str:
        mask = first_lanes(w, count, vw)
        return w.op(
            f"call {v} @llvm.masked.load.v{vw}f32.p0(ptr {at}, i32 4, {m} {mask}, {v} zeroinitializer)"
        )

    chunk = phases * vw  # input columns per step: one vector into each phase
    with w.loop("iy", "0", str(h)) as iy:
        row = w.gep(src, w.mul(iy, str(width)))
        out = w.gep(dst, w.mul(w.add(iy, str(pt)), str(row_floats)))
        with w.loop("c", "0", str(width), str(chunk)) as c:
            rest = w.sub(str(width), c)
            parts = [
                load(w.gep(row, w.add(c, str(q * vw))), w.sub(rest, str(q * vw)))
                for q in range(phases)
            ]
            if phases == 1:
                w.do(f"store {v} {parts[0]}, ptr {w.gep(out, w.add(c, str(pl)))}, align 4")
            else:
                _deinterleave(w, vw, parts, out, w.op(f"sdiv i64 {c}, {phases}"), pl, length)


def _deinterleave(
    w: Writer, vw: int, parts: list[str], out: str, first: str, pl: int, length: int
) -> None:
    """Input columns c + s t + q (t < vw, q < s; `parts`: their s vectors in order) into
    the phases of the padded row at `out` (`first` = c / s): padded column c + s t + q + PL."""
    v = f"<{vw} x float>"
    phases = len(parts)
    chunk = phases * vw
    whole = concat(w, parts, vw, "float")
    for q in range(phases):
        lanes = ", ".join(f"i32 {phases * t + q}" for t in range(vw))
        col = q + pl
        val = w.op(
            f"shufflevector <{chunk} x float> {whole}, <{chunk} x float> poison, <{vw} x i32> <{lanes}>"
        )
        at = w.gep(out, w.add(first, str((col % phases) * length + col // phases)))
        w.do(f"store {v} {val}, ptr {at}, align 4")


def written(width: int, pl: int, phases: int, vw: int) -> int:
    """The last index + 1 the copy writes in a phase (whole vectors)."""
    return (pl + phases - 1) // phases + -(-width // (phases * vw)) * vw
