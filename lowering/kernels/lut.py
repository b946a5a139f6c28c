"""The runtime's table lookup of 8-bit values (qnn-lookup-tables): `xr_lut8` and one
wrapper per declaration.

    void xr_lut8(ptr x, ptr table, ptr y, i64 planes, i64 channels, i64 plane,
                 i64 per_channel, i64 flip)

y[p, i] = table[row, x[p, i] xor flip] for each of `planes` planes of `plane` bytes
(plane p is channel p % channels; row = that channel with `per_channel`, else 0). A row's
256 entries are four 64-byte vectors held in registers for the whole plane; each 64 bytes
of data take two `vpermi2b` (AVX512-VBMI: entries 0-127 and 128-255 by the index's low 7
bits) and a select on the index's top bit. The plane's last bytes are masked. From
PARALLEL_MIN bytes the planes are split over the thread pool.
"""

from __future__ import annotations

from xrelay.dialects.kernel import LutSpec
from xrelay.lowering.kernels.irtext import Writer, first_lanes, splat
from xrelay.lowering.kernels.parallel import split_planes

V = "<64 x i8>"
PARALLEL_MIN = 1 << 16  # bytes from which the planes are split over threads

HEADER = f"""
declare {V} @llvm.x86.avx512.vpermi2var.qi.512({V}, {V}, {V})
declare {V} @llvm.masked.load.v64i8.p0(ptr, i32, <64 x i1>, {V})
declare void @llvm.masked.store.v64i8.p0({V}, ptr, i32, <64 x i1>)
"""

PARAMS = [("ptr", "%x"), ("ptr", "%table"), ("ptr", "%y"), ("i64", "%planes"),
          ("i64", "%channels"), ("i64", "%plane"), ("i64", "%per_channel"),
          ("i64", "%flip")]  # fmt: skip


def part(w: Writer) -> None:
    """Emit @xr_lut8_part: xr_lut8 on planes [%p0, %p1)."""
    with w.function("void", "@xr_lut8_part", [*PARAMS, ("i64", "%p0"), ("i64", "%p1")]):
        flip = splat(w, w.op("trunc i64 %flip to i8"), 64, "i8")
        per = w.op("icmp ne i64 %per_channel, 0")
        with w.loop("p", "%p0", "%p1") as p:
            channel = w.op(f"srem i64 {p}, %channels")
            row = w.op(f"select i1 {per}, i64 {channel}, i64 0")
            entries = w.gep("%table", w.mul(row, "256"), "i8")
            t = [
                w.op(f"load {V}, ptr {w.gep(entries, str(64 * q), 'i8')}, align 1")
                for q in range(4)
            ]
            src = w.gep("%x", w.mul(p, "%plane"), "i8")
            dst = w.gep("%y", w.mul(p, "%plane"), "i8")
            with w.loop("i", "0", "%plane", "64") as i:
                mask = first_lanes(w, w.sub("%plane", i), 64)
                x = w.op(
                    f"call {V} @llvm.masked.load.v64i8.p0(ptr {w.gep(src, i, 'i8')}, i32 1, <64 x i1> {mask}, {V} zeroinitializer)"
                )
                x = w.op(f"xor {V} {x}, {flip}")
                low = w.op(
                    f"call {V} @llvm.x86.avx512.vpermi2var.qi.512({V} {t[0]}, {V} {x}, {V} {t[1]})"
                )
                high = w.op(
                    f"call {V} @llvm.x86.avx512.vpermi2var.qi.512({V} {t[2]}, {V} {x}, {V} {t[3]})"
                )
                top = w.op(f"icmp slt {V} {x}, zeroinitializer")  # entries 128-255
                y = w.op(f"select <64 x i1> {top}, {V} {high}, {V} {low}")
                w.do(
                    f"call void @llvm.masked.store.v64i8.p0({V} {y}, ptr {w.gep(dst, i, 'i8')}, i32 1, <64 x i1> {mask})"
                )


def entry(w: Writer, threads: bool) -> None:
    """Emit @xr_lut8: its planes split over the pool's threads from PARALLEL_MIN bytes."""
    split_planes(
        w, "@xr_lut8", PARAMS, "%planes",
        lambda w: w.op(f"icmp sge i64 {w.mul('%planes', '%plane')}, {PARALLEL_MIN}"), threads,
    )  # fmt: skip


def wrapper(w: Writer, name: str, spec: LutSpec) -> None:
    """@name(x, table, y), as to-llvm passes the declaration's static buffers."""
    params = [("ptr", "%x"), ("ptr", "%table"), ("ptr", "%y")]
    with w.function("void", f"@{name}", params, linkage="dso_local"):
        args = (
            f"ptr %x, ptr %table, ptr %y, i64 {spec.outer * spec.channels}, i64 {spec.channels}, "
            f"i64 {spec.plane}, i64 {int(spec.per_channel)}, i64 {spec.flip}"
        )
        w.do(f"call void @xr_lut8({args})")


def runtime_ir(specs: dict[str, LutSpec], declared: str = "", threads: bool = False) -> str:
    """xr_lut8 (on the thread pool with `threads`) and the wrappers of `specs` (declaration
    name -> spec), after the runtime text `declared` (the intrinsics it declares already
    are not declared again)."""
    w = Writer()
    w.lines += [line for line in HEADER.splitlines() if line.split("(")[0] not in declared]
    part(w)
    entry(w, threads)
    for name, spec in specs.items():
        wrapper(w, name, spec)
    return w.text()
