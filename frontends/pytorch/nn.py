"""PyTorch neural-network ops -> relay: convolutions, linear layers and matrix products,
normalizations, softmax, pooling, padding, embedding and scaled dot-product attention."""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.frontends.common import matmul_nd
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
    "max_pool1d", "max_pool2d", "max_pool3d", "max_pool2d_with_indices", "max_pool3d_with_indices"
)
def max_pool(c: Call) -> object:
    n, kernel, stride, padding = _window(c)
    if n not in MAX_POOLS:
        raise c.unsupported(f"{n}-d max pooling")
    y = c.emit(
        MAX_POOLS[n](
            c.tensor(0),
            pool_size=kernel,
            strides=stride,
            padding=padding * 2,
            dilation=_per_dim(c.ints("dilation", [1]), n),
            ceil_mode=bool(c.value("ceil_mode", False)),
        )
    )
    if c.kind.endswith("with_indices"):
        return y, Unavailable("max-pool indices")
    return y


@aten_op("avg_pool1d", "avg_pool2d", "avg_pool3d")
def avg_pool(c: Call) -> SSAValue:
    n, kernel, stride, padding = _window(c)
    if n not in AVG_POOLS:
        raise c.unsupported(f"{n}-d average pooling")
    if c.value("divisor_override", None) is not None:
        raise c.unsupported("avg_pool divisor_override")
    return c.emit(
        AVG_POOLS[n](
            c.tensor(0),
            pool_size=kernel,
            strides=stride,
            padding=padding * 2,
            ceil_mode=bool(c.value("ceil_mode", False)),
            count_include_pad=bool(c.value("count_include_pad", True)),
        )
    )


@aten_op(
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "_adaptive_avg_pool2d",
    "adaptive_max_pool2d",
)
def adaptive_pool(c: Call) -> object:
    """Adaptive pooling whose output divides the input: a fixed window (global when 1)."""
    is_max = "max" in c.kind
    n = c.rank(0) - 2
    sizes = c.shape(0)[2:]
    out = _per_dim(c.ints("output_size"), n)
    if any(s % o for s, o in zip(sizes, out)):
        raise c.unsupported(f"adaptive pooling from {list(sizes)} to {out} (not a divisor)")
    x = c.tensor(0)
    if all(o == 1 for o in out):
        axes = list(range(2, 2 + n))
        cls = relay.MaxOp if is_max else relay.MeanOp
        y = c.emit(cls(x, axis=axes, keepdims=True))
    else:
        kernel = [s // o for s, o in zip(sizes, out)]
        classes = MAX_POOLS if is_max else AVG_POOLS
        y = c.emit(classes[n](x, pool_size=kernel, strides=kernel, padding=[0] * (2 * n)))
    return (y, Unavailable("max-pool indices")) if is_max else y


@aten_op("constant_pad_nd", "pad")
def pad(c: Call) -> SSAValue:
    pads = c.ints("pad")
    rank = c.rank(0)
    if len(pads) % 2 or len(pads) // 2 > rank:
        raise c.error(f"pad {pads} does not fit a rank-{rank} input")
    width = [0] * (2 * rank)
    for i in range(len(pads) // 2):  # pads start at the last dimension
        axis = rank - 1 - i
        width[2 * axis], width[2 * axis + 1] = pads[2 * i], pads[2 * i + 1]
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
