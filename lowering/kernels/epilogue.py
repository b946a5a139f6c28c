"""The per-channel epilogue of the runtime's window kernels (narrow_conv.py, winograd.py):
y = acc * scale + shift (+ residual), relu, as the GEMM's, stored through a mask; and
their wrappers, which pass null for the vectors a declaration does not have."""

from __future__ import annotations

from typing import Protocol

from xrelay.lowering.kernels.irtext import Writer, floor

# the optional vectors' parameters, in the declaration's argument order
OPTIONAL = ("%sc", "%sh", "%res")


class Flags(Protocol):
    scale: bool
    shift: bool
    residual: bool
    relu: bool


def store(
    w: Writer, vw: int, value: str, at: str, keep: str, spec: Flags, scale: str | None,
    shift: str | None,
) -> None:  # fmt: skip
    """The epilogue of `value` (<vw x float>; `scale` and `shift` its splatted vectors
    where `spec` has them), stored at %y + `at` under the mask `keep` (the residual read at
    %res + `at`)."""
    v, m = f"<{vw} x float>", f"<{vw} x i1>"
    if scale is not None:
        value = w.op(f"fmul {v} {value}, {scale}")
    if shift is not None:
        value = w.op(f"fadd {v} {value}, {shift}")
    if spec.residual:
        res = w.op(
            f"call {v} @llvm.masked.load.v{vw}f32.p0(ptr {w.gep('%res', at)}, i32 4, {m} {keep}, {v} zeroinitializer)"
        )
        value = w.op(f"fadd {v} {value}, {res}")
    if spec.relu:
        value = floor(w, v, value, "zeroinitializer", "zeroinitializer")
    w.do(
        f"call void @llvm.masked.store.v{vw}f32.p0({v} {value}, ptr {w.gep('%y', at)}, i32 4, {m} {keep})"
    )


def wrapper(w: Writer, symbol: str, entry: str, inputs: list[str], spec: Flags, count: int) -> None:
    """@symbol(inputs..., [scale], [shift], [residual], y), as to-llvm passes the
    declaration's buffers: calls `entry`(inputs..., scale, shift, residual (null where the
    spec has none), y, count)."""
    present = list(zip(OPTIONAL, (spec.scale, spec.shift, spec.residual)))
    params = [("ptr", p) for p in inputs] + [("ptr", p) for p, on in present if on]
    with w.function("void", f"@{symbol}", [*params, ("ptr", "%y")], linkage="dso_local"):
        args = [f"ptr {p}" for p in inputs] + [f"ptr {p if on else 'null'}" for p, on in present]
        w.do(f"call void {entry}({', '.join(args)}, ptr %y, i64 {count})")
