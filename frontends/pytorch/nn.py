"""PyTorch neural-network ops -> relay: convolutions, linear layers and matrix products,
normalizations (batch, layer, group, instance), softmax, pooling (with max-pool indices and
adaptive windows of any size), padding, embeddings and embedding bags, pairwise distances
and scaled dot-product attention."""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.frontends.common import checked_indices, matmul_nd
from xrelay.frontends.pytorch.call import Call, Unavailable
from xrelay.frontends.pytorch.registry import aten_op

CONVS = {1: relay.Conv1DOp, 2: relay.Conv2DOp, 3: relay.Conv3DOp}
MAX_POOLS = {1: relay.MaxPool1DOp, 2: relay.MaxPool2DOp, 3: relay.MaxPool3DOp}
AVG_POOLS = {1: relay.AvgPool1DOp, 2: relay.AvgPool2DOp, 3: relay.AvgPool3DOp}


def _per_dim(values: list[int], n: int) -> list[int]:
    """torch's int-or-list window arguments: one value repeats for every spatial dim."""
    return values * n if len(values) == 1 else values


def _bias_channels(c: Call, y: SSAValue, key: str) -> SSAValue:
    if not c.has(key):
        return y
    return c.emit(relay.BiasAddOp(y, c.tensor(key), axis=1))


@aten_op(
    "convolution",
    "_convolution",
    "_convolution_mode",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose2d",
)
def convolution(c: Call) -> SSAValue:
    n = c.rank(0) - 2
    if n not in CONVS:
        raise c.unsupported(f"{n}-d convolution")
    stride = _per_dim(c.ints("stride", [1]), n)
    dilation = _per_dim(c.ints("dilation", [1]), n)
    padding = c.value("padding", [0])
    if isinstance(padding, str):
        padding = _string_padding(c, padding, c.shape(1)[2:], dilation, stride)
    else:
        padding = _per_dim(c.ints("padding"), n)
    transposed = c.value("transposed", False) or c.kind.endswith("conv_transpose2d")
    groups = c.int("groups", 1)
    x, w = c.tensor(0), c.tensor(1)
    if not transposed:
        y = c.emit(
            CONVS[n](x, w, strides=stride, padding=padding * 2, dilation=dilation, groups=groups)
        )
        return _bias_channels(c, y, "bias")
    if n != 2:
        raise c.unsupported(f"{n}-d transposed convolution")
    y = c.emit(
        relay.Conv2DTransposeOp(
            x,
            w,
            strides=stride,
            padding=padding * 2,
            output_padding=_per_dim(c.ints("output_padding", [0]), n),
            dilation=dilation,
            groups=groups,
        )
    )
    return _bias_channels(c, y, "bias")


def _string_padding(
    c: Call, mode: str, kernel: tuple[int, ...], dilation: list[int], stride: list[int]
) -> list[int]:
    if mode == "valid":
        return [0] * len(kernel)
    if mode != "same":
        raise c.unsupported(f"padding '{mode}'")
    totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
    if any(t % 2 for t in totals) or any(s != 1 for s in stride):
        raise c.unsupported("asymmetric 'same' padding")
    return [t // 2 for t in totals]


@aten_op("linear")
def linear(c: Call) -> SSAValue:
    y = c.emit(relay.DenseOp(c.tensor(0), c.tensor(1)))
    if not c.has("bias"):
        return y
    return c.emit(relay.AddOp(y, c.tensor("bias")))


@aten_op("addmm")
def addmm(c: Call) -> SSAValue:
    """beta * bias + alpha * (m1 @ m2)."""
    y = c.emit(relay.MatmulOp(c.tensor("mat1"), c.tensor("mat2")))
    alpha, beta = c.float("alpha", 1), c.float("beta", 1)
    if alpha != 1:
        y = c.emit(relay.MultiplyOp(y, c.constant(alpha, c.dtype(1))))
    if beta == 0:
        return y
    bias = c.tensor(0)
    if beta != 1:
        bias = c.emit(relay.MultiplyOp(bias, c.constant(beta, c.dtype(0))))
    return c.emit(relay.AddOp(y, bias))


@aten_op("mm", "bmm", "matmul")
def matmul(c: Call) -> SSAValue:
    return matmul_nd(c, c.tensor(0), c.tensor(1))


@aten_op("t")
def transpose_2d(c: Call) -> SSAValue:
    if c.rank(0) < 2:
        return c.tensor(0)
    return c.emit(relay.TransposeOp(c.tensor(0), axes=[1, 0]))


def _vector_or(c: Call, key: str, fill: float, size: int) -> SSAValue:
    if c.has(key):
        return c.tensor(key)
    return c.constant(np.full((size,), fill), c.dtype(0))


@aten_op("batch_norm", "_native_batch_norm_legit_no_training", "native_batch_norm")
def batch_norm(c: Call) -> object:
    if c.value("training", False):
        raise c.unsupported("batch norm in training mode (call model.eval() before capture)")
    if not c.has("running_mean") or not c.has("running_var"):
        raise c.unsupported("batch norm without running statistics")
    channels = c.shape(0)[1]
    y = c.emit(
        relay.BatchNormOp(
            c.tensor(0),
            _vector_or(c, "weight", 1.0, channels),
            _vector_or(c, "bias", 0.0, channels),
            c.tensor("running_mean"),
            c.tensor("running_var"),
            axis=1,
            epsilon=c.float("eps"),
        )
    )
    if c.kind == "aten::batch_norm":
        return y
    return y, Unavailable("batch-norm saved mean"), Unavailable("batch-norm saved inverse std")


@aten_op("layer_norm", "native_layer_norm")
def layer_norm(c: Call) -> object:
    normalized = c.ints("normalized_shape")
    if list(c.shape(0)[-len(normalized) :]) != normalized:
        raise c.error(f"normalized_shape {normalized} does not end the input shape {c.shape(0)}")

    def affine(key: str, fill: float) -> SSAValue:
        if c.has(key):
            return c.tensor(key)
        return c.constant(np.full(normalized, fill), c.dtype(0))

    y = c.emit(
        relay.LayerNormOp(
            c.tensor(0),
            affine("weight", 1.0),
            affine("bias", 0.0),
            axis=-len(normalized),
            epsilon=c.float("eps"),
        )
    )
    if c.kind == "aten::layer_norm":
        return y
    return y, Unavailable("layer-norm mean"), Unavailable("layer-norm inverse std")


@aten_op("softmax", "_softmax", "log_softmax", "_log_softmax")
def softmax(c: Call) -> SSAValue:
    x = c.tensor(0)
    dtype = c.dtype_arg("dtype") if "dtype" in c.names else None
    if dtype is not None:
        x = c.cast(x, dtype)
    axis = c.int("dim") % c.rank(0)
    cls = relay.LogSoftmaxOp if "log_softmax" in c.kind else relay.SoftmaxOp
    return c.emit(cls(x, axis=axis))


def _window(c: Call) -> tuple[int, list[int], list[int], list[int]]:
    n = c.rank(0) - 2
    kernel = _per_dim(c.ints("kernel_size"), n)
    stride = c.ints("stride", [])
    stride = kernel if not stride else _per_dim(stride, n)
    padding = _per_dim(c.ints("padding", [0]), n)
    return n, kernel, stride, padding


@aten_op(
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "max_pool3d_with_indices",
)
def max_pool(c: Call) -> object:
    n, kernel, stride, padding = _window(c)
    if n not in MAX_POOLS:
        raise c.unsupported(f"{n}-d max pooling")
    dilation = _per_dim(c.ints("dilation", [1]), n)
    ceil_mode = bool(c.value("ceil_mode", False))
    y = c.emit(
        MAX_POOLS[n](
            c.tensor(0),
            pool_size=kernel,
            strides=stride,
            padding=padding * 2,
            dilation=dilation,
            ceil_mode=ceil_mode,
        )
    )
    if c.kind.endswith("with_indices"):
        return y, _max_pool_indices(
            c, list(y.type.get_shape()[2:]), kernel, stride, padding, dilation
        )
    return y


def _max_pool_indices(
    c: Call,
    out: list[int],
    kernel: list[int],
    stride: list[int],
    padding: list[int],
    dilation: list[int],
) -> SSAValue:
    """ATen's max-pool indices (the flat spatial position of each window's maximum): the
    first maximum in scan order, the last NaN if the window has one, and the window's first
    position inside the input when every element is -inf. Each of the K kernel offsets is a
    strided slice of the -inf-padded input, stacked on a new axis."""
    x = c.tensor(0)
    if c.dtype(0).kind != "f":
        raise c.unsupported(f"max-pool indices of a {c.dtype(0)} tensor")
    spatial = list(c.shape(0)[2:])
    n = len(spatial)
    offsets = np.indices(kernel).reshape(n, -1).T  # [K, n]
    where = np.indices(out).reshape(n, -1)  # [n, O]
    # candidate coordinates per offset and window: [n, K, O]
    pos = (
        where[:, None, :] * np.asarray(stride)[:, None, None]
        - np.asarray(padding)[:, None, None]
        + offsets.T[:, :, None] * np.asarray(dilation)[:, None, None]
    )
    inside = np.all((pos >= 0) & (pos < np.asarray(spatial)[:, None, None]), axis=0)  # [K, O]
    flat = np.ravel_multi_index(tuple(np.where(inside, pos, 0)), spatial)  # [K, O]
    first_inside = flat[np.argmax(inside, axis=0), np.arange(flat.shape[1])]  # [O]
    # -inf padding: the pooling padding, and more at the end for ceil_mode windows
    extra = [max(int(pos[d].max()) + 1 - spatial[d] - padding[d], 0) for d in range(n)]
    width = [0, 0, 0, 0] + [w for d in range(n) for w in (padding[d], padding[d] + extra[d])]
    padded = c.emit(relay.PadOp(x, pad_width=width, pad_value=-math.inf))
    k = offsets.shape[0]
    parts = []
    for off in offsets:
        begin = [int(o * d) for o, d in zip(off, dilation)]
        end = [b + (o - 1) * s + 1 for b, o, s in zip(begin, out, stride)]
        part = c.emit(
            relay.StridedSliceOp(
                padded, begin=begin, end=end, strides=stride, axes=list(range(2, 2 + n))
            )
        )
        parts.append(c.emit(relay.ExpandDimsOp(part, axis=2)))
    stacked = parts[0] if k == 1 else c.emit(relay.ConcatenateOp(*parts, axis=2))  # [N, C, K, O...]
    view = [k, *out]
    dtype = c.dtype(0)
    iota = c.constant(np.arange(k, dtype=np.int64).reshape([k] + [1] * n))
    nan = c.emit(relay.IsNanOp(stacked))
    minus_inf = c.constant(-math.inf, dtype)
    key = c.emit(relay.WhereOp(nan, minus_inf, stacked))
    top = c.emit(relay.MaxOp(key, axis=[2], keepdims=True))
    is_top = c.emit(relay.EqualOp(key, top))
    first = c.emit(
        relay.MinOp(
            c.emit(relay.WhereOp(is_top, iota, c.constant(k, np.int64))), axis=[2], keepdims=True
        )
    )
    last_nan = c.emit(
        relay.MaxOp(
            c.emit(relay.WhereOp(nan, iota, c.constant(-1, np.int64))), axis=[2], keepdims=True
        )
    )
    has_nan = c.emit(relay.GreaterEqualOp(last_nan, c.constant(0, np.int64)))
    chosen = c.emit(relay.WhereOp(has_nan, last_nan, first))
    table = c.constant(flat.reshape(view).astype(np.int64))
    shape = list(stacked.type.get_shape())
    table = c.emit(relay.BroadcastToOp(table, shape=shape))
    chosen = c.emit(relay.MinimumOp(chosen, c.constant(k - 1, np.int64)))
    index = c.emit(relay.GatherOp(table, chosen, axis=2))
    all_minus_inf = c.emit(
        relay.LogicalAndOp(
            c.emit(relay.EqualOp(top, minus_inf)), c.emit(relay.LogicalNotOp(has_nan))
        )
    )
    fallback = c.constant(first_inside.reshape([1, *out]).astype(np.int64))
    index = c.emit(relay.WhereOp(all_minus_inf, fallback, index))
    return c.emit(relay.ReshapeOp(index, newshape=shape[:2] + out))


@aten_op("avg_pool1d", "avg_pool2d", "avg_pool3d")
def avg_pool(c: Call) -> SSAValue:
    n, kernel, stride, padding = _window(c)
    if n not in AVG_POOLS:
        raise c.unsupported(f"{n}-d average pooling")
    divisor = c.value("divisor_override", None)
    ceil_mode = bool(c.value("ceil_mode", False))
    include_pad = bool(c.value("count_include_pad", True))
    y = c.emit(
        AVG_POOLS[n](
            c.tensor(0),
            pool_size=kernel,
            strides=stride,
            padding=padding * 2,
            ceil_mode=ceil_mode,
            count_include_pad=include_pad or divisor is not None,
        )
    )
    if divisor is None:
        return y
    # every window holds the whole kernel (padding counted): the sum is the mean times K
    out = y.type.get_shape()[2:]
    sizes = c.shape(0)[2:]
    if any(
        (o - 1) * s + k > i + 2 * p for o, s, k, i, p in zip(out, stride, kernel, sizes, padding)
    ):
        raise c.unsupported("avg_pool divisor_override with ceil_mode windows past the padding")
    return c.emit(relay.MultiplyOp(y, c.constant(math.prod(kernel) / int(divisor), c.dtype(0))))


@aten_op(
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "_adaptive_avg_pool2d",
    "_adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
)
def adaptive_pool(c: Call) -> object:
    """Adaptive pooling: output i of an axis covers [floor(i * in / out), ceil((i + 1) * in /
    out)). An output that divides the input is a fixed window (global when 1); otherwise
    each axis in turn gathers its windows' taps (padded to the widest) and reduces them."""
    is_max = "max" in c.kind
    n = c.rank(0) - 2
    sizes = c.shape(0)[2:]
    out = _per_dim(c.ints("output_size"), n)
    if len(out) != n:
        raise c.error(f"output_size {out} for {n} spatial axes")
    x = c.tensor(0)
    if all(o == 1 for o in out):
        axes = list(range(2, 2 + n))
        cls = relay.MaxOp if is_max else relay.MeanOp
        y = c.emit(cls(x, axis=axes, keepdims=True))
    elif not any(s % o for s, o in zip(sizes, out)) and n in MAX_POOLS:
        kernel = [s // o for s, o in zip(sizes, out)]
        classes = MAX_POOLS if is_max else AVG_POOLS
        y = c.emit(classes[n](x, pool_size=kernel, strides=kernel, padding=[0] * (2 * n)))
    else:
        if is_max and c.dtype(0).kind != "f":
            raise c.unsupported(f"adaptive max pooling of a {c.dtype(0)} tensor")
        y = x
        for a, (size, o) in enumerate(zip(sizes, out)):
            if size != o:
                y = _adaptive_axis(c, y, a + 2, size, o, is_max)
    return (y, Unavailable("adaptive max-pool indices")) if is_max else y


def _adaptive_axis(c: Call, x: SSAValue, axis: int, size: int, out: int, is_max: bool) -> SSAValue:
    i = np.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    width = int((end - start).max())
    taps = start[:, None] + np.arange(width)[None, :]
    valid = taps < end[:, None]
    taps = np.minimum(taps, end[:, None] - 1)
    shape = list(x.type.get_shape())
    gathered = c.emit(relay.TakeOp(x, c.constant(taps.reshape(-1).astype(np.int64)), axis=axis))
    split = shape[:axis] + [out, width] + shape[axis + 1 :]
    gathered = c.emit(relay.ReshapeOp(gathered, newshape=split))
    view = [out, width] + [1] * (len(shape) - axis - 1)
    dtype = c.dtype(0)
    fill = c.constant(-math.inf if is_max else 0, dtype)
    picked = c.emit(relay.WhereOp(c.constant(valid.reshape(view)), gathered, fill))
    if is_max:
        return c.emit(relay.MaxOp(picked, axis=[axis + 1]))
    total = c.emit(relay.SumOp(picked, axis=[axis + 1]))
    counts = (end - start).astype(dtype).reshape([out] + [1] * (len(shape) - axis - 1))
    return c.emit(relay.DivideOp(total, c.constant(counts, dtype)))


def _pad_width(c: Call, pads: list[int]) -> list[int]:
    """torch's pad list (last dimension first) as relay's (begin, end) per axis."""
    rank = c.rank(0)
    if len(pads) % 2 or len(pads) // 2 > rank:
        raise c.error(f"pad {pads} does not fit a rank-{rank} input")
    width = [0] * (2 * rank)
    for i in range(len(pads) // 2):  # pads start at the last dimension
        axis = rank - 1 - i
        width[2 * axis], width[2 * axis + 1] = pads[2 * i], pads[2 * i + 1]
    return width


PAD_OPS = {
    f"{kind}_pad{n}d": mode
    for kind, mode in (("reflection", "reflect"), ("replication", "edge"))
    for n in (1, 2, 3)
}


@aten_op(*PAD_OPS)
def reflection_replication_pad(c: Call) -> SSAValue:
    n = int(c.name[-2])
    if c.rank(0) not in (n + 1, n + 2):
        raise c.error(f"{c.name} of a rank-{c.rank(0)} input")
    pads = c.ints("padding")
    if len(pads) != 2 * n:
        raise c.error(f"padding {pads} for {n} spatial axes")
    width = _pad_width(c, pads)
    return c.emit(relay.PadOp(c.tensor(0), pad_width=width, pad_mode=PAD_OPS[c.name]))


@aten_op("constant_pad_nd", "pad")
def pad(c: Call) -> SSAValue:
    width = _pad_width(c, c.ints("pad"))
    mode = c.value("mode", "constant")
    modes = {"constant": "constant", "reflect": "reflect", "replicate": "edge"}
    if mode not in modes:
        raise c.unsupported(f"pad mode '{mode}'")
    value = c.value("value", 0.0)
    return c.emit(
        relay.PadOp(
            c.tensor(0),
            pad_width=width,
            pad_value=0.0 if value is None else float(value),
            pad_mode=modes[mode],
        )
    )


@aten_op("embedding")
def embedding(c: Call) -> SSAValue:
    return c.emit(relay.TakeOp(c.tensor("weight"), c.tensor("indices"), axis=0, mode="clip"))


@aten_op("scaled_dot_product_attention")
def scaled_dot_product_attention(c: Call) -> SSAValue:
    """softmax(q @ k^T * scale + mask) @ v over the last two axes."""
    if c.float("dropout_p", 0.0) != 0.0:
        raise c.unsupported("attention dropout")
    if c.value("enable_gqa", False):
        raise c.unsupported("grouped-query attention")
    q, k, v = c.tensor(0), c.tensor(1), c.tensor(2)
    rank = c.rank(1)
    perm = [*range(rank - 2), rank - 1, rank - 2]
    scores = matmul_nd(c, q, c.emit(relay.TransposeOp(k, axes=perm)))
    scale = c.value("scale", None)
    scale = 1 / math.sqrt(c.shape(0)[-1]) if scale is None else float(scale)
    scores = c.emit(relay.MultiplyOp(scores, c.constant(scale, c.dtype(0))))
    length, keys = c.shape(0)[-2], c.shape(1)[-2]
    if c.value("is_causal", False):
        scores = _masked(c, scores, c.constant(np.tril(np.ones((length, keys), np.bool_))))
    if c.has("attn_mask"):
        mask = c.tensor("attn_mask")
        if c.dtype("attn_mask") == np.bool_:
            scores = _masked(c, scores, mask)
        else:
            scores = c.emit(relay.AddOp(scores, c.cast(mask, c.dtype(0))))
    weights = c.emit(relay.SoftmaxOp(scores, axis=rank - 1))
    return matmul_nd(c, weights, v)


def _masked(c: Call, scores: SSAValue, keep: SSAValue) -> SSAValue:
    return c.emit(relay.WhereOp(keep, scores, c.constant(-np.inf, c.dtype(0))))


def _standardized(
    c: Call, x: SSAValue, axes: list[int], eps: float
) -> tuple[SSAValue, SSAValue, SSAValue]:
    """(x - mean) * rsqrt(var + eps) over `axes` (biased variance), with the mean and the
    inverse standard deviation (axes kept)."""
    mean = c.emit(relay.MeanOp(x, axis=axes, keepdims=True))
    centered = c.emit(relay.SubtractOp(x, mean))
    var = c.emit(
        relay.MeanOp(c.emit(relay.MultiplyOp(centered, centered)), axis=axes, keepdims=True)
    )
    rstd = c.emit(relay.RsqrtOp(c.emit(relay.AddOp(var, c.constant(eps, c.dtype(0))))))
    return c.emit(relay.MultiplyOp(centered, rstd)), mean, rstd


def _channel_affine(c: Call, y: SSAValue, weight: str, bias: str) -> SSAValue:
    """y * weight + bias, both per channel (axis 1), either absent."""
    view = [c.shape(0)[1]] + [1] * (c.rank(0) - 2)
    if c.has(weight):
        y = c.emit(relay.MultiplyOp(y, c.emit(relay.ReshapeOp(c.tensor(weight), newshape=view))))
    if c.has(bias):
        y = c.emit(relay.AddOp(y, c.emit(relay.ReshapeOp(c.tensor(bias), newshape=view))))
    return y


@aten_op("native_group_norm", "group_norm")
def group_norm(c: Call) -> object:
    """Standardize each group of C / G channels over its channels and positions; the native
    op also gives the per-group mean and inverse standard deviation [N, G]."""
    shape = list(c.shape(0))
    n, channels = shape[0], shape[1]
    groups = c.int("group" if "group" in c.names else "num_groups")
    if groups < 1 or channels % groups:
        raise c.error(f"{channels} channels do not split into {groups} groups")
    grouped = c.emit(relay.ReshapeOp(c.tensor(0), newshape=[n, groups, -1]))
    y, mean, rstd = _standardized(c, grouped, [2], c.float("eps", 1e-5))
    y = _channel_affine(c, c.emit(relay.ReshapeOp(y, newshape=shape)), "weight", "bias")
    if c.name == "group_norm":
        return y
    stats = [n, groups]
    return (
        y,
        c.emit(relay.ReshapeOp(mean, newshape=stats)),
        c.emit(relay.ReshapeOp(rstd, newshape=stats)),
    )


@aten_op("_native_batch_norm_legit", "instance_norm")
def batch_stats_norm(c: Call) -> object:
    """Normalization by the batch's own statistics: batch norm in training mode (without
    running statistics: `no_stats`) over all axes but the channels, instance norm over the
    spatial axes. With the running statistics instead, it is inference batch norm."""
    use_batch = c.value("use_input_stats" if c.name == "instance_norm" else "training", True)
    if not use_batch:
        return batch_norm(c)
    if "running_mean" in c.names and c.has("running_mean") and c.name != "instance_norm":
        raise c.unsupported(
            "batch norm in training mode updating its running statistics (call model.eval())"
        )
    rank = c.rank(0)
    axes = list(range(2, rank)) if c.name == "instance_norm" else [0, *range(2, rank)]
    y, mean, rstd = _standardized(c, c.tensor(0), axes, c.float("eps"))
    y = _channel_affine(c, y, "weight", "bias")
    if c.name == "instance_norm":
        return y
    channels = [c.shape(0)[1]]
    return (
        y,
        c.emit(relay.ReshapeOp(mean, newshape=channels)),
        c.emit(relay.ReshapeOp(rstd, newshape=channels)),
    )


MAX_DISTANCE_ELEMENTS = 1 << 24


def _distances(c: Call, x1: SSAValue, x2: SSAValue, p: float) -> SSAValue:
    """p-norm distances between the rows of x1 [..., P, M] and x2 [..., R, M] -> [..., P, R]."""
    s1, s2 = list(x1.type.get_shape()), list(x2.type.get_shape())
    if s1[-1] != s2[-1]:
        raise c.error(f"rows of {s1[-1]} and {s2[-1]} elements")
    a = c.emit(relay.ExpandDimsOp(x1, axis=len(s1) - 1))  # [..., P, 1, M]
    b = c.emit(relay.ExpandDimsOp(x2, axis=len(s2) - 2))  # [..., 1, R, M]
    diff = c.emit(relay.SubtractOp(a, b))
    if math.prod(diff.type.get_shape()) > MAX_DISTANCE_ELEMENTS:
        raise c.unsupported(f"distances of {s1} and {s2} (too large)")
    axis = [len(diff.type.get_shape()) - 1]
    dtype = c.dtype(0)
    magnitude = c.emit(relay.AbsOp(diff))
    if p == 0:
        nonzero = c.cast(c.emit(relay.NotEqualOp(diff, c.constant(0, dtype))), dtype)
        return c.emit(relay.SumOp(nonzero, axis=axis))
    if math.isinf(p):
        return c.emit(relay.MaxOp(magnitude, axis=axis))
    if p == 1:
        return c.emit(relay.SumOp(magnitude, axis=axis))
    if p == 2:
        return c.emit(
            relay.SqrtOp(c.emit(relay.SumOp(c.emit(relay.MultiplyOp(diff, diff)), axis=axis)))
        )
    powers = c.emit(relay.PowerOp(magnitude, c.constant(p, dtype)))
    total = c.emit(relay.SumOp(powers, axis=axis))
    return c.emit(relay.PowerOp(total, c.constant(1 / p, dtype)))


def _distance_p(c: Call) -> float:
    p = c.float("p", 2.0)
    if p < 0:
        raise c.error(f"p = {p}: distances need p >= 0")
    return p


@aten_op("_cdist_forward", "cdist")
def cdist(c: Call) -> SSAValue:
    if c.dtype(0).kind != "f":
        raise c.error(f"cdist of a {c.dtype(0)} tensor")
    x1, x2 = c.tensor(0), c.tensor(1, c.dtype(0))
    s1, s2 = list(c.shape(0)), list(c.shape(1))
    batch = list(np.broadcast_shapes(tuple(s1[:-2]), tuple(s2[:-2])))
    if s1[:-2] != batch:
        x1 = c.emit(relay.BroadcastToOp(x1, shape=batch + s1[-2:]))
    if s2[:-2] != batch:
        x2 = c.emit(relay.BroadcastToOp(x2, shape=batch + s2[-2:]))
    return _distances(c, x1, x2, _distance_p(c))


@aten_op("_pdist_forward", "pdist")
def pdist(c: Call) -> SSAValue:
    """The distances between rows i < j of x [N, M], in row-major order."""
    if c.rank(0) != 2 or c.dtype(0).kind != "f":
        raise c.error(f"pdist of {c.type(0)} (a 2-d float tensor)")
    n = c.shape(0)[0]
    if n < 2:
        raise c.unsupported("pdist of fewer than two rows (an empty result)")
    x = c.tensor(0)
    full = _distances(c, x, x, _distance_p(c))
    i, j = np.triu_indices(n, 1)
    flat = c.emit(relay.ReshapeOp(full, newshape=[n * n]))
    return c.emit(relay.TakeOp(flat, c.constant((i * n + j).astype(np.int64)), axis=0))


@aten_op("cosine_similarity")
def cosine_similarity(c: Call) -> SSAValue:
    """sum((x1 / max(|x1|, eps)) * (x2 / max(|x2|, eps))) along dim (the inputs broadcast)."""
    dtype = c.result_dtype(c.raw(0), c.raw(1))
    x1, x2 = c.tensor(0, dtype), c.tensor(1, dtype)
    shape = list(np.broadcast_shapes(c.shape(0), c.shape(1)))
    axis = c.int("dim", 1) % max(len(shape), 1)
    eps = c.constant(c.float("eps", 1e-8), dtype)
    units = []
    for x in (x1, x2):
        if list(x.type.get_shape()) != shape:
            x = c.emit(relay.BroadcastToOp(x, shape=shape))
        square = c.emit(relay.SumOp(c.emit(relay.MultiplyOp(x, x)), axis=[axis], keepdims=True))
        norm = c.emit(relay.MaximumOp(c.emit(relay.SqrtOp(square)), eps))
        units.append(c.emit(relay.DivideOp(x, norm)))
    return c.emit(relay.SumOp(c.emit(relay.MultiplyOp(*units)), axis=[axis]))


EMBEDDING_BAG_MODES = {0: "sum", 1: "mean", 2: "max", "sum": "sum", "mean": "mean", "max": "max"}


@aten_op("_embedding_bag", "_embedding_bag_forward_only", "embedding_bag")
def embedding_bag(c: Call) -> object:
    """Bag b reduces the rows weight[indices[j]] for offsets[b] <= j < offsets[b + 1] (the
    last bag runs to the end unless include_last_offset), skipping padding_idx; an empty bag
    gives zeros. Only the first output (the bags) is computed."""
    mode = EMBEDDING_BAG_MODES.get(c.value("mode", 0))
    if mode is None:
        raise c.unsupported(f"embedding_bag mode {c.value('mode')}")
    if c.rank("indices") != 1 or c.rank("offsets") != 1:
        raise c.unsupported("embedding_bag with 2-d indices (torch passes them flattened)")
    weight = c.tensor("weight")
    dtype = c.dtype("weight")
    count = c.shape("indices")[0]
    offsets = c.tensor("offsets", np.int64)
    total = c.shape("offsets")[0]
    last = bool(c.value("include_last_offset", False))
    bags = total - 1 if last else total
    if bags < 1 or count == 0:
        raise c.unsupported("embedding_bag without bags or indices (an empty result)")
    if bags * count * c.shape("weight")[1] > MAX_DISTANCE_ELEMENTS:
        raise c.unsupported(f"embedding_bag of {count} indices into {bags} bags (too large)")
    starts = c.emit(relay.StridedSliceOp(offsets, begin=[0], end=[bags], axes=[0]))
    if last:
        ends = c.emit(relay.StridedSliceOp(offsets, begin=[1], end=[total], axes=[0]))
    elif bags > 1:
        tail = c.emit(relay.StridedSliceOp(offsets, begin=[1], end=[bags], axes=[0]))
        ends = c.emit(relay.ConcatenateOp(tail, c.constant(np.asarray([count], np.int64)), axis=0))
    else:
        ends = c.constant(np.asarray([count], np.int64))
    j = c.constant(np.arange(count, dtype=np.int64).reshape(1, count))
    starts = c.emit(relay.ReshapeOp(starts, newshape=[bags, 1]))
    ends = c.emit(relay.ReshapeOp(ends, newshape=[bags, 1]))
    member = c.emit(
        relay.LogicalAndOp(c.emit(relay.LessEqualOp(starts, j)), c.emit(relay.LessOp(j, ends)))
    )
    indices = c.tensor("indices", np.int64)
    padding_idx = c.value("padding_idx", -1)
    if padding_idx is not None and padding_idx >= 0:
        kept = c.emit(relay.NotEqualOp(indices, c.constant(int(padding_idx), np.int64)))
        member = c.emit(
            relay.LogicalAndOp(member, c.emit(relay.ReshapeOp(kept, newshape=[1, count])))
        )
    indices = checked_indices(c, indices, weight, 0, c.label)
    rows = c.emit(relay.TakeOp(weight, indices, axis=0))  # [count, D]
    if c.has("per_sample_weights"):
        if mode != "sum":
            raise c.error("per_sample_weights need mode 'sum'")
        scale = c.emit(relay.ReshapeOp(c.tensor("per_sample_weights", dtype), newshape=[count, 1]))
        rows = c.emit(relay.MultiplyOp(rows, scale))
    wide = c.emit(relay.ReshapeOp(member, newshape=[bags, count, 1]))
    spread = c.emit(relay.ExpandDimsOp(rows, axis=0))
    sizes = c.emit(relay.SumOp(c.cast(member, dtype), axis=[1], keepdims=True))  # [bags, 1]
    if mode == "max":
        picked = c.emit(relay.WhereOp(wide, spread, c.constant(-math.inf, dtype)))
        out = c.emit(relay.MaxOp(picked, axis=[1]))
        empty = c.emit(relay.EqualOp(sizes, c.constant(0, dtype)))
        out = c.emit(relay.WhereOp(empty, c.constant(0, dtype), out))
    else:
        picked = c.emit(relay.WhereOp(wide, spread, c.constant(0, dtype)))
        out = c.emit(relay.SumOp(picked, axis=[1]))
        if mode == "mean":
            safe = c.emit(relay.MaximumOp(sizes, c.constant(1, dtype)))
            out = c.emit(relay.DivideOp(out, safe))
    return (
        out,
        Unavailable("embedding_bag offset2bag"),
        Unavailable("embedding_bag bag sizes"),
        Unavailable("embedding_bag max indices"),
    )
