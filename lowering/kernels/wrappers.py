"""One LLVM function per GEMM declaration that `select-kernels` left in the module: it loops
over the declaration's batch dimensions, offsets the operand pointers, and calls
`xr_sgemm` (lowering/kernels/gemm.py) with the spec's sizes, strides and epilogue.

Arguments, as bufferize leaves them: A, B, [scale], [shift], [residual], [B's prologue
scale and shift], then C (and Q, the requantized bytes of an 8-bit GEMM with
`requantize`).
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp, f32
from xdsl.ir import Attribute
from xrelay.dialects.kernel import (
    GemmAttr,
    GemmSpec,
    LutAttr,
    LutSpec,
    NarrowConvAttr,
    NarrowConvSpec,
    PoolAttr,
    PoolSpec,
    RecordAttr,
    RowAttr,
    RowSpec,
    WinogradAttr,
    WinogradSpec,
    size_index,
)
from xrelay.lowering.kernels import (
    gemm,
    gemm_direct,
    gemm_pixel,
    igemm,
    lut,
    narrow_conv,
    pool,
    rows,
    winograd,
)
from xrelay.lowering.kernels.conv_pack import geometry
from xrelay.lowering.kernels.irtext import Writer
from xrelay.lowering.kernels.parallel import launch, parallel_ir, pool_ir, team, unpack
from xrelay.lowering.plan_buffers import arena_definitions
from xrelay.lowering.select_kernels import KERNEL_ATTR
from xrelay.lowering.to_llvm import dynamic_count


def kernel_specs(module: ModuleOp) -> dict[str, tuple[GemmSpec, list[Attribute]]]:
    """The GEMM declarations of a module (before to-llvm): symbol -> (spec, argument
    types)."""
    specs = {}
    for op in module.ops:
        if isinstance(op, func.FuncOp) and not op.body.blocks:
            attr = op.attributes.get(KERNEL_ATTR)
            if isinstance(attr, GemmAttr):
                specs[op.sym_name.data] = (attr.data, list(op.function_type.inputs))
    return specs


def declarations(module: ModuleOp, kind: type[RecordAttr]) -> dict:
    """The runtime declarations of a module whose kernel attribute is a `kind` (LutAttr:
    qnn-lookup-tables' table lookups, PoolAttr: select-kernels' max pools): symbol ->
    spec."""
    return {
        op.sym_name.data: attr.data
        for op in module.ops
        if isinstance(op, func.FuncOp)
        and not op.body.blocks
        and isinstance(attr := op.attributes.get(KERNEL_ATTR), kind)
    }


def parameters(spec: GemmSpec, types: list[Attribute]) -> list[tuple[str, str]]:
    """The wrapper's LLVM parameters as to-llvm passes the declaration's arguments: each
    buffer a pointer (A, B, [scale], [shift], [residual], ..., C) followed by its dynamic
    sizes (unused here), each index argument an i64 `%d<j>` (a run-time size of the spec)."""
    names = iter(
        ["%a", "%b"]
        + [n for n, used in (("%s", spec.scale), ("%t", spec.shift), ("%r", spec.residual)) if used]
        + (["%ps", "%pt"] if spec.prologue else [])
        + ["%c"]
        + (["%q"] if spec.requantize else [])
    )
    params: list[tuple[str, str]] = []
    sizes = 0
    for t in types:
        if isinstance(t, MemRefType):
            name = next(names)
            params.append(("ptr", name))
            params += [("i64", f"{name}.{d}") for d in range(dynamic_count(t))]
        else:
            params.append(("i64", f"%d{sizes}"))
            sizes += 1
    return params


def value(field: int) -> str:
    """A spec field as an LLVM operand: a constant, or the size argument it names."""
    j = size_index(field)
    return str(field) if j is None else f"%d{j}"


BATCH_SPLIT_MIN = 8  # static batch iterations from which threads always split the batch


def _offsets(w: Writer, spec: GemmSpec, indices: list[str]) -> dict[str, str]:
    offsets = {"a": "0", "b": "0", "c": "0", "v": "0"}
    for i, (_, *strides) in zip(indices, spec.batch):
        for key, stride in zip("abcv", strides):
            offsets[key] = w.add(offsets[key], w.mul(i, value(stride)))
    return offsets


def _call(w: Writer, name: str, spec: GemmSpec, offsets: dict[str, str], serial: bool) -> None:
    if spec.group:
        int_call(w, name, spec, offsets)
    elif spec.pixel_major:
        float_call(w, name, spec, offsets, "@xr_gemm_pm" if serial else "@xr_sgemm_pm")
    else:
        float_call(w, name, spec, offsets, "@xr_gemm_part" if serial else "@xr_sgemm")


def batch_iterations(spec: GemmSpec) -> int | None:
    """How many products the batch loops make, or None when a count is a run-time size."""
    total = 1
    for count, *_ in spec.batch:
        if count <= 0:
            return None
        total *= count
    return total


def batch_split(spec: GemmSpec, threads: bool) -> bool:
    """Can threads take whole batch iterations (each product then on one thread)? With
    static iterations: one handoff instead of one per product, whose sizes (a Winograd
    term, an attention head, a group of a grouped convolution) are often too small to
    split well. At run time they do with BATCH_SPLIT_MIN iterations or more, or a count
    the team divides (ShuffleNet's 4 groups on 2 threads: 3.56 -> 2.99 ms); otherwise each
    product is split."""
    total = batch_iterations(spec)
    return threads and not spec.group and total is not None and total >= 2


def wrapper(
    w: Writer,
    name: str,
    spec: GemmSpec,
    types: list[Attribute] | None = None,
    threads: bool = False,
) -> None:
    if types is None:  # static: the buffers only
        n = 3 + spec.scale + spec.shift + spec.residual + spec.requantize
        types = [MemRefType(f32, [1])] * n
    if spec.window:  # a convolution's geometry, read by the implicit im2col packing
        # the 13th: whether it reads the input directly (kernels/amx_conv.py for 8 bits,
        # gemm_direct.py for f32); an 8-bit GEMM's 14th: the byte it then pads with, its
        # 15th: whether C and Q are channel-major (pixel-major, kernels/vnni_conv.py)
        values = geometry(spec.window) + [int(spec.direct)]
        values += [spec.fill, int(spec.pixel_major)] if spec.group else []
        text = ", ".join(f"i64 {v}" for v in values)
        w.lines.append(f"@{name}.geo = internal constant [{len(values)} x i64] [{text}]")
    params = parameters(spec, types)
    split = batch_split(spec, threads)
    if split:  # thread t of T runs batch iterations [total*t/T, total*(t+1)/T)
        with w.function("void", f"@{name}.worker", [("ptr", "%ctx")]):
            unpack(w, params, named=True)  # the names the call below reads
            tid, nt = team(w)
            total = batch_iterations(spec)
            lo = w.op(f"sdiv i64 {w.mul(tid, str(total))}, {nt}")
            hi = w.op(f"sdiv i64 {w.mul(w.add(tid, '1'), str(total))}, {nt}")
            with w.loop("it", lo, hi) as it:
                indices, rest = [], it
                for count, *_ in reversed(spec.batch):
                    indices.append(w.op(f"srem i64 {rest}, {count}"))
                    rest = w.op(f"sdiv i64 {rest}, {count}")
                _call(w, name, spec, _offsets(w, spec, indices[::-1]), serial=True)
    with w.function("void", f"@{name}", params, linkage="dso_local"):
        if split:
            count = w.op("load i32, ptr @xr_num_threads")
            total = batch_iterations(spec)
            several = w.op(f"icmp sgt i32 {count}, 1")
            team_size = w.op(f"select i1 {several}, i32 {count}, i32 1")  # (never / 0)
            even = w.op(f"icmp eq i32 {w.op(f'srem i32 {total}, {team_size}')}, 0")
            many = "true" if total >= BATCH_SPLIT_MIN else "false"
            worth = w.op(f"or i1 {many}, {even}")
            pool, alone, join = w.if_else(w.op(f"and i1 {several}, {worth}"), "pool")
            w.block(pool)
            launch(w, f"@{name}.worker", params, count)
            w.br(join)
            w.block(alone)
        loops = []
        indices = []
        for d, (count, *_) in enumerate(spec.batch):
            loop = w.loop(f"b{d}", "0", value(count))
            indices.append(loop.__enter__())
            loops.append(loop)
        _call(w, name, spec, _offsets(w, spec, indices), serial=False)
        for loop in reversed(loops):
            loop.__exit__(None, None, None)
        if split:
            w.br(join)
            w.block(join)


def int_call(w: Writer, name: str, spec: GemmSpec, offsets: dict[str, str]) -> None:
    """The call of the 8-bit GEMM (byte operands, i32 result and shift vector, the
    requantized bytes and their multipliers; a packed operand is never offset: one-group
    convolutions only)."""
    a, b = (w.gep(f"%{k}", offsets[k], "i8") for k in "ab")
    c = w.gep("%c", offsets["c"], "i32")
    t = w.gep("%t", offsets["v"], "i32") if spec.shift else "null"
    trow, tcol = (t, "null") if spec.per_row else ("null", t)
    q = w.gep("%q", offsets["c"], "i8") if spec.requantize else "null"
    s = w.gep("%s", offsets["v"]) if spec.requantize else "null"
    qrow, qcol = (s, "null") if spec.per_row else ("null", s)
    args = [
        ("i64", value(spec.m)), ("i64", value(spec.n)), ("i64", value(spec.k)),
        ("ptr", a), ("i64", value(spec.rsa)), ("i64", value(spec.csa)),
        ("ptr", b), ("i64", value(spec.rsb)), ("i64", value(spec.csb)),
        ("ptr", c), ("i64", value(spec.ldc)), ("ptr", trow), ("ptr", tcol),
        ("i64", int(spec.a_packed)), ("i64", spec.mpad), ("i64", 0),
        ("i64", int(spec.b_packed)), ("i64", spec.npad), ("i64", 0),
        ("i64", 128 if spec.flip else 0),
        ("ptr", q), ("ptr", qrow), ("ptr", qcol),
        ("i64", spec.out_zero_point), ("i64", spec.out_min), ("i64", spec.out_max),
        ("ptr", f"@{name}.geo" if spec.window else "null"),
    ]  # fmt: skip
    unsigned = "b" if spec.per_row else "a"  # the data: a convolution's columns, a product's rows
    w.do(f"call void @xr_igemm_{unsigned}({', '.join(f'{t} {v}' for t, v in args)})")


def float_call(
    w: Writer, name: str, spec: GemmSpec, offsets: dict[str, str], gemm: str = "@xr_sgemm"
) -> None:
    """The call of the f32 GEMM (`gemm`: its serial part on one thread of a batch split)."""
    a, b, c = (w.gep(f"%{k}", offsets[k]) for k in "abc")
    used = {"%s": spec.scale, "%t": spec.shift}
    vec = {n: w.gep(n, offsets["v"]) if used[n] else "null" for n in ("%s", "%t")}
    res = w.gep("%r", offsets["c"]) if spec.residual else "null"
    rows = (
        (vec["%s"], vec["%t"], "null", "null")
        if spec.per_row
        else ("null", "null", vec["%s"], vec["%t"])
    )
    args = [
        ("i64", value(spec.m)), ("i64", value(spec.n)), ("i64", value(spec.k)),
        ("ptr", a), ("i64", value(spec.rsa)), ("i64", value(spec.csa)),
        ("ptr", b), ("i64", value(spec.rsb)), ("i64", value(spec.csb)),
        ("ptr", c), ("i64", value(spec.ldc)),
        *(("ptr", p) for p in rows),
        ("ptr", res), ("i64", value(spec.ldc)), ("i64", int(spec.relu)),
        ("i64", int(spec.a_packed)), ("i64", spec.mpad), ("i64", 0),
        ("i64", int(spec.b_packed)), ("i64", spec.npad), ("i64", 0),
        *(("ptr", p if spec.prologue else "null") for p in ("%ps", "%pt")),
        ("ptr", f"@{name}.geo" if spec.window else "null"),
    ]  # fmt: skip
    w.do(f"call void {gemm}({', '.join(f'{t} {v}' for t, v in args)})")


def gemm_runtime_ir(specs: list[GemmSpec], threads: bool, vector_width: int) -> str:
    """The GEMMs' runtime the specs call ("" for none): the f32 GEMM with the variants some
    spec needs (B's prologue, direct convolutions, pixel-major), else the declarations both
    runtimes use, and the 8-bit GEMM of each spec's group. It depends on these choices
    only, not on the model: lowering/runtime_ahead.py compiles it before the passes end."""
    if not specs:
        return ""
    floats = [spec for spec in specs if not spec.group]
    direct = any(spec.direct for spec in floats)
    runtime = gemm.HEADER
    if floats:
        prologue = any(spec.prologue for spec in floats)
        runtime = gemm.runtime_ir(threads, vector_width, prologue, direct)
    if direct:
        runtime += gemm_direct.runtime_ir(vector_width)
    pixel = [spec for spec in floats if spec.pixel_major]
    if pixel:
        runtime += gemm_pixel.runtime_ir(threads, vector_width, any(s.prologue for s in pixel))
    tiles = any(spec.tiles for spec in specs)
    for group in sorted({spec.group for spec in specs} - {0}):  # (one 8-bit kind per module)
        runtime += igemm.runtime_ir(threads, vector_width, group, tiles)
    return runtime


def kernels_ir(module: ModuleOp, threads: bool, vector_width: int = 8) -> str | None:
    """The runtime module of `module` (after parallel-loops): the GEMM with one wrapper per
    GEMM declaration, the table lookups, max pools, narrow convolutions and Winograd transforms with theirs, the entries of split
    kernels and the buffer arenas; None if it needs none of them."""
    specs = kernel_specs(module)
    luts: dict[str, LutSpec] = declarations(module, LutAttr)
    pools: dict[str, PoolSpec] = declarations(module, PoolAttr)
    convs: dict[str, NarrowConvSpec] = declarations(module, NarrowConvAttr)
    transforms: dict[str, WinogradSpec] = declarations(module, WinogradAttr)
    row_kernels: dict[str, RowSpec] = declarations(module, RowAttr)
    split = parallel_ir(module, threads)
    arenas = arena_definitions(module)
    if not (specs or luts or pools or convs or transforms or row_kernels or split or arenas):
        return None
    w = Writer()
    for name, (spec, types) in specs.items():
        wrapper(w, name, spec, types, threads)
    runtime = gemm_runtime_ir([spec for spec, _ in specs.values()], threads, vector_width)
    if luts or pools or convs or transforms or row_kernels:  # (masked loads and stores: its header)
        runtime = runtime or gemm.HEADER
    if luts:
        runtime += lut.runtime_ir(luts, runtime, threads)
    if pools:
        runtime += pool.runtime_ir(pools, threads, vector_width)
    if convs:
        runtime += narrow_conv.runtime_ir(convs, threads, vector_width)
    if transforms:
        runtime += winograd.runtime_ir(transforms, threads, vector_width)
    if row_kernels:
        runtime += rows.runtime_ir(row_kernels, threads, vector_width, runtime)
    return pool_ir(threads) + arenas + runtime + w.text() + split
