"""TFLite neural-network builtins -> relay: convolutions, fully connected, batch matmul,
pools, softmax, resize. Convolutions and pools compute in NCHW (weights are transposed from
TFLite's OHWI at import time); quantized inputs go to frontends/tflite/quantized.py."""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dims import fmt_dims, normalize, prod, shape_of, simplify_ratio
from xrelay.frontends.common import matmul_nd
from xrelay.frontends.tflite import quantized
from xrelay.frontends.tflite.binder import NCHW, Operator
from xrelay.frontends.tflite.registry import tflite_op

SAME, VALID = 0, 1


def window_pads(
    b: Operator, sizes: tuple[int, int], kernel: list[int], strides: list[int], dil: list[int]
) -> list[int]:
    """TFLite's padding (SAME puts the odd pixel at the end): top, left, bottom, right."""
    padding = b.option("Padding", VALID)
    if padding == VALID:
        return [0, 0, 0, 0]
    if padding != SAME:
        raise b.unsupported(f"padding {padding}")
    begins, ends = [], []
    for size, k, s, d in zip(sizes, kernel, strides, dil):
        out = math.ceil(size / s)
        total = max(0, (out - 1) * s + d * (k - 1) + 1 - size)
        begins.append(total // 2)
        ends.append(total - total // 2)
    return begins + ends


def conv_window(b: Operator, kernel: list[int]) -> dict:
    """strides, dilation and padding of a CONV_2D / DEPTHWISE_CONV_2D."""
    strides = [b.option("StrideH", 1), b.option("StrideW", 1)]
    dilation = [b.option("DilationHFactor", 1), b.option("DilationWFactor", 1)]
    pads = window_pads(b, b.shape(0)[1:3], kernel, strides, dilation)
    return {"strides": strides, "padding": pads, "dilation": dilation}


def bias_nchw(b: Operator, y: SSAValue, i: int) -> SSAValue:
    if not b.has_input(i):
        return y
    return b.emit(relay.BiasAddOp(y, b.input(i), axis=1))


@tflite_op("CONV_2D")
def conv_2d(b: Operator) -> NCHW:
    w = b.const(1)  # OHWI
    if b.rank(0) != 4 or w.ndim != 4:
        raise b.unsupported(f"convolution of a rank-{b.rank(0)} input")
    channels = b.shape(0)[3]
    if channels % w.shape[3]:
        raise b.error(f"{channels} input channels do not divide into groups of {w.shape[3]}")
    window = conv_window(b, list(w.shape[1:3]))
    groups = channels // w.shape[3]
    if b.quant(0) is not None:
        return quantized.conv(b, w.transpose(0, 3, 1, 2), 0, window, groups)
    return float_conv(b, w.transpose(0, 3, 1, 2), window, groups)


def float_conv(b: Operator, w_oihw: np.ndarray, window: dict, groups: int) -> NCHW:
    """A float CONV_2D / DEPTHWISE_CONV_2D, or a hybrid one (int8 weights: the input
    quantized per batch as TFLite does, the weights dequantized at import)."""
    x = b.input_nchw(0)
    hybrid = quantized.hybrid_weight(b, 1)
    if hybrid is not None:
        # the file's OHWI (CONV_2D) or 1HWC (DEPTHWISE_CONV_2D) to OIHW
        w_oihw = hybrid.transpose((0, 3, 1, 2) if b.code == "CONV_2D" else (3, 0, 1, 2))
        x = quantized.hybrid_input(b, x, [1, 2, 3], quantized.hybrid_asymmetric_conv(b))
    weight = b.weight(1, w_oihw, ":oihw")
    y = b.emit(relay.Conv2DOp(x, weight, groups=groups, **window))
    return NCHW(b.activation(bias_nchw(b, y, 2)))


@tflite_op("DEPTHWISE_CONV_2D")
def depthwise_conv_2d(b: Operator) -> NCHW:
    w = b.const(1)  # 1, H, W, C * multiplier
    channels = b.shape(0)[3]
    if b.rank(0) != 4 or w.ndim != 4 or w.shape[3] % channels:
        raise b.error(f"filter {list(w.shape)} does not fit input {list(b.shape(0))}")
    window = conv_window(b, list(w.shape[1:3]))
    oihw = w.transpose(3, 0, 1, 2)
    if b.quant(0) is not None:
        return quantized.conv(b, oihw, 3, window, channels)
    return float_conv(b, oihw, window, channels)


@tflite_op("TRANSPOSE_CONV")
def transpose_conv(b: Operator) -> NCHW:
    """Inputs: output shape, weights (OHWI), data, optional bias."""
    # [batch, h, w, c]: the batch may be an expression (a dynamic batch's SHAPE -> PACK)
    target = [d if i == 0 else int(d) for i, d in enumerate(b.const(0))]
    w = b.const(1)
    in_hw = b.shape(2)[1:3]
    kernel, strides = list(w.shape[1:3]), [b.option("StrideH", 1), b.option("StrideW", 1)]
    pads, extra = [0, 0, 0, 0], [0, 0]
    for i in range(2):
        if b.option("Padding", VALID) == SAME:
            conv_out = math.ceil(target[1 + i] / strides[i])
        else:
            conv_out = (target[1 + i] - kernel[i]) // strides[i] + 1
        total = max(0, (conv_out - 1) * strides[i] + kernel[i] - target[1 + i])
        pads[i], pads[2 + i] = total // 2, total - total // 2
        extra[i] = target[1 + i] - ((in_hw[i] - 1) * strides[i] - total + kernel[i])
    if min(extra) < 0:
        raise b.error(f"output shape {target} is smaller than the transposed convolution gives")
    if b.quant(2) is not None:
        return quantized.transpose_conv(b, w, pads, extra, strides)
    if b.tensor(1).quant is not None and np.dtype(b.tensor(1).dtype).kind in "iu":
        raise b.unsupported("a hybrid TRANSPOSE_CONV (float input, integer weights)")
    weight = b.weight(1, w.transpose(3, 0, 1, 2), ":iohw")
    y = b.emit(
        relay.Conv2DTransposeOp(
            b.input_nchw(2), weight, strides=strides, padding=pads, output_padding=extra
        )
    )
    return NCHW(b.activation(bias_nchw(b, y, 3)))


def flat_rows(b: Operator, k: int) -> tuple[SSAValue, tuple[int, ...]]:
    """FULLY_CONNECTED's input as [rows, k] unless keep_num_dims, and the output's lead dims."""
    shape = b.shape(0)
    if b.option("KeepNumDims", False):
        return b.input(0), tuple(shape[:-1])
    rows = normalize(simplify_ratio(prod(shape), k))
    if not (isinstance(rows, int) or rows.is_integer):
        raise b.error(f"input {fmt_dims(shape)} does not flatten into rows of {k}")
    x = b.input(0)
    if len(shape) != 2 or shape[-1] != k:
        x = b.emit(relay.ReshapeOp(x, newshape=(rows, k)))
    return x, (rows,)


@tflite_op("FULLY_CONNECTED")
def fully_connected(b: Operator) -> SSAValue:
    if b.option("WeightsFormat", 0) != 0:
        raise b.unsupported("shuffled weights format")
    if b.quant(0) is not None:
        return quantized.fully_connected(b)
    k = b.shape(1)[1]
    x, _ = flat_rows(b, k)
    hybrid = quantized.hybrid_weight(b, 1) if b.is_const(1) else None
    if hybrid is None:
        weight = b.input(1)
    else:  # the input quantized per row, as TFLite's hybrid kernel does
        asymmetric = bool(b.option("AsymmetricQuantizeInputs", False))
        x = quantized.hybrid_input(b, x, [len(shape_of(x.type)) - 1], asymmetric)
        weight = b.weight(1, hybrid, ":dequantized")
    y = b.emit(relay.DenseOp(x, weight))
    if b.has_input(2):
        y = b.emit(relay.AddOp(y, b.input(2)))
    return b.activation(y)


@tflite_op("BATCH_MATMUL")
def batch_matmul(b: Operator) -> SSAValue:
    if b.quant(0) is not None:
        return quantized.batch_matmul(b)
    if any(b.dtype(i).kind in "iu" for i in (0, 1)):
        raise b.unsupported("a hybrid BATCH_MATMUL (float input, integer weights)")
    return matmul_nd(b, *adjoint_inputs(b))


def adjoint_inputs(b: Operator) -> tuple[SSAValue, SSAValue]:
    """BATCH_MATMUL's operands with adj_x / adj_y applied (transposes of the last two axes)."""
    values = []
    for i, flag in ((0, "AdjX"), (1, "AdjY")):
        x = b.input(i)
        if b.option(flag, False):
            perm = list(range(b.rank(i)))
            perm[-2:] = perm[-1], perm[-2]
            x = b.emit(relay.TransposeOp(x, axes=perm))
        values.append(x)
    return values[0], values[1]


def pool(
    b: Operator, cls: type, data: SSAValue | None = None, count_include_pad: bool = False
) -> SSAValue:
    kernel = [b.option("FilterHeight"), b.option("FilterWidth")]
    strides = [b.option("StrideH", 1), b.option("StrideW", 1)]
    pads = window_pads(b, b.shape(0)[1:3], kernel, strides, [1, 1])
    x = b.input_nchw(0) if data is None else data
    extra = {"count_include_pad": count_include_pad} if cls is relay.AvgPool2DOp else {}
    return b.emit(cls(x, pool_size=kernel, strides=strides, padding=pads, **extra))


@tflite_op("MAX_POOL_2D")
def max_pool_2d(b: Operator) -> NCHW:
    if b.quant(0) is not None:
        return quantized.max_pool(b)
    return NCHW(b.activation(pool(b, relay.MaxPool2DOp)))


@tflite_op("AVERAGE_POOL_2D")
def average_pool_2d(b: Operator) -> NCHW:
    if b.quant(0) is not None:
        return quantized.average_pool(b)
    return NCHW(b.activation(pool(b, relay.AvgPool2DOp)))


def softmax_float(b: Operator, x: SSAValue) -> SSAValue:
    beta = b.option("Beta", 1.0)
    if beta != 1.0:
        x = b.emit(relay.MultiplyOp(x, b.constant(np.float32(beta))))
    return b.emit(relay.SoftmaxOp(x, axis=-1))


@tflite_op("SOFTMAX")
def softmax(b: Operator) -> SSAValue:
    if b.quant(0) is not None:
        return quantized.through_float(b)
    return softmax_float(b, b.input(0))


@tflite_op("LOG_SOFTMAX")
def log_softmax(b: Operator) -> SSAValue:
    if b.quant(0) is not None:
        return quantized.through_float(b)
    return b.emit(relay.LogSoftmaxOp(b.input(0), axis=-1))


def resize_taps(
    b: Operator, size: int, out: int, nearest: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per output index along one axis: the two source indices and the second's weight
    (TFLite's align_corners / half_pixel_centers conventions)."""
    align = b.option("AlignCorners", False)
    half = b.option("HalfPixelCenters", False)
    scale = (size - 1) / (out - 1) if align and out > 1 else size / out
    x = np.arange(out, dtype=np.float64)
    if nearest:
        src = (x + 0.5) * scale if half else x * scale
        idx = np.round(src) if align else np.floor(src)
        idx = np.minimum(idx.astype(np.int64), size - 1)
        return idx, idx, np.zeros(out, np.float32)
    src = (x + 0.5) * scale - 0.5 if half else x * scale
    lo = np.floor(src)
    frac = (src - lo).astype(np.float32)
    lo_i = np.clip(lo.astype(np.int64), 0, size - 1)
    hi_i = np.minimum(lo.astype(np.int64) + 1, size - 1)
    frac = np.where(src < 0, 0.0, frac).astype(np.float32)  # half-pixel left edge
    return lo_i, hi_i, frac


def resize_float(b: Operator, x: SSAValue, nearest: bool) -> SSAValue:
    """x in NCHW: gathers along H then W; bilinear adds the weighted second tap."""
    out_hw = [int(d) for d in b.const(1)]
    for axis, out in zip((2, 3), out_hw):
        size = shape_of(x.type)[axis]
        lo, hi, frac = resize_taps(b, size, out, nearest)
        first = b.emit(relay.TakeOp(x, b.constant(lo.astype(np.int32)), axis=axis))
        if nearest:
            x = first
            continue
        second = b.emit(relay.TakeOp(x, b.constant(hi.astype(np.int32)), axis=axis))
        shape = [1, 1, 1, 1]
        shape[axis] = out
        w = b.constant(frac.reshape(shape))
        delta = b.emit(relay.SubtractOp(second, first))
        x = b.emit(relay.AddOp(first, b.emit(relay.MultiplyOp(delta, w))))
    return x


@tflite_op("RESIZE_BILINEAR")
def resize_bilinear(b: Operator) -> NCHW:
    if b.quant(0) is not None:
        return quantized.through_float(b)
    return NCHW(resize_float(b, b.input_nchw(0), False))


@tflite_op("RESIZE_NEAREST_NEIGHBOR")
def resize_nearest(b: Operator) -> NCHW:
    if b.quant(0) is not None:
        return quantized.through_float(b)
    return NCHW(resize_float(b, b.input_nchw(0), True))
