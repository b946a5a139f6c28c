"""One LLVM function per GEMM declaration that `select-kernels` left in the module: it loops
over the declaration's batch dimensions, offsets the operand pointers, and calls
`xr_sgemm` (lowering/kernels/gemm.py) with the spec's sizes, strides and epilogue.

Arguments, as bufferize leaves them: A, B, [scale], [shift], [residual], then C.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xrelay.dialects.kernel import GemmAttr, GemmSpec
from xrelay.lowering.kernels import gemm
from xrelay.lowering.kernels.irtext import Writer
from xrelay.lowering.kernels.parallel import parallel_ir, pool_ir
from xrelay.lowering.plan_buffers import arena_definitions
from xrelay.lowering.select_kernels import KERNEL_ATTR


def kernel_specs(module: ModuleOp) -> dict[str, GemmSpec]:
    """The GEMM declarations of a module (before to-llvm): symbol -> spec."""
    specs = {}
    for op in module.ops:
        if isinstance(op, func.FuncOp) and not op.body.blocks:
            attr = op.attributes.get(KERNEL_ATTR)
            if isinstance(attr, GemmAttr):
                specs[op.sym_name.data] = attr.data
    return specs


def wrapper(w: Writer, name: str, spec: GemmSpec) -> None:
    names = ["%a", "%b"]
    names += [
        n for n, used in (("%s", spec.scale), ("%t", spec.shift), ("%r", spec.residual)) if used
    ]
    names.append("%c")
    with w.function("void", f"@{name}", [("ptr", n) for n in names], linkage="dso_local"):
        offsets = {"a": "0", "b": "0", "c": "0", "v": "0"}
        loops = []
        for d, (count, sa, sb, sc, sv) in enumerate(spec.batch):
            loop = w.loop(f"b{d}", "0", str(count))
            i = loop.__enter__()
            loops.append(loop)
            for key, stride in zip("abcv", (sa, sb, sc, sv)):
                offsets[key] = w.add(offsets[key], w.mul(i, str(stride)))
        a, b, c = (w.gep(f"%{k}", offsets[k]) for k in "abc")
        vec = {n: w.gep(n, offsets["v"]) if n in names else "null" for n in ("%s", "%t")}
        res = w.gep("%r", offsets["c"]) if spec.residual else "null"
        rows = (
            (vec["%s"], vec["%t"], "null", "null")
            if spec.per_row
            else ("null", "null", vec["%s"], vec["%t"])
        )
        args = [
            ("i64", spec.m), ("i64", spec.n), ("i64", spec.k),
            ("ptr", a), ("i64", spec.rsa), ("i64", spec.csa),
            ("ptr", b), ("i64", spec.rsb), ("i64", spec.csb),
            ("ptr", c), ("i64", spec.ldc),
            *(("ptr", p) for p in rows),
            ("ptr", res), ("i64", spec.ldc), ("i64", int(spec.relu)),
            ("i64", int(spec.a_packed)), ("i64", spec.mpad), ("i64", 0),
            ("i64", int(spec.b_packed)), ("i64", spec.npad), ("i64", 0),
        ]  # fmt: skip
        w.do(f"call void @xr_sgemm({', '.join(f'{t} {v}' for t, v in args)})")
        for loop in reversed(loops):
            loop.__exit__(None, None, None)


def kernels_ir(module: ModuleOp, threads: bool, vector_width: int = 8) -> str | None:
    """The runtime module of `module` (after parallel-loops): the GEMM with one wrapper per
    GEMM declaration, the entries of split kernels and the buffer arenas; None if it needs
    none of them."""
    specs = kernel_specs(module)
    split = parallel_ir(module, threads)
    arenas = arena_definitions(module)
    if not specs and not split and not arenas:
        return None
    w = Writer()
    for name, spec in specs.items():
        wrapper(w, name, spec)
    runtime = gemm.runtime_ir(threads, vector_width) if specs else ""
    return pool_ir(threads) + arenas + runtime + w.text() + split
