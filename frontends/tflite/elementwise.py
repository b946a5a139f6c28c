"""TFLite elementwise builtins -> relay: arithmetic with broadcasting, comparisons,
activations, unary math, casts. They keep a channels-first input channels-first (constant
operands are transposed at import time), so they never break a chain of convolutions."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dtypes import element_type
from xrelay.frontends.tflite import quantized
from xrelay.frontends.tflite.binder import NCHW, Operator, operands
from xrelay.frontends.tflite.registry import tflite_op


def elementwise(b: Operator, fn: Callable[[list[SSAValue]], SSAValue]) -> SSAValue | NCHW:
    values, nchw = operands(b)
    y = fn(values)
    return NCHW(y) if nchw else y


BINARY: dict[str, tuple[type, Callable]] = {
    "ADD": (relay.AddOp, np.add),
    "SUB": (relay.SubtractOp, np.subtract),
    "MUL": (relay.MultiplyOp, np.multiply),
    "DIV": (relay.DivideOp, None),
    "MAXIMUM": (relay.MaximumOp, np.maximum),
    "MINIMUM": (relay.MinimumOp, np.minimum),
    "POW": (relay.PowerOp, np.power),
    "FLOOR_DIV": (relay.FloorDivideOp, np.floor_divide),
    "FLOOR_MOD": (relay.FloorModOp, np.mod),
    "LESS": (relay.LessOp, np.less),
    "LESS_EQUAL": (relay.LessEqualOp, np.less_equal),
    "GREATER": (relay.GreaterOp, np.greater),
    "GREATER_EQUAL": (relay.GreaterEqualOp, np.greater_equal),
    "EQUAL": (relay.EqualOp, np.equal),
    "NOT_EQUAL": (relay.NotEqualOp, np.not_equal),
    "LOGICAL_AND": (relay.LogicalAndOp, np.logical_and),
    "LOGICAL_OR": (relay.LogicalOrOp, np.logical_or),
}


def _fold_divide(a: np.ndarray, c: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu":  # TFLite's integer DIV truncates
        return (np.trunc(a / c)).astype(a.dtype)
    return np.divide(a, c).astype(a.dtype)


@tflite_op(*BINARY)
def binary(b: Operator) -> SSAValue | NCHW | np.ndarray:
    cls, fold = BINARY[b.code]
    if b.all_known():
        fold = fold or _fold_divide
        result = fold(b.const(0), b.const(1))
        return result.astype(b.const(0).dtype) if result.dtype != np.bool_ else result
    if b.quant(0) is not None and b.code in ("ADD", "SUB", "MUL"):
        return quantized.binary(b)
    if b.quant(0) is not None:
        return quantized.through_float(b)
    return elementwise(b, lambda v: b.activation(b.emit(cls(v[0], v[1]))))


@tflite_op("SQUARED_DIFFERENCE")
def squared_difference(b: Operator) -> SSAValue | NCHW:
    def fn(v: list[SSAValue]) -> SSAValue:
        d = b.emit(relay.SubtractOp(v[0], v[1]))
        return b.emit(relay.MultiplyOp(d, d))

    if b.quant(0) is not None:
        return quantized.squared_difference(b)
    return elementwise(b, fn)


UNARY: dict[str, Callable[[Operator, SSAValue], SSAValue]] = {
    "RELU": lambda b, x: b.emit(relay.ReluOp(x)),
    "RELU6": lambda b, x: b.emit(relay.ClipOp(x, a_min=0.0, a_max=6.0)),
    "RELU_N1_TO_1": lambda b, x: b.emit(relay.ClipOp(x, a_min=-1.0, a_max=1.0)),
    "RELU_0_TO_1": lambda b, x: b.emit(relay.ClipOp(x, a_min=0.0, a_max=1.0)),
    "LOGISTIC": lambda b, x: b.emit(relay.SigmoidOp(x)),
    "TANH": lambda b, x: b.emit(relay.TanhOp(x)),
    "EXP": lambda b, x: b.emit(relay.ExpOp(x)),
    "LOG": lambda b, x: b.emit(relay.LogOp(x)),
    "SQRT": lambda b, x: b.emit(relay.SqrtOp(x)),
    "RSQRT": lambda b, x: b.emit(relay.RsqrtOp(x)),
    "ABS": lambda b, x: b.emit(relay.AbsOp(x)),
    "NEG": lambda b, x: b.emit(relay.NegativeOp(x)),
    "FLOOR": lambda b, x: b.emit(relay.FloorOp(x)),
    "CEIL": lambda b, x: b.emit(relay.CeilOp(x)),
    "SIN": lambda b, x: b.emit(relay.SinOp(x)),
    "COS": lambda b, x: b.emit(relay.CosOp(x)),
    "LOGICAL_NOT": lambda b, x: b.emit(relay.LogicalNotOp(x)),
    "SQUARE": lambda b, x: b.emit(relay.MultiplyOp(x, x)),
    "HARD_SWISH": lambda b, x: hard_swish(b, x),
    "GELU": lambda b, x: gelu(b, x),
    "LEAKY_RELU": lambda b, x: b.emit(relay.LeakyReluOp(x, alpha=b.option("Alpha", 0.2))),
}

# unary builtins that commute with quantization: computed on the integers directly
ON_INTEGERS = ("RELU", "RELU6", "RELU_N1_TO_1")


def hard_swish(b: Operator, x: SSAValue) -> SSAValue:
    """x * relu6(x + 3) / 6"""
    shifted = b.emit(relay.AddOp(x, b.constant(np.float32(3.0))))
    gate = b.emit(relay.ClipOp(shifted, a_min=0.0, a_max=6.0))
    scaled = b.emit(relay.MultiplyOp(gate, b.constant(np.float32(1.0 / 6.0))))
    return b.emit(relay.MultiplyOp(x, scaled))


def gelu(b: Operator, x: SSAValue) -> SSAValue:
    """0.5 x (1 + erf(x / sqrt 2)), or the tanh approximation with `approximate`."""
    half = b.emit(relay.MultiplyOp(x, b.constant(np.float32(0.5))))
    if b.option("Approximate", False):
        cube = b.emit(relay.MultiplyOp(b.emit(relay.MultiplyOp(x, x)), x))
        inner = b.emit(
            relay.AddOp(x, b.emit(relay.MultiplyOp(cube, b.constant(np.float32(0.044715)))))
        )
        t = b.emit(
            relay.TanhOp(
                b.emit(relay.MultiplyOp(inner, b.constant(np.float32(np.sqrt(2 / np.pi)))))
            )
        )
        return b.emit(relay.MultiplyOp(half, b.emit(relay.AddOp(t, b.constant(np.float32(1.0))))))
    e = b.emit(relay.ErfOp(b.emit(relay.MultiplyOp(x, b.constant(np.float32(1 / np.sqrt(2)))))))
    return b.emit(relay.MultiplyOp(half, b.emit(relay.AddOp(e, b.constant(np.float32(1.0))))))


@tflite_op(*UNARY)
def unary(b: Operator) -> SSAValue | NCHW:
    fn = UNARY[b.code]
    if b.quant(0) is not None:
        if b.code in ON_INTEGERS:
            return quantized.clamp_activation(b)
        return quantized.through_float(b)
    return elementwise(b, lambda v: fn(b, v[0]))


@tflite_op("PRELU")
def prelu(b: Operator) -> SSAValue | NCHW:
    def fn(v: list[SSAValue]) -> SSAValue:
        negative = b.emit(relay.MultiplyOp(v[0], v[1]))
        positive = b.emit(relay.GreaterOp(v[0], b.constant(np.zeros((), b.dtype(0)))))
        return b.emit(relay.WhereOp(positive, v[0], negative))

    if b.quant(0) is not None:
        return quantized.through_float(b)
    return elementwise(b, fn)


@tflite_op("CAST")
def cast(b: Operator) -> SSAValue | NCHW | np.ndarray:
    dtype = np.dtype(b.out_tensor().dtype)
    if b.all_known():
        return b.const(0).astype(dtype)
    return elementwise(b, lambda v: b.emit(relay.CastOp(v[0], dtype=element_type(dtype))))
