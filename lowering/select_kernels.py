"""`select-kernels`: f32 matrix products and convolutions, together with the elementwise
chain that follows each, become calls of the runtime GEMM (`lowering/kernels/gemm.py`).

An anchor is `relay.nn.dense`, `relay.nn.matmul`, `relay.nn.batch_matmul` or
`relay.nn.conv2d` (NCHW/OIHW, more than 4 input channels per group) on f32. Its epilogue is the chain of single
users after it, in this order:

    (bias_add | add/subtract/multiply by a per-channel vector | batch_norm)*
    [add of a tensor shaped like the result (a residual)]  [relu]

where the channel axis is the output's last axis for products and axis 1 for convolutions,
and, after a grouped convolution, a channel shuffle across its groups (written by the GEMM
in shuffled order: `_fold_channel_shuffle`). A matmul or batch_matmul (of more than 3 rows)
whose operands are reshapes and transposes of an op's result, and multiplies by a one-value
tensor, reads that result at the views' strides, the scalars becoming the epilogue's scale
(`_read_through_views`: BERT's attention heads, no transposed copies).
The chain folds into `result * scale[ch] + shift[ch] (+ residual)`, then relu; scale and
shift are computed by small relay ops on the vectors. The chain is replaced by

    %y = func.call @xr_gemm_<i>(%A, %B, [%scale], [%shift], [%residual])

of a private declaration that carries the GEMM's geometry as a `#kernel.gemm` attribute
(`xrelay.kernel`, dialects/kernel.py): sizes, strides of A and B, batch loops with their
strides, the epilogue. `prepack-weights` then gives weights that are parameters the
kernel's packed layout. A convolution's B is its input: a 1x1 unit-stride one reads it as
a matrix in place; any other carries its window (`window`) and the GEMM packs the im2col
columns from the input as it goes (lowering/kernels/conv_pack.py), never writing them out. `lowering/kernels/wrappers.py`
turns each declaration into a small LLVM function that loops over the batch and calls
`xr_sgemm`. `select-kernels{enabled=false}` keeps the plain linalg lowerings (for
comparison; `xrelay.build(..., kernels=False)`).

Also: an f32 NCHW max or average pool becomes a call of the runtime pool (`#kernel.pool`,
lowering/kernels/pool.py), and a convolution with at most 4 input channels per group
(depthwise convolutions, stems) with the same epilogue chain a call of the runtime's
narrow convolution (`#kernel.narrow_conv`, lowering/kernels/narrow_conv.py); an f32
layer norm over trailing axes, softmax or log-softmax along the last axis, or NCHW global
pool, of static shape, a call of the runtime's row kernels (`#kernel.rows`,
lowering/kernels/rows.py).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xrelay.dialects import relay
from xrelay.dialects.dims import Dim, dim_str, is_dynamic
from xrelay.dialects.dims import equal as dim_equal
from xrelay.dialects.dims import normalize as dim_normalize
from xrelay.dialects.dims import prod as dim_prod
from xrelay.dialects.kernel import (
    GemmAttr,
    GemmSpec,
    NarrowConvAttr,
    NarrowConvSpec,
    PoolAttr,
    PoolSpec,
    RowAttr,
    RowSpec,
    WinogradAttr,
    WinogradSpec,
    size_code,
)
from xrelay.lowering.dynamic_sizes import SymbolSizes, is_dynamic_function
from xrelay.lowering.jit import vector_width
from xrelay.lowering.kernels.gemm_direct import direct_pays, direct_pointwise_pays
from xrelay.lowering.kernels.gemm_pixel import pixel_major_pays
from xrelay.lowering.kernels.narrow_conv import MAX_CG
from xrelay.lowering.relay_to_linalg.builder import Emitter, shape_of
from xrelay.lowering.relay_to_linalg.nn import avg_pool_divisors

KERNEL_ATTR = "xrelay.kernel"  # a #kernel.gemm on each GEMM declaration
POOLS = True  # f32 max and average pools on the runtime's kernel (tests turn it off)
POINTWISE_PIXELS_IN_PLACE = True  # (tests compare with the packed pixel panels)
DIRECT = True  # read unit-stride windows directly where it pays (tests turn it off)
NARROW = True  # few input channels per group on the runtime's kernel (tests turn it off)
VIEWS = True  # products read reshaped / transposed operands in place (tests turn it off)
ROWS = True  # layer norms, softmaxes, global pools on the row kernels (tests turn it off)
MAX_ROW = 1 << 16  # values per row at most (each lane of the row kernels' sums adds n / 64)
TRANSFORMS = True  # Winograd transforms on the runtime's kernels (tests turn them off)


Affine = tuple[SSAValue | None, SSAValue | None]  # y = x * scale + shift (None: 1, 0)


@dataclass
class Anchor:
    op: Operation
    a: SSAValue  # operands as the kernel reads them
    b: SSAValue
    spec: GemmSpec
    channel_axis: int
    channels: int
    factors: tuple[SSAValue, ...] = ()  # scalars multiplying the operands: the epilogue's
    views: tuple[Operation, ...] = ()  # the reshapes, transposes, multiplies read through


def _reshaped_strides(shape: list[int], strides: list[int], new: list[int]) -> list[int] | None:
    """The strides of `new` over the memory that `shape` with `strides` reads, if the
    reshape is a view of it (each group of old axes that merge or split contiguous); else
    None (numpy's no-copy reshape)."""
    old = [(n, st) for n, st in zip(shape, strides) if n != 1]
    out = [0] * len(new)
    oi = ni = 0
    while ni < len(new) and oi < len(old):
        oj, nj = oi + 1, ni + 1
        po, pn = old[oi][0], new[ni]
        while po != pn:
            if pn < po:
                if nj >= len(new):
                    return None
                pn *= new[nj]
                nj += 1
            else:
                if oj >= len(old):
                    return None
                po *= old[oj][0]
                oj += 1
        for k in range(oi, oj - 1):  # the old group must be contiguous
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None
        out[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            out[k - 1] = out[k] * new[k]
        ni, oi = nj, oj
    return out


def _operand_view(
    value: SSAValue,
) -> tuple[SSAValue, list[int], list[SSAValue], list[Operation]] | None:
    """`value` as a strided view of an earlier tensor: through relay reshapes, transposes
    (static shapes) and multiplies by a one-value f32 tensor back to the first other op's
    result. Returns (that tensor, value's strides over it, the scalars, the ops read
    through), or None if no reshape or transpose lies between or the view is not strided
    (a reshape that would copy)."""
    path: list[Operation] = []
    factors: list[SSAValue] = []
    v = value
    while isinstance(op := v.owner, relay.ReshapeOp | relay.TransposeOp | relay.MultiplyOp):
        if isinstance(op, relay.MultiplyOp):
            ones = [x for x in (op.lhs, op.rhs) if _f32(x) and all(d == 1 for d in shape_of(x))]
            rest = op.rhs if ones and ones[0] is op.lhs else op.lhs
            if not ones or rest is ones[0] or list(shape_of(rest)) != list(shape_of(op.result)):
                break
            factors.append(ones[0])
            v = rest
        else:
            v = op.operands[0]
        path.append(op)
    if not any(isinstance(op, relay.ReshapeOp | relay.TransposeOp) for op in path):
        return None
    shape = list(shape_of(v))
    if not all(isinstance(d, int) for d in shape) or not _f32(v):
        return None
    strides = [int(np.prod(shape[k + 1 :])) for k in range(len(shape))]
    for op in reversed(path):
        result = list(shape_of(op.results[0]))
        if not all(isinstance(d, int) for d in result):
            return None
        if isinstance(op, relay.TransposeOp):
            axes = list(op.attrs.axes) if op.attrs.axes else list(range(len(shape)))[::-1]
            shape, strides = [shape[k] for k in axes], [strides[k] for k in axes]
        elif isinstance(op, relay.ReshapeOp):
            new = _reshaped_strides(shape, strides, result)
            if new is None:
                return None
            shape, strides = result, new
    return v, strides, factors, path


def _f32(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and value.type.element_type == f32


def _contraction(op: Operation) -> Anchor | None:
    """dense / matmul / batch_matmul as a GEMM over contiguous operands."""
    if not all(_f32(v) for v in (*op.operands, op.results[0])):
        return None
    out = list(shape_of(op.results[0]))
    if isinstance(op, relay.DenseOp):
        x, w = op.data, op.weight
        k = shape_of(x)[-1]
        m, n = dim_prod(out[:-1]), out[-1]
        spec = GemmSpec(m, n, k, k, 1, 1, k, n)
        return Anchor(op, x, w, spec, len(out) - 1, n)
    if isinstance(op, relay.MatmulOp | relay.BatchMatmulOp):
        a, b = op.lhs, op.rhs
        ta, tb = op.attrs.transpose_a, op.attrs.transpose_b
        sa, sb = shape_of(a), shape_of(b)
        m, n = out[-2], out[-1]
        k = sa[-2] if ta else sa[-1]
        rsa, csa = (1, m) if ta else (k, 1)
        rsb, csb = (1, k) if tb else (n, 1)
        spec = GemmSpec(m, n, k, rsa, csa, rsb, csb, n)
        batched = isinstance(op, relay.BatchMatmulOp) and out[0] != 1
        if batched:
            # an operand's batch is 1 (read at stride 0) or the result's
            if not all(s[0] == 1 or dim_equal(s[0], out[0]) for s in (sa, sb)):
                return None
            strides = [0 if s[0] == 1 else size for s, size in ((sa, m * k), (sb, k * n))]
            spec = replace(spec, batch=((out[0], *strides, m * n, 0),))
        anchor = Anchor(op, a, b, spec, len(out) - 1, n)
        return _read_through_views(anchor, batched) if VIEWS else anchor
    return None


def _read_through_views(anchor: Anchor, batched: bool) -> Anchor:
    """A matmul or batch_matmul whose operands are reshapes and transposes (and scalar
    multiplies) of earlier tensors reads those tensors at the views' strides (BERT's
    attention: its heads' [12, 128, 64] slices of the [128, 768] projections, and their
    scale, 1/sqrt(sqrt(64)) on each side, as the epilogue's scale: the same products,
    rounded once instead of on each operand)."""
    spec, op = anchor.spec, anchor.op
    ta, tb = op.attrs.transpose_a, op.attrs.transpose_b
    rank = len(shape_of(op.results[0]))
    static = all(isinstance(d, int) for d in (spec.m, spec.n, spec.k))
    if not static or spec.m <= 3 or rank != (3 if batched else 2):
        return anchor  # (the matrix-vector path reads plain layouts only)
    factors: list[SSAValue] = []
    views: list[Operation] = []
    a, b = anchor.a, anchor.b
    batch = list(spec.batch[0]) if batched else []
    for which in ("a", "b"):
        value = a if which == "a" else b
        found = _operand_view(value)
        if found is None:
            continue
        base, strides, scalars, path = found
        if isinstance(base, BlockArgument) or isinstance(base.owner, relay.ConstantOp):
            continue  # parameters and constants are prepacked from plain layouts
        *outer, rows, cols = strides
        flip = ta if which == "a" else tb
        if flip:
            rows, cols = cols, rows
        if which == "a":
            spec, a = replace(spec, rsa=rows, csa=cols), base
        else:
            spec, b = replace(spec, rsb=rows, csb=cols), base
        if batched:
            size = shape_of(value)[0]
            batch[1 if which == "a" else 2] = 0 if size == 1 else outer[0]
        factors += scalars
        views += path
    if not views:
        return anchor
    if batched:
        spec = replace(spec, batch=(tuple(batch),))
    return replace(anchor, a=a, b=b, spec=spec, factors=tuple(factors), views=tuple(views))


def _conv(op: relay.Conv2DOp) -> Anchor | None:
    a = op.attrs
    if a.data_layout != "NCHW" or a.kernel_layout != "OIHW":
        return None
    if not all(_f32(v) for v in (op.data, op.weight, op.result)):
        return None
    n, c_all, h, w = shape_of(op.data)
    o_all, cg, kh, kw = shape_of(op.weight)
    if not all(isinstance(d, int) for d in (c_all, h, w)):
        return None  # only the batch may be a run-time size
    g = a.groups
    og = o_all // g
    _, _, oh, ow = shape_of(op.result)
    if og < 4:  # depthwise-like: a product of a few rows is not worth packing
        return None
    ohw, kk = oh * ow, cg * kh * kw
    pointwise = (kh, kw) == (1, 1) and tuple(a.strides) == (1, 1) and not any(a.padding)
    if pointwise and (h, w) == (1, 1) and g == 1 and isinstance(n, int):
        # one pixel per image (a classifier after global pooling): the product of the
        # images [n, C] and the weight's rows [O, C], a matrix-vector product in the
        # dense layout (the weight's rows are contiguous dot products); in the convolution's
        # layout C's single column would fill one lane of each 32-wide tile
        spec = GemmSpec(n, o_all, c_all, c_all, 1, 1, c_all, o_all)
        return Anchor(op, op.data, op.weight, spec, 1, o_all)
    window: tuple[tuple[int, ...], ...] = ()
    if not pointwise:  # B is the input's implicit im2col matrix [C/g*kh*kw, OH*OW]
        top, left = a.padding[0], a.padding[1]  # bottom and right follow from OH, OW
        window = ((h, w), (kh, kw), tuple(a.strides), tuple(a.dilation), (top, left), (oh, ow))
    # B reads the input: [n, g, C/g, H*W] (in place when pointwise)
    b_group, b_image = cg * h * w, c_all * h * w
    batch = [(n, 0, b_image, o_all * ohw, 0), (g, og * kk, b_group, og * ohw, og)]
    batch = tuple(b for b in batch if not (isinstance(b[0], int) and b[0] <= 1))
    spec = GemmSpec(og, ohw, kk, kk, 1, ohw, 1, ohw, batch=batch, per_row=True, window=window)
    if window and DIRECT and direct_pays(window, kk):  # B read from the input: no im2col panels
        spec = replace(spec, direct=True)
    return Anchor(op, op.weight, op.data, spec, 1, o_all)


def _pointwise_window(chain: Chain, vw: int) -> None:
    """A pointwise convolution (1x1, stride 1, no padding, no prologue) that reads its
    input in place gets a 1x1 window: many pixels and few output channels read directly
    (`direct`, kernels/gemm_direct.py: B packed into panels at every call would be a copy
    of the whole input for a few row panels of A); few pixels run pixel-major
    (prepack-weights, kernels/gemm_pixel.py), each tile's pixels broadcast from the input
    (packed into pixel panels, every thread packed all of them: SqueezeNet's 512 -> 1000
    on 13 x 13 0.858 -> 0.837 ms, its 384 -> 64 0.053 -> 0.044; ResNet-50 33.95 -> 33.16,
    same process)."""
    anchor = chain.anchor
    conv, spec = anchor.op, anchor.spec
    if not (DIRECT and isinstance(conv, relay.Conv2DOp) and spec.per_row) or spec.window:
        return
    if chain.prologue is not None or conv.attrs.groups != 1:
        return
    _, _, h, w = shape_of(conv.data)
    if not (isinstance(h, int) and isinstance(w, int)) or (spec.rsb, spec.csb) != (h * w, 1):
        return
    if spec.ldc != h * w:
        return
    window = ((h, w), (1, 1), (1, 1), (1, 1), (0, 0), (h, w))
    if direct_pointwise_pays(spec.m, h * w, spec.k):
        anchor.spec = replace(spec, window=window, direct=True)
    elif POINTWISE_PIXELS_IN_PLACE and pixel_major_pays(spec.m, h * w, spec.k, 1, False, vw):
        anchor.spec = replace(spec, window=window)  # (prepack-weights: pixel-major)


def anchor_of(op: Operation) -> Anchor | None:
    if isinstance(op, relay.Conv2DOp):
        return _conv(op)
    dynamic = any(is_dynamic(v.type) for v in (*op.operands, *op.results))
    if isinstance(op, relay.DenseOp | relay.MatmulOp | relay.BatchMatmulOp):
        anchor = _contraction(op)
        if anchor is None:
            return None
        spec = anchor.spec
        if dynamic:  # sizes that are expressions are >= 1 (symbols are positive)
            return anchor
        if spec.k >= 1 and spec.m * spec.n >= 1:
            return anchor
    return None


def single_user(value: SSAValue) -> Operation | None:
    uses = list(value.uses)
    return uses[0].operation if len(uses) == 1 else None


def _channel_vector(value: SSAValue, out: list[int], axis: int) -> bool:
    """Does `value` broadcast against `out` only along `axis` (size = out[axis])?"""
    shape = list(shape_of(value))
    if len(shape) > len(out) or not _f32(value):
        return False
    padded = [1] * (len(out) - len(shape)) + shape
    return all(s == (out[axis] if d == axis else 1) for d, s in enumerate(padded))


class Chain:
    """The epilogue folded so far: y = acc * scale + shift (+ residual), relu."""

    def __init__(self, anchor: Anchor) -> None:
        self.anchor = anchor
        self.ops: list[Operation] = [anchor.op]
        self.scale: SSAValue | None = None
        self.shift: SSAValue | None = None
        self.residual: SSAValue | None = None
        self.relu = False
        self.pending: list[Operation] = []  # relay ops computing the vectors
        # B's prologue (scale, shift) and the batch_norm and relu it replaces
        self.prologue: tuple[SSAValue, SSAValue] | None = None
        self.before: list[Operation] = []

    @property
    def value(self) -> SSAValue:
        return self.ops[-1].results[0]

    def emit(self, op: Operation) -> SSAValue:
        self.pending.append(op)
        return op.results[0]

    def _vector(self, value: SSAValue, size: int | None = None) -> SSAValue:
        """`value` as a vector of `size` (default: the result's channels)."""
        size = self.anchor.channels if size is None else size
        assert isinstance(size, int)
        if list(shape_of(value)) == [size]:
            return value
        return self.emit(relay.ReshapeOp(value, newshape=[size]))

    def batch_norm_affine(
        self, bn: relay.BatchNormOp, size: int | None = None
    ) -> tuple[SSAValue, SSAValue]:
        """`bn` as y = x * g + h: the vectors (g, h) of `size` (default: the result's
        channels), computed by pending ops."""
        eps = self.emit(relay.ConstantOp(np.array([bn.attrs.epsilon], np.float32)))
        var = self._vector(bn.moving_var, size)
        inv = self.emit(relay.RsqrtOp(self.emit(relay.AddOp(var, eps))))
        g = self.emit(relay.MultiplyOp(self._vector(bn.gamma, size), inv))
        mean_g = self.emit(relay.MultiplyOp(self._vector(bn.moving_mean, size), g))
        return g, self.emit(relay.SubtractOp(self._vector(bn.beta, size), mean_g))

    def compose(self, first: Affine, then: Affine) -> Affine:
        """y -> y * scale + shift of `first` followed by that of `then` (None: 1 or 0)."""
        (g, h), (scale, shift) = first, then
        if scale is not None:
            g = scale if g is None else self.emit(relay.MultiplyOp(g, scale))
            if h is not None:
                h = self.emit(relay.MultiplyOp(h, scale))
        if shift is not None:
            h = shift if h is None else self.emit(relay.AddOp(h, shift))
        return g, h

    def _affine(self, scale: SSAValue | None, shift: SSAValue | None) -> None:
        """Compose y -> y * scale + shift onto the chain."""
        self.scale, self.shift = self.compose((self.scale, self.shift), (scale, shift))

    def channel_affine(
        self, user: Operation, value: SSAValue, out: list, axis: int, size: int | None = None
    ) -> Affine | None:
        """`user` of `value` (shape `out`) as y = x * scale + shift with vectors of `size`
        along `axis` (a bias_add, an add / subtract / multiply by a channel vector, a
        batch_norm), or None; nothing is emitted for None."""
        if isinstance(user, relay.BiasAddOp | relay.BatchNormOp):
            if user.attrs.axis % len(out) != axis or user.data is not value:
                return None
            if isinstance(user, relay.BiasAddOp):
                return None, self._vector(user.bias, size)
            return self.batch_norm_affine(user, size)
        if not isinstance(user, relay.AddOp | relay.SubtractOp | relay.MultiplyOp):
            return None
        other = user.rhs if user.lhs is value else user.lhs
        if other is value or not _channel_vector(other, out, axis):
            return None
        if isinstance(user, relay.SubtractOp) and user.lhs is not value:
            return None  # v - y
        vec = self._vector(other, size)
        if isinstance(user, relay.MultiplyOp):
            return vec, None
        if isinstance(user, relay.AddOp):
            return None, vec
        return None, self.emit(relay.NegativeOp(vec))  # y - v

    def absorb_users(self) -> None:
        """Extend the chain by its value's single user while it fits."""
        while (user := single_user(self.value)) is not None and self.extend(user):
            pass

    def extend(self, user: Operation) -> bool:
        """Absorb `user` (the single user of the chain's value) if it fits; False to stop."""
        out = list(shape_of(self.value))
        # a product's channels are its last axis, also past a reshape (_keeps_rows)
        conv = isinstance(self.anchor.op, relay.Conv2DOp)
        axis = self.anchor.channel_axis if conv else len(out) - 1
        if (
            not (conv or self.relu)
            and isinstance(user, relay.ReshapeOp)
            and _keeps_rows(self, user)
        ):
            self.ops.append(user)  # the same bytes: the epilogue goes on past it
            return True
        if (
            self.relu
            or not isinstance(user, relay.RelayOp)
            or list(shape_of(user.results[0])) != out
        ):
            return False
        vectors = isinstance(self.anchor.channels, int)  # channel vectors of a static size
        if not vectors and not isinstance(user, relay.ReluOp | relay.AddOp):
            return False
        if isinstance(user, relay.ReluOp):
            self.relu = True
        elif self.residual is not None:
            return False
        elif vectors and (affine := self.channel_affine(user, self.value, out, axis)):
            self._affine(*affine)
        elif isinstance(user, relay.AddOp) and (other := _other(user, self.value)) is not None:
            if list(shape_of(other)) != out or not _f32(other):
                return False
            self.residual = other
        else:
            return False
        self.ops.append(user)
        return True


def _keeps_rows(chain: Chain, reshape: relay.ReshapeOp) -> bool:
    """Is `reshape` of a product's result (its channels the last axis) one that keeps the
    last axis (BERT's [128, 768] -> [1, 128, 768] between each matmul and its bias and
    residual adds)? Its result is the product's bytes, channel for channel, so the chain
    reads on through it."""
    before, after = list(shape_of(chain.value)), list(shape_of(reshape.results[0]))
    return len(before) >= 2 and len(after) >= 2 and dim_equal(before[-1], after[-1])


def _other(op: Operation, value: SSAValue) -> SSAValue | None:
    """The operand of binary `op` that is not `value` (None if both are)."""
    other = op.rhs if op.lhs is value else op.lhs
    return None if other is value else other


def _fold_prologue(chain: Chain) -> None:
    """Per-channel affine ops (batch_norm, a channel vector's multiply, add or subtract,
    bias_add) then relu, read only by a pointwise convolution (DenseNet's layers:
    batch_norm, scale, relu, 1x1 convolution over the concatenated features) become B's
    prologue: the GEMM packs max(x * g + h, 0) from the first op's input, so the
    normalized features are never written."""
    anchor = chain.anchor
    conv = anchor.op
    if not isinstance(conv, relay.Conv2DOp) or anchor.spec.window or conv.attrs.groups != 1:
        return
    relu = anchor.b.owner
    if not isinstance(relu, relay.ReluOp) or single_user(anchor.b) is not conv:
        return
    out = list(shape_of(anchor.b))
    if not isinstance(out[1], int):
        return
    steps: list[Affine] = []  # the affine ops' vectors, from the relu's input back
    ops: list[Operation] = []
    value = relu.operands[0]
    while isinstance(op := value.owner, relay.RelayOp) and single_user(value) is (
        ops[-1] if ops else relu
    ):
        inputs = [v for v in op.operands if list(shape_of(v)) == out and _f32(v)]
        if len(inputs) != 1 or list(shape_of(value)) != out:
            break
        step = chain.channel_affine(op, inputs[0], out, 1, out[1])
        if step is None:
            break
        steps.append(step)
        ops.append(op)
        value = inputs[0]
    affine: Affine = (None, None)
    for step in reversed(steps):
        affine = chain.compose(affine, step)
    g, h = affine
    if g is None:
        g = chain.emit(relay.ConstantOp(np.ones(out[1], np.float32)))
    if h is None:
        h = chain.emit(relay.ConstantOp(np.zeros(out[1], np.float32)))
    chain.prologue = (g, h)
    anchor.b = value
    chain.before = [relu, *ops]


def _fold_channel_shuffle(chain: Chain) -> None:
    """A grouped convolution's result shuffled across its g groups (ShuffleNet: reshape
    [N, g, C/g, H, W], transpose (0, 2, 1, 3, 4), reshape back [N, C, H, W]) is written
    shuffled by the GEMM itself: row j of group i is channel j * g + i, so the group's C
    stride becomes H*W and the row stride g*H*W. The reshapes and the transpose join the
    chain (erased with it); a residual (read in C's layout) keeps them apart."""
    anchor, spec = chain.anchor, chain.anchor.spec
    if not isinstance(anchor.op, relay.Conv2DOp) or anchor.op.attrs.groups < 2:
        return
    if chain.residual is not None:
        return
    groups = anchor.op.attrs.groups
    n, channels, oh, ow = shape_of(chain.value)
    first = single_user(chain.value)
    middle = single_user(first.results[0]) if isinstance(first, relay.ReshapeOp) else None
    last = single_user(middle.results[0]) if isinstance(middle, relay.TransposeOp) else None
    if not isinstance(last, relay.ReshapeOp):
        return
    if (
        list(shape_of(first.results[0])) != [n, groups, channels // groups, oh, ow]
        or tuple(middle.attrs.axes) != (0, 2, 1, 3, 4)
        or list(shape_of(last.results[0])) != [n, channels, oh, ow]
    ):
        return
    count, sa, sb, _, rows = spec.batch[-1]  # the groups loop (_conv puts it last)
    batch = (*spec.batch[:-1], (count, sa, sb, oh * ow, rows))
    anchor.spec = replace(spec, ldc=groups * oh * ow, batch=batch)
    chain.ops += [first, middle, last]


DeclarationCache = dict[tuple[GemmSpec, tuple[str, ...]], str]


def size_arguments(spec: GemmSpec) -> tuple[GemmSpec, list[Dim]]:
    """A spec whose sizes are dimension expressions -> the spec with each distinct
    expression replaced by its code (`kernel.size_code`: the wrapper's j-th size argument)
    and the expressions in argument order."""
    exprs: dict[str, Dim] = {}

    def code(d: Any) -> int:
        d = dim_normalize(d)
        if isinstance(d, int):
            return d
        key = dim_str(d)
        if key not in exprs:
            exprs[key] = d
        return size_code(list(exprs).index(key))

    fields = {f: code(getattr(spec, f)) for f in ("m", "n", "k", "rsa", "csa", "rsb", "csb", "ldc")}
    batch = tuple(tuple(code(v) for v in loop) for loop in spec.batch)
    return replace(spec, **fields, batch=batch), list(exprs.values())


def declaration_cache(module: ModuleOp) -> DeclarationCache:
    """The GEMM declarations already in `module`, as `gemm_declaration` looks them up."""
    return {
        (op.attributes[KERNEL_ATTR].data, tuple(str(t) for t in op.function_type.inputs)): (
            op.sym_name.data
        )
        for op in module.ops
        if isinstance(op, func.FuncOp) and isinstance(op.attributes.get(KERNEL_ATTR), GemmAttr)
    }


def gemm_declaration(
    module: ModuleOp,
    cache: DeclarationCache,
    spec: GemmSpec,
    args: list[SSAValue],
    result: TensorType,
) -> str:
    """The name of a GEMM declaration for `spec` on these operands (tensors, then the
    index sizes of a dynamic spec), added to the module on first use (identical GEMMs
    share one)."""
    key = (spec, tuple(str(v.type) for v in args))
    if key not in cache:
        name = f"xr_gemm_{len(cache)}"
        decl = func.FuncOp.external(name, [v.type for v in args], [result])
        decl.attributes[KERNEL_ATTR] = GemmAttr(spec)
        module.body.block.add_op(decl)
        cache[key] = name
    return cache[key]


def pool_spec(op: Operation) -> PoolSpec | None:
    """The runtime pool's geometry for `op`: an f32 NCHW relay.nn.max_pool2d or
    relay.nn.avg_pool2d of static shape; else None."""
    if not isinstance(op, relay.MaxPool2DOp | relay.AvgPool2DOp) or op.attrs.layout != "NCHW":
        return None
    if not (_f32(op.data) and _f32(op.results[0])):
        return None
    (n, c, h, w), (_, _, oh, ow) = shape_of(op.data), shape_of(op.results[0])
    if not all(isinstance(d, int) for d in (n, c, h, w, oh, ow)):
        return None
    a = op.attrs
    (kh, kw), (sh, sw), (dh, dw) = a.pool_size, a.strides, a.dilation
    pt, pl = a.padding[0], a.padding[1]
    average = isinstance(op, relay.AvgPool2DOp)
    return PoolSpec(n * c, h, w, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, average)


RuntimeDeclarations = dict[tuple[Any, tuple[str, ...], str], str]


def runtime_declaration(
    module: ModuleOp,
    known: RuntimeDeclarations,
    stem: str,
    attr: Any,
    types: list[Attribute],
    result: Attribute,
) -> str:
    """The name of the private declaration `stem`_<i> carrying kernel attribute `attr`
    (a pool, narrow convolution or Winograd transform) with these argument types and
    result, added to the module on first use (`known`: those this pass added)."""
    key = (attr, tuple(str(t) for t in types), str(result))
    if key not in known:
        taken = {f.sym_name.data for f in module.ops if isinstance(f, func.FuncOp)}
        name = next(f"{stem}_{i}" for i in itertools.count() if f"{stem}_{i}" not in taken)
        decl = func.FuncOp.external(name, types, [result])
        decl.attributes[KERNEL_ATTR] = attr
        module.body.block.add_op(decl)
        known[key] = name
    return known[key]


def _replace_by_call(
    module: ModuleOp,
    known: RuntimeDeclarations,
    op: Operation,
    stem: str,
    attr: Attribute,
    args: list[SSAValue],
) -> None:
    """Replace single-result `op` by a call on `args` of the runtime declaration for `attr`."""
    result = op.results[0].type
    name = runtime_declaration(module, known, stem, attr, [a.type for a in args], result)
    call = func.CallOp(name, args, [result])
    call.location = op.location
    Rewriter.replace_op(op, call)


def _pool_call(module: ModuleOp, known: RuntimeDeclarations, op: Operation) -> bool:
    """Replace a pool `pool_spec` accepts by a call of a runtime pool declaration (an
    average pool's divisors, the lowering's, a constant [OH, OW] after its input)."""
    spec = pool_spec(op)
    if spec is None or not POOLS:
        return False
    args: list[SSAValue] = [op.operands[0]]
    if spec.average:
        divisors = relay.ConstantOp(avg_pool_divisors(op).astype(np.float32))
        Rewriter.insert_op(divisors, InsertPoint.before(op))
        divisors.location = op.location
        args.append(divisors.results[0])
    _replace_by_call(module, known, op, "xr_pool", PoolAttr(spec), args)
    return True


def row_spec(op: Operation) -> RowSpec | None:
    """The runtime row kernel for `op`: an f32 relay.nn.layer_norm (over its trailing
    axes: contiguous rows), relay.nn.softmax or relay.nn.log_softmax along the last axis,
    an NCHW global average or max pool (planes as rows), of static shape and at most
    MAX_ROW values per row, or a relay.max / relay.min over trailing axes (_extreme_spec);
    else None."""
    pools = relay.GlobalAvgPool2DOp | relay.GlobalMaxPool2DOp
    if isinstance(op, relay.MaxOp | relay.MinOp):
        return _extreme_spec(op)
    if not isinstance(op, relay.LayerNormOp | relay.SoftmaxOp | relay.LogSoftmaxOp | pools):
        return None
    if not (_f32(op.operands[0]) and _f32(op.results[0])):
        return None
    shape = shape_of(op.operands[0])
    if not shape or not all(isinstance(d, int) for d in shape):
        return None
    epsilon = ""
    if isinstance(op, pools):  # each plane of NCHW a row
        if op.attrs.layout != "NCHW":
            return None
        kind, axis = ("mean" if isinstance(op, relay.GlobalAvgPool2DOp) else "max"), 2
    else:
        axis = op.attrs.axis % len(shape)
        if isinstance(op, relay.LayerNormOp):
            kind, epsilon = "layer_norm", repr(float(op.attrs.epsilon))
        elif axis != len(shape) - 1:
            return None
        else:
            kind = "softmax" if isinstance(op, relay.SoftmaxOp) else "log_softmax"
    n = int(np.prod(shape[axis:]))
    if n < 1 or n > MAX_ROW:
        return None
    return RowSpec(kind, int(np.prod(shape[:axis])), n, epsilon)


def _extreme_spec(op: relay.MaxOp | relay.MinOp) -> RowSpec | None:
    """An f32 relay.max / relay.min of static shape over its trailing axes (every axis when
    none is given: dynamic quantization's range) as rows of the values it reduces
    together; any row length (no sum to lose precision in)."""
    if not (_f32(op.operands[0]) and _f32(op.results[0])):
        return None
    shape = shape_of(op.operands[0])
    if not shape or not all(isinstance(d, int) and d > 0 for d in shape):
        return None
    rank = len(shape)
    axes = op.attrs.axis
    reduced = sorted({a % rank for a in axes}) if axes is not None else list(range(rank))
    lead = rank - len(reduced)
    if reduced != list(range(lead, rank)):
        return None
    kind = "max" if isinstance(op, relay.MaxOp) else "min"
    return RowSpec(kind, int(np.prod(shape[:lead])), int(np.prod(shape[lead:])))


def _row_call(module: ModuleOp, known: RuntimeDeclarations, op: Operation) -> bool:
    """Replace an op `row_spec` accepts by a call of a runtime row kernel declaration. A
    maximum or minimum of a whole tensor of rank 2 or more is one per row of its last axis
    (rows the threads split) and then over those (a relay op of its own)."""
    spec = row_spec(op) if ROWS else None
    if spec is None:
        return False
    shape = shape_of(op.operands[0])
    if isinstance(op, relay.MaxOp | relay.MinOp) and spec.rows == 1 and len(shape) > 1:
        per_row = RowSpec(spec.kind, spec.n // shape[-1], shape[-1])
        rows_type = TensorType(f32, [per_row.rows])
        name = runtime_declaration(
            module, known, "xr_rows", RowAttr(per_row), [op.operands[0].type], rows_type
        )
        call = func.CallOp(name, [op.operands[0]], [rows_type])
        whole = type(op)(call.results[0])
        ops: list[Operation] = [call, whole]
        if whole.results[0].type != op.results[0].type:  # keepdims
            ops.append(relay.ReshapeOp(whole.results[0], newshape=list(shape_of(op.results[0]))))
        for new in ops:
            new.location = op.location
        Rewriter.replace_op(op, ops)
        return True
    _replace_by_call(module, known, op, "xr_rows", RowAttr(spec), list(op.operands))
    return True


def winograd_spec(op: Operation) -> WinogradSpec | None:
    """The runtime transform's geometry for an f32 relay.nn.winograd_input or
    winograd_output (static shapes: their verifier checks); else None."""
    if not TRANSFORMS or not isinstance(op, relay.WinogradInputOp | relay.WinogradOutputOp):
        return None
    if not all(_f32(v) for v in (*op.operands, op.results[0])):
        return None
    a = op.attrs
    if isinstance(op, relay.WinogradInputOp):
        n, c, h, w = shape_of(op.data)
        _, _, _, th, tw1 = shape_of(op.result)
        top, left = a.padding[0], a.padding[1]
        return WinogradSpec(False, a.tile, n * c, c, h, w, th, tw1 - 1, top, left)
    _, n, k, th, tw = shape_of(op.data)
    oh, ow = a.size
    flags = {"scale": a.scale, "shift": a.shift, "residual": a.residual, "relu": a.relu}
    return WinogradSpec(True, a.tile, n * k, k, oh, ow, th, tw, **flags)


def _winograd_call(module: ModuleOp, known: RuntimeDeclarations, op: Operation) -> bool:
    """Replace a Winograd transform `winograd_spec` accepts by a call of a runtime
    transform declaration."""
    spec = winograd_spec(op)
    if spec is None:
        return False
    _replace_by_call(module, known, op, "xr_wino", WinogradAttr(spec), list(op.operands))
    return True


def select_kernels(module: ModuleOp, vw: int = 0) -> int:
    """Rewrite every anchor chain (and max pool) of the module's functions; returns how
    many. `vw`: the GEMM's vector width (the host's by default)."""
    vw = vw or vector_width()
    cache = declaration_cache(module)  # (winograd-convs adds some before)
    known: RuntimeDeclarations = {}  # the other kernels' declarations
    count = 0
    for fn in [f for f in module.ops if isinstance(f, func.FuncOp) and f.body.blocks]:
        sizes = SymbolSizes(fn) if is_dynamic_function(fn) else None
        for op in list(fn.walk()):
            if op.parent is None:  # erased as part of an earlier chain
                continue
            if (
                _pool_call(module, known, op)
                or _winograd_call(module, known, op)
                or _row_call(module, known, op)
            ):
                count += 1
                continue
            if (narrow := narrow_conv_spec(op)) is not None:
                o = narrow.groups * narrow.og
                chain = Chain(Anchor(op, op.weight, op.data, GemmSpec(), 1, o))
                chain.absorb_users()
                _rewrite_narrow_conv(module, known, chain, narrow)
                count += 1
                continue
            anchor = anchor_of(op)
            if anchor is None:
                continue
            spec, exprs = size_arguments(anchor.spec)
            if exprs and sizes is None:
                continue  # dynamic sizes outside @main: the linalg lowering
            anchor.spec = spec
            chain = Chain(anchor)
            if anchor.factors:  # the operands' scalar multiplies, as a channel vector
                chain._affine(_scalar_vector(chain, anchor.factors), None)
            chain.absorb_users()
            _fold_channel_shuffle(chain)
            _fold_prologue(chain)
            _pointwise_window(chain, vw)
            values = [sizes.value(d) for d in exprs] if sizes is not None else []
            _rewrite(module, cache, chain, values, sizes)
            count += 1
    return count


def _rewrite(
    module: ModuleOp,
    cache: DeclarationCache,
    chain: Chain,
    size_values: list[SSAValue],
    sizes: SymbolSizes | None = None,
) -> None:
    boundary, e = _place_pending(chain, sizes)
    anchor, spec = chain.anchor, chain.anchor.spec
    args = [anchor.a, anchor.b]
    spec = replace(
        spec,
        scale=chain.scale is not None,
        shift=chain.shift is not None,
        residual=chain.residual is not None,
        relu=chain.relu,
        prologue=chain.prologue is not None,
    )
    args += [v for v in (chain.scale, chain.shift, chain.residual) if v is not None]
    args += list(chain.prologue or ())
    args += size_values  # the run-time sizes of a dynamic spec
    name = gemm_declaration(module, cache, spec, args, chain.value.type)
    _replace_chain(chain, e, boundary, name, args)
    _erase_unused(anchor.views)


def _scalar_vector(chain: Chain, factors: tuple[SSAValue, ...]) -> SSAValue:
    """The product of one-value tensors `factors` as a vector of the chain's channels."""
    total = chain.emit(relay.ReshapeOp(factors[0], newshape=[1]))
    for f in factors[1:]:
        total = chain.emit(relay.MultiplyOp(total, chain.emit(relay.ReshapeOp(f, newshape=[1]))))
    return chain.emit(relay.BroadcastToOp(total, shape=[chain.anchor.channels]))


def _erase_unused(ops: tuple[Operation, ...]) -> None:
    """Erase the views a product read through (and their scalar constants) where nothing
    else reads them, nearest the product first."""
    rewriter = Rewriter()
    for op in ops:
        if op.parent is None or any(r.uses for r in op.results):
            continue
        operands = list(op.operands)
        rewriter.erase_op(op)
        for x in operands:
            owner = x.owner
            if isinstance(owner, relay.ConstantOp) and not x.uses and owner.parent is not None:
                rewriter.erase_op(owner)


def _place_pending(chain: Chain, sizes: SymbolSizes | None) -> tuple[Operation | None, Emitter]:
    """The chain's pending ops (its vectors' computations) inserted before its last op;
    returns the op before them (what follows it is this rewrite's) and an emitter there."""
    end = chain.ops[-1]
    boundary = end.prev_op
    rewriter = Rewriter()
    for op in chain.pending:
        rewriter.insert_op(op, InsertPoint.before(end))
        op.location = end.location
    return boundary, Emitter(end, sizes)


def _replace_chain(
    chain: Chain, e: Emitter, boundary: Operation | None, name: str, args: list[SSAValue]
) -> None:
    """The chain's value computed by a call of `name` on `args` (after the pending ops
    inserted before the chain's end; `boundary` the op before them), the chain erased."""
    result_type = chain.value.type
    call = func.CallOp(name, args, [result_type])
    y = e.insert(call)
    op = call
    while op is not None and op is not boundary:  # the product's node (profiles name it)
        op.location = chain.anchor.op.location
        op = op.prev_op
    chain.value.replace_all_uses_with(y)
    rewriter = Rewriter()
    for op in [*reversed(chain.ops), *chain.before]:
        rewriter.erase_op(op)


def narrow_conv_spec(op: Operation) -> NarrowConvSpec | None:
    """The runtime narrow convolution's geometry for `op`: an f32 NCHW / OIHW
    relay.nn.conv2d of static shape with at most narrow_conv.MAX_CG input channels per
    group (depthwise convolutions, RGB stems) and column stride 1 or 2; else None. Its
    epilogue flags are the chain's."""
    if not isinstance(op, relay.Conv2DOp) or not NARROW:
        return None
    a = op.attrs
    if a.data_layout != "NCHW" or a.kernel_layout != "OIHW":
        return None
    if not all(_f32(v) for v in (op.data, op.weight, op.result)):
        return None
    (n, _, h, w), (o, cg, kh, kw) = shape_of(op.data), shape_of(op.weight)
    _, _, oh, ow = shape_of(op.result)
    if not all(isinstance(d, int) for d in (n, h, w, o, oh, ow)):
        return None
    if cg > MAX_CG or a.strides[1] not in (1, 2):
        return None
    (sh, sw), (dh, dw) = a.strides, a.dilation
    g = a.groups
    return NarrowConvSpec(
        n, g, cg, o // g, h, w, oh, ow, kh, kw, sh, sw, dh, dw, a.padding[0], a.padding[1]
    )


def _rewrite_narrow_conv(
    module: ModuleOp, known: RuntimeDeclarations, chain: Chain, spec: NarrowConvSpec
) -> None:
    """The narrow convolution and its chain -> a call of a `#kernel.narrow_conv`
    declaration."""
    boundary, e = _place_pending(chain, None)
    conv = chain.anchor.op
    assert isinstance(conv, relay.Conv2DOp)
    spec = replace(
        spec,
        scale=chain.scale is not None,
        shift=chain.shift is not None,
        residual=chain.residual is not None,
        relu=chain.relu,
    )
    args = [conv.data, conv.weight]
    args += [v for v in (chain.scale, chain.shift, chain.residual) if v is not None]
    types = [v.type for v in args]
    attr = NarrowConvAttr(spec)
    name = runtime_declaration(module, known, "xr_conv", attr, types, chain.value.type)
    _replace_chain(chain, e, boundary, name, args)


@dataclass(frozen=True)
class SelectKernels(ModulePass):
    """Products and convolutions with their epilogues -> runtime GEMM calls.
    Options: enabled=false keeps the plain linalg lowerings (for comparison);
    vector_width (the host's by default: what prepack-weights will choose for)."""

    name = "select-kernels"

    enabled: bool = True
    vector_width: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.enabled:
            select_kernels(op, self.vector_width)
