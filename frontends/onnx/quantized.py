"""ONNX quantized ops -> qnn: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger, and onnxruntime's com.microsoft
QLinearAdd, QLinearMul, QGemm, QLinearConcat and QLinearGlobalAveragePool.

Scales and zero points known at import time (initializers, even when weights stay
parameters) are checked (finite non-zero scales, zero points in range, per-axis lengths)
and emitted as constants: f32 scales, i32 zero points, as qnn expects. QDQ groups are
folded into qnn ops after import by the `qdq-to-qnn` pass (`xrelay.from_onnx(fold_qdq=True)`).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f32, i32
from xdsl.ir import SSAValue
from xrelay.dialects import qnn, relay
from xrelay.dialects.dims import prod
from xrelay.dialects.dtypes import element_type, keeps_bits, narrow_dtype, storage_dtype
from xrelay.dialects.qnn.base import QUANTIZED_TYPES
from xrelay.frontends.onnx import narrow
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.nn import window_pads
from xrelay.frontends.onnx.registry import onnx_op

MS = "com.microsoft"


def quantized_dtype(b: Node, dtype: np.dtype, what: str):
    try:
        elem = element_type(dtype)
    except Exception:  # noqa: BLE001 - float8/int4 have no numpy dtype here
        elem = None
    if elem not in QUANTIZED_TYPES:
        raise b.unsupported(f"{what} of type {dtype}")
    return elem


def zero_point(b: Node, i: int | None, dtype: np.dtype, channels: int | None = None) -> SSAValue:
    """Input i as an i32 zero point (0 when absent); a known value is checked against
    `dtype`'s range and the axis length."""
    if i is None or not b.has_input(i):
        return b.constant(np.zeros((), np.int32))
    if not b.is_const(i):
        return _runtime_param(b, i, i32)
    zp = _squeeze_single(np.asarray(b.const(i)).astype(np.int64))
    _check_length(b, "zero point", zp, channels)
    qnn.check_params(np.ones(()), zp, dtype, f"ONNX node '{b.name}' ({b.op_type})")
    return b.constant(zp.astype(np.int32))


def _runtime_param(b: Node, i: int, elem) -> SSAValue:
    """A scale or zero point computed at run time, as `elem`; one element is a scalar."""
    value = b.input(i)
    if b.shape(i) == (1,):
        value = b.emit(relay.ReshapeOp(value, newshape=()))
    return value if b.type(i).element_type == elem else b.emit(relay.CastOp(value, dtype=elem))


def _squeeze_single(value: np.ndarray) -> np.ndarray:
    """A one-element vector is a per-tensor parameter."""
    return value.reshape(()) if value.ndim == 1 and value.size == 1 else value


def _check_length(b: Node, what: str, value: np.ndarray, channels: int | None) -> None:
    if value.ndim == 0:
        return
    if value.ndim > 1 or channels is None:
        raise b.unsupported(f"{what} of shape {list(value.shape)} (scalar or per-axis only)")
    if value.size != channels:
        raise b.error(
            f"per-axis {what} has {value.size} entries but the axis has {channels} elements"
        )


def params(
    b: Node, scale_i: int, zp_i: int | None, dtype: np.dtype, channels: int | None = None
) -> tuple[SSAValue, SSAValue]:
    """(scale as f32, zero point as i32) of inputs scale_i and zp_i; `channels` is the
    axis length a per-axis pair must have (None: per tensor only)."""
    zp = zero_point(b, zp_i, dtype, channels)
    if not b.is_const(scale_i):
        return _runtime_param(b, scale_i, f32), zp
    scale = _squeeze_single(np.asarray(b.const(scale_i), np.float32))
    _check_length(b, "scale", scale, channels)
    qnn.check_params(scale, np.zeros((), np.int64), dtype, f"ONNX node '{b.name}' ({b.op_type})")
    return b.constant(scale), zp


def axis_of(b: Node, rank: int, scale_i: int) -> tuple[int, int | None]:
    """(axis, its length) of a per-axis op; the axis only matters for per-axis
    parameters (a scale with more than one element)."""
    axis = int(b.attr("axis", 1))
    if -rank <= axis < rank:
        return axis % rank, b.shape(0)[axis]
    if int(np.prod(b.shape(scale_i))) > 1:
        raise b.error(f"axis {axis} is out of range for rank {rank}")
    return -1, None


def _no_blocks(b: Node) -> None:
    if b.attr("block_size", 0):
        raise b.unsupported("blocked quantization (block_size)")


def as_f32(b: Node, i: int) -> SSAValue:
    x = b.input(i)
    return x if b.dtype(i) == np.float32 else b.emit(relay.CastOp(x, dtype=f32))


def _along_axis(b: Node, i: int, value: SSAValue, rank: int, axis: int) -> SSAValue:
    """A scale or zero point (input i, as `value`) shaped to broadcast against input 0:
    a per-axis vector runs along `axis`."""
    size = int(np.prod(b.shape(i)))
    if size == 1:
        return b.emit(relay.ReshapeOp(value, newshape=()))
    shape = [1] * rank
    shape[axis] = size
    return b.emit(relay.ReshapeOp(value, newshape=tuple(shape)))


def _quantize_narrow(b: Node, dtype: np.dtype) -> SSAValue:
    """QuantizeLinear to a float8/float4 type (x / scale + zero point, rounded to the type;
    `saturate` for float8) or a 2/4-bit integer (round half to even, add the zero point,
    clip to the type's range)."""
    axis, _ = axis_of(b, b.rank(0), 1)
    rank = b.rank(0)
    scale = _along_axis(b, 1, as_f32(b, 1), rank, axis)
    y = b.emit(relay.DivideOp(as_f32(b, 0), scale))
    b.narrow_outputs[0] = dtype
    if keeps_bits(dtype):
        if b.has_input(2):
            zp = _along_axis(b, 2, narrow.decode(b, b.input(2), dtype), rank, axis)
            y = b.emit(relay.AddOp(y, zp))
        saturate = bool(b.attr("saturate", 1)) and dtype.name.startswith("float8")
        return narrow.encode(b, y, dtype, saturate)
    y = b.emit(relay.RoundOp(y))
    if b.has_input(2):
        zp = b.emit(relay.CastOp(b.input(2), dtype=f32))
        y = b.emit(relay.AddOp(y, _along_axis(b, 2, zp, rank, axis)))
    bits = narrow.INT_BITS[dtype.name]
    lo, hi = (
        (0, (1 << bits) - 1)
        if dtype.name.startswith("u")
        else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    )
    y = b.emit(relay.ClipOp(y, a_min=float(lo), a_max=float(hi)))
    return b.emit(relay.CastOp(y, dtype=element_type(storage_dtype(dtype))))


def _dequantize_narrow_float(b: Node, dtype: np.dtype) -> SSAValue:
    """DequantizeLinear of a float8/float4 input: (x - zero point) * scale in f32."""
    axis, _ = axis_of(b, b.rank(0), 1)
    rank = b.rank(0)
    x = narrow.decode(b, b.input(0), dtype)
    if b.has_input(2):
        zp = narrow.decode(b, b.input(2), b.narrow(2) or dtype)
        x = b.emit(relay.SubtractOp(x, _along_axis(b, 2, zp, rank, axis)))
    y = b.emit(relay.MultiplyOp(x, _along_axis(b, 1, as_f32(b, 1), rank, axis)))
    out = b.dtype(1)
    return y if out == np.float32 else b.emit(relay.CastOp(y, dtype=element_type(out)))


@onnx_op("QuantizeLinear", since=10)
def quantize_linear(b: Node) -> SSAValue:
    _no_blocks(b)
    if b.has_input(2):
        dtype = b.narrow(2) or b.dtype(2)
    else:
        code = int(b.attr("output_dtype", 0))
        dtype = np.dtype(np.uint8) if code == 0 else _onnx_dtype(b, code)
    if narrow_dtype(dtype) is not None:
        return _quantize_narrow(b, dtype)
    elem = quantized_dtype(b, dtype, "QuantizeLinear output")
    axis, channels = axis_of(b, b.rank(0), 1)
    scale, zp = params(b, 1, 2, dtype, channels)
    return b.emit(qnn.QuantizeOp(as_f32(b, 0), scale, zp, axis=axis, out_dtype=elem))


def _onnx_dtype(b: Node, code: int) -> np.dtype:
    import onnx

    try:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(code))
    except Exception:  # noqa: BLE001
        raise b.unsupported(f"output_dtype {code}") from None


@onnx_op("DequantizeLinear", since=10)
def dequantize_linear(b: Node) -> SSAValue:
    _no_blocks(b)
    dtype = b.narrow(0)
    if dtype is not None and keeps_bits(dtype):
        return _dequantize_narrow_float(b, dtype)
    dtype = b.dtype(0)  # the 2/4-bit integers are their values in i8/ui8
    quantized_dtype(b, dtype, "DequantizeLinear input")
    axis, channels = axis_of(b, b.rank(0), 1)
    scale, zp = params(b, 1, 2, dtype, channels)
    y = b.emit(qnn.DequantizeOp(b.input(0), scale, zp, axis=axis))
    out = b.dtype(1)
    if out != np.float32:
        y = b.emit(relay.CastOp(y, dtype=element_type(out)))
    return y


@onnx_op("DynamicQuantizeLinear", since=11)
def dynamic_quantize_linear(b: Node) -> list[SSAValue]:
    """uint8 with scale (max(0, max x) - min(0, min x)) / 255 and zero point
    round(-min(0, min x) / scale), saturated; a zero range gives scale 0 and zero point 0
    as the ONNX reference does (every value then quantizes to 0)."""
    x = as_f32(b, 0)
    zero = b.constant(np.zeros((), np.float32))
    hi = b.emit(relay.MaximumOp(b.emit(relay.MaxOp(x)), zero))
    lo = b.emit(relay.MinimumOp(b.emit(relay.MinOp(x)), zero))
    scale = b.emit(relay.DivideOp(b.emit(relay.SubtractOp(hi, lo)), b.constant(np.float32(255))))
    safe = b.emit(
        relay.WhereOp(b.emit(relay.EqualOp(scale, zero)), b.constant(np.float32(1)), scale)
    )
    zp_f = b.emit(relay.RoundOp(b.emit(relay.DivideOp(b.emit(relay.NegativeOp(lo)), safe))))
    zp_f = b.emit(relay.ClipOp(zp_f, a_min=0.0, a_max=255.0))
    zp = b.emit(relay.CastOp(zp_f, dtype=i32))
    y = b.emit(qnn.QuantizeOp(x, safe, zp, out_dtype=qnn.ui8))
    return [y, scale, b.emit(relay.CastOp(zp, dtype=qnn.ui8))]


def _requantize(b: Node, acc: SSAValue, in_scale: SSAValue, axis: int, ys: int, yz: int):
    dtype = b.dtype(yz)
    out_scale, out_zp = params(b, ys, yz, dtype)
    zero = b.constant(np.zeros((), np.int32))
    return b.emit(
        qnn.RequantizeOp(
            acc,
            in_scale,
            zero,
            out_scale,
            out_zp,
            axis=axis,
            out_dtype=quantized_dtype(b, dtype, "output"),
        )
    )


def _product_scale(b: Node, a: SSAValue, w: SSAValue) -> SSAValue:
    return b.emit(relay.MultiplyOp(a, w))


def _conv(b: Node, x_i: int, w_i: int, xz: tuple, wz: tuple) -> tuple[SSAValue, SSAValue]:
    """qnn.conv2d of inputs x_i, w_i with (scale, zero point) pairs; returns (acc, scale)."""
    if b.rank(x_i) != 4:
        raise b.unsupported(f"{b.rank(x_i) - 2}-d quantized convolution")
    w_shape = b.shape(w_i)
    kernel = list(b.attr("kernel_shape", w_shape[2:]))
    strides = list(b.attr("strides", [1, 1]))
    dilations = list(b.attr("dilations", [1, 1]))
    pads = window_pads(b, b.shape(x_i)[2:], kernel, strides, dilations)
    x_scale, x_zp = xz
    w_scale, w_zp = wz
    acc = b.emit(
        qnn.Conv2DOp(
            b.input(x_i),
            b.input(w_i),
            x_zp,
            w_zp,
            x_scale,
            w_scale,
            strides=strides,
            padding=pads,
            dilation=dilations,
            groups=int(b.attr("group", 1)),
        )
    )
    return acc, _product_scale(b, x_scale, w_scale)


@onnx_op("QLinearConv", since=10)
def qlinear_conv(b: Node) -> SSAValue:
    xz = params(b, 1, 2, b.dtype(0))
    wz = params(b, 4, 5, b.dtype(3), b.shape(3)[0])
    acc, scale = _conv(b, 0, 3, xz, wz)
    if b.has_input(8):
        acc = b.emit(relay.BiasAddOp(acc, b.input(8), axis=1))
    return _requantize(b, acc, scale, 1, 6, 7)


@onnx_op("ConvInteger", since=10)
def conv_integer(b: Node) -> SSAValue:
    one = b.constant(np.ones((), np.float32))
    xz = (one, zero_point(b, 2, b.dtype(0)))
    wz = (one, zero_point(b, 3, b.dtype(1), b.shape(1)[0]))
    return _conv(b, 0, 1, xz, wz)[0]


def _matmul(b: Node, a_i: int, w_i: int, az: tuple, wz: tuple) -> SSAValue:
    """numpy-style matmul of two quantized inputs into an i32 accumulator: qnn.dense when
    the right operand is 2-d (transposed to [N, K]), else qnn.batch_matmul on 3-d."""
    a, w = b.input(a_i), b.input(w_i)
    a_scale, a_zp = az
    w_scale, w_zp = wz
    if b.rank(w_i) == 2 and b.rank(a_i) >= 1:
        wt = b.emit(relay.TransposeOp(w, axes=(1, 0)))
        if b.rank(a_i) == 1:
            a = b.emit(relay.ReshapeOp(a, newshape=(1, b.shape(a_i)[0])))
        acc = b.emit(qnn.DenseOp(a, wt, a_zp, w_zp, a_scale, w_scale))
        if b.rank(a_i) == 1:
            acc = b.emit(relay.ReshapeOp(acc, newshape=(b.shape(w_i)[1],)))
        return acc
    a_shape, w_shape = b.shape(a_i), b.shape(w_i)
    if len(a_shape) == len(w_shape) >= 3 and a_shape[:-2] == w_shape[:-2]:
        batch = prod(a_shape[:-2])
        a3 = b.emit(relay.ReshapeOp(a, newshape=(batch, *a_shape[-2:])))
        w3 = b.emit(relay.ReshapeOp(w, newshape=(batch, *w_shape[-2:])))
        acc = b.emit(qnn.BatchMatmulOp(a3, w3, a_zp, w_zp, a_scale, w_scale))
        out = (*a_shape[:-1], w_shape[-1])
        return acc if len(a_shape) == 3 else b.emit(relay.ReshapeOp(acc, newshape=out))
    raise b.unsupported(f"quantized matmul of ranks {b.rank(a_i)} and {b.rank(w_i)}")


@onnx_op("QLinearMatMul", since=10)
def qlinear_matmul(b: Node) -> SSAValue:
    az = params(b, 1, 2, b.dtype(0))
    channels = b.shape(3)[-1] if b.rank(3) == 2 else None
    wz = params(b, 4, 5, b.dtype(3), channels)
    acc = _matmul(b, 0, 3, az, wz)
    scale = _product_scale(b, az[0], wz[0])
    return _requantize(b, acc, scale, -1, 6, 7)


@onnx_op("MatMulInteger", since=10)
def matmul_integer(b: Node) -> SSAValue:
    one = b.constant(np.ones((), np.float32))
    channels = b.shape(1)[-1] if b.rank(1) == 2 else None
    az = (one, zero_point(b, 2, b.dtype(0)))
    wz = (one, zero_point(b, 3, b.dtype(1), channels))
    return _matmul(b, 0, 1, az, wz)


def _binary(b: Node, cls) -> SSAValue:
    a_scale, a_zp = params(b, 1, 2, b.dtype(0))
    b_scale, b_zp = params(b, 4, 5, b.dtype(3))
    y_scale, y_zp = params(b, 6, 7, b.dtype(0))
    return b.emit(
        cls(
            b.input(0),
            b.input(3),
            a_scale,
            a_zp,
            b_scale,
            b_zp,
            y_scale,
            y_zp,
            out_dtype=element_type(b.dtype(0)),
        )
    )


@onnx_op("QLinearAdd", since=1, domain=MS)
def qlinear_add(b: Node) -> SSAValue:
    return _binary(b, qnn.AddOp)


@onnx_op("QLinearMul", since=1, domain=MS)
def qlinear_mul(b: Node) -> SSAValue:
    return _binary(b, qnn.MulOp)


@onnx_op("QLinearGlobalAveragePool", since=1, domain=MS)
def qlinear_global_average_pool(b: Node) -> SSAValue:
    if b.attr("channels_last", 0):
        raise b.unsupported("channels_last")
    if b.rank(0) != 4:
        raise b.unsupported(f"rank-{b.rank(0)} QLinearGlobalAveragePool")
    x_scale, x_zp = params(b, 1, 2, b.dtype(0))
    y_scale, y_zp = params(b, 3, 4, b.dtype(0))
    return b.emit(qnn.GlobalAvgPool2DOp(b.input(0), x_scale, x_zp, y_scale, y_zp))


@onnx_op("QLinearConcat", since=1, domain=MS)
def qlinear_concat(b: Node) -> SSAValue:
    y_scale, y_zp = params(b, 0, 1, b.dtype(2))
    groups = [(2 + 3 * i, 3 + 3 * i, 4 + 3 * i) for i in range((b.n_inputs - 2) // 3)]
    data = [b.input(x) for x, _, _ in groups]
    pairs = [params(b, s, z, b.dtype(x)) for x, s, z in groups]
    axis = b.axis(b.attr("axis"), b.rank(2))
    return b.emit(
        qnn.ConcatenateOp(
            *data, *[p[0] for p in pairs], *[p[1] for p in pairs], y_scale, y_zp, axis=axis
        )
    )


@onnx_op("QGemm", since=1, domain=MS)
def qgemm(b: Node) -> SSAValue:
    """alpha * A' B' + C with quantized A and B, an int32 C in scale a_scale * b_scale, and
    a quantized output (y_scale given) or a float one."""
    if b.rank(0) != 2 or b.rank(3) != 2:
        raise b.unsupported("QGemm on operands that are not 2-d")
    a = b.input(0)
    if b.attr("transA", 0):
        a = b.emit(relay.TransposeOp(a, axes=(1, 0)))
    w = b.input(3)
    trans_b = bool(b.attr("transB", 0))
    n = b.shape(3)[0] if trans_b else b.shape(3)[1]
    az = params(b, 1, 2, b.dtype(0))
    wz = params(b, 4, 5, b.dtype(3), n)
    if not trans_b:
        w = b.emit(relay.TransposeOp(w, axes=(1, 0)))
    acc = b.emit(qnn.DenseOp(a, w, az[1], wz[1], az[0], wz[0]))
    if b.has_input(6):
        acc = b.emit(relay.AddOp(acc, b.input(6)))
    scale = _product_scale(b, az[0], wz[0])
    alpha = float(b.attr("alpha", 1.0))
    if alpha != 1.0:
        scale = b.emit(relay.MultiplyOp(scale, b.constant(np.float32(alpha))))
    if b.has_input(7):
        return _requantize(b, acc, scale, -1, 7, 8)
    real = b.emit(relay.CastOp(acc, dtype=f32))
    return b.emit(relay.MultiplyOp(real, scale))


def _through_float(b: Node, make) -> SSAValue:
    """x, x_scale, x_zp, y_scale, y_zp: dequantize, the float op, quantize (for ops whose
    integer kernels in onnxruntime are lookup tables of the same float function)."""
    dtype = b.dtype(0)
    x_scale, x_zp = params(b, 1, 2, dtype)
    y_scale, y_zp = params(b, 3, 4, dtype)
    real = b.emit(qnn.DequantizeOp(b.input(0), x_scale, x_zp))
    return b.emit(qnn.QuantizeOp(make(real), y_scale, y_zp, out_dtype=element_type(dtype)))


@onnx_op("QLinearSoftmax", since=1, domain=MS)
def qlinear_softmax(b: Node) -> SSAValue:
    if int(b.attr("opset", 13)) < 13:
        raise b.unsupported("QLinearSoftmax with opset < 13 (coerced 2-d softmax)")
    axis = int(b.attr("axis", -1))
    return _through_float(b, lambda x: b.emit(relay.SoftmaxOp(x, axis=axis)))


@onnx_op("QLinearSigmoid", since=1, domain=MS)
def qlinear_sigmoid(b: Node) -> SSAValue:
    return _through_float(b, lambda x: b.emit(relay.SigmoidOp(x)))
