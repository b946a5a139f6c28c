"""Full-integer TFLite operators -> qnn, with TFLite's arithmetic.

Convolutions, fully connected, batch matmul, ADD, SUB and MUL compute as TFLite's integer
reference kernels do: exact int32 products, then `qnn.requantize {rounding = "tflite"}`
(a 31-bit fixed-point multiplier taken from the f64 scale ratio, rounding half away from
zero), then the fused activation as a clamp on the integers. QUANTIZE and DEQUANTIZE are
qnn.quantize / dequantize (a QUANTIZE between integer types is a requantize). Shape ops
run on the integers (frontends/tflite/tensor.py). Any other quantized operator computes in
float between a dequantize and a quantize (`through_float`): within a step of TFLite's
integer kernels, not always equal.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import qnn, relay
from xrelay.dialects.dtypes import element_type
from xrelay.frontends.common import matmul_nd
from xrelay.frontends.tflite.binder import NCHW, Operator, Value, operands
from xrelay.frontends.tflite.model import QParams
from xrelay.frontends.tflite.registry import CONVERTERS, tflite_op

i32 = element_type(np.dtype(np.int32))

# LiteRT's FULLY_CONNECTED kernel rounds once (TFLITE_SINGLE_ROUNDING); BATCH_MATMUL,
# the convolutions, ADD, MUL and MEAN use gemmlowp's double rounding: measured against
# BUILTIN_REF, per operator (tests/frontends/tflite/test_models.py)
SINGLE = "tflite_single"


def scale_zp(b: Operator, q: QParams) -> tuple[SSAValue, SSAValue]:
    """A tensor's scale (f32) and zero point (i32) as constants: scalars per tensor."""
    if q.per_channel:
        return b.constant(q.scale, np.float32), b.constant(q.zero_point, np.int32)
    return b.constant(q.scale[0], np.float32), b.constant(q.zero_point[0], np.int32)


def round_away(x: float) -> int:
    return int(np.sign(x) * np.floor(abs(x) + 0.5))


def activation_range(b: Operator, q: QParams, dtype: np.dtype) -> tuple[int, int]:
    """The integer range of the fused activation (TFLite's CalculateActivationRangeQuantized)."""
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    act = b.option("FusedActivationFunction", 0)
    scale, zp = np.float32(q.scale[0]), int(q.zero_point[0])

    def quantize(f: float) -> int:
        return zp + round_away(float(np.float32(f) / scale))

    if act == 0:
        return lo, hi
    if act == 1:
        return max(lo, zp), hi
    if act == 3:
        return max(lo, zp), min(hi, quantize(6.0))
    if act == 2:
        return max(lo, quantize(-1.0)), min(hi, quantize(1.0))
    raise b.unsupported(f"fused activation {act} on a quantized output")


def requantize(
    b: Operator,
    acc: SSAValue,
    real_scale: np.ndarray,
    axis: int,
    clamp: bool = True,
    rounding: str = "tflite",
) -> SSAValue:
    """An i32 accumulator whose scale is `real_scale` (f64, per tensor or per channel along
    `axis`) -> the output tensor's quantization and type, the fused activation clamped."""
    q = b.out_quant()
    dtype = np.dtype(b.out_tensor().dtype)
    scale = real_scale if real_scale.size > 1 else real_scale.reshape(())
    y = b.emit(
        qnn.RequantizeOp(
            acc,
            b.constant(scale, np.float64),
            b.constant(0, np.int32),
            b.constant(q.scale[0], np.float32),
            b.constant(q.zero_point[0], np.int32),
            axis=axis,
            out_dtype=i32,
            rounding=rounding,
        )
    )
    lo, hi = (
        activation_range(b, q, dtype)
        if clamp
        else (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
    )
    y = b.emit(relay.ClipOp(y, a_min=float(lo), a_max=float(hi)))
    return b.emit(relay.CastOp(y, dtype=element_type(dtype)))


def product_scale(b: Operator, x: int, w: int) -> np.ndarray:
    """input scale * weight scale in f64, per tensor or per channel (TFLite's effective scale
    before dividing by the output scale)."""
    return np.float64(b.quant(x).scale[0]) * b.quant(w).scale.astype(np.float64)


def centered(b: Operator, x: SSAValue, q: QParams) -> SSAValue:
    """`x - zero_point` in i32."""
    wide = b.emit(relay.CastOp(x, dtype=i32))
    return b.emit(relay.SubtractOp(wide, b.constant(q.zero_point[0], np.int32)))


def bias_i32(b: Operator, acc: SSAValue, i: int, axis: int) -> SSAValue:
    if not b.has_input(i):
        return acc
    bias = b.const(i)
    if bias.dtype != np.int32:
        raise b.unsupported(f"{bias.dtype} bias on a quantized operator (int32 expected)")
    if axis == 1:
        return b.emit(relay.BiasAddOp(acc, b.input(i), axis=1))
    return b.emit(relay.AddOp(acc, b.input(i)))


def conv(b: Operator, w_oihw: np.ndarray, w_axis: int, window: dict, groups: int) -> NCHW:
    """CONV_2D / DEPTHWISE_CONV_2D on int8: qnn.conv2d, the int32 bias, requantize."""
    xq, wq = b.quant(0), b.tensor(1).quant
    if wq is None or np.any(wq.zero_point != 0):
        raise b.unsupported("a weight without symmetric quantization")
    x_scale, x_zp = scale_zp(b, xq)
    w_scale, _ = scale_zp(b, wq)
    acc = b.emit(
        qnn.Conv2DOp(
            b.input_nchw(0),
            b.weight(1, w_oihw, ":oihw"),
            x_zp,
            b.constant(0, np.int32),
            x_scale,
            w_scale,
            groups=groups,
            **window,
        )
    )
    acc = bias_i32(b, acc, 2, 1)
    return NCHW(requantize(b, acc, product_scale(b, 0, 1), 1))


def transpose_conv(
    b: Operator, w: np.ndarray, pads: list[int], extra: list[int], strides: list[int]
) -> NCHW:
    """TRANSPOSE_CONV on int8: an i32 transposed convolution of the centered input."""
    x = centered(b, b.input_nchw(2), b.quant(2))
    weight = b.emit(relay.CastOp(b.weight(1, w.transpose(3, 0, 1, 2), ":iohw"), dtype=i32))
    acc = b.emit(
        relay.Conv2DTransposeOp(x, weight, strides=strides, padding=pads, output_padding=extra)
    )
    acc = bias_i32(b, acc, 3, 1)
    scale = np.float64(b.quant(2).scale[0]) * b.tensor(1).quant.scale.astype(np.float64)
    return NCHW(requantize(b, acc, scale, 1))


def fully_connected(b: Operator) -> SSAValue:
    from xrelay.frontends.tflite.nn import flat_rows

    xq, wq = b.quant(0), b.tensor(1).quant
    if wq is None or np.any(wq.zero_point != 0):
        raise b.unsupported("a weight without symmetric quantization")
    x, _ = flat_rows(b, b.shape(1)[1])
    x_scale, x_zp = scale_zp(b, xq)
    w_scale, _ = scale_zp(b, wq)
    acc = b.emit(qnn.DenseOp(x, b.input(1), x_zp, b.constant(0, np.int32), x_scale, w_scale))
    acc = bias_i32(b, acc, 2, -1)
    return requantize(b, acc, product_scale(b, 0, 1), -1, rounding=SINGLE)


def batch_matmul(b: Operator) -> SSAValue:
    from xrelay.frontends.tflite.nn import adjoint_inputs

    lhs, rhs = adjoint_inputs(b)
    acc = matmul_nd(b, centered(b, lhs, b.quant(0)), centered(b, rhs, b.quant(1)))
    return requantize(b, acc, product_scale(b, 0, 1), -1)


LEFT_SHIFT = 20  # TFLite's headroom for int8 ADD/SUB


def binary(b: Operator) -> SSAValue | NCHW:
    """ADD / SUB / MUL as TFLite's integer kernels: each input rescaled in fixed point (ADD,
    SUB) or the centered product (MUL), then requantized to the output."""
    (lhs, rhs), nchw = operands(b)
    lq, rq = b.quant(0), b.quant(1)
    a, c = centered(b, lhs, lq), centered(b, rhs, rq)
    s1, s2 = np.float64(lq.scale[0]), np.float64(rq.scale[0])
    if b.code == "MUL":
        y = requantize(b, b.emit(relay.MultiplyOp(a, c)), np.asarray(s1 * s2), -1)
        return NCHW(y) if nchw else y
    twice_max = 2 * max(s1, s2)
    shift = b.constant(1 << LEFT_SHIFT, np.int32)
    scaled = []
    for value, s in ((a, s1), (c, s2)):
        wide = b.emit(relay.MultiplyOp(value, shift))
        scaled.append(
            b.emit(
                qnn.RequantizeOp(
                    wide,
                    b.constant(s / twice_max, np.float64),
                    b.constant(0, np.int32),
                    b.constant(1.0, np.float32),
                    b.constant(0, np.int32),
                    out_dtype=i32,
                    rounding="tflite",
                )
            )
        )
    cls = relay.AddOp if b.code == "ADD" else relay.SubtractOp
    total = b.emit(cls(scaled[0], scaled[1]))
    out_scale = twice_max / ((1 << LEFT_SHIFT) * np.float64(b.out_quant().scale[0]))
    y = requantize_ratio(b, total, out_scale)
    return NCHW(y) if nchw else y


def requantize_ratio(b: Operator, acc: SSAValue, ratio: float) -> SSAValue:
    """`acc * ratio` (a real multiplier, f64) plus the output zero point, clamped."""
    q = b.out_quant()
    dtype = np.dtype(b.out_tensor().dtype)
    y = b.emit(
        qnn.RequantizeOp(
            acc,
            b.constant(ratio, np.float64),
            b.constant(0, np.int32),
            b.constant(1.0, np.float32),
            b.constant(q.zero_point[0], np.int32),
            out_dtype=i32,
            rounding="tflite",
        )
    )
    lo, hi = activation_range(b, q, dtype)
    y = b.emit(relay.ClipOp(y, a_min=float(lo), a_max=float(hi)))
    return b.emit(relay.CastOp(y, dtype=element_type(dtype)))


def same_quant(a: QParams | None, c: QParams | None) -> bool:
    return (
        a is not None
        and c is not None
        and np.array_equal(a.scale, c.scale)
        and np.array_equal(a.zero_point, c.zero_point)
    )


def concatenation(b: Operator, axis: int) -> SSAValue | NCHW:
    out = b.out_quant()
    if all(same_quant(b.quant(i), out) for i in range(b.n_inputs)):
        b.float_mode = True  # the float converter, on the integers
        try:
            return CONVERTERS["CONCATENATION"](b)
        finally:
            b.float_mode = False
    values = [b.input(i) for i in range(b.n_inputs)]
    scales = [b.constant(b.quant(i).scale[0], np.float32) for i in range(b.n_inputs)]
    zps = [b.constant(b.quant(i).zero_point[0], np.int32) for i in range(b.n_inputs)]
    out_scale, out_zp = scale_zp(b, out)
    y = b.emit(qnn.ConcatenateOp(*values, *scales, *zps, out_scale, out_zp, axis=axis % b.rank(0)))
    return y


def max_pool(b: Operator) -> NCHW:
    """MAX_POOL_2D on the integers (input and output share a quantization)."""
    from xrelay.frontends.tflite.nn import pool

    if not same_quant(b.quant(0), b.out_quant()):
        return through_float(b)
    y = pool(b, relay.MaxPool2DOp)
    lo, hi = activation_range(b, b.out_quant(), np.dtype(b.out_tensor().dtype))
    if b.option("FusedActivationFunction", 0):
        y = b.emit(relay.ClipOp(y, a_min=float(lo), a_max=float(hi)))
    return NCHW(y)


def clamp_activation(b: Operator) -> SSAValue | NCHW:
    """RELU, RELU6, RELU_N1_TO_1 on the integers when input and output share a quantization."""
    q = b.out_quant()
    if not same_quant(b.quant(0), q):
        return through_float(b)
    scale, zp = np.float32(q.scale[0]), int(q.zero_point[0])
    info = np.iinfo(np.dtype(b.out_tensor().dtype))
    bounds = {"RELU": (0.0, None), "RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0)}[b.code]
    lo = max(int(info.min), zp + round_away(float(np.float32(bounds[0]) / scale)))
    hi = (
        int(info.max)
        if bounds[1] is None
        else min(int(info.max), zp + round_away(float(np.float32(bounds[1]) / scale)))
    )
    values, nchw = operands(b)
    y = b.emit(relay.ClipOp(values[0], a_min=float(lo), a_max=float(hi)))
    return NCHW(y) if nchw else y


def dequantized(b: Operator, i: int, v: Value) -> Value:
    """Input `i` (quantized) as f32, in the layouts it is held in."""
    q = b.quant(i)
    if v.array is not None:
        shape = [1] * v.array.ndim
        if q.per_channel:
            shape[q.axis] = -1
        real = (v.array.astype(np.int64) - q.zero_point.reshape(shape)) * q.scale.reshape(shape)
        return Value(array=real.astype(np.float32))
    scale, zp = scale_zp(b, q)
    if v.ssa is None:
        return Value(nchw=b.emit(qnn.DequantizeOp(v.nchw, scale, zp)))
    return Value(ssa=b.emit(qnn.DequantizeOp(v.ssa, scale, zp)))


def quantize_result(b: Operator, j: int, result):
    q = b.out_quant(j)
    if q is None or isinstance(result, np.ndarray):
        return result
    dtype = element_type(np.dtype(b.out_tensor(j).dtype))
    scale, zp = scale_zp(b, q)
    if isinstance(result, NCHW):
        return NCHW(b.emit(qnn.QuantizeOp(result.value, scale, zp, out_dtype=dtype)))
    return b.emit(qnn.QuantizeOp(result, scale, zp, out_dtype=dtype))


def through_float(b: Operator):
    """The operator's float converter between a dequantize of its quantized inputs and a
    quantize of its results."""
    env = b.importer.env
    saved: dict[int, Value] = {}
    for i in range(b.n_inputs):
        if b.has_input(i) and b.quant(i) is not None and b.record.inputs[i] not in saved:
            t = b.record.inputs[i]
            saved[t] = env[t]
            env[t] = dequantized(b, i, env[t])
    b.float_mode = True
    try:
        out = CONVERTERS[b.code](b)
    finally:
        env.update(saved)
        b.float_mode = False
    if isinstance(out, list | tuple):
        return [quantize_result(b, j, r) for j, r in enumerate(out)]
    return quantize_result(b, 0, out)


@tflite_op("QUANTIZE")
def quantize(b: Operator):
    q = b.out_quant()
    if q is None:
        raise b.unsupported("QUANTIZE to a type that is not an integer")
    dtype = element_type(np.dtype(b.out_tensor().dtype))
    values, nchw = operands(b)
    x = values[0]
    in_q = b.quant(0)
    if in_q is None:
        scale, zp = scale_zp(b, q)
        y = b.emit(
            qnn.QuantizeOp(x, scale, zp, out_dtype=dtype, axis=q.axis if q.per_channel else -1)
        )
    else:  # between integer types: TFLite's Requantize
        real = np.float64(in_q.scale[0]) / np.float64(q.scale[0])
        y = b.emit(
            qnn.RequantizeOp(
                x,
                b.constant(real, np.float64),
                b.constant(in_q.zero_point[0], np.int32),
                b.constant(1.0, np.float32),
                b.constant(q.zero_point[0], np.int32),
                out_dtype=dtype,
                rounding="tflite",
            )
        )
    return NCHW(y) if nchw else y


@tflite_op("DEQUANTIZE")
def dequantize(b: Operator):
    v = b.value(0)
    if v.array is not None:
        if v.array.dtype == np.float16:
            return v.array.astype(np.float32)
        if b.quant(0) is None:
            raise b.unsupported(f"DEQUANTIZE of a {v.array.dtype} constant without quantization")
        return dequantized(b, 0, v).array
    if b.quant(0) is None:
        values, nchw = operands(b)
        y = b.emit(relay.CastOp(values[0], dtype=element_type(np.dtype(np.float32))))
        return NCHW(y) if nchw else y
    out = dequantized(b, 0, v)
    return NCHW(out.nchw) if out.ssa is None else out.ssa


def mean_or_sum(b: Operator, axes: list[int], keep: bool, nchw_axes: list[int] | None):
    """MEAN / SUM on int8 along TFLite's three reference paths (kernels/reduce.cc):
    a kept-dims mean over H and W (requantize the centered sum, then divide by the count
    rounding half away from zero), a mean with one quantization in and out (the raw sum
    divided by the count, truncated), and QuantizedMeanOrSum (the centered sum times a
    fixed-point multiplier into which MEAN folds the count by integer division: exact
    when the folded multiplier stays normalized, else within a step)."""
    q, out = b.quant(0), b.out_quant()
    x = b.value(0).nchw if nchw_axes is not None else b.input(0)
    reduced = nchw_axes if nchw_axes is not None else axes
    count = int(np.prod([b.shape(0)[a] for a in axes]))
    wrap = (lambda y: NCHW(y)) if nchw_axes is not None and keep else (lambda y: y)
    dtype = np.dtype(b.out_tensor().dtype)
    if b.code == "MEAN" and keep and b.rank(0) == 4 and axes == [1, 2]:
        total = b.emit(relay.SumOp(centered(b, x, q), axis=reduced, keepdims=keep))
        scaled = requantize_to_i32(b, total, np.float64(q.scale[0]) / np.float64(out.scale[0]))
        y = divide_away(b, scaled, count)
        y = b.emit(relay.AddOp(y, b.constant(np.float32(out.zero_point[0]))))
        return wrap(saturate(b, y, dtype))
    if b.code == "MEAN" and same_quant(q, out):
        wide = b.emit(relay.CastOp(x, dtype=element_type(np.dtype(np.float32))))
        total = b.emit(relay.SumOp(wide, axis=reduced, keepdims=keep))
        y = b.emit(relay.TruncOp(b.emit(relay.DivideOp(total, b.constant(np.float32(count))))))
        return wrap(saturate(b, y, dtype))
    total = b.emit(relay.SumOp(centered(b, x, q), axis=reduced, keepdims=keep))
    real = np.float64(q.scale[0]) / np.float64(out.scale[0])
    if b.code != "MEAN":
        return wrap(requantize_ratio(b, total, real))
    y = multiply_fixed(b, total, *mean_multiplier(real, count))
    y = b.emit(relay.AddOp(y, b.constant(np.int64(out.zero_point[0]))))
    return wrap(saturate(b, y, dtype))


def mean_multiplier(real: float, count: int) -> tuple[int, int]:
    """QuantizedMeanOrSum's fixed-point multiplier with 1/count folded in:
    ((m << s) // count, e - s) with s = floor(log2 count); the mantissa may fall below
    2^30, which no real scale's QuantizeMultiplier gives (so qnn.requantize cannot say it)."""
    from xrelay.dialects.qnn.base import tflite_multiplier

    mantissa, exponent = (int(v) for v in tflite_multiplier(np.asarray(real)))
    shift = min(count.bit_length() - 1, 32, 31 + exponent)
    return (mantissa << shift) // count, exponent - shift


def multiply_fixed(b: Operator, x: SSAValue, mantissa: int, shift: int) -> SSAValue:
    """MultiplyByQuantizedMultiplier(x, mantissa, shift) in i64 with gemmlowp's double
    rounding (as qnn-legalize lowers `qnn.requantize {rounding = "tflite"}`), for a
    mantissa that is not normalized."""
    i64 = element_type(np.dtype(np.int64))

    def const(v: int) -> SSAValue:
        return b.constant(np.int64(v))

    x = b.emit(relay.CastOp(x, dtype=i64))
    product = b.emit(relay.MultiplyOp(x, const(mantissa << max(shift, 0))))
    zero = const(0)
    positive = b.emit(relay.GreaterEqualOp(product, zero))
    nudge = b.emit(relay.WhereOp(positive, const(1 << 30), const(1 - (1 << 30))))
    total = b.emit(relay.AddOp(product, nudge))
    negative = b.emit(relay.LessOp(total, zero))
    toward_zero = b.emit(relay.WhereOp(negative, const((1 << 31) - 1), zero))
    high = b.emit(relay.RightShiftOp(b.emit(relay.AddOp(total, toward_zero)), const(31)))
    right = max(-shift, 0)
    if right == 0:
        return high
    mask = (1 << right) - 1
    below = b.emit(relay.CastOp(b.emit(relay.LessOp(high, zero)), dtype=i64))
    threshold = b.emit(relay.AddOp(const(mask >> 1), below))
    remainder = b.emit(relay.BitwiseAndOp(high, const(mask)))
    up = b.emit(relay.CastOp(b.emit(relay.GreaterOp(remainder, threshold)), dtype=i64))
    return b.emit(relay.AddOp(b.emit(relay.RightShiftOp(high, const(right))), up))


def requantize_to_i32(b: Operator, acc: SSAValue, ratio: float) -> SSAValue:
    """MultiplyByQuantizedMultiplier(acc, ratio) in i32, no zero point or clamp."""
    return b.emit(
        qnn.RequantizeOp(
            acc,
            b.constant(ratio, np.float64),
            b.constant(0, np.int32),
            b.constant(1.0, np.float32),
            b.constant(0, np.int32),
            out_dtype=i32,
            rounding="tflite",
        )
    )


def divide_away(b: Operator, acc: SSAValue, count: np.ndarray | int) -> SSAValue:
    """C++'s `acc > 0 ? (acc + n / 2) / n : (acc - n / 2) / n` on integers, as f32 (exact:
    the sums are far below 2^24 and a correctly rounded quotient keeps its integer part)."""
    f32 = element_type(np.dtype(np.float32))
    value = acc if acc.type.element_type == f32 else b.emit(relay.CastOp(acc, dtype=f32))
    half = b.constant(np.floor(np.asarray(count, np.float32) / 2))
    nudged = b.emit(relay.AddOp(value, b.emit(relay.MultiplyOp(b.emit(relay.SignOp(value)), half))))
    quotient = b.emit(relay.DivideOp(nudged, b.constant(np.asarray(count, np.float32))))
    return b.emit(relay.TruncOp(quotient))


def saturate(
    b: Operator, y: SSAValue, dtype: np.dtype, lo: int | None = None, hi: int | None = None
):
    info = np.iinfo(dtype)
    lo = int(info.min) if lo is None else lo
    hi = int(info.max) if hi is None else hi
    y = b.emit(relay.ClipOp(y, a_min=float(lo), a_max=float(hi)))
    return b.emit(relay.CastOp(y, dtype=element_type(dtype)))


def average_pool(b: Operator) -> NCHW:
    """AVERAGE_POOL_2D on int8 as TFLite's kernel: the sum of the raw values in the window
    (padding excluded), divided by the count rounding half away from zero, clamped."""
    from xrelay.dialects.dims import shape_of
    from xrelay.frontends.tflite.nn import pool

    if not same_quant(b.quant(0), b.out_quant()):
        return through_float(b)
    f32 = element_type(np.dtype(np.float32))
    wide = b.emit(relay.CastOp(b.input_nchw(0), dtype=f32))
    padded_mean = pool(b, relay.AvgPool2DOp, wide, count_include_pad=True)
    kernel = b.option("FilterHeight") * b.option("FilterWidth")
    counts = window_counts(b, tuple(shape_of(padded_mean.type))[2:])
    window = b.constant(np.float32(kernel))
    total = b.emit(relay.RoundOp(b.emit(relay.MultiplyOp(padded_mean, window))))
    dtype = np.dtype(b.out_tensor().dtype)
    lo, hi = activation_range(b, b.out_quant(), dtype)
    return NCHW(saturate(b, divide_away(b, total, counts), dtype, lo, hi))


def window_counts(b: Operator, out_hw: tuple[int, int]) -> np.ndarray:
    """How many input positions each pooling window covers (its padding excluded), as
    [1, 1, H, W] f32."""
    from xrelay.frontends.tflite.nn import window_pads

    kernel = [b.option("FilterHeight"), b.option("FilterWidth")]
    strides = [b.option("StrideH", 1), b.option("StrideW", 1)]
    sizes = b.shape(0)[1:3]
    pads = window_pads(b, sizes, kernel, strides, [1, 1])
    per_axis = []
    for i in range(2):
        starts = np.arange(out_hw[i]) * strides[i] - pads[i]
        ends = np.minimum(starts + kernel[i], sizes[i])
        per_axis.append(ends - np.maximum(starts, 0))
    return np.outer(*per_axis).astype(np.float32).reshape(1, 1, *out_hw)


SQUARED_DIFFERENCE_SHIFT = 7  # TFLite's headroom for int8 SQUARED_DIFFERENCE


def squared_difference(b: Operator) -> SSAValue | NCHW:
    """SQUARED_DIFFERENCE on int8 as TFLite's kernel: both centered inputs shifted left by 7
    and rescaled by `scale / (2 max(scales))` in fixed point, the difference squared in
    i32, then rescaled by `(2 max(scales))^2 / (2^14 output scale)` to the output."""
    (lhs, rhs), nchw = operands(b)
    lq, rq = b.quant(0), b.quant(1)
    s1, s2 = np.float64(lq.scale[0]), np.float64(rq.scale[0])
    twice_max = 2 * max(s1, s2)
    shift = b.constant(1 << SQUARED_DIFFERENCE_SHIFT, np.int32)
    scaled = []
    for value, q, s in ((lhs, lq, s1), (rhs, rq, s2)):
        wide = b.emit(relay.MultiplyOp(centered(b, value, q), shift))
        scaled.append(requantize_to_i32(b, wide, s / twice_max))
    diff = b.emit(relay.SubtractOp(scaled[0], scaled[1]))
    square = b.emit(relay.MultiplyOp(diff, diff))
    ratio = twice_max * twice_max / ((1 << 2 * SQUARED_DIFFERENCE_SHIFT) * b.out_quant().scale[0])
    y = requantize_ratio(b, square, float(ratio))
    return NCHW(y) if nchw else y


# Hybrid (dynamic-range) operators: a float input, int8 constant weights. TFLite quantizes
# the input on every call (per batch for convolutions, per row for fully connected) and
# multiplies the integers; `hybrid_input` reproduces that quantization, so the operator then
# computes in float on exactly the values TFLite multiplies (dequantized weights), differing
# from it only in the order of float additions.


def hybrid_weight(b: Operator, i: int) -> np.ndarray | None:
    """Constant input `i` dequantized to f32 if it is an int8 weight of a float operator
    (a hybrid operator), else None."""
    t = b.tensor(i)
    if b.dtype(0) != np.float32 or t.quant is None or np.dtype(t.dtype) != np.int8:
        return None
    w = b.const(i)
    shape = [1] * w.ndim
    if t.quant.per_channel:
        shape[t.quant.axis] = -1
    if np.any(t.quant.zero_point != 0):
        raise b.unsupported("a hybrid weight with a non-zero zero point")
    return (w.astype(np.float32) * t.quant.scale.reshape(shape)).astype(np.float32)


def hybrid_asymmetric_conv(b: Operator) -> bool:
    """TFLite's hybrid convolutions quantize their input asymmetrically when the weight
    scales differ per channel (EvalHybridPerChannel), else symmetrically (EvalHybrid)."""
    scale = b.tensor(1).quant.scale
    return bool(scale.size > 1 and np.any(scale != scale[0]))


def hybrid_input(b: Operator, x: SSAValue, axes: list[int], asymmetric: bool) -> SSAValue:
    """`x` (f32) quantized to int8 over each slice spanning `axes` and dequantized, as
    TFLite's AsymmetricQuantizeFloats (scale (max - min) / 255 over a range holding 0, a
    rounded zero point) or SymmetricQuantizeFloats (scale max |x| / 127, values in
    [-127, 127]) do; rounding is half away from zero. An all-zero slice stays zero."""

    def f(v: float) -> SSAValue:
        return b.constant(np.float32(v))

    def reduce(cls: type) -> SSAValue:
        return b.emit(cls(x, axis=axes, keepdims=True))

    if asymmetric:
        lo = b.emit(relay.MinimumOp(reduce(relay.MinOp), f(0.0)))
        hi = b.emit(relay.MaximumOp(reduce(relay.MaxOp), f(0.0)))
        span = b.emit(relay.SubtractOp(hi, lo))
        qmin, qmax = -128.0, 127.0
    else:
        magnitude = b.emit(relay.AbsOp(reduce(relay.MinOp)))
        span = b.emit(relay.MaximumOp(b.emit(relay.AbsOp(reduce(relay.MaxOp))), magnitude))
        qmin, qmax = -127.0, 127.0
    zero = b.emit(relay.EqualOp(span, f(0.0)))
    span = b.emit(relay.WhereOp(zero, f(1.0), span))  # any scale: such slices give 0 below
    scale = b.emit(relay.DivideOp(span, f(qmax - qmin if asymmetric else qmax)))
    # TFLite's inverses: 1 / scale (asymmetric), 127 / range (symmetric)
    if asymmetric:
        inverse = b.emit(relay.DivideOp(f(1.0), scale))
    else:
        inverse = b.emit(relay.DivideOp(f(qmax), span))
    offset = f(0.0)
    if asymmetric:
        low = b.emit(relay.DivideOp(lo, scale))  # in [-255, 0]
        high = b.emit(relay.DivideOp(hi, scale))  # in [0, 255]
        from_min = b.emit(relay.SubtractOp(f(qmin), low))
        from_max = b.emit(relay.SubtractOp(f(qmax), high))
        min_error = b.emit(relay.SubtractOp(f(-qmin), low))  # |qmin| + |lo / scale|
        max_error = b.emit(relay.AddOp(f(qmax), high))
        use_min = b.emit(relay.LessOp(min_error, max_error))
        offset = b.emit(relay.WhereOp(use_min, from_min, from_max))
        offset = b.emit(relay.ClipOp(round_half_away(b, offset), a_min=qmin, a_max=qmax))
    q = b.emit(relay.AddOp(offset, b.emit(relay.MultiplyOp(x, inverse))))
    q = b.emit(relay.ClipOp(round_half_away(b, q), a_min=qmin, a_max=qmax))
    q = b.emit(relay.MultiplyOp(b.emit(relay.SubtractOp(q, offset)), scale))
    return b.emit(relay.WhereOp(zero, f(0.0), q))


def round_half_away(b: Operator, x: SSAValue) -> SSAValue:
    """std::round on f32: sign(x) * floor(|x| + 0.5)."""
    half = b.emit(relay.AddOp(b.emit(relay.AbsOp(x)), b.constant(np.float32(0.5))))
    return b.emit(relay.MultiplyOp(b.emit(relay.SignOp(x)), b.emit(relay.FloorOp(half))))
