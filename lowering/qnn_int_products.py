"""`qnn-int-products`: 8-bit products on the 8-bit GEMM (lowering/kernels/igemm.py).

A `qnn.dense`, or a `qnn.conv2d` with one group, whose weight is a parameter (or a
constant) with the zero point that makes it s8 as stored (0 for s8, 128 for u8: symmetric
weights, what onnxruntime's quantizer makes), becomes a call of the 8-bit GEMM on the
data's bytes and the weight packed at build time:

    (x - zx) . w_s  =  xu . w_s  -  zu * sum_k w_s

where xu = x (u8) or x xor 0x80 (s8, read so by the kernel), zu is zx in the same domain and
w_s the s8 weight. The product xu . w_s is exact in i32 (K <= 65,536); the correction
-zu * sum_k w_s is a vector per output channel that the kernel adds as it stores C: a
parameter computed at build time when zx is a constant, relay ops on the run-time zero
point otherwise (dynamic quantization). A convolution's data is padded with zx first (what
qnn.conv2d pads with) and the GEMM makes its columns from that, a block at a time
(implicit im2col); a 1x1 unit-stride one reads its data as B in place. The result is the
i32 tensor qnn.dense / qnn.conv2d gives, bit for bit. Where that tensor only feeds (a
constant i32 `bias_add`, or a `relay.add` of an i32 vector parameter or constant along
the last axis, then) a `qnn.requantize` rounding half to even with constant
parameters (then perhaps a `clip`, a fused relu), the kernel requantizes in its epilogue
and the call gives the bytes (`requantize` in its spec): the bias and the input zero point
join the correction vector, the multipliers in_scale / out_scale are an f32 parameter
computed as qnn-legalize computes them, and the clip narrows the clamp; the i32 result
stays as the kernel's scratch for the partial sums of K blocks. Other requantizations stay
with qnn-legalize.

The weight's words follow the kernel: G = 4 values per 32-bit word with AVX-512 VNNI
(`vpdpbusd`), else G = 2 (i16, `vpmaddwd`); options `group` and `vector-width` (0: the
host's) choose them, and the vector width is recorded on the module like prepack-weights
does. What does not match stays for qnn-float-products and qnn-legalize.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp, TensorType, i8, i16, i32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xrelay.dialects import qnn, relay
from xrelay.dialects.constants import constant_value
from xrelay.dialects.dims import prod as dim_prod
from xrelay.dialects.dtypes import dense_from_numpy, numpy_dtype
from xrelay.dialects.kernel import GemmAttr, GemmSpec
from xrelay.dialects.qnn.base import dtype_range
from xrelay.lowering.context import release
from xrelay.lowering.dynamic_sizes import SymbolSizes, is_dynamic_function
from xrelay.lowering.jit import int_group
from xrelay.lowering.kernels import amx, vnni_conv
from xrelay.lowering.kernels.igemm import MR
from xrelay.lowering.kernels.prepack import (
    direct_size,
    pack_direct_rows,
    pack_tile_rows,
    pack_words,
    padded,
    word_groups,
)
from xrelay.lowering.prepack_weights import VECTOR_WIDTH_ATTR, module_vector_width
from xrelay.lowering.qnn_float_products import Rewrite, Weights
from xrelay.lowering.relay_to_linalg.builder import shape_of
from xrelay.lowering.select_kernels import KERNEL_ATTR, single_user, size_arguments
from xrelay.signature import param_name

MAX_K = 1 << 16  # 255 * 128 * K stays below 2^31
# a convolution (batch 1) of at most this many output pixels runs as pixels x channels
# (the kernel's 32-column panels would leave most of a second panel empty on 7 x 7 or
# 14 x 14 outputs; 6-row panels of pixels waste at most 5 rows)
PIXEL_MAJOR_MAX = 256
# ... and a K of at least this: the result's transpose back (a byte transpose, about
# 0.5 ns a byte) costs more than the layout saves on short products (ResNet-50's 1x1
# 256 -> 1024 on 14 x 14: 0.11 ms of transpose against 0.04 saved in the GEMM). VNNI's
# direct windows store channel-major (no transpose) and take any K (`SHORT_K`:
# SqueezeNet int8's 3 x 3 expands on 13 x 13, K 432 and 576, 81 -> 66 and 48 -> 38 us,
# same-process A/B); its 1x1s of short K stay weight-major (7.5 -> 12.4 us pixel-major)
PIXEL_MAJOR_MIN_K = 1024
VNNI_DIRECT = True  # convolutions read straight from the input on VNNI (A/B switch)
PIXEL_DIRECT = True  # ... pixel-major ones too (`pixels`: 1x1s included; A/B switch)
CHANNEL_MAJOR = True  # ... storing their result channel-major, not transposed (A/B switch)
SHORT_K = True  # ... so windows of any K run pixel-major (A/B switch)
# a window runs pixel-major direct when the weight-major tiles would compute this many
# columns per pixel: 7 x 7 outputs 1.31 (3 x 3, 512 channels: 0.372 -> 0.333 ms pixel-
# major), 14 x 14 1.14 (256 channels, 7-pixel tiles, same-process A/B both orders:
# 0.316 -> 0.284 and 0.308 -> 0.294), not 28 x 28's 1.10 (128 channels: 0.327 -> 0.314
# and 0.298 -> 0.302)
PIXEL_DIRECT_WASTE = 1.12
# a dense product of at most nr / this many output channels runs weight-major (the
# weight as A, the result transposed back): its channels would fill under half a panel
NARROW_N_MAX = 2


def _constant_ints(value: SSAValue) -> np.ndarray | None:
    array = constant_value(value)
    return None if array is None else np.asarray(array, np.int64)


@dataclass(frozen=True)
class Requantize:
    """What follows a product and folds into its kernel: `ops` (bias_add?, requantize,
    clip?) in order, the i32 vector `add` per output channel (bias minus the requantize's
    input zero point), the f32 `multipliers`, the output's zero point and clamp."""

    ops: list[Operation]
    add: np.ndarray
    multipliers: np.ndarray
    zero_point: int
    lo: int
    hi: int


def _per_channel(value: SSAValue, rows: int, rank: int, axis: int, channel: int):
    """A constant that is a scalar or a vector along the channel axis, as [rows] (None
    otherwise)."""
    array = constant_value(value)
    if array is None or array.ndim > 1:
        return None
    if array.ndim == 1 and (array.shape[0] != rows or axis % rank != channel):
        return None
    return np.broadcast_to(array, (rows,))


def _vector_bias(add: relay.AddOp, out: SSAValue, rows: int, rank: int, channel: int):
    """The i32 vector [rows] a relay.add adds to `out` along its last axis (the channel),
    or None (onnxruntime's quantized Gemm adds its bias so)."""
    lhs, rhs = add.operands
    bias = rhs if lhs is out else lhs if rhs is out else None
    if bias is None or bias is out or channel != rank - 1:
        return None
    if bias.type.element_type != i32 or list(shape_of(bias)) != [rows]:
        return None
    return bias if add.results[0].type == out.type else None


def requantize_chain(
    op: qnn.ProductOp, rows: int, channel: int, weights: Weights | None = None
) -> Requantize | None:
    """The bias_add (or add of a bias vector) -> requantize -> clip after `op` that its
    kernel can do, or None."""
    out = op.results[0]
    rank = len(shape_of(out))
    ops: list[Operation] = []
    add = np.zeros(rows, np.int64)
    user = single_user(out)
    if isinstance(user, relay.BiasAddOp):
        bias = constant_value(user.operands[1])
        if user.operands[0] is not out or bias is None or bias.shape != (rows,):
            return None
        if user.attrs.axis % rank != channel:
            return None
        add += np.asarray(bias, np.int64)
        ops.append(user)
        user = single_user(user.results[0])
    elif isinstance(user, relay.AddOp) and weights is not None:
        bias = _vector_bias(user, out, rows, rank, channel)
        found = weights.source(bias) if bias is not None else None
        if found is None or found[1]:  # computed, or a transposed parameter
            return None
        if found[2] is not None:  # (None under a plain Context: the IR is the same)
            add += np.asarray(found[2], np.int64)
        ops.append(user)
        user = single_user(user.results[0])
    if not isinstance(user, qnn.RequantizeOp) or user.attrs.rounding != "half_to_even":
        return None
    a = user.attrs
    if not (isinstance(a.out_dtype, IntegerType) and a.out_dtype.width.data == 8):
        return None  # the kernel writes bytes
    in_scale = _per_channel(user.input_scale, rows, rank, a.axis, channel)
    in_zp = _per_channel(user.input_zero_point, rows, rank, a.axis, channel)
    out_scale, out_zp = constant_value(user.output_scale), constant_value(user.output_zero_point)
    if in_scale is None or in_zp is None or out_scale is None or out_zp is None:
        return None
    if out_scale.ndim or out_zp.ndim or in_scale.dtype != np.float32:
        return None
    # qnn-legalize: f32(acc - in_zp) * (in_scale / out_scale), divided in f32
    multipliers = (in_scale / np.float32(out_scale)).astype(np.float32)
    if not np.all(np.isfinite(multipliers)):
        return None
    ops.append(user)
    add -= np.asarray(in_zp, np.int64)
    lo, hi = dtype_range(a.out_dtype)
    clip = single_user(user.results[0])
    if isinstance(clip, relay.ClipOp):
        a_min, a_max = clip.attrs.a_min, clip.attrs.a_max
        if a_min == int(a_min) and a_max == int(a_max) and max(lo, a_min) <= min(hi, a_max):
            lo, hi = max(lo, int(a_min)), min(hi, int(a_max))
            ops.append(clip)
    return Requantize(ops, add, multipliers, int(out_zp), lo, hi)


def direct_pays(c: int, taps: int) -> bool:
    """Whether a convolution of `c` input channels and `taps` window taps runs direct on
    AMX (kernels/amx_conv.py): each tap there takes whole steps of 64 channels, so few
    channels waste most of each step, where im2col's K packs taps and channels together.
    At most 1.5x im2col's steps: SqueezeNet int8's 3x3 expands (same-process A/B, 151 runs)
    took 1.261 ms all on im2col, 1.236 direct from 48 channels (9 steps against 7), 1.241
    from 32 (9 against 5) and 1.357 from 16 (9 against 3)."""
    direct_steps = taps * -(-c // 64)
    return direct_steps <= 1.5 * -(-(c * taps) // 64)


def dropped_columns(window: tuple) -> float:
    """The weight-major direct kernel's computed columns per output pixel: its 32-column
    tiles over the virtual columns oy * Wq + ox (kernels/vnni_conv.py)."""
    _, (_, kw), (_, sw), _, _, (oh, ow) = window
    wq = ow + (kw - 1) // sw
    return -(-((oh - 1) * wq + ow) // 32) * 32 / (oh * ow)


def vnni_direct(group: int, tiles: bool, zx, window: tuple, c: int, pixels: bool = False) -> bool:
    """Whether a VNNI build's convolution reads its input's words directly (kernels/
    vnni_conv.py): a window wider than 1 x 1 of stride 1 or 2, unit dilation, a constant
    zero point (what the padding reads) and channels in whole words of 4 (a stem's 3
    channels padded to 4 was slower: SqueezeNet int8 1.383 -> 1.406 ms)."""
    if not VNNI_DIRECT or group != 4 or tiles or zx is None or not window or c % 4:
        return False
    _, (kh, kw), strides, dilation, _, _ = window
    if pixels and not PIXEL_DIRECT:
        return False
    # (weight-major 1x1s read the input in place already; pixel-major ones pack it)
    return (kh * kw > 1 or pixels) and strides in ((1, 1), (2, 2)) and dilation == (1, 1)


def rows_of(direct: bool) -> int:
    """The rows of a weight-major panel: the direct kernel's (kernels/vnni_conv.py), else
    the micro-kernel's."""
    return vnni_conv.ROWS if direct else MR


def _weight_matrix(array: np.ndarray, transposed: bool, shift: int) -> np.ndarray:
    """The weight as s8 values [rows, K] (rows: output channels)."""
    w = np.asarray(array)
    w = w.T if transposed else w
    return (w.reshape(w.shape[0], -1).astype(np.int16) - shift).astype(np.int8)


def rewrite_product(
    op: qnn.ProductOp,
    weights: Weights,
    sizes: SymbolSizes | None,
    module: ModuleOp,
    names: list[int],
    vw: int,
    group: int,
    tiles: bool = False,
) -> bool:
    """Rewrite one qnn.dense / qnn.conv2d; False where it does not apply. `tiles`: for AMX
    (group 4): weights packed for tiles, no pixel-major products."""
    conv = isinstance(op, qnn.Conv2DOp)
    if not isinstance(op, (qnn.DenseOp, qnn.Conv2DOp)) or (conv and op.attrs.groups != 1):
        return False
    x_type, w_type = op.data.type.element_type, op.weight.type.element_type
    if not all(isinstance(t, IntegerType) and t.width.data == 8 for t in (x_type, w_type)):
        return False
    x_dtype, w_dtype = numpy_dtype(x_type), numpy_dtype(w_type)
    w_shift = 128 if w_dtype.kind == "u" else 0
    zw = _constant_ints(op.kernel_zero_point)
    if zw is None or zw.ndim > 1 or np.any(zw != w_shift):
        return False
    zx = _constant_ints(op.input_zero_point)
    if zx is not None and zx.ndim != 0:
        return False
    if zx is None and (op.input_zero_point.type.get_shape() != () or conv):
        return False  # a run-time zero point: dense only (the columns pad with zx)
    w_shape = list(shape_of(op.weight))
    if not all(isinstance(d, int) for d in w_shape):
        return False
    rows, k = w_shape[0], int(np.prod(w_shape[1:]))
    if k > MAX_K:
        return False
    out_shape = list(shape_of(op.results[0]))
    nr = 2 * vw
    pixel_major = pixel_direct = weight_direct = narrow = False
    if conv:
        n, c, h, w = shape_of(op.data)
        if not all(isinstance(d, int) for d in (c, h, w)):
            return False  # only the batch may be a run-time size
        a = op.attrs
        _, _, oh, ow = out_shape
        ohw, (kh, kw) = oh * ow, w_shape[2:]
        pointwise = (kh, kw) == (1, 1) and tuple(a.strides) == (1, 1) and not any(a.padding)
        if any(p < 0 for p in a.padding):
            return False
        top, left, bottom, right = a.padding
        ph, pw = h + top + bottom, w + left + right  # the input padded with zx
        window: tuple[tuple[int, ...], ...] = ()
        if not pointwise:  # B made from the padded input by the GEMM (implicit im2col)
            window = ((ph, pw), (kh, kw), tuple(a.strides), tuple(a.dilation), (0, 0), (oh, ow))
        few = n == 1 and ohw <= PIXEL_MAJOR_MAX and zx is not None and not tiles
        # VNNI reads windows' input words directly (weight-major); pixel-major windows and
        # 1x1s too, windows only where the weight-major kernel's virtual columns waste much
        weight_direct = vnni_direct(group, tiles, zx, window, c)
        point = ((h, w), (1, 1), (1, 1), (1, 1), (0, 0), (oh, ow))
        pixel_direct = few and vnni_direct(group, tiles, zx, window or point, c, True)
        pixel_direct = pixel_direct and (pointwise or dropped_columns(window) > PIXEL_DIRECT_WASTE)
        # (which stores its result channel-major: no transpose back, any K)
        pixel_direct = pixel_direct and (
            k >= PIXEL_MAJOR_MIN_K or (CHANNEL_MAJOR and SHORT_K and not pointwise)
        )
        window = window or (point if pixel_direct else ())
        pixel_major = pixel_direct or (few and k >= PIXEL_MAJOR_MIN_K and not weight_direct)
        if pixel_major:
            # few pixels: pixels x channels, the data A (read in place when pointwise, a
            # pixel's channels HW apart; else the im2col's transpose, made by the GEMM),
            # the weight B, the result transposed back after
            spec = GemmSpec(
                ohw, rows, k, 1, ohw, 0, 0, rows, b_packed=True, npad=padded(rows, nr),
                window=window,
            )  # fmt: skip
        else:
            batch = () if n == 1 else ((n, 0, c * ph * pw, rows * ohw, 0),)
            spec = GemmSpec(
                rows, ohw, k, 0, 0, ohw, 1, ohw, batch=batch, per_row=True, a_packed=True,
                mpad=padded(rows, amx.ROWS if tiles else rows_of(weight_direct)), window=window,
            )  # fmt: skip
    else:
        m = dim_prod(out_shape[:-1])
        # few outputs per sample (a classifier's 10): the weight as A, in rows of MR, and
        # the samples as B's columns, read [N, K]; the result transposed back after. As
        # B, the weight's rows would fill a panel of nr columns: MLP int8's 128 x 2048 x 10
        # made 32 columns of products for 10
        narrow = not tiles and len(out_shape) == 2 and isinstance(m, int)
        narrow = narrow and zx is not None and NARROW_N_MAX * rows <= nr and m >= 2 * nr
        if narrow:
            spec = GemmSpec(rows, m, k, 0, 0, 1, k, m, per_row=True, a_packed=True,
                            mpad=padded(rows, MR))  # fmt: skip
        else:
            spec = GemmSpec(m, rows, k, k, 1, 0, 0, rows, b_packed=True, npad=padded(rows, nr))
    spec, exprs = size_arguments(spec)
    if exprs and sizes is None:
        return False  # dynamic sizes outside @main: the other lowerings
    found = weights.source(op.weight)
    if found is None:
        return False
    name, transposed, array = found

    site = Rewrite(op, weights)
    names[0] += 1
    stem = f"{name or 'const'}.i8.{names[0]}"
    a_weight = (conv and not pixel_major) or narrow  # the weight is A (else B)
    width = (amx.ROWS if tiles else rows_of(conv and weight_direct)) if a_weight else nr
    elem = i8 if group == 4 else i16
    size = padded(rows, width) * word_groups(k, group, 16 if tiles else 1) * group
    # AMX: a convolution of stride 1 or 2 with a window reads its input's words directly
    direct = tiles and a_weight and bool(spec.window)
    direct = direct and spec.window[2] in ((1, 1), (2, 2)) and spec.window[3] == (1, 1)
    # (a strided 1x1 one reads one phase: its im2col is that phase, and was as fast)
    direct = (
        direct and w_shape[2] * w_shape[3] > 1 and direct_pays(w_shape[1], w_shape[2] * w_shape[3])
    )
    # VNNI: the same, in words of 4 channels (kernels/vnni_conv.py)
    direct = direct or pixel_direct or (a_weight and weight_direct)
    block = 64 if tiles else 4  # channels per step
    if direct:
        size = direct_size(rows, w_shape[1], w_shape[2], w_shape[3], width, block)
        # the kernel pads as it reads: the unpadded input, its padding and zero point
        (_, _), *middle, (_, _), out_size = spec.window
        spec = replace(
            spec,
            window=((h, w), *middle, (top, left), out_size),
            batch=tuple((b[0], b[1], c * h * w, *b[3:]) for b in spec.batch),
            fill=int(zx) + (128 if x_dtype.kind == "i" else 0),
        )
    # under build, the s8 weight [rows, K] once (the packed words and the sums read it)
    matrix = _weight_matrix(array, transposed, w_shift) if array is not None else None

    def weight_sums() -> np.ndarray:
        return matrix.sum(axis=1, dtype=np.int64)

    def packed() -> np.ndarray:
        if direct:
            return pack_direct_rows(matrix.reshape(w_shape), width, block)
        return packed_weight(matrix, width, group, tiles, a_weight)

    packed_arg = weights.add(f"{stem}.packed", (size,), packed, elem)
    flip = x_dtype.kind == "i"
    correction = None  # -zu * sum_k w_s per output channel (zu: zx read as u8)
    chain = (
        requantize_chain(op, rows, 1 if conv else len(out_shape) - 1, weights)
        if zx is not None
        else None
    )
    if zx is not None:
        zu = int(zx) + (128 if flip else 0)
        add = chain.add if chain is not None else np.zeros(rows, np.int64)
        if zu != 0 or np.any(add):
            correction = weights.add(
                f"{stem}.correction", (rows,), lambda: add - zu * weight_sums(), i32
            )
    else:
        sums = weights.add(f"{stem}.sums", (rows,), weight_sums, i32)
        zero = site.emit(relay.CastOp(op.input_zero_point, dtype=i32))
        if flip:
            half = site.emit(relay.ConstantOp(dense_from_numpy(np.array(128, np.int32))))
            zero = site.emit(relay.AddOp(zero, half))
        correction = site.emit(relay.NegativeOp(site.emit(relay.MultiplyOp(sums, zero))))
    if conv:
        x = op.data
        if any(op.attrs.padding) and not direct:  # by the zero point, as qnn.conv2d pads
            widths = [0, 0, 0, 0, top, bottom, left, right]
            x = site.emit(relay.PadOp(x, pad_width=widths, pad_value=float(int(zx))))
        args = [x, packed_arg] if pixel_major else [packed_arg, x]
    else:
        args = [packed_arg, op.data] if narrow else [op.data, packed_arg]
    # a direct pixel-major convolution stores its result channel-major: no transpose back
    channel_major = pixel_direct and CHANNEL_MAJOR
    spec = replace(
        spec, shift=correction is not None, group=group, tiles=tiles, direct=direct, flip=flip,
        pixel_major=channel_major,
    )  # fmt: skip
    if chain is not None:
        multipliers = chain.multipliers
        args.append(weights.add(f"{stem}.multipliers", (rows,), lambda: multipliers))
        spec = replace(
            spec, scale=True, requantize=True, out_zero_point=chain.zero_point,
            out_min=chain.lo, out_max=chain.hi,
        )  # fmt: skip
    args += [correction] if correction is not None else []
    args += [sizes.value(d) for d in exprs] if sizes is not None else []
    result_types = [op.results[0].type]
    if chain is not None:  # the i32 result: the kernel's scratch for partial sums
        out = chain.ops[-1].results[0].type
        assert isinstance(out, TensorType)
        result_types.append(out)
    if pixel_major and not channel_major:  # [1, pixels, channels], transposed back below
        result_types = [
            TensorType(t.element_type, [1, out_shape[2] * out_shape[3], rows])  # type: ignore[union-attr]
            for t in result_types
        ]
    if narrow:  # [channels, samples], transposed back below
        result_types = [
            TensorType(t.element_type, list(reversed(out_shape)))  # type: ignore[union-attr]
            for t in result_types
        ]
    decl = func.FuncOp.external(f"xr_igemm_{names[0]}", [v.type for v in args], result_types)
    decl.attributes[KERNEL_ATTR] = GemmAttr(spec)
    module.body.block.add_op(decl)
    call = func.CallOp(decl.sym_name.data, args, result_types)
    site.emit(call)
    result = call.results[1] if chain is not None else call.results[0]
    if pixel_major and not channel_major:
        result = site.emit(relay.TransposeOp(result, axes=(0, 2, 1)))
        result = site.emit(relay.ReshapeOp(result, newshape=tuple(out_shape)))
    if narrow:
        result = site.emit(relay.TransposeOp(result, axes=(1, 0)))
    if chain is not None:
        chain.ops[-1].results[0].replace_all_uses_with(result)
        for done in reversed(chain.ops):
            Rewriter.erase_op(done)
    else:
        op.results[0].replace_all_uses_with(result)
    weight = op.weight.owner
    Rewriter.erase_op(op)
    if isinstance(weight, relay.TransposeOp) and not weight.results[0].uses:
        Rewriter.erase_op(weight)
    if name is not None and not _param_uses(weights.fn, name):
        release(weights.ctx, name)
    return True


def _param_uses(fn: func.FuncOp, name: str) -> bool:
    """Does anything still read parameter `name` of `fn`?"""
    return any(param_name(fn, arg) == name and arg.uses for arg in fn.body.block.args)


def packed_weight(matrix: np.ndarray, width: int, group: int, tiles: bool, a: bool) -> np.ndarray:
    """The s8 weight [rows, K] in the kernel's layout: AMX's A tiles, or igemm's panels."""
    if tiles and a:
        return pack_tile_rows(matrix, width)
    return pack_words(matrix, width, group, 16 if tiles else 1)


def int_products(module: ModuleOp, ctx: Context, vw: int, group: int, tiles: bool = False) -> int:
    count, names = 0, [0]
    for fn in [f for f in module.ops if isinstance(f, func.FuncOp) and f.body.blocks]:
        if fn.arg_attrs is None:
            continue
        sizes = SymbolSizes(fn) if is_dynamic_function(fn) else None
        weights = Weights(fn, ctx)
        for op in [o for o in fn.walk() if isinstance(o, (qnn.DenseOp, qnn.Conv2DOp))]:
            count += rewrite_product(op, weights, sizes, module, names, vw, group, tiles)
    return count


@dataclass(frozen=True)
class QnnIntProducts(ModulePass):
    """8-bit dense and one-group conv2d with s8 parameter weights -> the 8-bit GEMM.
    Options: enabled (default true); vector-width and group (0: the host's); tiles (AMX
    tiles, with group 4: `jit.amx_tiles` says whether the host has them)."""

    name = "qnn-int-products"

    enabled: bool = True
    vector_width: int = 0
    group: int = 0
    tiles: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.enabled:
            return
        vw = module_vector_width(op, self.vector_width)
        group = self.group or int_group(None, vw)
        if group == 4 and vw != 16:
            group = 2
        if int_products(op, ctx, vw, group, self.tiles and group == 4):
            op.attributes[VECTOR_WIDTH_ATTR] = IntegerAttr(vw, 64)
