"""numpy implementations of the qnn dialect (dialects/qnn/): integer products are exact in
int64, conversions round half to even on f32 values, as onnxruntime does."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from xrelay.dialects import qnn, relay
from xrelay.dialects.dtypes import numpy_dtype
from xrelay.dialects.qnn.base import broadcast_shape, dtype_range, tflite_multiplier
from xrelay.reference.nn import conv
from xrelay.reference.registry import impl


def per_axis(param: np.ndarray, rank: int, axis: int) -> np.ndarray:
    """A scalar or per-channel parameter shaped to broadcast along `axis`."""
    shape = broadcast_shape(rank, axis, param.ndim)
    return param if shape is None else param.reshape(shape)


def saturate(values: np.ndarray, dtype_attr) -> np.ndarray:
    """Rounded f32 values -> the quantized type, clamped to its range."""
    lo, hi = dtype_range(dtype_attr)
    return np.clip(values, lo, hi).astype(numpy_dtype(dtype_attr))


def centered(q: np.ndarray, zero_point: np.ndarray) -> np.ndarray:
    return q.astype(np.int64) - zero_point.astype(np.int64)


def to_real(q: np.ndarray, scale: np.ndarray, zero_point: np.ndarray, axis: int) -> np.ndarray:
    rank = q.ndim
    diff = centered(q, per_axis(zero_point, rank, axis)).astype(np.float32)
    return diff * per_axis(scale, rank, axis).astype(np.float32)


def from_real(x: np.ndarray, scale, zero_point, axis: int, dtype_attr) -> np.ndarray:
    rank = x.ndim
    scaled = np.round(x.astype(np.float32) / per_axis(scale, rank, axis).astype(np.float32))
    return saturate(scaled + per_axis(zero_point, rank, axis).astype(np.float32), dtype_attr)


@impl(qnn.QuantizeOp)
def quantize(op, x, scale, zero_point):
    return from_real(x, scale, zero_point, op.attrs.axis, op.attrs.out_dtype)


@impl(qnn.DequantizeOp)
def dequantize(op, q, scale, zero_point):
    return to_real(q, scale, zero_point, op.attrs.axis)


def requantize_values(acc, in_scale, in_zp, out_scale, out_zp, axis: int, dtype_attr):
    rank = acc.ndim
    multiplier = per_axis(in_scale, rank, axis).astype(np.float32) / np.float32(out_scale)
    diff = centered(acc, per_axis(in_zp, rank, axis)).astype(np.float32)
    return saturate(np.round(diff * multiplier) + np.float32(out_zp), dtype_attr)


def tflite_requantize_values(
    acc, in_scale, in_zp, out_scale, out_zp, axis: int, dtype_attr, single: bool = False
):
    """TFLite's MultiplyByQuantizedMultiplier in int64: gemmlowp's doubling high multiply
    and rounding right shift, or (`single`) one rounding half up,
    `(x * m + 2^(30 - s)) >> (31 - s)`."""
    rank = acc.ndim
    real = np.asarray(in_scale, np.float64) / np.float64(out_scale)
    mantissa, shift = (per_axis(p, rank, axis) for p in tflite_multiplier(real))
    x = centered(acc, per_axis(in_zp, rank, axis))
    if single:
        total_shift = 31 - shift
        rounded = (x * mantissa + (np.int64(1) << (total_shift - 1))) >> total_shift
        return saturate(rounded + np.int64(out_zp), dtype_attr)
    product = x * (np.int64(1) << np.maximum(shift, 0)) * mantissa
    total = product + np.where(product >= 0, 1 << 30, 1 - (1 << 30))
    high = (total + np.where(total < 0, (1 << 31) - 1, 0)) >> 31  # division toward zero
    right = np.maximum(-shift, 0)
    mask = (np.int64(1) << right) - 1
    threshold = (mask >> 1) + (high < 0)
    rounded = (high >> right) + ((high & mask) > threshold)
    return saturate(rounded + np.int64(out_zp), dtype_attr)


@impl(qnn.RequantizeOp)
def requantize(op, acc, in_scale, in_zp, out_scale, out_zp):
    a = op.attrs
    args = (acc, in_scale, in_zp, out_scale, out_zp, a.axis, a.out_dtype)
    if a.rounding == "half_to_even":
        return requantize_values(*args)
    return tflite_requantize_values(*args, single=a.rounding == "tflite_single")


@impl(qnn.Conv2DOp)
def conv2d(op, x, w, x_zp, w_zp, _x_scale, _w_scale):
    layouts = {"data_layout": "NCHW", "kernel_layout": "OIHW"}
    as_conv = SimpleNamespace(SPATIAL="HW", attrs=relay.Attrs({**op.attrs, **layouts}))
    y = conv(as_conv, centered(x, x_zp), centered(w, per_axis(w_zp, 4, 0)))
    return y.astype(np.int32)


@impl(qnn.DenseOp)
def dense(op, x, w, x_zp, w_zp, _x_scale, _w_scale):
    return np.matmul(centered(x, x_zp), centered(w, per_axis(w_zp, 2, 0)).T).astype(np.int32)


@impl(qnn.BatchMatmulOp)
def batch_matmul(op, a, b, a_zp, b_zp, _a_scale, _b_scale):
    return np.matmul(centered(a, a_zp), centered(b, b_zp)).astype(np.int32)


@impl(qnn.AddOp, qnn.MulOp)
def binary(op, a, b, a_scale, a_zp, b_scale, b_zp, y_scale, y_zp):
    ra = centered(a, a_zp).astype(np.float32)
    rb = centered(b, b_zp).astype(np.float32)
    y_scale = np.float32(y_scale)
    if isinstance(op, qnn.AddOp):
        value = ra * (np.float32(a_scale) / y_scale) + rb * (np.float32(b_scale) / y_scale)
    else:
        value = ra * rb * (np.float32(a_scale) * np.float32(b_scale) / y_scale)
    return saturate(np.round(value) + np.float32(y_zp), op.attrs.out_dtype)


@impl(qnn.ConcatenateOp)
def concatenate(op, *arrays):
    n = (len(arrays) - 2) // 3
    data, scales, zps = arrays[:n], arrays[n : 2 * n], arrays[2 * n : 3 * n]
    y_scale, y_zp = arrays[3 * n :]
    dtype = op.results[0].type.element_type
    parts = [
        requantize_values(q, s, z, y_scale, y_zp, -1, dtype) for q, s, z in zip(data, scales, zps)
    ]
    return np.concatenate(parts, axis=op.attrs.axis)


@impl(qnn.GlobalAvgPool2DOp)
def global_avg_pool2d(op, x, x_scale, x_zp, y_scale, y_zp):
    total = centered(x, x_zp).sum(axis=(2, 3), keepdims=True)
    count = x.shape[2] * x.shape[3]
    scale = np.float32(x_scale) / np.float32(count)
    dtype = op.results[0].type.element_type
    return requantize_values(total, scale, np.int32(0), y_scale, y_zp, -1, dtype)
