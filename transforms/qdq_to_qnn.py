"""`qdq-to-qnn`: QDQ-format graphs (dequantize -> float op -> quantize, as onnxruntime's
`quantize_static(quant_format=QDQ)` and PT2E produce them) -> qnn ops on integers.

Each rule is sound on its own, so they compose in any order to a fixpoint:

    conv2d / dense / matmul / batch_matmul (dequantize x, dequantize w)
        -> dequantize(qnn.<product>(x, w), x_scale * w_scale, 0)           int32 accumulator
    bias_add / add (dequantize acc, dequantize bias), both int32, same scale, zero points 0
        -> dequantize(acc + bias)
    reshape / transpose / squeeze / expand_dims / batch_flatten (dequantize x), per tensor
        -> dequantize(<shape op>(x))
    max_pool2d (dequantize x), positive scales   -> dequantize(max_pool2d x)
    quantize(dequantize a)             -> qnn.requantize(a)
    quantize(relu(dequantize a))       -> clip(qnn.requantize(a), zero_point, max)
    quantize(add / multiply (dequantize a, dequantize b))  -> qnn.add / qnn.mul
    quantize(concatenate(dequantize ...))                  -> qnn.concatenate
    quantize(global_avg_pool2d(dequantize x))              -> qnn.global_avg_pool2d

What no rule covers keeps its float op between a dequantize and a quantize, which is the
graph's own meaning, so the result is never wrong, only less integer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType, i32
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xrelay.dialects import qnn, relay
from xrelay.dialects.constants import constant_value, equal_constants
from xrelay.dialects.dtypes import dense_from_numpy
from xrelay.dialects.qnn.base import dtype_range
from xrelay.transforms.pattern import PatternCallback, is_constant, is_op, rewrite, wildcard


def _rank(v: SSAValue) -> int:
    assert isinstance(v.type, TensorType)
    return v.type.get_num_dims()


def _elem(v: SSAValue):
    assert isinstance(v.type, TensorType)
    return v.type.element_type


def dq(name: str = "dequantize") -> tuple:
    """A dequantize pattern and its data pattern."""
    data = wildcard()
    return is_op(f"qnn.{name}")(data, wildcard(), wildcard()), data


def per_tensor(op: qnn.DequantizeOp | qnn.QuantizeOp) -> bool:
    return _rank(op.scale) == 0 and _rank(op.zero_point) == 0


def channel_axis(op: qnn.DequantizeOp) -> int | None:
    """The axis of a per-channel dequantize (normalized), None if per tensor."""
    if per_tensor(op):
        return None
    return op.attrs.axis % _rank(op.data)


def is_zero(v: SSAValue) -> bool:
    value = constant_value(v)
    return value is not None and not np.any(value)


class Rule(PatternCallback):
    def constant(self, array: np.ndarray) -> SSAValue:
        return self.emit(relay.ConstantOp(dense_from_numpy(array)))

    def product_scale(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """a * b, computed now when both are constants (so later rules can compare it)."""
        va, vb = constant_value(a), constant_value(b)
        if va is not None and vb is not None:
            return self.constant((va * vb).astype(np.float32))
        return self.emit(relay.MultiplyOp(a, b))

    def accumulator(self, acc: SSAValue, scale: SSAValue, axis: int) -> SSAValue:
        zero = self.constant(np.zeros((), np.int32))
        return self.emit(qnn.DequantizeOp(acc, scale, zero, axis=axis))


def _operands(node_map, pattern):
    return node_map[pattern][0].owner


class ConvOfDequantized(Rule):
    def __init__(self) -> None:
        (self.x, _), (self.w, _) = dq(), dq()
        self.pattern = is_op("nn.conv2d")(self.x, self.w)

    def callback(self, pre, post, node_map):
        conv = pre.owner
        x, w = _operands(node_map, self.x), _operands(node_map, self.w)
        a = conv.attrs
        if (a.data_layout, a.kernel_layout) != ("NCHW", "OIHW") or not per_tensor(x):
            return None
        if channel_axis(w) not in (None, 0):
            return None
        acc = self.emit(
            qnn.Conv2DOp(
                x.data,
                w.data,
                x.zero_point,
                w.zero_point,
                x.scale,
                w.scale,
                strides=a.strides,
                padding=a.padding,
                dilation=a.dilation,
                groups=a.groups,
            )
        )
        return self.accumulator(acc, self.product_scale(x.scale, w.scale), 1)


class MatmulOfDequantized(Rule):
    """dense, matmul (2-d) and batch_matmul of two dequantized operands."""

    def __init__(self) -> None:
        (self.a, _), (self.b, _) = dq(), dq()
        self.pattern = (
            is_op("nn.dense")(self.a, self.b)
            | is_op("nn.matmul")(self.a, self.b)
            | is_op("nn.batch_matmul")(self.a, self.b)
        )

    def callback(self, pre, post, node_map):
        op = pre.owner
        a, b = _operands(node_map, self.a), _operands(node_map, self.b)
        if not per_tensor(a):
            return None
        if isinstance(op, relay.BatchMatmulOp):
            if not per_tensor(b):
                return None
            lhs = self._transposed(a.data, op.attrs.transpose_a, (0, 2, 1))
            rhs = self._transposed(b.data, op.attrs.transpose_b, (0, 2, 1))
            acc = self.emit(
                qnn.BatchMatmulOp(lhs, rhs, a.zero_point, b.zero_point, a.scale, b.scale)
            )
            return self.accumulator(acc, self.product_scale(a.scale, b.scale), -1)
        weight_axis = 0  # of a [N, K] weight
        lhs, rhs = a.data, b.data
        if isinstance(op, relay.MatmulOp):
            lhs = self._transposed(lhs, op.attrs.transpose_a, (1, 0))
            if not op.attrs.transpose_b:  # [K, N] -> [N, K]
                rhs = self._transposed(rhs, True, (1, 0))
                weight_axis = 1
        if channel_axis(b) not in (None, weight_axis):
            return None
        acc = self.emit(qnn.DenseOp(lhs, rhs, a.zero_point, b.zero_point, a.scale, b.scale))
        return self.accumulator(acc, self.product_scale(a.scale, b.scale), -1)

    def _transposed(self, v: SSAValue, transpose: bool, axes: tuple[int, ...]) -> SSAValue:
        return self.emit(relay.TransposeOp(v, axes=axes)) if transpose else v


class BiasIntoAccumulator(Rule):
    def __init__(self) -> None:
        (self.acc, _), (self.bias, _) = dq(), dq()
        self.pattern = is_op("nn.bias_add")(self.acc, self.bias) | is_op("add")(self.acc, self.bias)

    def callback(self, pre, post, node_map):
        op = pre.owner
        acc, bias = _operands(node_map, self.acc), _operands(node_map, self.bias)
        if _elem(acc.data) != i32 or _elem(bias.data) != i32:
            return None
        if not (is_zero(acc.zero_point) and is_zero(bias.zero_point)):
            return None
        if not equal_constants(acc.scale, bias.scale):
            return None
        if pre.type.get_shape() != acc.data.type.get_shape():
            return None
        if isinstance(op, relay.BiasAddOp):
            total = self.emit(relay.BiasAddOp(acc.data, bias.data, axis=op.attrs.axis))
        else:
            total = self.emit(relay.AddOp(acc.data, bias.data))
        return self.emit(qnn.DequantizeOp(total, acc.scale, acc.zero_point, axis=acc.attrs.axis))


SHAPE_OPS = ("reshape", "transpose", "squeeze", "expand_dims", "nn.batch_flatten")


class ShapeOpOfDequantized(Rule):
    def __init__(self) -> None:
        self.x, _ = dq()
        alternatives = [is_op(name)(self.x) for name in SHAPE_OPS]
        pattern = alternatives[0]
        for alt in alternatives[1:]:
            pattern = pattern | alt
        self.pattern = pattern

    def callback(self, pre, post, node_map):
        op = pre.owner
        x = _operands(node_map, self.x)
        axis = -1
        if not per_tensor(x):
            if not isinstance(op, relay.TransposeOp):
                return None
            rank = _rank(x.data)
            perm = list(op.attrs.axes) if op.attrs.axes else list(reversed(range(rank)))
            axis = perm.index(channel_axis(x))
        moved = self.emit(type(op)(x.data, **op.attrs))
        return self.emit(qnn.DequantizeOp(moved, x.scale, x.zero_point, axis=axis))


class MaxPoolOfDequantized(Rule):
    """max_pool2d(dequantize x) -> dequantize(max_pool2d x) when every scale is positive:
    dequantization is then increasing (per channel along axis 1 or per tensor), so the
    maximum of a window is the dequantized maximum of its integers. Padding reads the
    type's lowest value, which no window made of at least one input value returns."""

    def __init__(self) -> None:
        self.x, _ = dq()
        self.pattern = is_op("nn.max_pool2d")(self.x)

    def callback(self, pre, post, node_map):
        op = pre.owner
        x = _operands(node_map, self.x)
        scale = constant_value(x.scale)
        if scale is None or not np.all(scale > 0) or channel_axis(x) not in (None, 1):
            return None
        pooled = self.emit(type(op)(x.data, **op.attrs))
        axis = -1 if per_tensor(x) else 1
        return self.emit(qnn.DequantizeOp(pooled, x.scale, x.zero_point, axis=axis))


class FloatBiasIntoAccumulator(Rule):
    """A float constant bias added to a dequantized int32 accumulator (PT2E keeps conv and
    linear biases in float): quantized to the accumulator's scale and added in int32
    (rounding moves the result by at most half an accumulator unit)."""

    def __init__(self) -> None:
        (self.acc, _) = dq()
        self.bias = is_constant()
        self.pattern = is_op("nn.bias_add")(self.acc, self.bias) | is_op("add")(self.acc, self.bias)

    def callback(self, pre, post, node_map):
        op = pre.owner
        acc = _operands(node_map, self.acc)
        bias = constant_value(node_map[self.bias][0])
        scale = constant_value(acc.scale)
        if _elem(acc.data) != i32 or not is_zero(acc.zero_point) or scale is None:
            return None
        if bias.dtype != np.float32 or pre.type.get_shape() != acc.data.type.get_shape():
            return None
        if scale.ndim == 1 and bias.shape != scale.shape:
            return None
        quantized = np.clip(np.round(bias / scale), -(2**31), 2**31 - 1).astype(np.int32)
        if isinstance(op, relay.BiasAddOp):
            total = self.emit(
                relay.BiasAddOp(acc.data, self.constant(quantized), axis=op.attrs.axis)
            )
        else:
            total = self.emit(relay.AddOp(acc.data, self.constant(quantized)))
        return self.emit(qnn.DequantizeOp(total, acc.scale, acc.zero_point, axis=acc.attrs.axis))


class QuantizeOfDequantized(Rule):
    """quantize(dequantize a) -> requantize; through a relu, clipped at the zero point."""

    def __init__(self) -> None:
        self.x, _ = dq()
        self.pattern = is_op("qnn.quantize")(
            self.x | is_op("nn.relu")(self.x), wildcard(), wildcard()
        )

    def callback(self, pre, post, node_map):
        q = pre.owner
        x = _operands(node_map, self.x)
        relu = isinstance(q.data.owner, relay.ReluOp)
        zp = constant_value(q.zero_point)
        if not per_tensor(q) or (relu and zp is None):
            return None
        dtype = q.attrs.out_dtype
        y = self.emit(
            qnn.RequantizeOp(
                x.data,
                x.scale,
                x.zero_point,
                q.scale,
                q.zero_point,
                axis=x.attrs.axis,
                out_dtype=dtype,
            )
        )
        if not relu:
            return y
        lo, hi = dtype_range(dtype)
        return self.emit(relay.ClipOp(y, a_min=float(max(int(zp), lo)), a_max=float(hi)))


class QuantizedElementwise(Rule):
    """quantize of add / multiply / concatenate / global_avg_pool2d of dequantized values."""

    def __init__(self) -> None:
        self.inner = wildcard()
        self.pattern = is_op("qnn.quantize")(self.inner, wildcard(), wildcard())

    def callback(self, pre, post, node_map):
        q = pre.owner
        op = q.data.owner
        if not per_tensor(q) or not isinstance(
            op,
            relay.AddOp
            | relay.MultiplyOp
            | relay.ConcatenateOp
            | relay.GlobalAvgPool2DOp
            | relay.MeanOp,
        ):
            return None
        if isinstance(op, relay.MeanOp) and not _is_spatial_mean(op):
            return None
        ins = [v.owner for v in op.operands]
        if not all(isinstance(i, qnn.DequantizeOp) and per_tensor(i) for i in ins):
            return None
        if any(_elem(i.data) == i32 for i in ins):
            return None
        dtype = q.attrs.out_dtype
        if isinstance(op, relay.ConcatenateOp):
            if any(_elem(i.data) != dtype for i in ins):
                return None
            return self.emit(
                qnn.ConcatenateOp(
                    *[i.data for i in ins],
                    *[i.scale for i in ins],
                    *[i.zero_point for i in ins],
                    q.scale,
                    q.zero_point,
                    axis=op.attrs.axis,
                )
            )
        if isinstance(op, relay.GlobalAvgPool2DOp | relay.MeanOp):
            (x,) = ins
            if not isinstance(op, relay.MeanOp) and op.attrs.layout != "NCHW":
                return None
            if _elem(x.data) != dtype:
                return None
            return self.emit(
                qnn.GlobalAvgPool2DOp(x.data, x.scale, x.zero_point, q.scale, q.zero_point)
            )
        a, b = ins
        cls = qnn.AddOp if isinstance(op, relay.AddOp) else qnn.MulOp
        return self.emit(
            cls(
                a.data,
                b.data,
                a.scale,
                a.zero_point,
                b.scale,
                b.zero_point,
                q.scale,
                q.zero_point,
                out_dtype=dtype,
            )
        )


def _is_spatial_mean(op: relay.MeanOp) -> bool:
    """A mean over H and W of NCHW data, keeping them (torch's adaptive_avg_pool2d(1))."""
    rank = _rank(op.data)
    axes = sorted(a % rank for a in (op.attrs.axis or ()))
    return rank == 4 and axes == [2, 3] and bool(op.attrs.keepdims)


def qdq_to_qnn_callbacks() -> list[PatternCallback]:
    return [
        ConvOfDequantized(),
        MatmulOfDequantized(),
        BiasIntoAccumulator(),
        FloatBiasIntoAccumulator(),
        ShapeOpOfDequantized(),
        MaxPoolOfDequantized(),
        QuantizedElementwise(),
        QuantizeOfDequantized(),
    ]


def fold_qdq(module: ModuleOp, params: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What frontends run after importing a model with dequantize ops: parameters used as
    scales or zero points of qnn ops become constants (quantization parameters are fixed
    at compile time), then `qdq-to-qnn`. Returns the remaining parameters."""
    from xrelay.signature import FunctionSignature, main_function
    from xrelay.transforms.bind_params import bind_params_by_name

    if not any(isinstance(op, qnn.DequantizeOp) for op in module.walk()):
        return params
    fn = main_function(module)
    names = [a.name for a in FunctionSignature.of(fn).args]
    fixed = set()
    for name, arg in zip(names, fn.body.block.args):
        if name in params and any(
            use.operation.dialect_name() == "qnn" and use.index > 0 for use in arg.uses
        ):
            fixed.add(name)
    bind_params_by_name(module, {n: params[n] for n in fixed})
    rewrite(qdq_to_qnn_callbacks(), module)
    # float biases added to integer accumulators (PT2E): constants too, then fold again
    biases = {
        name
        for name, arg in zip(names, fn.body.block.args)
        if name in params
        and name not in fixed
        and any(_adds_to_accumulator(use.operation) for use in arg.uses)
    }
    if biases:
        bind_params_by_name(module, {n: params[n] for n in biases})
        rewrite(qdq_to_qnn_callbacks(), module)
    return {k: v for k, v in params.items() if k not in fixed | biases}


def _adds_to_accumulator(op) -> bool:
    if not isinstance(op, relay.BiasAddOp | relay.AddOp):
        return False
    return any(
        isinstance(v.owner, qnn.DequantizeOp) and _elem(v.owner.data) == i32 for v in op.operands
    )


@dataclass(frozen=True)
class QdqToQnn(ModulePass):
    """Fold dequantize -> float op -> quantize groups into qnn ops. No options."""

    name = "qdq-to-qnn"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite(qdq_to_qnn_callbacks(), op)
