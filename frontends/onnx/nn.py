"""ONNX neural-network ops -> relay: Conv, ConvTranspose, pools, normalizations, Gemm,
MatMul, Softmax, Flatten, Pad, Dropout, LRN."""

from __future__ import annotations

import math

import numpy as np
import onnx
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dims import normalize, prod
from xrelay.dialects.dtypes import element_type
from xrelay.frontends.common import matmul_nd
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.registry import onnx_op

CONVS = {1: relay.Conv1DOp, 2: relay.Conv2DOp, 3: relay.Conv3DOp}


def window_pads(
    b: Node, in_sizes: tuple[int, ...], kernel: list[int], strides: list[int], dilations: list[int]
) -> list[int]:
    """Begin pads then end pads, from `pads` or `auto_pad` (SAME_UPPER/SAME_LOWER/VALID)."""
    n = len(kernel)
    auto = b.attr("auto_pad", "NOTSET")
    if auto in ("NOTSET", ""):
        return list(b.attr("pads", [0] * (2 * n)))
    if auto == "VALID":
        return [0] * (2 * n)
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise b.unsupported(f"auto_pad '{auto}'")
    begins, ends = [], []
    for size, k, s, d in zip(in_sizes, kernel, strides, dilations):
        if not isinstance(size, int) and s != 1:  # the padding would depend on size % s
            raise b.unsupported(f"auto_pad {auto} with stride {s} along a dynamic axis")
        out = size if s == 1 else math.ceil(size / s)
        total = max(0, normalize((out - 1) * s + d * (k - 1) + 1 - size))  # int: size cancels
        small, large = total // 2, total - total // 2
        begins.append(small if auto == "SAME_UPPER" else large)
        ends.append(large if auto == "SAME_UPPER" else small)
    return begins + ends


def _bias(b: Node, y: SSAValue, i: int) -> SSAValue:
    if not b.has_input(i):
        return y
    return b.emit(relay.BiasAddOp(y, b.input(i), axis=1))


@onnx_op("Conv")
def conv(b: Node) -> SSAValue:
    x, w = b.input(0), b.input(1)
    n = b.rank(0) - 2
    if n not in CONVS:
        raise b.unsupported(f"{n}-d convolution")
    kernel = list(b.attr("kernel_shape", b.shape(1)[2:]))
    if (
        b.rank(1) != n + 2
        or any(isinstance(d, int) and d != k for k, d in zip(kernel, b.shape(1)[2:], strict=False))
        or len(kernel) != n
    ):
        raise b.error(f"kernel_shape {kernel} contradicts the weight's shape {list(b.shape(1))}")
    strides = list(b.attr("strides", [1] * n))
    dilations = list(b.attr("dilations", [1] * n))
    pads = window_pads(b, b.shape(0)[2:], kernel, strides, dilations)
    y = b.emit(
        CONVS[n](x, w, strides=strides, padding=pads, dilation=dilations, groups=b.attr("group", 1))
    )
    return _bias(b, y, 2)


@onnx_op("ConvTranspose")
def conv_transpose(b: Node) -> SSAValue:
    if b.rank(0) != 4:
        raise b.unsupported(f"{b.rank(0) - 2}-d transposed convolution")
    kernel = list(b.attr("kernel_shape", b.shape(1)[2:]))
    strides = list(b.attr("strides", [1, 1]))
    dilations = list(b.attr("dilations", [1, 1]))
    output_padding = list(b.attr("output_padding", [0, 0]))
    in_hw = b.shape(0)[2:]
    if b.has_attr("output_shape"):
        in_hw = b.static_dims(in_hw, "ConvTranspose output_shape on spatial sizes")
        target = list(b.attr("output_shape"))[-2:]
        pads_total = [
            s * (i - 1) + op + ((k - 1) * d + 1) - t
            for s, i, op, k, d, t in zip(strides, in_hw, output_padding, kernel, dilations, target)
        ]
        # a negative total means the requested output is larger: extra end rows
        output_padding = [op - min(p, 0) for op, p in zip(output_padding, pads_total)]
        pads_total = [max(p, 0) for p in pads_total]
        auto = b.attr("auto_pad", "NOTSET")
        begins = [p // 2 if auto != "SAME_LOWER" else p - p // 2 for p in pads_total]
        pads = begins + [p - bg for p, bg in zip(pads_total, begins)]
    elif b.attr("auto_pad", "NOTSET") in ("SAME_UPPER", "SAME_LOWER"):
        pads_total = [  # the input size cancels out
            normalize(s * (i - 1) + op + ((k - 1) * d + 1) - i * s)
            for s, i, op, k, d in zip(strides, in_hw, output_padding, kernel, dilations)
        ]
        upper = b.attr("auto_pad") == "SAME_UPPER"
        begins = [p // 2 if upper else p - p // 2 for p in pads_total]
        pads = begins + [p - bg for p, bg in zip(pads_total, begins)]
    else:
        pads = list(b.attr("pads", [0, 0, 0, 0]))
    y = b.emit(
        relay.Conv2DTransposeOp(
            b.input(0),
            b.input(1),
            strides=strides,
            padding=pads,
            output_padding=output_padding,
            dilation=dilations,
            groups=b.attr("group", 1),
        )
    )
    return _bias(b, y, 2)


MAX_POOLS = {1: relay.MaxPool1DOp, 2: relay.MaxPool2DOp, 3: relay.MaxPool3DOp}
AVG_POOLS = {1: relay.AvgPool1DOp, 2: relay.AvgPool2DOp, 3: relay.AvgPool3DOp}


def _pool(
    b: Node, classes: dict[int, type], data: SSAValue | None = None, include_pad: bool = False
) -> SSAValue:
    if len(b.node.output) > 1 and b.node.output[1]:
        raise b.unsupported("MaxPool Indices output")
    n = b.rank(0) - 2
    if n not in classes:
        raise b.unsupported(f"{n}-d pooling")
    kernel = list(b.attr("kernel_shape"))
    strides = list(b.attr("strides", [1] * n))
    dilations = list(b.attr("dilations", [1] * n))
    pads = window_pads(b, b.shape(0)[2:], kernel, strides, dilations)
    extra = {}
    if classes is AVG_POOLS:
        extra["count_include_pad"] = include_pad or bool(b.attr("count_include_pad", 0))
    return b.emit(
        classes[n](
            b.input(0) if data is None else data,
            pool_size=kernel,
            strides=strides,
            padding=pads,
            dilation=dilations,
            ceil_mode=bool(b.attr("ceil_mode", 0)),
            **extra,
        )
    )


@onnx_op("MaxPool")
def max_pool(b: Node) -> SSAValue:
    return _pool(b, MAX_POOLS)


@onnx_op("AveragePool")
def avg_pool(b: Node) -> SSAValue:
    return _pool(b, AVG_POOLS)


@onnx_op("LpPool", since=11)
def lp_pool(b: Node) -> SSAValue:
    """(sum over the window of |x|^p)^(1/p): an average pool that counts the padding, times
    the window size."""
    p = float(b.attr("p", 2))
    dtype = b.dtype(0)
    magnitude = b.emit(relay.AbsOp(b.input(0)))
    powered = b.emit(relay.PowerOp(magnitude, b.constant(p, dtype)))
    mean = _pool(b, AVG_POOLS, powered, include_pad=True)
    window = float(np.prod(b.attr("kernel_shape")))
    total = b.emit(relay.MultiplyOp(mean, b.constant(window, dtype)))
    return b.emit(relay.PowerOp(total, b.constant(1.0 / p, dtype)))


def _global_pool(b: Node, cls: type, reduce: type) -> SSAValue:
    if b.rank(0) == 4:
        return b.emit(cls(b.input(0)))
    axes = tuple(range(2, b.rank(0)))
    return b.emit(reduce(b.input(0), axis=axes, keepdims=True))


@onnx_op("GlobalAveragePool")
def global_avg_pool(b: Node) -> SSAValue:
    return _global_pool(b, relay.GlobalAvgPool2DOp, relay.MeanOp)


@onnx_op("GlobalMaxPool")
def global_max_pool(b: Node) -> SSAValue:
    return _global_pool(b, relay.GlobalMaxPool2DOp, relay.MaxOp)


@onnx_op("BatchNormalization")
def batch_norm(b: Node) -> SSAValue:
    if b.attr("training_mode", 0) or any(o for o in b.node.output[1:]):
        raise b.unsupported("training-mode batch normalization")
    args = [b.input(i) for i in range(5)]
    return b.emit(relay.BatchNormOp(*args, axis=1, epsilon=float(b.attr("epsilon", 1e-5))))


@onnx_op("InstanceNormalization")
def instance_norm(b: Node) -> SSAValue:
    """(x - mean) / sqrt(var + eps) * scale[c] + bias[c], statistics over spatial axes."""
    x = b.input(0)
    rank = b.rank(0)
    axes = tuple(range(2, rank))
    mean = b.emit(relay.MeanOp(x, axis=axes, keepdims=True))
    centered = b.emit(relay.SubtractOp(x, mean))
    var = b.emit(
        relay.MeanOp(b.emit(relay.MultiplyOp(centered, centered)), axis=axes, keepdims=True)
    )
    eps = b.constant(b.attr("epsilon", 1e-5), b.dtype(0))
    normed = b.emit(relay.DivideOp(centered, b.emit(relay.SqrtOp(b.emit(relay.AddOp(var, eps))))))
    channel_shape = (b.shape(0)[1],) + (1,) * (rank - 2)
    scale = b.emit(relay.ReshapeOp(b.input(1), newshape=channel_shape))
    bias = b.emit(relay.ReshapeOp(b.input(2), newshape=channel_shape))
    return b.emit(relay.AddOp(b.emit(relay.MultiplyOp(normed, scale)), bias))


@onnx_op("LayerNormalization", since=17)
def layer_norm(b: Node) -> list:
    rank = b.rank(0)
    axis = b.axis(b.attr("axis", -1), rank)
    norm_shape = b.shape(0)[axis:]
    scale = b.input(1)
    if b.shape(1) != norm_shape:
        scale = b.emit(relay.BroadcastToOp(scale, shape=norm_shape))
    if b.has_input(2):
        bias = b.input(2)
        if b.shape(2) != norm_shape:
            bias = b.emit(relay.BroadcastToOp(bias, shape=norm_shape))
    else:
        bias = b.full(0, b.dtype(0), norm_shape)
    eps = float(b.attr("epsilon", 1e-5))
    y = b.emit(relay.LayerNormOp(b.input(0), scale, bias, axis=axis, epsilon=eps))
    if not any(o for o in b.node.output[1:]):
        return [y]
    # Mean and InvStdDev over the normalized axes, kept as size-1 axes, in the stash type
    x = b.input(0)
    axes = tuple(range(axis, rank))
    mean = b.emit(relay.MeanOp(x, axis=axes, keepdims=True))
    centered = b.emit(relay.SubtractOp(x, mean))
    var = b.emit(
        relay.MeanOp(b.emit(relay.MultiplyOp(centered, centered)), axis=axes, keepdims=True)
    )
    inv_std = b.emit(relay.RsqrtOp(b.emit(relay.AddOp(var, b.constant(eps, b.dtype(0))))))
    stash = onnx.helper.tensor_dtype_to_np_dtype(b.attr("stash_type", 1))
    if stash != b.dtype(0):
        mean = b.emit(relay.CastOp(mean, dtype=element_type(stash)))
        inv_std = b.emit(relay.CastOp(inv_std, dtype=element_type(stash)))
    return [y, mean, inv_std]


@onnx_op("LRN")
def lrn(b: Node) -> SSAValue:
    return b.emit(
        relay.LRNOp(
            b.input(0),
            size=b.attr("size"),
            axis=1,
            alpha=float(b.attr("alpha", 1e-4)),
            beta=float(b.attr("beta", 0.75)),
            bias=float(b.attr("bias", 1.0)),
        )
    )


@onnx_op("Gemm")
def gemm(b: Node) -> SSAValue:
    a, w = b.input(0), b.input(1)
    trans_a, trans_b = bool(b.attr("transA", 0)), bool(b.attr("transB", 0))
    if b.rank(0) != 2 or b.rank(1) != 2:
        raise b.error(f"Gemm needs rank-2 A and B, got {b.shape(0)} and {b.shape(1)}")
    if trans_b and not trans_a:
        y = b.emit(relay.DenseOp(a, w))
    else:
        y = b.emit(relay.MatmulOp(a, w, transpose_a=trans_a, transpose_b=trans_b))
    alpha, beta = b.attr("alpha", 1.0), b.attr("beta", 1.0)
    if alpha != 1.0:
        y = b.emit(relay.MultiplyOp(y, b.constant(alpha, b.dtype(0))))
    if b.has_input(2) and beta != 0.0:
        c = b.input(2)
        if beta != 1.0:
            c = b.emit(relay.MultiplyOp(c, b.constant(beta, b.dtype(0))))
        y = b.emit(relay.AddOp(y, c))
    return y


@onnx_op("MatMul")
def matmul(b: Node) -> SSAValue:
    return matmul_nd(b, b.input(0), b.input(1))


def _softmax(b: Node, cls: type) -> SSAValue:
    x = b.input(0)
    rank = b.rank(0)
    if b.opset >= 13:
        return b.emit(cls(x, axis=b.attr("axis", -1)))
    # before opset 13: softmax of the input coerced to 2-d at `axis`
    axis = b.attr("axis", 1) % max(rank, 1)
    shape = b.shape(0)
    if axis == rank - 1:
        return b.emit(cls(x, axis=-1))
    flat = b.emit(relay.ReshapeOp(x, newshape=(prod(shape[:axis]), prod(shape[axis:]))))
    y = b.emit(cls(flat, axis=1))
    return b.emit(relay.ReshapeOp(y, newshape=shape))


@onnx_op("Softmax")
def softmax(b: Node) -> SSAValue:
    return _softmax(b, relay.SoftmaxOp)


@onnx_op("LogSoftmax")
def log_softmax(b: Node) -> SSAValue:
    return _softmax(b, relay.LogSoftmaxOp)


@onnx_op("Flatten")
def flatten(b: Node) -> SSAValue:
    shape = b.shape(0)
    axis = b.attr("axis", 1)
    if not -len(shape) <= axis <= len(shape):
        raise b.error(f"axis {axis} is out of range for rank {len(shape)}")
    axis = axis + len(shape) if axis < 0 else axis
    newshape = (prod(shape[:axis]), prod(shape[axis:]))
    return b.emit(relay.ReshapeOp(b.input(0), newshape=newshape))


@onnx_op("Dropout")
def dropout(b: Node) -> list:
    x = b.input(0)
    if b.has_input(2) and (not b.is_const(2) or bool(b.const(2))):
        raise b.unsupported("training-mode dropout")
    mask = None
    if len(b.node.output) > 1 and b.node.output[1]:
        mask = b.filled(True, bool, b.shape(0))
    return [x, mask]


@onnx_op("Pad")
def pad(b: Node) -> SSAValue:
    rank = b.rank(0)
    if b.opset < 11:
        pads = list(b.attr("pads" if b.opset >= 2 else "paddings"))
        value = float(b.attr("value", 0.0))
    else:
        pads = [int(p) for p in b.static_dims(b.const(1).tolist(), "Pad pads")]
        value = 0.0
        if b.has_input(2):
            constant = np.asarray(b.const(2)).reshape(-1)
            if constant.size > 1:
                raise b.error(f"constant_value must be one value, got {constant.size}")
            value = float(constant[0]) if constant.size else 0.0
        if b.has_input(3):  # opset 18: pads cover only `axes`
            axes = [int(a) for a in b.const(3)]
            if any(not -rank <= a < rank for a in axes):
                raise b.error(f"axes {axes} are out of range for rank {rank}")
            axes = [a % rank for a in axes]
            if len(pads) != 2 * len(axes):
                raise b.error(f"pads has {len(pads)} values; {len(axes)} axes need {2 * len(axes)}")
            full = [0] * (2 * rank)
            for i, a in enumerate(axes):
                full[a], full[rank + a] = pads[i], pads[len(axes) + i]
            pads = full
    if len(pads) != 2 * rank:
        raise b.error(f"pads has {len(pads)} values; a rank-{rank} input needs {2 * rank}")
    mode = b.attr("mode", "constant")
    if mode not in relay.nn.PAD_MODES:
        raise b.unsupported(f"pad mode '{mode}'")
    width = [p for i in range(rank) for p in (pads[i], pads[rank + i])]
    return b.emit(relay.PadOp(b.input(0), pad_width=width, pad_value=value, pad_mode=mode))
