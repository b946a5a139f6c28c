"""`prepack-weights`: GEMM operands that are parameters are packed once, at build time.

A runtime GEMM call (`select-kernels`) whose weight is a parameter of the function (a
convolution's A with more than 3 rows, a product's B without batch loops) gets a new
parameter instead: the weight in the panel layout the kernel reads
(lowering/kernels/prepack.py), described by a `#kernel.pack` attribute (`xrelay.pack`) on
the new argument, and the call moves to a declaration whose `#kernel.gemm` says the operand
is packed. Under `build` the packed array joins the parameters (BuildContext.params);
a weight used by several calls in the same way is packed once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    IntegerAttr,
    ModuleOp,
    TensorType,
    f32,
)
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xrelay.dialects.kernel import GemmAttr, GemmSpec, PackAttr, PackSpec
from xrelay.lowering.context import add_parameter, release
from xrelay.lowering.jit import vector_width
from xrelay.lowering.kernels.gemm import panel_width, row_height
from xrelay.lowering.kernels.gemm_pixel import pixel_major_pays
from xrelay.lowering.kernels.prepack import pack_weight, padded
from xrelay.lowering.select_kernels import KERNEL_ATTR, declaration_cache, gemm_declaration
from xrelay.signature import param_name

PACK_ATTR = "xrelay.pack"  # on a parameter added for a packed weight: how to build it


VECTOR_WIDTH_ATTR = "xrelay.vector_width"


def module_vector_width(module: ModuleOp, option: int = 0) -> int:
    """The GEMM vector width of `module`: what prepack-weights recorded, else `option`,
    else this host's."""
    recorded = module.attributes.get(VECTOR_WIDTH_ATTR)
    if isinstance(recorded, IntegerAttr):
        return recorded.value.data
    return option or vector_width()


def _row_major_groups(spec: GemmSpec) -> bool:
    """Is A read as [groups, M, K] row-major (a convolution's weights [O, C/g, kh, kw], a
    batched product's left operand), groups along one batch loop?"""
    strided = [sa for _, sa, *_ in spec.batch if sa]
    return (
        (spec.per_row or bool(strided))
        and (spec.rsa, spec.csa) == (spec.k, 1)
        and len(strided) <= 1
        and all(sa == spec.m * spec.k for sa in strided)
    )


def _pixel_major(spec: GemmSpec, vw: int) -> bool:
    """Does a convolution's product (per_row) run pixel-major (kernels/gemm_pixel.py)?"""
    taps, strided = 1, False
    if spec.window:
        (_, _), (kh, kw), strides, *_ = spec.window
        taps, strided = kh * kw, strides != (1, 1)
    return pixel_major_pays(spec.m, spec.n, spec.k, taps, strided, vw, winograd=spec.winograd)


def packing(spec: GemmSpec, a_name: str | None, b_name: str | None, nr: int = 16):
    """(packed operand index, its PackSpec, the call's new GemmSpec), or None. `nr`: B's
    panel width (the micro-kernel's, lowering/kernels/gemm.py)."""
    if 0 <= spec.m <= 3 or spec.a_packed or spec.b_packed:  # (m < 0: a run-time size)
        return None
    if min(spec.n, spec.k) < 0:  # a weight's sizes are static; these are not weights
        return None
    if a_name is not None and _row_major_groups(spec):
        groups = 1
        for count, sa, *_ in spec.batch:
            groups *= count if sa else 1
        terms = groups == 1 or spec.winograd  # a grouped convolution's stay packed
        if terms and spec.per_row and not spec.group and _pixel_major(spec, nr // 2):
            # few pixels or a wide window: the weight in NR-row panels (kernels/gemm_pixel.py),
            # per group (Winograd's terms, winograd_convs.product_spec)
            mpad = padded(spec.m, nr)
            batch = tuple((c, mpad * spec.k if sa else 0, *rest) for c, sa, *rest in spec.batch)
            pack = PackSpec(a_name, "a", spec.m, spec.k, groups=groups, panel=nr)
            pm = replace(
                spec, a_packed=True, mpad=mpad, batch=batch, pixel_major=True, direct=False
            )
            return 0, pack, pm
        mr = row_height(nr // 2)
        mpad = padded(spec.m, mr)
        batch = tuple((c, mpad * spec.k if sa else 0, *rest) for c, sa, *rest in spec.batch)
        pack = PackSpec(a_name, "a", spec.m, spec.k, groups=groups, panel=mr)
        return 0, pack, replace(spec, a_packed=True, mpad=mpad, batch=batch)
    if not spec.per_row and not spec.batch and b_name is not None:
        transpose = (spec.rsb, spec.csb) != (1, spec.k)  # B stored [K, N], not [N, K]
        pack = PackSpec(b_name, "b", spec.n, spec.k, transpose=transpose, panel=nr)
        return 1, pack, replace(spec, b_packed=True, npad=padded(spec.n, nr))
    return None


def _packed_size(pack: PackSpec) -> int:
    if pack.operand == "a":
        return pack.groups * padded(pack.rows, pack.panel) * pack.k
    return padded(pack.rows, pack.panel) * pack.k


class Packer:
    """Adds packed parameters to one function, one per (weight, layout)."""

    def __init__(self, fn: func.FuncOp, ctx: Context) -> None:
        self.fn = fn
        self.ctx = ctx
        self.args: dict[PackSpec, SSAValue] = {}

    def arg(self, pack: PackSpec) -> SSAValue:
        if pack not in self.args:
            self.args[pack] = self._add(pack)
        return self.args[pack]

    def _add(self, pack: PackSpec) -> SSAValue:
        name = f"{pack.source}.packed{len(self.fn.body.block.args) + 1}"
        ctx = self.ctx
        return add_parameter(
            self.fn,
            ctx,
            name,
            TensorType(f32, [_packed_size(pack)]),
            lambda: pack_weight(ctx.params[pack.source], pack),
            {PACK_ATTR: PackAttr(pack)},
        )


def _gemm_declarations(module: ModuleOp) -> dict[str, func.FuncOp]:
    return {
        op.sym_name.data: op
        for op in module.ops
        if isinstance(op, func.FuncOp) and isinstance(op.attributes.get(KERNEL_ATTR), GemmAttr)
    }


def _gemm_calls(
    module: ModuleOp, decls: dict[str, func.FuncOp], nr: int
) -> list[tuple[func.FuncOp, func.CallOp, GemmSpec, tuple[int, PackSpec, GemmSpec] | None]]:
    """(function, call, its spec, `packing` of it or None) of each GEMM call, as a list
    (prepack-weights replaces the calls it packs)."""
    calls = []
    for fn in [f for f in module.ops if isinstance(f, func.FuncOp) and f.body.blocks]:
        for call in [op for op in fn.walk() if isinstance(op, func.CallOp)]:
            decl = decls.get(call.callee.root_reference.data)
            if decl is None:
                continue
            spec: GemmSpec = decl.attributes[KERNEL_ATTR].data
            found = None
            if fn.arg_attrs is not None:
                a, b = call.arguments[0], call.arguments[1]
                found = packing(spec, param_name(fn, a), param_name(fn, b), nr)
            calls.append((fn, call, spec, found))
    return calls


def prepack_weights(module: ModuleOp, ctx: Context, vector_width_option: int = 0) -> None:
    vw = module_vector_width(module, vector_width_option)
    module.attributes[VECTOR_WIDTH_ATTR] = IntegerAttr(vw, 64)
    decls = _gemm_declarations(module)
    cache = declaration_cache(module)
    packers: dict[func.FuncOp, Packer] = {}
    for fn, call, _, found in _gemm_calls(module, decls, panel_width(vw)):
        if found is None:
            continue
        index, pack, new_spec = found
        if fn not in packers:
            packers[fn] = Packer(fn, ctx)
        args = list(call.arguments)
        args[index] = packers[fn].arg(pack)
        result = call.results[0].type
        name = gemm_declaration(module, cache, new_spec, args, result)
        new_call = func.CallOp(name, args, [result])
        new_call.location = call.location
        original = call.arguments[index]
        Rewriter.replace_op(call, new_call)
        if not original.uses:  # only its packed copy is read now
            release(ctx, pack.source)
    used = {op.callee.root_reference.data for op in module.walk() if isinstance(op, func.CallOp)}
    for name, decl in decls.items():
        if name not in used:
            Rewriter.erase_op(decl)


def packed_specs(module: ModuleOp, vector_width_option: int = 0) -> list[GemmSpec]:
    """The specs the module's GEMM calls will have once prepack-weights has run, nothing
    packed or changed (lowering/runtime_ahead.py reads them right after select-kernels,
    before the weights are packed)."""
    nr = panel_width(module_vector_width(module, vector_width_option))
    calls = _gemm_calls(module, _gemm_declarations(module), nr)
    return [spec if found is None else found[2] for _, _, spec, found in calls]


@dataclass(frozen=True)
class PrepackWeights(ModulePass):
    """Weights of runtime GEMM calls that are parameters -> packed parameters. Options:
    vector-width (0: this host's; 16 with AVX-512, else 8), which sets B's panel width and
    A's panel height (kernels/gemm.py: panel_width, row_height) and is recorded on the module (`xrelay.vector_width`) for emit-runtime."""

    name = "prepack-weights"

    vector_width: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        prepack_weights(op, ctx, self.vector_width)
