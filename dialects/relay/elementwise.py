"""Elementwise relay ops: binary arithmetic with numpy broadcasting, comparisons, logical
ops, `where`, unary math, activations, `clip` and `cast`.

`UNARY_TABLE` (at the bottom) has one row per attribute-free unary op: what it computes on
numpy arrays and the math-dialect op (and libm function) its lowering emits. The reference
executor, relay-to-linalg and to-llvm read it, so a new unary op is its class and its row."""

from __future__ import annotations

from abc import ABC
from collections.abc import Callable
from dataclasses import dataclass
from math import erf as _scalar_erf
from typing import ClassVar

import numpy as np
from xdsl.dialects import math
from xdsl.dialects.builtin import IntegerType, TensorType, i1
from xdsl.ir import Attribute, Operation
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Commutative, Pure
from xrelay.dialects.dims import shape_of
from xrelay.errors import ShapeError

from .base import (
    Attrs,
    RelayCanonicalization,
    RelayOp,
    broadcast,
    expect_count,
    expect_float,
    float_prop,
    fmt_type,
    int_prop,
    is_bool,
    is_float,
    norm_axis,
    same_elem,
    tensor,
    type_prop,
)

# --- binary --------------------------------------------------------------------------------


class ElementwiseBinaryOp(RelayOp, ABC):
    """`lhs op rhs` with numpy broadcasting; both operands have one element type, which the
    result keeps (comparisons give i1).

        %r = relay.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    """

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    RESULT_IS_BOOL: ClassVar[bool] = False
    OPERANDS_ARE_BOOL: ClassVar[bool] = False

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        lhs, rhs = expect_count(name, types, 2)
        elem = same_elem(name, [lhs, rhs])
        if cls.OPERANDS_ARE_BOOL and not is_bool(elem):
            raise ShapeError(f"'{name}' expects i1 operands, got {fmt_type(lhs)}")
        shape = broadcast(name, [lhs, rhs])
        return [tensor(shape, i1 if cls.RESULT_IS_BOOL else elem)]


class CompareOp(ElementwiseBinaryOp, ABC):
    RESULT_IS_BOOL: ClassVar = True


class LogicalBinaryOp(ElementwiseBinaryOp, ABC):
    RESULT_IS_BOOL: ClassVar = True
    OPERANDS_ARE_BOOL: ClassVar = True


@irdl_op_definition
class AddOp(ElementwiseBinaryOp):
    """Elementwise sum."""

    name = "relay.add"
    traits = traits_def(Pure(), Commutative(), RelayCanonicalization())


@irdl_op_definition
class SubtractOp(ElementwiseBinaryOp):
    """Elementwise difference."""

    name = "relay.subtract"


@irdl_op_definition
class MultiplyOp(ElementwiseBinaryOp):
    """Elementwise product."""

    name = "relay.multiply"
    traits = traits_def(Pure(), Commutative(), RelayCanonicalization())


@irdl_op_definition
class DivideOp(ElementwiseBinaryOp):
    """Elementwise quotient; integer division truncates toward zero (C, ONNX Div)."""

    name = "relay.divide"


@irdl_op_definition
class PowerOp(ElementwiseBinaryOp):
    """Elementwise `lhs ** rhs`."""

    name = "relay.power"


@irdl_op_definition
class MaximumOp(ElementwiseBinaryOp):
    """Elementwise maximum (NaN propagates)."""

    name = "relay.maximum"
    traits = traits_def(Pure(), Commutative(), RelayCanonicalization())


@irdl_op_definition
class MinimumOp(ElementwiseBinaryOp):
    """Elementwise minimum (NaN propagates)."""

    name = "relay.minimum"
    traits = traits_def(Pure(), Commutative(), RelayCanonicalization())


@irdl_op_definition
class FloorDivideOp(ElementwiseBinaryOp):
    """Elementwise `floor(lhs / rhs)`."""

    name = "relay.floor_divide"


@irdl_op_definition
class FloorModOp(ElementwiseBinaryOp):
    """Elementwise remainder with the sign of the divisor (Python `%`, ONNX Mod fmod=0)."""

    name = "relay.floor_mod"


class IntegerBinaryOp(ElementwiseBinaryOp, ABC):
    """An elementwise op on integers (not bools): shifts and bitwise logic."""

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        result = super().infer(types, attrs, name)
        elem = types[0].element_type  # type: ignore[union-attr]
        if is_float(elem) or is_bool(elem):
            raise ShapeError(f"'{name}' expects integer operands, got {fmt_type(types[0])}")
        return result


class ShiftOp(IntegerBinaryOp, ABC):
    """A bit shift of integers by per-element amounts (numpy broadcasting); a shift by the
    bit width or more gives 0 (or, right-shifting a negative signed value, -1)."""


@irdl_op_definition
class BitwiseAndOp(IntegerBinaryOp):
    """Elementwise `lhs & rhs` of integers."""

    name = "relay.bitwise_and"
    traits = traits_def(Pure(), Commutative(), RelayCanonicalization())


@irdl_op_definition
class BitwiseOrOp(IntegerBinaryOp):
    """Elementwise `lhs | rhs` of integers."""

    name = "relay.bitwise_or"
    traits = traits_def(Pure(), Commutative(), RelayCanonicalization())


@irdl_op_definition
class BitwiseXorOp(IntegerBinaryOp):
    """Elementwise `lhs ^ rhs` of integers."""

    name = "relay.bitwise_xor"
    traits = traits_def(Pure(), Commutative(), RelayCanonicalization())


@irdl_op_definition
class LeftShiftOp(ShiftOp):
    """Elementwise `lhs << rhs` (TVM left_shift, ONNX BitShift LEFT).

    %r = relay.left_shift %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
    """

    name = "relay.left_shift"


@irdl_op_definition
class RightShiftOp(ShiftOp):
    """Elementwise `lhs >> rhs`: logical for unsigned types, arithmetic for signed ones."""

    name = "relay.right_shift"


@irdl_op_definition
class ModOp(ElementwiseBinaryOp):
    """Elementwise remainder with the sign of the dividend (C `fmod`, ONNX Mod fmod=1)."""

    name = "relay.mod"


@irdl_op_definition
class EqualOp(CompareOp):
    """Elementwise `lhs == rhs` -> i1."""

    name = "relay.equal"
    traits = traits_def(Pure(), Commutative(), RelayCanonicalization())


@irdl_op_definition
class NotEqualOp(CompareOp):
    """Elementwise `lhs != rhs` -> i1."""

    name = "relay.not_equal"
    traits = traits_def(Pure(), Commutative(), RelayCanonicalization())


@irdl_op_definition
class LessOp(CompareOp):
    """Elementwise `lhs < rhs` -> i1."""

    name = "relay.less"


@irdl_op_definition
class LessEqualOp(CompareOp):
    """Elementwise `lhs <= rhs` -> i1."""

    name = "relay.less_equal"


@irdl_op_definition
class GreaterOp(CompareOp):
    """Elementwise `lhs > rhs` -> i1."""

    name = "relay.greater"


@irdl_op_definition
class GreaterEqualOp(CompareOp):
    """Elementwise `lhs >= rhs` -> i1."""

    name = "relay.greater_equal"


@irdl_op_definition
class LogicalAndOp(LogicalBinaryOp):
    """Elementwise `and` of i1 tensors."""

    name = "relay.logical_and"
    traits = traits_def(Pure(), Commutative(), RelayCanonicalization())


@irdl_op_definition
class LogicalOrOp(LogicalBinaryOp):
    """Elementwise `or` of i1 tensors."""

    name = "relay.logical_or"
    traits = traits_def(Pure(), Commutative(), RelayCanonicalization())


@irdl_op_definition
class LogicalXorOp(LogicalBinaryOp):
    """Elementwise `xor` of i1 tensors."""

    name = "relay.logical_xor"
    traits = traits_def(Pure(), Commutative(), RelayCanonicalization())


@irdl_op_definition
class WhereOp(RelayOp):
    """`cond ? lhs : rhs` elementwise, all three broadcast together.

    %r = relay.where %c, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    """

    name = "relay.where"
    condition = operand_def(TensorType)
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        cond, lhs, rhs = expect_count(name, types, 3)
        if not is_bool(cond.element_type):
            raise ShapeError(f"'{name}' expects an i1 condition, got {fmt_type(cond)}")
        elem = same_elem(name, [lhs, rhs])
        return [tensor(broadcast(name, [cond, lhs, rhs]), elem)]


# --- unary ---------------------------------------------------------------------------------


class UnaryOp(RelayOp, ABC):
    """`op(data)` elementwise; the result has the operand's type.

    %r = relay.exp %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)

    FLOAT_ONLY: ClassVar[bool] = True

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        if cls.FLOAT_ONLY:
            expect_float(name, data)
        return [data]


class NumericUnaryOp(UnaryOp, ABC):
    """A unary op defined on integers as well as floats."""

    FLOAT_ONLY: ClassVar = False


@irdl_op_definition
class BitwiseNotOp(UnaryOp):
    """Elementwise `~x` of integers (every bit flipped)."""

    name = "relay.bitwise_not"
    FLOAT_ONLY: ClassVar = False

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = super().infer(types, attrs, name)
        if is_float(data.element_type) or is_bool(data.element_type):  # type: ignore[union-attr]
            raise ShapeError(f"'{name}' expects integer operands, got {fmt_type(data)}")
        return [data]


@irdl_op_definition
class NegativeOp(NumericUnaryOp):
    """Elementwise `-x`."""

    name = "relay.negative"


@irdl_op_definition
class AbsOp(NumericUnaryOp):
    """Elementwise `|x|`."""

    name = "relay.abs"


@irdl_op_definition
class SignOp(NumericUnaryOp):
    """Elementwise sign: -1, 0 or 1."""

    name = "relay.sign"


@irdl_op_definition
class LogicalNotOp(UnaryOp):
    """Elementwise `not` of an i1 tensor."""

    name = "relay.logical_not"
    FLOAT_ONLY: ClassVar = False

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        if not is_bool(data.element_type):
            raise ShapeError(f"'{name}' expects an i1 operand, got {fmt_type(data)}")
        return [data]


@irdl_op_definition
class IsNanOp(UnaryOp):
    """Elementwise `x != x` of a float tensor -> i1.

    %r = relay.isnan %x : (tensor<4xf32>) -> tensor<4xi1>
    """

    name = "relay.isnan"

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        expect_float(name, data)
        return [tensor(shape_of(data), i1)]


@irdl_op_definition
class ExpOp(UnaryOp):
    """Elementwise `e**x`."""

    name = "relay.exp"


@irdl_op_definition
class LogOp(UnaryOp):
    """Elementwise natural logarithm."""

    name = "relay.log"


@irdl_op_definition
class SqrtOp(UnaryOp):
    """Elementwise square root."""

    name = "relay.sqrt"


@irdl_op_definition
class RsqrtOp(UnaryOp):
    """Elementwise `1 / sqrt(x)`."""

    name = "relay.rsqrt"


@irdl_op_definition
class ReciprocalOp(UnaryOp):
    """Elementwise `1 / x`."""

    name = "relay.reciprocal"


@irdl_op_definition
class TanhOp(UnaryOp):
    """Elementwise hyperbolic tangent."""

    name = "relay.tanh"


@irdl_op_definition
class SigmoidOp(UnaryOp):
    """Elementwise `1 / (1 + exp(-x))`."""

    name = "relay.sigmoid"


@irdl_op_definition
class ErfOp(UnaryOp):
    """Elementwise Gauss error function."""

    name = "relay.erf"


@irdl_op_definition
class AsinOp(UnaryOp):
    """Elementwise inverse sine."""

    name = "relay.asin"


@irdl_op_definition
class AcosOp(UnaryOp):
    """Elementwise inverse cosine."""

    name = "relay.acos"


@irdl_op_definition
class AtanOp(UnaryOp):
    """Elementwise inverse tangent."""

    name = "relay.atan"


@irdl_op_definition
class AsinhOp(UnaryOp):
    """Elementwise inverse hyperbolic sine."""

    name = "relay.asinh"


@irdl_op_definition
class AcoshOp(UnaryOp):
    """Elementwise inverse hyperbolic cosine."""

    name = "relay.acosh"


@irdl_op_definition
class AtanhOp(UnaryOp):
    """Elementwise inverse hyperbolic tangent."""

    name = "relay.atanh"


@irdl_op_definition
class FloorOp(UnaryOp):
    """Elementwise round toward -inf."""

    name = "relay.floor"


@irdl_op_definition
class CeilOp(UnaryOp):
    """Elementwise round toward +inf."""

    name = "relay.ceil"


@irdl_op_definition
class RoundOp(UnaryOp):
    """Elementwise round half to even (numpy, ONNX Round)."""

    name = "relay.round"


@irdl_op_definition
class SinOp(UnaryOp):
    """Elementwise sine."""

    name = "relay.sin"


@irdl_op_definition
class CosOp(UnaryOp):
    """Elementwise cosine."""

    name = "relay.cos"


@irdl_op_definition
class TanOp(UnaryOp):
    """Elementwise tangent."""

    name = "relay.tan"


@irdl_op_definition
class Log1pOp(UnaryOp):
    """Elementwise `log(1 + x)`, accurate for small x."""

    name = "relay.log1p"


@irdl_op_definition
class Log2Op(UnaryOp):
    """Elementwise base-2 logarithm."""

    name = "relay.log2"


@irdl_op_definition
class Log10Op(UnaryOp):
    """Elementwise base-10 logarithm."""

    name = "relay.log10"


@irdl_op_definition
class Expm1Op(UnaryOp):
    """Elementwise `exp(x) - 1`, accurate for small x."""

    name = "relay.expm1"


@irdl_op_definition
class TruncOp(UnaryOp):
    """Elementwise round toward zero."""

    name = "relay.trunc"


@irdl_op_definition
class ReluOp(NumericUnaryOp):
    """Elementwise `max(x, 0)`."""

    name = "relay.nn.relu"


@irdl_op_definition
class LeakyReluOp(UnaryOp):
    """Elementwise `x if x > 0 else alpha * x`.

    %r = relay.nn.leaky_relu %x {alpha = 1.000000e-01 : f64} : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "relay.nn.leaky_relu"
    alpha = float_prop(0.01)


@irdl_op_definition
class PReluOp(RelayOp):
    """`x if x > 0 else alpha[c] * x`, with `alpha` a vector along `axis`.

    %r = relay.nn.prelu %x, %a : (tensor<1x3x4x4xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
    """

    name = "relay.nn.prelu"
    data = operand_def(TensorType)
    alpha = operand_def(TensorType)
    result = result_def(TensorType)
    axis = int_prop(1)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        data, alpha = expect_count(name, types, 2)
        expect_float(name, data)
        same_elem(name, [data, alpha])
        axis = norm_axis(name, attrs.axis, data.get_num_dims())
        if shape_of(alpha) != (shape_of(data)[axis],):
            raise ShapeError(
                f"'{name}' alpha {fmt_type(alpha)} must be a vector of the size of axis {axis} "
                f"of {fmt_type(data)}"
            )
        return [data]


@irdl_op_definition
class ClipOp(NumericUnaryOp):
    """Elementwise `min(max(x, a_min), a_max)`.

    %r = relay.clip %x {a_min = 0.0 : f64, a_max = 6.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "relay.clip"
    a_min = float_prop()
    a_max = float_prop()

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        if attrs.a_min > attrs.a_max:
            raise ShapeError(f"'{name}' has a_min {attrs.a_min} above a_max {attrs.a_max}")
        return super().infer(types, attrs, name)


class ConvertOp(RelayOp, ABC):
    """Elementwise to the element type `dtype`, same shape."""

    data = operand_def(TensorType)
    result = result_def(TensorType)
    dtype = type_prop()

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        cls.check(name, data, attrs.dtype)
        return [tensor(shape_of(data), attrs.dtype)]

    @classmethod
    def check(cls, name: str, data: TensorType, dtype: Attribute) -> None:
        pass


@irdl_op_definition
class CastOp(ConvertOp):
    """Elementwise conversion to the element type `dtype`.

    %r = relay.cast %x {dtype = i32} : (tensor<4xf32>) -> tensor<4xi32>
    """

    name = "relay.cast"


def _bit_width(elem: Attribute) -> int | None:
    if isinstance(elem, IntegerType):
        return elem.width.data
    return getattr(elem, "bitwidth", None)


@irdl_op_definition
class ReinterpretOp(ConvertOp):
    """Elementwise reinterpretation of the bits as the element type `dtype` of the same
    width (a float's bits as an integer and back; ONNX BitCast, TVM's reinterpret).

    %r = relay.reinterpret %x {dtype = i32} : (tensor<4xf32>) -> tensor<4xi32>
    """

    name = "relay.reinterpret"

    @classmethod
    def check(cls, name: str, data: TensorType, dtype: Attribute) -> None:
        src, dst = _bit_width(data.element_type), _bit_width(dtype)
        if src is None or src != dst or src == 1:
            raise ShapeError(
                f"'{name}' needs element types of the same width (not i1), "
                f"got {fmt_type(data)} to {dtype}"
            )


# --- the unary table -----------------------------------------------------------------------


@dataclass(frozen=True)
class UnaryRow:
    """One attribute-free unary op as the reference executor, relay-to-linalg and to-llvm
    read it.

    - `numpy`: the op on a numpy array (the reference runs it and casts to the result type).
    - `math`: the math-dialect op relay-to-linalg applies to each element; None for the ops
      whose element body that lowering writes by hand (integer and i1 ops, compositions).
    - `libm`: the C functions (for f32, for f64) to-llvm calls for `math`; None when LLVM has
      an instruction or intrinsic for it (to-llvm's own tables).
    """

    op: type[UnaryOp]
    numpy: Callable[[np.ndarray], np.ndarray]
    math: type[Operation] | None = None
    libm: tuple[str, str] | None = None


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1 / np.sqrt(x)


def _reciprocal(x: np.ndarray) -> np.ndarray:
    return 1 / x


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _erf(x: np.ndarray) -> np.ndarray:  # numpy has no erf
    return np.vectorize(_scalar_erf, otypes=[np.float64])(x.astype(np.float64))


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, x.dtype.type(0))


UNARY_TABLE: list[UnaryRow] = [
    # integer and i1 ops, and compositions: element bodies written in relay-to-linalg
    UnaryRow(BitwiseNotOp, np.invert),
    UnaryRow(NegativeOp, np.negative),
    UnaryRow(AbsOp, np.abs),
    UnaryRow(SignOp, np.sign),
    UnaryRow(LogicalNotOp, np.logical_not),
    UnaryRow(IsNanOp, np.isnan),
    UnaryRow(ReciprocalOp, _reciprocal),
    UnaryRow(SigmoidOp, _sigmoid),
    UnaryRow(ReluOp, _relu),
    # one math op per element, an LLVM instruction or intrinsic
    UnaryRow(ExpOp, np.exp, math=math.ExpOp),
    UnaryRow(LogOp, np.log, math=math.LogOp),
    UnaryRow(SqrtOp, np.sqrt, math=math.SqrtOp),
    UnaryRow(RsqrtOp, _rsqrt, math=math.RsqrtOp),
    UnaryRow(TanhOp, np.tanh, math=math.TanhOp),
    UnaryRow(FloorOp, np.floor, math=math.FloorOp),
    UnaryRow(CeilOp, np.ceil, math=math.CeilOp),
    UnaryRow(RoundOp, np.round, math=math.RoundEvenOp),
    UnaryRow(TruncOp, np.trunc, math=math.TruncOp),
    UnaryRow(SinOp, np.sin, math=math.SinOp),
    UnaryRow(CosOp, np.cos, math=math.CosOp),
    # one math op per element, a libm call
    UnaryRow(ErfOp, _erf, math=math.ErfOp, libm=("erff", "erf")),
    UnaryRow(TanOp, np.tan, math=math.TanOp, libm=("tanf", "tan")),
    UnaryRow(AsinOp, np.arcsin, math=math.AsinOp, libm=("asinf", "asin")),
    UnaryRow(AcosOp, np.arccos, math=math.AcosOp, libm=("acosf", "acos")),
    UnaryRow(AtanOp, np.arctan, math=math.AtanOp, libm=("atanf", "atan")),
    UnaryRow(AsinhOp, np.arcsinh, math=math.AsinhOp, libm=("asinhf", "asinh")),
    UnaryRow(AcoshOp, np.arccosh, math=math.AcoshOp, libm=("acoshf", "acosh")),
    UnaryRow(AtanhOp, np.arctanh, math=math.AtanhOp, libm=("atanhf", "atanh")),
    UnaryRow(Log1pOp, np.log1p, math=math.Log1pOp, libm=("log1pf", "log1p")),
    UnaryRow(Log2Op, np.log2, math=math.Log2Op, libm=("log2f", "log2")),
    UnaryRow(Log10Op, np.log10, math=math.Log10Op, libm=("log10f", "log10")),
    UnaryRow(Expm1Op, np.expm1, math=math.ExpM1Op, libm=("expm1f", "expm1")),
]
UNARY_ROWS: dict[type[UnaryOp], UnaryRow] = {row.op: row for row in UNARY_TABLE}

BINARY_OPS = [
    AddOp,
    SubtractOp,
    MultiplyOp,
    DivideOp,
    PowerOp,
    MaximumOp,
    MinimumOp,
    FloorDivideOp,
    FloorModOp,
    ModOp,
]
INTEGER_OPS = [LeftShiftOp, RightShiftOp, BitwiseAndOp, BitwiseOrOp, BitwiseXorOp, BitwiseNotOp]
COMPARE_OPS = [EqualOp, NotEqualOp, LessOp, LessEqualOp, GreaterOp, GreaterEqualOp]
LOGICAL_OPS = [LogicalAndOp, LogicalOrOp, LogicalXorOp, LogicalNotOp, IsNanOp]
ACTIVATION_OPS = [ReluOp, LeakyReluOp, PReluOp, ClipOp, CastOp, ReinterpretOp]
# unary math: the rows not listed with the integer, logical or activation ops
UNARY_OPS = [
    row.op for row in UNARY_TABLE if row.op not in (*INTEGER_OPS, *LOGICAL_OPS, *ACTIVATION_OPS)
]
ELEMENTWISE_OPS = [
    *BINARY_OPS,
    *INTEGER_OPS,
    *COMPARE_OPS,
    *LOGICAL_OPS,
    WhereOp,
    *UNARY_OPS,
    *ACTIVATION_OPS,
]
