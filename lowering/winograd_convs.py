"""`winograd-convs`: f32 3x3 convolutions with unit strides and dilation, one group and
weights that are parameters, become Winograd's F(m x m, 3 x 3) (dialects/winograd.py):

    %v = relay.nn.winograd_input %x {tile = m, padding = ...}    [alpha^2, C, T tiles]
    %p = relay.nn.batch_matmul %u, %v                             [alpha^2, K, T]
    %y = relay.nn.winograd_output %p {tile = m, size = [OH, OW]}  [N, K, OH, OW]

where %u, a new parameter, is the weight transformed at build time ([alpha^2, K, C],
`winograd.transform_weight`); select-kernels makes the batched product alpha^2 runtime
GEMMs and prepack-weights packs %u. Each output then costs alpha^2 / m^2 products per
input channel instead of 9 (2.25 for m = 4, 4 for m = 2), plus the transforms, which
read and write the data a few times: a convolution is rewritten only when it has at least
`MIN_CHANNELS` input and output channels and, with the tile chosen, at least `MIN_TILES`
tiles (the GEMM's columns). The tile is 4 unless too few tiles of 4 cover the output.
Fewer tiles do where the products run pixel-major (`_few_tiles`: 16-float vectors, at
most 256 tiles per image: ResNet-50's last stages): their tiles are the micro-kernel's
8-row tiles, not columns of its 32-wide panels, and the tile is the one with the fewest
rows to compute.
The channel floor depends on the GEMM's vector width (the pass's `vector_width` option):
16-float products run about 1.4x faster than 8-float ones, so the transforms must be
shared by more channels before they pay (measured on SqueezeNet's 16- to 48-channel 3x3
convolutions, which are faster direct with AVX-512 and faster as F(4x4, 3x3) with AVX2).
The chain of elementwise ops after the convolution that select-kernels would fold into a
GEMM's epilogue (bias, batch norm, per-channel scale and shift, a residual add, relu;
`select_kernels.Chain`) folds into the output transform's last loop instead.

`winograd-convs{enabled=false}` keeps every convolution direct; `vector-width` (8 or 16;
0, the default, is the host's, as in prepack-weights) selects the channel floor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType, f32
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xrelay.dialects import relay, winograd
from xrelay.dialects.kernel import GemmSpec
from xrelay.errors import Error
from xrelay.lowering.context import add_parameter, aligned_empty, release
from xrelay.lowering.jit import vector_width
from xrelay.lowering.kernels.gemm import panel_width, row_height
from xrelay.lowering.kernels.gemm_pixel import pixel_major_pays
from xrelay.lowering.relay_to_linalg.builder import shape_of
from xrelay.lowering.select_kernels import (
    Anchor,
    Chain,
    declaration_cache,
    gemm_declaration,
    single_user,
)
from xrelay.signature import param_name

WINOGRAD_ATTR = "xrelay.winograd"  # on a transformed weight's parameter: its source
# per vector width, per tile: fewer input channels make the products too thin (16-float
# products: SqueezeNet's 16-channel expands are faster direct)
MIN_INPUT_CHANNELS = {8: {4: 16, 2: 64}, 16: {4: 32, 2: 64}}
# per vector width: fewer output channels share the input transform too little (it reads
# every input channel for each of them); with the runtime's transforms DenseNet-121's
# 128 -> 32 convolutions are faster by Winograd (34.2 -> 30.9 ms)
MIN_OUTPUT_CHANNELS = {8: 16, 16: 32}
MIN_TILES = 32  # tiles per term: the GEMM's columns (unless pixel-major: `_few_tiles`)
# tiles per term at least for a convolution of one pixel-major panel of output channels
# that pixel-major takes (`pixel_major_pays`: 32 channels, 16-float vectors); fewer,
# pixel-major is faster (DenseNet-121's 128 -> 32 on 28 x 28, 49 tiles: 0.285 -> 0.23 ms;
# on 56 x 56, 196 tiles, Winograd stays: 0.85 against 0.93)
THIN_MIN_TILES = 128


def choose_tile(conv: relay.Conv2DOp, vector_width: int = 8) -> int | None:
    """The tile m for `conv` when the GEMM runs `vector_width` floats wide, or None to
    keep it direct."""
    a = conv.attrs
    if (a.data_layout, a.kernel_layout) != ("NCHW", "OIHW") or a.groups != 1:
        return None
    if tuple(a.strides) != (1, 1) or tuple(a.dilation) != (1, 1):
        return None
    if not all(
        isinstance(v.type, TensorType) and v.type.element_type == f32
        for v in (conv.data, conv.weight, conv.result)
    ):
        return None
    shape = [*shape_of(conv.data), *shape_of(conv.weight), *shape_of(conv.result)]
    if not all(isinstance(d, int) for d in shape):
        return None
    n, c, _, _, k, _, kh, kw, _, _, oh, ow = shape
    if (kh, kw) != (3, 3) or k < MIN_OUTPUT_CHANNELS[vector_width]:
        return None
    # one pixel-major panel of output channels that pixel-major takes
    thin = k <= panel_width(vector_width) and pixel_major_pays(
        k, oh * ow, c * 9, 9, False, vector_width
    )
    few = None if thin else _few_tiles(c, k, oh, ow, vector_width)
    if few is not None:
        return few
    for m in sorted(winograd.TILES, reverse=True):
        tiles = n * winograd.tile_count(oh, m) * winograd.tile_count(ow, m)
        if thin and tiles < THIN_MIN_TILES:
            return None  # (counted in the largest tiles: smaller ones would be slower)
        if tiles >= MIN_TILES and c >= MIN_INPUT_CHANNELS[vector_width][m]:
            return m
    return None


def _few_tiles(c: int, k: int, oh: int, ow: int, vector_width: int) -> int | None:
    """The tile whose products pixel-major takes (`pixel_major_pays` for the product's
    shape: 16-float vectors, C at least `MIN_WINOGRAD_K`, few tiles per image) at the fewest rows
    computed (terms x tiles rounded up to the micro-kernel's MR), or None if neither
    tile's products run pixel-major. Their tiles fill MR-row tiles, not NR-column panels,
    so a few tiles are not wasted: ResNet-50's 512 -> 512 on 7 x 7 as F(2x2, 3x3), 16
    tiles in 16 terms, 0.82 -> 0.67 ms against the direct convolution; its 256 -> 256 on
    14 x 14 as F(4x4, 3x3), 16 tiles in 36 terms, 0.61 -> 0.47 against F(2x2) with 49
    tiles in 32-column panels."""
    rows = {}
    for m in winograd.TILES:
        per_image = winograd.tile_count(oh, m) * winograd.tile_count(ow, m)
        if c >= MIN_INPUT_CHANNELS[vector_width][m] and pixel_major_pays(
            k, per_image, c, 1, False, vector_width, winograd=True
        ):
            rows[m] = (m + 2) ** 2 * -(-per_image // row_height(vector_width))
    return min(rows, key=rows.__getitem__) if rows else None


def product_spec(alpha2: int, n: int, c: int, k: int, th: int, tw: int) -> GemmSpec:
    """The products of one convolution as one runtime GEMM declaration: per term and
    image, U [K, C] times the tiles [C, TH x TW], B read through a 1x1 window over the
    rows of tiles (TW of the TW + 1 in each; kernels/conv_pack.py)."""
    ld, tiles = th * (tw + 1), th * tw
    window = ((th, tw + 1), (1, 1), (1, 1), (1, 1), (0, 0), (th, tw))
    batch = [(alpha2, k * c, n * c * ld, n * k * tiles, 0), (n, 0, c * ld, k * tiles, 0)]
    batch = [loop for loop in batch if loop[0] > 1]
    return GemmSpec(
        k, tiles, c, c, 1, tiles, 1, tiles,
        batch=tuple(batch), window=window, per_row=True, winograd=True,
    )  # fmt: skip


def winograd_convs(module: ModuleOp, ctx: Context, vector_width: int = 8) -> int:
    """Rewrite the eligible convolutions of each function; returns how many."""
    count = 0
    cache = declaration_cache(module)
    for fn in [f for f in module.ops if isinstance(f, func.FuncOp) and f.body.blocks]:
        transformed: dict[tuple[str, int], SSAValue] = {}
        for conv in [op for op in fn.walk() if isinstance(op, relay.Conv2DOp)]:
            source = param_name(fn, conv.weight)
            m = choose_tile(conv, vector_width)
            if source is None or m is None:
                continue
            alpha2 = (m + 2) ** 2
            (k, c), (n, _, oh, ow) = shape_of(conv.weight)[:2], shape_of(conv.result)
            key = (source, m)
            if key not in transformed:
                transformed[key] = add_parameter(
                    fn,
                    ctx,
                    f"{source}.winograd{m}",
                    TensorType(f32, [alpha2, k, c]),
                    lambda s=source, m=m, size=alpha2 * k * c: winograd.transform_weight(
                        ctx.params[s], m, aligned_empty(size, np.float32)
                    ),
                    {WINOGRAD_ATTR: StringAttr(source)},
                )
            u = transformed[key]
            chain = Chain(Anchor(conv, conv.weight, conv.data, GemmSpec(), 1, k))
            while (user := single_user(chain.value)) is not None and chain.extend(user):
                pass
            end = chain.ops[-1]
            v = relay.WinogradInputOp(conv.data, tile=m, padding=list(conv.attrs.padding))
            th, tw = winograd.tile_count(oh, m), winograd.tile_count(ow, m)
            spec = product_spec(alpha2, n, c, k, th, tw)
            prods = TensorType(f32, [alpha2, n, k, th, tw])
            name = gemm_declaration(module, cache, spec, [u, v.result], prods)
            p = func.CallOp(name, [u, v.result], [prods])
            epilogue = [x for x in (chain.scale, chain.shift, chain.residual) if x is not None]
            y = relay.WinogradOutputOp(
                p.results[0],
                *epilogue,
                tile=m,
                size=[oh, ow],
                scale=chain.scale is not None,
                shift=chain.shift is not None,
                residual=chain.residual is not None,
                relu=chain.relu,
            )
            for op in (*chain.pending, v, p, y):
                op.location = conv.location
            Rewriter.insert_op([*chain.pending, v, p, y], InsertPoint.before(end))
            weight = conv.weight
            chain.value.replace_all_uses_with(y.result)
            for op in reversed(chain.ops):
                Rewriter.erase_op(op)
            if not weight.uses:  # only its transformed copy is read now
                release(ctx, source)
            count += 1
    return count


@dataclass(frozen=True)
class WinogradConvs(ModulePass):
    """3x3 stride-1 f32 convolutions -> Winograd transforms around a batched product.
    Options: enabled=false keeps them direct; vector-width (8 or 16, 0 for the host's)
    picks the channel floor."""

    name = "winograd-convs"

    enabled: bool = True
    vector_width: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        vw = self.vector_width or vector_width()
        if vw not in MIN_INPUT_CHANNELS:
            raise Error(f"winograd-convs: no vector width {vw} (8 or 16)")
        if self.enabled:
            winograd_convs(op, ctx, vw)
