"""Neural-network relay ops: convolutions, dense/matmul, normalization, pooling, softmax,
pad, lrn, dropout.

Layouts are strings of dimension letters (`NCHW`, `OIHW`, ...); the shape rules read
dimensions by letter, so any permutation of the letters is a valid layout. Padding of an
N-d window op lists the N begin paddings, then the N end paddings (TVM's top, left, bottom,
right for 2-d).
"""

from __future__ import annotations

import math
from abc import ABC
from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, result_def, var_operand_def
from xrelay.dialects import winograd
from xrelay.dialects.dims import shape_of
from xrelay.errors import ShapeError

from .base import (
    Attrs,
    RelayOp,
    bool_prop,
    expect_count,
    expect_float,
    expect_len,
    expect_rank,
    float_prop,
    fmt_type,
    int_prop,
    ints_prop,
    norm_axis,
    ranked,
    same_elem,
    str_prop,
    tensor,
)


def _layout(name: str, attr: str, layout: str, letters: str, rank: int) -> None:
    if sorted(layout) != sorted(letters) or len(layout) != rank:
        raise ShapeError(f"'{name}' {attr} '{layout}' is not a permutation of '{letters}'")


def _window_out(
    name: str,
    size: int,
    kernel: int,
    stride: int,
    pads: tuple[int, int],
    dilation: int,
    ceil_mode: bool = False,
) -> int:
    """Output length of a sliding window (conv, pool) along one spatial dimension."""
    span = dilation * (kernel - 1) + 1
    if stride < 1 or dilation < 1 or kernel < 1:
        raise ShapeError(f"'{name}' needs positive kernel, strides and dilation")
    if size + sum(pads) < span:
        raise ShapeError(
            f"'{name}' window of extent {span} does not fit input of size {size} "
            f"with padding {list(pads)}"
        )
    num = size + sum(pads) - span
    out = (math.ceil(num / stride) if ceil_mode else num // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + pads[0]:
        out -= 1  # the last window must start inside the input or its begin padding
    return out


# --- convolutions --------------------------------------------------------------------------


class ConvOp(RelayOp, ABC):
    """N-d convolution of `data` by `weight` with strides, begin/end padding, dilation and
    groups; the spatial rank is fixed by the concrete op.

    %y = relay.nn.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
        : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
    """

    data = operand_def(TensorType)
    weight = operand_def(TensorType)
    result = result_def(TensorType)

    SPATIAL: ClassVar[str]  # spatial dimension letters, e.g. "HW"

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        data, weight = expect_count(name, types, 2)
        n = len(cls.SPATIAL)
        elem = same_elem(name, [data, weight])
        expect_rank(name, data, n + 2)
        expect_rank(name, weight, n + 2, "weight")
        _layout(name, "data_layout", attrs.data_layout, "NC" + cls.SPATIAL, n + 2)
        _layout(name, "kernel_layout", attrs.kernel_layout, "OI" + cls.SPATIAL, n + 2)
        for attr, count in (("strides", n), ("dilation", n), ("padding", 2 * n)):
            expect_len(name, attr, attrs[attr], count)
        d = dict(zip(attrs.data_layout, shape_of(data)))
        k = dict(zip(attrs.kernel_layout, shape_of(weight)))
        groups = attrs.groups
        if groups < 1 or d["C"] != k["I"] * groups or k["O"] % groups:
            raise ShapeError(
                f"'{name}' channels do not match: data {fmt_type(data)} ({d['C']} channels), "
                f"weight {fmt_type(weight)} ({k['I']} per group), groups {groups}"
            )
        out = {"N": d["N"], "C": k["O"]}
        for i, s in enumerate(cls.SPATIAL):
            pads = (attrs.padding[i], attrs.padding[n + i])
            out[s] = _window_out(name, d[s], k[s], attrs.strides[i], pads, attrs.dilation[i])
        return [tensor([out[c] for c in attrs.data_layout], elem)]


@irdl_op_definition
class Conv1DOp(ConvOp):
    """1-d convolution, layouts NCW / OIW by default."""

    name = "relay.nn.conv1d"
    SPATIAL: ClassVar = "W"
    strides = ints_prop((1,))
    padding = ints_prop((0, 0))
    dilation = ints_prop((1,))
    groups = int_prop(1)
    data_layout = str_prop("NCW")
    kernel_layout = str_prop("OIW")


@irdl_op_definition
class Conv2DOp(ConvOp):
    """2-d convolution, layouts NCHW / OIHW by default."""

    name = "relay.nn.conv2d"
    SPATIAL: ClassVar = "HW"
    strides = ints_prop((1, 1))
    padding = ints_prop((0, 0, 0, 0))
    dilation = ints_prop((1, 1))
    groups = int_prop(1)
    data_layout = str_prop("NCHW")
    kernel_layout = str_prop("OIHW")


@irdl_op_definition
class Conv2DBiasOp(RelayOp):
    """2-d convolution plus a per-output-channel bias, as one fused op (a conv2d followed by
    bias_add on axis 1); only the NCHW / OIHW layouts. It lowers to one loop nest that
    starts each output element from its bias.

    %y = relay.nn.conv2d_bias %x, %w, %b {padding = array<i64: 1, 1, 1, 1>}
        : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
    """

    name = "relay.nn.conv2d_bias"
    data = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = operand_def(TensorType)
    result = result_def(TensorType)
    strides = ints_prop((1, 1))
    padding = ints_prop((0, 0, 0, 0))
    dilation = ints_prop((1, 1))
    groups = int_prop(1)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        data, weight, bias = expect_count(name, types, 3)
        conv_attrs = Attrs(attrs)
        conv_attrs["data_layout"], conv_attrs["kernel_layout"] = "NCHW", "OIHW"
        (out,) = Conv2DOp.infer([data, weight], conv_attrs, name)
        same_elem(name, [data, bias])
        _vector_along(name, out, bias, 1, "bias")
        return [out]


@irdl_op_definition
class Conv3DOp(ConvOp):
    """3-d convolution, layouts NCDHW / OIDHW by default."""

    name = "relay.nn.conv3d"
    SPATIAL: ClassVar = "DHW"
    strides = ints_prop((1, 1, 1))
    padding = ints_prop((0, 0, 0, 0, 0, 0))
    dilation = ints_prop((1, 1, 1))
    groups = int_prop(1)
    data_layout = str_prop("NCDHW")
    kernel_layout = str_prop("OIDHW")


@irdl_op_definition
class Conv2DTransposeOp(ConvOp):
    """Transposed 2-d convolution (the gradient of conv2d); weight layout IOHW, where O is
    the output channels per group.

    %y = relay.nn.conv2d_transpose %x, %w {strides = array<i64: 2, 2>}
        : (tensor<1x4x3x3xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x7x7xf32>
    """

    name = "relay.nn.conv2d_transpose"
    SPATIAL: ClassVar = "HW"
    strides = ints_prop((1, 1))
    padding = ints_prop((0, 0, 0, 0))
    output_padding = ints_prop((0, 0))
    dilation = ints_prop((1, 1))
    groups = int_prop(1)
    data_layout = str_prop("NCHW")
    kernel_layout = str_prop("IOHW")

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        data, weight = expect_count(name, types, 2)
        elem = same_elem(name, [data, weight])
        expect_rank(name, data, 4)
        expect_rank(name, weight, 4, "weight")
        _layout(name, "data_layout", attrs.data_layout, "NCHW", 4)
        _layout(name, "kernel_layout", attrs.kernel_layout, "IOHW", 4)
        for attr, count in (("strides", 2), ("dilation", 2), ("padding", 4), ("output_padding", 2)):
            expect_len(name, attr, attrs[attr], count)
        if min(attrs.padding) < 0 or min(attrs.output_padding) < 0:
            raise ShapeError(f"'{name}' padding and output_padding must not be negative")
        d = dict(zip(attrs.data_layout, shape_of(data)))
        k = dict(zip(attrs.kernel_layout, shape_of(weight)))
        groups = attrs.groups
        if groups < 1 or d["C"] != k["I"] or k["I"] % groups:
            raise ShapeError(
                f"'{name}' channels do not match: data {fmt_type(data)} ({d['C']} channels), "
                f"weight {fmt_type(weight)} ({k['I']} input channels), groups {groups}"
            )
        out = {"N": d["N"], "C": k["O"] * groups}
        for i, s in enumerate("HW"):
            stride, dil = attrs.strides[i], attrs.dilation[i]
            pad = attrs.padding[i] + attrs.padding[2 + i]
            size = (d[s] - 1) * stride - pad + dil * (k[s] - 1) + attrs.output_padding[i] + 1
            if size < 1:
                raise ShapeError(f"'{name}' gives an empty output along {s}")
            out[s] = size
        return [tensor([out[c] for c in attrs.data_layout], elem)]


# --- dense / matmul ------------------------------------------------------------------------


@irdl_op_definition
class DenseOp(RelayOp):
    """`data @ weight.T`: data [..., K], weight [N, K] -> [..., N] (TVM nn.dense).

    %y = relay.nn.dense %x, %w : (tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<8x4xf32>
    """

    name = "relay.nn.dense"
    data = operand_def(TensorType)
    weight = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        data, weight = expect_count(name, types, 2)
        elem = same_elem(name, [data, weight])
        expect_rank(name, weight, 2, "weight")
        if data.get_num_dims() < 1 or shape_of(data)[-1] != shape_of(weight)[1]:
            raise ShapeError(
                f"'{name}' reduction sizes differ: data {fmt_type(data)}, weight {fmt_type(weight)}"
            )
        return [tensor((*shape_of(data)[:-1], shape_of(weight)[0]), elem)]


def _mm_dims(t: TensorType, transpose: bool) -> tuple[int, int]:
    rows, cols = shape_of(t)[-2:]
    return (cols, rows) if transpose else (rows, cols)


class MatmulFamilyOp(RelayOp, ABC):
    """Matrix products with optional transposes, of rank 2 (matmul) or 3 (batch_matmul,
    where a batch of 1 broadcasts)."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    transpose_a = bool_prop(False)
    transpose_b = bool_prop(False)

    RANK: ClassVar[int]

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        lhs, rhs = expect_count(name, types, 2)
        elem = same_elem(name, [lhs, rhs])
        expect_rank(name, lhs, cls.RANK, "lhs")
        expect_rank(name, rhs, cls.RANK, "rhs")
        m, k1 = _mm_dims(lhs, attrs.transpose_a)
        k2, n = _mm_dims(rhs, attrs.transpose_b)
        batch = list(shape_of(lhs)[:-2])
        other = list(shape_of(rhs)[:-2])
        if k1 != k2 or (batch != other and 1 not in batch + other):
            raise ShapeError(f"'{name}' shapes do not match: {fmt_type(lhs)} and {fmt_type(rhs)}")
        return [tensor((*[max(a, b) for a, b in zip(batch, other)], m, n), elem)]


@irdl_op_definition
class MatmulOp(MatmulFamilyOp):
    """2-d matrix product: [M, K] x [K, N] -> [M, N].

    %y = relay.nn.matmul %a, %b {transpose_b = true}
        : (tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<8x4xf32>
    """

    name = "relay.nn.matmul"
    RANK: ClassVar = 2


@irdl_op_definition
class BatchMatmulOp(MatmulFamilyOp):
    """Batched matrix product: [B, M, K] x [B, K, N] -> [B, M, N]; a batch of 1 broadcasts.

    %y = relay.nn.batch_matmul %a, %b
        : (tensor<2x8x16xf32>, tensor<2x16x4xf32>) -> tensor<2x8x4xf32>
    """

    name = "relay.nn.batch_matmul"
    RANK: ClassVar = 3


# --- normalization -------------------------------------------------------------------------


def _vector_along(name: str, data: TensorType, vec: TensorType, axis: int, what: str) -> None:
    if shape_of(vec) != (shape_of(data)[axis],):
        raise ShapeError(
            f"'{name}' {what} {fmt_type(vec)} must be a vector of the size of axis {axis} "
            f"of {fmt_type(data)}"
        )


@irdl_op_definition
class BiasAddOp(RelayOp):
    """Add a bias vector along `axis` (default 1, the channel axis of NCHW).

    %y = relay.nn.bias_add %x, %b : (tensor<1x4x2x2xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
    """

    name = "relay.nn.bias_add"
    data = operand_def(TensorType)
    bias = operand_def(TensorType)
    result = result_def(TensorType)
    axis = int_prop(1)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        data, bias = expect_count(name, types, 2)
        same_elem(name, [data, bias])
        axis = norm_axis(name, attrs.axis, data.get_num_dims())
        _vector_along(name, data, bias, axis, "bias")
        return [data]


@irdl_op_definition
class BatchNormOp(RelayOp):
    """Inference batch norm: `(x - mean) / sqrt(var + epsilon) * gamma + beta` along `axis`.

    %y = relay.nn.batch_norm %x, %g, %b, %m, %v {epsilon = 1.0e-05 : f64}
        : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
        -> tensor<1x4x2x2xf32>
    """

    name = "relay.nn.batch_norm"
    data = operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    moving_mean = operand_def(TensorType)
    moving_var = operand_def(TensorType)
    result = result_def(TensorType)
    axis = int_prop(1)
    epsilon = float_prop(1e-5)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        data, *vectors = expect_count(name, types, 5)
        expect_float(name, data)
        same_elem(name, [data, *vectors])
        axis = norm_axis(name, attrs.axis, data.get_num_dims())
        for what, vec in zip(("gamma", "beta", "moving_mean", "moving_var"), vectors):
            _vector_along(name, data, vec, axis, what)
        return [data]


@irdl_op_definition
class LayerNormOp(RelayOp):
    """Normalize over the trailing axes from `axis` on, then scale by gamma and shift by
    beta, both shaped like those axes (ONNX LayerNormalization).

    %y = relay.nn.layer_norm %x, %g, %b : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>)
        -> tensor<2x8xf32>
    """

    name = "relay.nn.layer_norm"
    data = operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    result = result_def(TensorType)
    axis = int_prop(-1)
    epsilon = float_prop(1e-5)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        data, gamma, beta = expect_count(name, types, 3)
        expect_float(name, data)
        same_elem(name, [data, gamma, beta])
        axis = norm_axis(name, attrs.axis, data.get_num_dims())
        for what, t in (("gamma", gamma), ("beta", beta)):
            if shape_of(t) != shape_of(data)[axis:]:
                raise ShapeError(
                    f"'{name}' {what} {fmt_type(t)} must have the trailing shape "
                    f"{list(shape_of(data)[axis:])} of {fmt_type(data)}"
                )
        return [data]


@irdl_op_definition
class LRNOp(RelayOp):
    """Local response normalization across `size` neighbours along `axis`:
    `x / (bias + alpha / size * sum(x**2)) ** beta`.

    %y = relay.nn.lrn %x {size = 3 : i64} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
    """

    name = "relay.nn.lrn"
    data = operand_def(TensorType)
    result = result_def(TensorType)
    size = int_prop(5)
    axis = int_prop(1)
    alpha = float_prop(1e-4)
    beta = float_prop(0.75)
    bias = float_prop(1.0)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        expect_float(name, data)
        norm_axis(name, attrs.axis, data.get_num_dims())
        if attrs.size < 1:
            raise ShapeError(f"'{name}' size must be positive, got {attrs.size}")
        return [data]


# --- pooling -------------------------------------------------------------------------------


class PoolOp(RelayOp, ABC):
    """N-d pooling window over the spatial dimensions of `layout` (the rank is fixed by the
    concrete op); padding lists begins then ends.

    %y = relay.nn.max_pool2d %x {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}
        : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)

    SPATIAL: ClassVar[str]

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        n = len(cls.SPATIAL)
        expect_rank(name, data, n + 2)
        _layout(name, "layout", attrs.layout, "NC" + cls.SPATIAL, n + 2)
        for attr, count in (("pool_size", n), ("strides", n), ("dilation", n), ("padding", 2 * n)):
            expect_len(name, attr, attrs[attr], count)
        shape = dict(zip(attrs.layout, shape_of(data)))
        for i, s in enumerate(cls.SPATIAL):
            pads = (attrs.padding[i], attrs.padding[n + i])
            shape[s] = _window_out(
                name,
                shape[s],
                attrs.pool_size[i],
                attrs.strides[i],
                pads,
                attrs.dilation[i],
                attrs.ceil_mode,
            )
        return [tensor([shape[c] for c in attrs.layout], data.element_type)]


class Pool1DOp(PoolOp, ABC):
    SPATIAL: ClassVar = "W"
    pool_size = ints_prop()
    strides = ints_prop((1,))
    padding = ints_prop((0, 0))
    dilation = ints_prop((1,))
    ceil_mode = bool_prop(False)
    layout = str_prop("NCW")


class Pool2DOp(PoolOp, ABC):
    SPATIAL: ClassVar = "HW"
    pool_size = ints_prop()
    strides = ints_prop((1, 1))
    padding = ints_prop((0, 0, 0, 0))
    dilation = ints_prop((1, 1))
    ceil_mode = bool_prop(False)
    layout = str_prop("NCHW")


class Pool3DOp(PoolOp, ABC):
    SPATIAL: ClassVar = "DHW"
    pool_size = ints_prop()
    strides = ints_prop((1, 1, 1))
    padding = ints_prop((0, 0, 0, 0, 0, 0))
    dilation = ints_prop((1, 1, 1))
    ceil_mode = bool_prop(False)
    layout = str_prop("NCDHW")


@irdl_op_definition
class MaxPool1DOp(Pool1DOp):
    """1-d maximum over each window; padding never wins."""

    name = "relay.nn.max_pool1d"


@irdl_op_definition
class MaxPool2DOp(Pool2DOp):
    """2-d maximum over each window; padding never wins."""

    name = "relay.nn.max_pool2d"


@irdl_op_definition
class MaxPool3DOp(Pool3DOp):
    """3-d maximum over each window; padding never wins."""

    name = "relay.nn.max_pool3d"


@irdl_op_definition
class AvgPool1DOp(Pool1DOp):
    """1-d mean over each window; `count_include_pad` counts padded cells in the divisor."""

    name = "relay.nn.avg_pool1d"
    count_include_pad = bool_prop(False)


@irdl_op_definition
class AvgPool2DOp(Pool2DOp):
    """2-d mean over each window; `count_include_pad` counts padded cells in the divisor."""

    name = "relay.nn.avg_pool2d"
    count_include_pad = bool_prop(False)


@irdl_op_definition
class AvgPool3DOp(Pool3DOp):
    """3-d mean over each window; `count_include_pad` counts padded cells in the divisor."""

    name = "relay.nn.avg_pool3d"
    count_include_pad = bool_prop(False)


class GlobalPool2DOp(RelayOp, ABC):
    """Pool the whole H x W plane of `layout` to 1 x 1.

    %y = relay.nn.global_avg_pool2d %x : (tensor<1x4x7x7xf32>) -> tensor<1x4x1x1xf32>
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    layout = str_prop("NCHW")

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        expect_rank(name, data, 4)
        _layout(name, "layout", attrs.layout, "NCHW", 4)
        shape = [1 if c in "HW" else d for c, d in zip(attrs.layout, shape_of(data))]
        return [tensor(shape, data.element_type)]


@irdl_op_definition
class GlobalAvgPool2DOp(GlobalPool2DOp):
    """Mean over H x W."""

    name = "relay.nn.global_avg_pool2d"


@irdl_op_definition
class GlobalMaxPool2DOp(GlobalPool2DOp):
    """Maximum over H x W."""

    name = "relay.nn.global_max_pool2d"


# --- softmax, pad, dropout -----------------------------------------------------------------


class AxisFloatOp(RelayOp, ABC):
    """A float op along one axis that keeps the operand's type."""

    data = operand_def(TensorType)
    result = result_def(TensorType)
    axis = int_prop(-1)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        expect_float(name, data)
        norm_axis(name, attrs.axis, data.get_num_dims())
        return [data]


@irdl_op_definition
class SoftmaxOp(AxisFloatOp):
    """`exp(x) / sum(exp(x))` along `axis`.

    %y = relay.nn.softmax %x {axis = 1 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
    """

    name = "relay.nn.softmax"


@irdl_op_definition
class LogSoftmaxOp(AxisFloatOp):
    """`x - log(sum(exp(x)))` along `axis`."""

    name = "relay.nn.log_softmax"


PAD_MODES = ("constant", "edge", "reflect")


@irdl_op_definition
class PadOp(RelayOp):
    """Pad (or, with negative widths, crop) each axis; `pad_width` lists (begin, end) pairs
    per axis, flattened.

    %y = relay.nn.pad %x {pad_width = array<i64: 0, 0, 1, 2>}
        : (tensor<2x3xf32>) -> tensor<2x6xf32>
    """

    name = "relay.nn.pad"
    data = operand_def(TensorType)
    result = result_def(TensorType)
    pad_width = ints_prop()
    pad_value = float_prop(0.0)
    pad_mode = str_prop("constant")

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        rank = data.get_num_dims()
        expect_len(name, "pad_width", attrs.pad_width, 2 * rank)
        if attrs.pad_mode not in PAD_MODES:
            raise ShapeError(f"'{name}' pad_mode '{attrs.pad_mode}' is not one of {PAD_MODES}")
        shape: list[int] = []
        for i, d in enumerate(shape_of(data)):
            begin, end = attrs.pad_width[2 * i], attrs.pad_width[2 * i + 1]
            if d + begin + end < 0 or (attrs.pad_mode == "reflect" and max(begin, end) >= d):
                raise ShapeError(
                    f"'{name}' pad ({begin}, {end}) is invalid for axis {i} of size {d}"
                )
            shape.append(d + begin + end)
        return [tensor(shape, data.element_type)]


# --- Winograd transforms (lowering/winograd_convs.py makes them from 3x3 convolutions) -------


def _winograd_tile(name: str, tile: int) -> int:
    if tile not in winograd.TILES:
        raise ShapeError(f"'{name}' tile {tile} is not one of {list(winograd.TILES)}")
    return tile + 2


@irdl_op_definition
class WinogradInputOp(RelayOp):
    """The input transform of a 3x3 convolution by F(m x m, 3 x 3) (dialects/winograd.py),
    m = `tile`: `data` [N, C, H, W], padded by `padding` (top, left, bottom, right) and
    with zeros past that, is cut into (m+2) x (m+2) tiles at stride m: TH x TW of them
    cover the convolution's OH x OW outputs. Each row of tiles spans m * (TW + 1) padded
    columns and holds one more tile, read from the rows of tiles laid end to end (its
    last two columns are the next row's first two): the row transforms are then one
    contiguous run. Each tile d becomes B^T d B. Result [(m+2)^2, N, C, TH, TW + 1]; the
    extra tiles are scratch that the product skips (their values are unspecified: the
    runtime's transform, lowering/kernels/winograd.py, does not compute them as above).

    %v = relay.nn.winograd_input %x {tile = 4 : i64, padding = array<i64: 1, 1, 1, 1>}
        : (tensor<1x8x8x8xf32>) -> tensor<36x1x8x2x3xf32>
    """

    name = "relay.nn.winograd_input"
    data = operand_def(TensorType)
    result = result_def(TensorType)
    tile = int_prop(4)
    padding = ints_prop((0, 0, 0, 0))

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        expect_rank(name, data, 4)
        expect_float(name, data)
        alpha = _winograd_tile(name, attrs.tile)
        expect_len(name, "padding", attrs.padding, 4)
        n, c, h, w = shape_of(data)
        if not all(isinstance(d, int) for d in (n, c, h, w)):
            raise ShapeError(f"'{name}' needs a static shape, got {fmt_type(data)}")
        if min(attrs.padding) < 0:
            raise ShapeError(f"'{name}' padding {list(attrs.padding)} must not be negative")
        top, left, bottom, right = attrs.padding
        oh = _window_out(name, h, 3, 1, (top, bottom), 1)
        ow = _window_out(name, w, 3, 1, (left, right), 1)
        th, tw = winograd.tile_count(oh, attrs.tile), winograd.tile_count(ow, attrs.tile)
        return [tensor([alpha * alpha, n, c, th, tw + 1], data.element_type)]


@irdl_op_definition
class WinogradOutputOp(RelayOp):
    """The output transform of F(m x m, 3 x 3), m = `tile`: `data` [(m+2)^2, N, K, TH,
    TW] (the products of transformed weights and `winograd_input` tiles, without the
    extra tile of each row) -> each tile's A^T M A, the m x m outputs it covers, cropped to
    `size` = [OH, OW]; then the epilogue the convolution's users folded into it,
    `y * scale[k] + shift[k] (+ residual)`, relu, its operands after `data` in that order
    (`scale`, `shift`, `residual` say which are there). Result [N, K, OH, OW].

    %y = relay.nn.winograd_output %m, %b {tile = 4 : i64, size = array<i64: 8, 8>,
        shift = true, relu = true} : (tensor<36x1x16x2x2xf32>, tensor<16xf32>)
        -> tensor<1x16x8x8xf32>
    """

    name = "relay.nn.winograd_output"
    data = operand_def(TensorType)
    epilogue = var_operand_def(TensorType)
    result = result_def(TensorType)
    tile = int_prop(4)
    size = ints_prop()
    scale = bool_prop(False)
    shift = bool_prop(False)
    residual = bool_prop(False)
    relu = bool_prop(False)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        data, *rest = (ranked(name, t) for t in types)
        expect_rank(name, data, 5)
        expect_float(name, data)
        alpha = _winograd_tile(name, attrs.tile)
        expect_len(name, "size", attrs.size, 2)
        terms, n, k, th, tw = shape_of(data)
        if not all(isinstance(d, int) for d in (terms, n, k, th, tw)):
            raise ShapeError(f"'{name}' needs a static shape, got {fmt_type(data)}")
        oh, ow = attrs.size
        if min(oh, ow) < 1:
            raise ShapeError(f"'{name}' size {[oh, ow]} must be positive")
        tiles = [winograd.tile_count(oh, attrs.tile), winograd.tile_count(ow, attrs.tile)]
        if terms != alpha * alpha or [th, tw] != tiles:
            raise ShapeError(
                f"'{name}' data {fmt_type(data)} is not [{alpha * alpha}, N, K, "
                f"{tiles[0]}, {tiles[1]}] (tile {attrs.tile}, size {[oh, ow]})"
            )
        out = tensor([n, k, oh, ow], data.element_type)
        wanted = [
            (what, shape)
            for what, shape, used in (
                ("scale", [k], attrs.scale),
                ("shift", [k], attrs.shift),
                ("residual", [n, k, oh, ow], attrs.residual),
            )
            if used
        ]
        if len(rest) != len(wanted):
            raise ShapeError(
                f"'{name}' takes {len(wanted)} epilogue operands "
                f"({', '.join(w for w, _ in wanted) or 'none'}), got {len(rest)}"
            )
        for (what, shape), t in zip(wanted, rest):
            if list(shape_of(t)) != shape or t.element_type != data.element_type:
                raise ShapeError(
                    f"'{name}' {what} {fmt_type(t)} is not "
                    f"{fmt_type(tensor(shape, data.element_type))}"
                )
        return [out]


@irdl_op_definition
class DropoutOp(RelayOp):
    """Dropout at inference: the identity.

    %y = relay.nn.dropout %x {rate = 5.0e-01 : f64} : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "relay.nn.dropout"
    data = operand_def(TensorType)
    result = result_def(TensorType)
    rate = float_prop(0.5)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        if not 0.0 <= attrs.rate < 1.0:
            raise ShapeError(f"'{name}' rate {attrs.rate} is not in [0, 1)")
        return [data]


NN_OPS = [
    Conv1DOp,
    Conv2DOp,
    Conv2DBiasOp,
    Conv3DOp,
    Conv2DTransposeOp,
    DenseOp,
    MatmulOp,
    BatchMatmulOp,
    BiasAddOp,
    BatchNormOp,
    LayerNormOp,
    LRNOp,
    MaxPool1DOp,
    MaxPool2DOp,
    MaxPool3DOp,
    AvgPool1DOp,
    AvgPool2DOp,
    AvgPool3DOp,
    GlobalAvgPool2DOp,
    GlobalMaxPool2DOp,
    SoftmaxOp,
    LogSoftmaxOp,
    PadOp,
    WinogradInputOp,
    WinogradOutputOp,
    DropoutOp,
]
