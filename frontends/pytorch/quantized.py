"""Quantized PyTorch ops -> qnn.

TorchScript from eager-mode quantization (`torch.ao.quantization` prepare/convert, then
`torch.jit.trace`): `aten::quantize_per_tensor`, `aten::dequantize`, `quantized::conv2d`,
`quantized::conv2d_relu`, `quantized::linear`, `quantized::linear_relu`,
`quantized::linear_dynamic`, `quantized::add`, `quantized::add_relu`, `quantized::mul`, and
the aten ops that run on quantized tensors (shape ops, relu, max_pool2d, a 1x1
adaptive_avg_pool2d). A quantized tensor's scale and zero point live in the graph's
builder (`builder.qparams`), as PyTorch keeps them in the tensor; an aten op on a quantized
tensor without a quantized converter is an error, never a float op on integers.

Packed weights are unpacked at import. With `keep_quantized_weight` the int8 weight and
the int32 bias are constants; without it the float weight and bias are constants followed
by `qnn.quantize` (run `qnn-fold-quantize-constants` to fold them). Outputs requantize to
i32, then clip and cast to the 8-bit type (TVM's form; `qnn-remove-clip-after-requantize`
makes it a requantize to the narrow type).

PT2E programs (torchao's `convert_pt2e`): `quantized_decomposed.quantize_per_tensor`,
`dequantize_per_tensor` and `dequantize_per_channel` become qnn.quantize / dequantize;
`xrelay.from_exported_program` then folds the QDQ groups (`qdq-to-qnn`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from xdsl.dialects.builtin import f32, i8, i32
from xdsl.ir import Attribute, SSAValue
from xrelay.dialects import qnn, relay
from xrelay.dialects.dtypes import element_type
from xrelay.dialects.qnn.base import dtype_range
from xrelay.errors import Error
from xrelay.frontends.pytorch.call import Call, to_numpy
from xrelay.frontends.pytorch.registry import Converter, aten_op, functional_kind, lookup

# c10::ScalarType codes of the quantized dtypes
_QDTYPES = {12: i8, 13: qnn.ui8, 14: i32, torch.qint8: i8, torch.quint8: qnn.ui8, torch.qint32: i32}


@dataclass(frozen=True)
class QParams:
    scale: float
    zero_point: int
    dtype: Attribute


def qdtype(c: Call, key: str) -> Attribute:
    value = c.value(key)
    if value not in _QDTYPES:
        raise c.unsupported(f"quantized dtype {value}")
    return _QDTYPES[value]


def params_of(c: Call, key: int | str) -> tuple[SSAValue, QParams]:
    value = c.tensor(key)
    qp = c.builder.qparams.get(value)
    if qp is None:
        raise c.error(f"argument '{key}' is not a quantized tensor")
    return value, qp


def checked(
    c: Call, scale: Any, zero_point: Any, dtype: Attribute
) -> tuple[np.ndarray, np.ndarray]:
    scale = np.asarray(scale, np.float32)
    zp = np.asarray(zero_point, np.int64)
    if scale.shape != zp.shape:
        raise c.error(
            f"per-channel scales ({scale.size}) and zero points ({zp.size}) differ in length"
        )
    qnn.check_params(scale, zp, dtype, f"PyTorch op {c.label}")
    return scale, zp.astype(np.int32)


def record(c: Call, value: SSAValue, scale: float, zp: int, dtype: Attribute) -> SSAValue:
    checked(c, scale, zp, dtype)
    c.builder.qparams[value] = QParams(float(scale), int(zp), dtype)
    return value


def scalar_params(c: Call, qp: QParams) -> tuple[SSAValue, SSAValue]:
    return c.constant(np.float32(qp.scale)), c.constant(np.int32(qp.zero_point))


# --- quantize / dequantize -------------------------------------------------------------------


@aten_op("quantize_per_tensor")
def quantize_per_tensor(c: Call) -> SSAValue:
    dtype = qdtype(c, "dtype")
    scale, zp = c.float("scale"), c.int("zero_point")
    s, z = checked(c, scale, zp, dtype)
    y = c.emit(
        qnn.QuantizeOp(c.tensor("self", np.float32), c.constant(s), c.constant(z), out_dtype=dtype)
    )
    return record(c, y, scale, zp, dtype)


@aten_op("dequantize")
def dequantize(c: Call) -> SSAValue:
    x, qp = params_of(c, 0)
    return c.emit(qnn.DequantizeOp(x, *scalar_params(c, qp)))


# --- packed weights ----------------------------------------------------------------------------


def _weight(c: Call, w: torch.Tensor) -> tuple[SSAValue, np.ndarray, np.ndarray]:
    """A quantized weight as (SSA int8 weight, scales, zero points); per-channel along 0."""
    if w.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        scales, zps = np.float32(w.q_scale()), np.int64(w.q_zero_point())
    elif w.qscheme() in (torch.per_channel_affine, torch.per_channel_symmetric):
        if w.q_per_channel_axis() != 0:
            raise c.unsupported(f"weight quantized along axis {w.q_per_channel_axis()}")
        scales = to_numpy(w.q_per_channel_scales().float())
        zps = to_numpy(w.q_per_channel_zero_points())
    else:
        raise c.unsupported(f"weight quantization scheme {w.qscheme()}")
    scales, zps = checked(c, scales, zps, i8)
    if c.builder.keep_quantized_weight:
        return c.constant(to_numpy(w.int_repr())), scales, zps
    real = c.constant(to_numpy(w.dequantize()))
    q = qnn.QuantizeOp(real, c.constant(scales), c.constant(zps), axis=0, out_dtype=i8)
    return c.emit(q), scales, zps


def _bias(c: Call, bias: torch.Tensor | None, scale: np.ndarray) -> SSAValue | None:
    """The float bias in the accumulator's scale (input scale x weight scale) as int32."""
    if bias is None:
        return None
    real = to_numpy(bias.detach().float())
    scale = np.broadcast_to(scale, real.shape).astype(np.float32)
    zero = np.zeros(real.shape, np.int32)
    if c.builder.keep_quantized_weight:
        values = np.clip(np.round(real / scale), *dtype_range(i32)).astype(np.int32)
        return c.constant(values)
    q = qnn.QuantizeOp(c.constant(real), c.constant(scale), c.constant(zero), axis=0, out_dtype=i32)
    return c.emit(q)


def _output(c: Call, acc: SSAValue, acc_scale: np.ndarray, axis: int, relu: bool, qp_in: QParams):
    """requantize to i32 with the op's output scale and zero point, clip (at the zero point
    for a fused relu) and cast to the input's 8-bit type."""
    out_scale, out_zp = c.float(2), c.int(3)
    dtype = qp_in.dtype
    checked(c, out_scale, out_zp, dtype)
    y = c.emit(
        qnn.RequantizeOp(
            acc,
            c.constant(acc_scale),
            c.constant(np.int32(0)),
            c.constant(np.float32(out_scale)),
            c.constant(np.int32(out_zp)),
            axis=axis,
            out_dtype=i32,
        )
    )
    lo, hi = dtype_range(dtype)
    y = c.emit(relay.ClipOp(y, a_min=float(max(lo, out_zp) if relu else lo), a_max=float(hi)))
    return record(c, c.emit(relay.CastOp(y, dtype=dtype)), out_scale, out_zp, dtype)


@aten_op("conv2d", "conv2d_relu", namespace="quantized")
def quantized_conv2d(c: Call) -> SSAValue:
    x, qp = params_of(c, 0)
    packed = c.raw(1)
    ops = torch.ops.quantized
    if ops.conv2d_transpose(packed):
        raise c.unsupported("quantized transposed convolution")
    w, bias = ops.conv2d_unpack(packed)
    weight, w_scales, w_zps = _weight(c, w)
    acc_scale = (np.float32(qp.scale) * w_scales).astype(np.float32)
    pad = [int(p) for p in ops.conv2d_padding(packed)]
    xs, xz = scalar_params(c, qp)
    acc = c.emit(
        qnn.Conv2DOp(
            x,
            weight,
            xz,
            c.constant(w_zps),
            xs,
            c.constant(w_scales),
            strides=[int(s) for s in ops.conv2d_stride(packed)],
            padding=pad + pad,
            dilation=[int(d) for d in ops.conv2d_dilation(packed)],
            groups=int(ops.conv2d_groups(packed)),
        )
    )
    b = _bias(c, bias, acc_scale)
    if b is not None:
        acc = c.emit(relay.BiasAddOp(acc, b, axis=1))
    return _output(c, acc, acc_scale, 1, c.name.endswith("_relu"), qp)


@aten_op("linear", "linear_relu", namespace="quantized")
def quantized_linear(c: Call) -> SSAValue:
    x, qp = params_of(c, 0)
    w, bias = torch.ops.quantized.linear_unpack(c.raw(1))
    weight, w_scales, w_zps = _weight(c, w)
    acc_scale = (np.float32(qp.scale) * w_scales).astype(np.float32)
    xs, xz = scalar_params(c, qp)
    acc = c.emit(qnn.DenseOp(x, weight, xz, c.constant(w_zps), xs, c.constant(w_scales)))
    b = _bias(c, bias, acc_scale)
    if b is not None:
        acc = c.emit(relay.BiasAddOp(acc, b, axis=-1))
    return _output(c, acc, acc_scale, -1, c.name.endswith("_relu"), qp)


@aten_op("linear_dynamic", namespace="quantized")
def quantized_linear_dynamic(c: Call) -> SSAValue:
    """Float in, float out: the input is quantized to uint8 at run time over its range
    (with 0 included; 7 bits with `reduce_range`), multiplied in integers, scaled back
    and the float bias added, as fbgemm's dynamic linear does."""
    x = c.tensor(0, np.float32)
    qmax = 127 if c.value("reduce_range", False) else 255
    w, bias = torch.ops.quantized.linear_unpack(c.raw(1))
    weight, w_scales, w_zps = _weight(c, w)
    zero = c.constant(np.float32(0))
    hi = c.emit(relay.MaximumOp(c.emit(relay.MaxOp(x)), zero))
    lo = c.emit(relay.MinimumOp(c.emit(relay.MinOp(x)), zero))
    span = c.emit(relay.SubtractOp(hi, lo))
    scale = c.emit(relay.DivideOp(span, c.constant(np.float32(qmax))))
    scale = c.emit(
        relay.WhereOp(c.emit(relay.EqualOp(span, zero)), c.constant(np.float32(0.1)), scale)
    )
    zp = c.emit(relay.RoundOp(c.emit(relay.DivideOp(c.emit(relay.NegativeOp(lo)), scale))))
    zp = c.emit(relay.CastOp(c.emit(relay.ClipOp(zp, a_min=0.0, a_max=float(qmax))), dtype=i32))
    xq = c.emit(qnn.QuantizeOp(x, scale, zp, out_dtype=qnn.ui8))
    ws = c.constant(w_scales)
    acc = c.emit(qnn.DenseOp(xq, weight, zp, c.constant(w_zps), scale, ws))
    acc_scale = c.emit(relay.MultiplyOp(scale, ws))
    y = c.emit(relay.MultiplyOp(c.emit(relay.CastOp(acc, dtype=f32)), acc_scale))
    if bias is not None:
        y = c.emit(relay.AddOp(y, c.constant(to_numpy(bias.detach().float()))))
    return y


@aten_op("add", "add_relu", "mul", "mul_relu", namespace="quantized")
def quantized_binary(c: Call) -> SSAValue:
    a, qa = params_of(c, 0)
    b, qb = params_of(c, 1)
    out_scale, out_zp = c.float(2), c.int(3)
    dtype = qa.dtype
    checked(c, out_scale, out_zp, dtype)
    cls = qnn.AddOp if c.name.startswith("add") else qnn.MulOp
    y = c.emit(
        cls(
            a,
            b,
            *scalar_params(c, qa),
            *scalar_params(c, qb),
            c.constant(np.float32(out_scale)),
            c.constant(np.int32(out_zp)),
            out_dtype=dtype,
        )
    )
    if c.name.endswith("_relu"):
        y = c.emit(relay.ClipOp(y, a_min=float(out_zp), a_max=float(dtype_range(dtype)[1])))
    return record(c, y, out_scale, out_zp, dtype)


# --- aten ops on quantized tensors ------------------------------------------------------------


def _same_params(float_converter: Converter) -> Converter:
    """An op that moves or selects quantized values (a reshape, a max pool): the float
    converter on the integers, with the input's parameters on the result."""

    def convert(c: Call) -> SSAValue:
        _, qp = params_of(c, 0)
        y = float_converter(c)
        c.builder.qparams[y] = qp
        return y

    return convert


def quantized_relu(c: Call) -> SSAValue:
    x, qp = params_of(c, 0)
    y = c.emit(relay.ClipOp(x, a_min=float(qp.zero_point), a_max=float(dtype_range(qp.dtype)[1])))
    c.builder.qparams[y] = qp
    return y


def quantized_adaptive_avg_pool2d(c: Call) -> SSAValue:
    x, qp = params_of(c, 0)
    if c.ints(1) not in ([1, 1], [1]) or c.rank(0) != 4:
        raise c.unsupported("adaptive_avg_pool2d of a quantized tensor to a size other than 1x1")
    s, z = scalar_params(c, qp)
    y = c.emit(qnn.GlobalAvgPool2DOp(x, s, z, s, z))
    c.builder.qparams[y] = qp
    return y


SAME_PARAMS = (
    "flatten",
    "reshape",
    "view",
    "contiguous",
    "squeeze",
    "unsqueeze",
    "transpose",
    "permute",
    "max_pool2d",
    "clone",
    "detach",
)


def quantized_converter(c_builder: Any, kind: str, inputs: list[Any]) -> Converter | None:
    """The converter of an aten op whose first tensor input is quantized: a quantized
    one, or an error naming the op when it has none."""
    if not kind.startswith("aten::") or not inputs:
        return None
    first = inputs[0]
    if not isinstance(first, SSAValue) or first not in c_builder.qparams:
        return None
    name = functional_kind(kind).split("::", 1)[1]
    if name == "dequantize":
        return dequantize
    if name == "relu":
        return quantized_relu
    if name == "adaptive_avg_pool2d":
        return quantized_adaptive_avg_pool2d
    if name in SAME_PARAMS:
        base = lookup(kind)
        if base is not None:
            return _same_params(base)
    raise Error(f"PyTorch op '{kind}' on a quantized tensor is not supported")


# --- PT2E: quantized_decomposed ----------------------------------------------------------------


def _pt2e_dtype(c: Call) -> tuple[Attribute, tuple[int, int]]:
    dtype = element_type(np.dtype(str(c.value("dtype")).removeprefix("torch.")))
    return dtype, (c.int("quant_min"), c.int("quant_max"))


def _narrowed(c: Call, y: SSAValue, dtype: Attribute, bounds: tuple[int, int]) -> SSAValue:
    """Clamp to [quant_min, quant_max] when that is narrower than the dtype."""
    if bounds == dtype_range(dtype):
        return y
    return c.emit(relay.ClipOp(y, a_min=float(bounds[0]), a_max=float(bounds[1])))


def _pt2e_params(c: Call, dtype: Attribute, per_channel: bool) -> tuple[SSAValue, SSAValue]:
    if per_channel:
        scale, zp = c.raw("scales"), c.raw("zero_points")
    else:
        scale, zp = c.raw("scale"), c.raw("zero_point")
    if isinstance(scale, SSAValue) or isinstance(zp, SSAValue):
        s = c.tensor("scales" if per_channel else "scale", np.float32)
        z = c.tensor("zero_points" if per_channel else "zero_point", np.int32)
        return s, z
    s = to_numpy(scale).astype(np.float32) if isinstance(scale, torch.Tensor) else scale
    z = to_numpy(zp).astype(np.int64) if isinstance(zp, torch.Tensor) else zp
    s, z = checked(c, s, z, dtype)
    return c.constant(s), c.constant(z)


@aten_op("quantize_per_tensor", namespace="quantized_decomposed")
def pt2e_quantize_per_tensor(c: Call) -> SSAValue:
    dtype, bounds = _pt2e_dtype(c)
    s, z = _pt2e_params(c, dtype, False)
    y = c.emit(qnn.QuantizeOp(c.tensor("input", np.float32), s, z, out_dtype=dtype))
    return _narrowed(c, y, dtype, bounds)


@aten_op("dequantize_per_tensor", namespace="quantized_decomposed")
def pt2e_dequantize_per_tensor(c: Call) -> SSAValue:
    dtype, _ = _pt2e_dtype(c)
    s, z = _pt2e_params(c, dtype, False)
    return c.emit(qnn.DequantizeOp(c.tensor("input"), s, z))


@aten_op("dequantize_per_channel", namespace="quantized_decomposed")
def pt2e_dequantize_per_channel(c: Call) -> SSAValue:
    dtype, _ = _pt2e_dtype(c)
    s, z = _pt2e_params(c, dtype, True)
    axis = c.int("axis") % c.rank("input")
    return c.emit(qnn.DequantizeOp(c.tensor("input"), s, z, axis=axis))
