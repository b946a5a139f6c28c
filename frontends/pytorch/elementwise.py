"""PyTorch elementwise ops -> relay: arithmetic with torch's type promotion and Python
scalars, comparisons and logic, unary math, activations, casts and identities."""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dtypes import numpy_dtype
from xrelay.frontends.pytorch.call import Call
from xrelay.frontends.pytorch.registry import aten_op

ARITHMETIC = {
    "add": relay.AddOp,
    "sub": relay.SubtractOp,
    "mul": relay.MultiplyOp,
    "maximum": relay.MaximumOp,
    "minimum": relay.MinimumOp,
    "remainder": relay.FloorModOp,
    "fmod": relay.ModOp,
    "pow": relay.PowerOp,
}
COMPARISONS = {
    "eq": relay.EqualOp,
    "ne": relay.NotEqualOp,
    "lt": relay.LessOp,
    "le": relay.LessEqualOp,
    "gt": relay.GreaterOp,
    "ge": relay.GreaterEqualOp,
}
LOGICAL = {
    "logical_and": relay.LogicalAndOp,
    "logical_or": relay.LogicalOrOp,
    "logical_xor": relay.LogicalXorOp,
    "bitwise_and": relay.LogicalAndOp,
    "bitwise_or": relay.LogicalOrOp,
    "bitwise_xor": relay.LogicalXorOp,
    "__and__": relay.LogicalAndOp,
    "__or__": relay.LogicalOrOp,
    "__xor__": relay.LogicalXorOp,
}
# the bitwise ops on integer tensors (on bools they are LOGICAL's)
BITWISE = {
    "bitwise_and": relay.BitwiseAndOp,
    "bitwise_or": relay.BitwiseOrOp,
    "bitwise_xor": relay.BitwiseXorOp,
    "__and__": relay.BitwiseAndOp,
    "__or__": relay.BitwiseOrOp,
    "__xor__": relay.BitwiseXorOp,
}
# Unary ops whose result is a float: integer inputs are promoted to float32 first, as in torch.
FLOAT_UNARY = {
    "exp": relay.ExpOp,
    "log": relay.LogOp,
    "sqrt": relay.SqrtOp,
    "rsqrt": relay.RsqrtOp,
    "reciprocal": relay.ReciprocalOp,
    "tanh": relay.TanhOp,
    "sigmoid": relay.SigmoidOp,
    "erf": relay.ErfOp,
    "sin": relay.SinOp,
    "cos": relay.CosOp,
    "tan": relay.TanOp,
    "log1p": relay.Log1pOp,
    "log2": relay.Log2Op,
    "log10": relay.Log10Op,
    "expm1": relay.Expm1Op,
    "asin": relay.AsinOp,
    "acos": relay.AcosOp,
    "atan": relay.AtanOp,
    "asinh": relay.AsinhOp,
    "acosh": relay.AcoshOp,
    "atanh": relay.AtanhOp,
    "arcsin": relay.AsinOp,
    "arccos": relay.AcosOp,
    "arctan": relay.AtanOp,
    "arcsinh": relay.AsinhOp,
    "arccosh": relay.AcoshOp,
    "arctanh": relay.AtanhOp,
}
SAME_TYPE_UNARY = {
    "neg": relay.NegativeOp,
    "abs": relay.AbsOp,
    "sign": relay.SignOp,
    "relu": relay.ReluOp,
    "floor": relay.FloorOp,
    "ceil": relay.CeilOp,
    "trunc": relay.TruncOp,
    "fix": relay.TruncOp,
}


def binary(c: Call, cls: type, lhs: object, rhs: object) -> SSAValue:
    """`cls(lhs, rhs)` on tensors or scalars, both cast to torch's promoted type."""
    dtype = c.result_dtype(lhs, rhs)
    return c.emit(cls(c.as_tensor(lhs, dtype), c.as_tensor(rhs, dtype)))


def scalar(c: Call, value: float, like: SSAValue) -> SSAValue:
    """A scalar constant of `like`'s element type."""
    return c.constant(value, c.result_dtype(like, like))


def _alpha_scaled(c: Call, key: str) -> object:
    other = c.raw(key)
    alpha = c.value("alpha", 1)
    if alpha == 1:
        return other
    if not isinstance(other, SSAValue):
        return other * alpha
    return binary(c, relay.MultiplyOp, other, alpha)


@aten_op(*ARITHMETIC)
def arithmetic(c: Call) -> SSAValue:
    name = c.name
    rhs = _alpha_scaled(c, "other") if name in ("add", "sub") and "alpha" in c.names else c.raw(1)
    if name == "pow" and not isinstance(rhs, SSAValue):
        return _power_scalar(c, c.raw(0), rhs)
    return binary(c, ARITHMETIC[name], c.raw(0), rhs)


def _power_scalar(c: Call, base: object, exponent: object) -> SSAValue:
    """x ** k: small integer exponents become products, which are exact and cheaper."""
    if isinstance(base, SSAValue) and exponent in (1, 2, 3) and c.dtype(0).kind == "f":
        y = base
        for _ in range(int(exponent) - 1):
            y = c.emit(relay.MultiplyOp(y, base))
        return y
    if exponent == 0.5 and isinstance(base, SSAValue) and c.dtype(0).kind == "f":
        return c.emit(relay.SqrtOp(base))
    return binary(c, relay.PowerOp, base, exponent)


@aten_op("rsub")
def rsub(c: Call) -> SSAValue:
    return binary(c, relay.SubtractOp, _alpha_scaled(c, "other"), c.raw(0))


@aten_op("div")
def div(c: Call) -> SSAValue:
    mode = c.value("rounding_mode", None)
    lhs, rhs = c.raw(0), c.raw(1)
    dtype = c.result_dtype(lhs, rhs)
    if mode is None and dtype.kind != "f":
        dtype = np.dtype(np.float32)  # true division of integers gives the default float
    x, y = c.as_tensor(lhs, dtype), c.as_tensor(rhs, dtype)
    if mode is None or (mode == "trunc" and dtype.kind != "f"):
        return c.emit(relay.DivideOp(x, y))
    if mode == "floor":
        return _floor_div(c, x, y)
    if mode == "trunc":  # float: sign(q) * floor(|q|)
        q = c.emit(relay.DivideOp(x, y))
        magnitude = c.emit(relay.FloorOp(c.emit(relay.AbsOp(q))))
        return c.emit(relay.MultiplyOp(c.emit(relay.SignOp(q)), magnitude))
    raise c.unsupported(f"rounding_mode '{mode}'")


def _floor_div(c: Call, x: SSAValue, y: SSAValue) -> SSAValue:
    if numpy_dtype(x.type.element_type).kind == "f":
        return c.emit(relay.FloorOp(c.emit(relay.DivideOp(x, y))))
    return c.emit(relay.FloorDivideOp(x, y))


@aten_op("floor_divide")
def floor_divide(c: Call) -> SSAValue:
    dtype = c.result_dtype(c.raw(0), c.raw(1))
    return _floor_div(c, c.as_tensor(c.raw(0), dtype), c.as_tensor(c.raw(1), dtype))


@aten_op(*COMPARISONS)
def compare(c: Call) -> SSAValue:
    return binary(c, COMPARISONS[c.name], c.raw(0), c.raw(1))


@aten_op(*LOGICAL)
def logical(c: Call) -> SSAValue:
    name = c.name
    dtype = c.result_dtype(c.raw(0), c.raw(1))
    if name in BITWISE and dtype != np.bool_:
        if dtype.kind == "f":
            raise c.error(f"{name} is not defined on {dtype} tensors")
        return binary(c, BITWISE[name], c.raw(0), c.raw(1))
    return c.emit(LOGICAL[name](c.tensor(0, np.bool_), c.tensor(1, np.bool_)))


@aten_op("logical_not", "bitwise_not")
def logical_not(c: Call) -> SSAValue:
    if c.kind.endswith("bitwise_not") and c.dtype(0) != np.bool_:
        if c.dtype(0).kind == "f":
            raise c.error(f"bitwise_not is not defined on {c.dtype(0)} tensors")
        return c.emit(relay.BitwiseNotOp(c.tensor(0)))
    return c.emit(relay.LogicalNotOp(c.tensor(0, np.bool_)))


@aten_op(*FLOAT_UNARY)
def float_unary(c: Call) -> SSAValue:
    x = c.tensor(0)
    if c.dtype(0).kind != "f":
        x = c.cast(x, np.float32)
    return c.emit(FLOAT_UNARY[c.name](x))


@aten_op(*SAME_TYPE_UNARY)
def same_type_unary(c: Call) -> SSAValue:
    return c.emit(SAME_TYPE_UNARY[c.name](c.tensor(0)))


def _float_operand(c: Call, key: int | str) -> SSAValue:
    """The argument as a float tensor: integers promote to float32, as torch's float ops."""
    x = c.tensor(key)
    return x if c.dtype(key).kind == "f" else c.cast(x, np.float32)


@aten_op("sinh", "cosh")
def sinh_cosh(c: Call) -> SSAValue:
    """(e**x -+ e**-x) / 2."""
    x = _float_operand(c, 0)
    up, down = c.emit(relay.ExpOp(x)), c.emit(relay.ExpOp(c.emit(relay.NegativeOp(x))))
    cls = relay.SubtractOp if c.name == "sinh" else relay.AddOp
    return c.emit(relay.MultiplyOp(c.emit(cls(up, down)), scalar(c, 0.5, x)))


def _is_negative(c: Call, x: SSAValue) -> SSAValue:
    """x < 0, -0.0 included (1 / -0.0 is -inf)."""
    zero = scalar(c, 0.0, x)
    below = c.emit(relay.LessOp(x, zero))
    inverse = c.emit(relay.DivideOp(scalar(c, 1.0, x), x))
    return c.emit(relay.LogicalOrOp(below, c.emit(relay.LessOp(inverse, zero))))


def _is_inf(c: Call, x: SSAValue) -> SSAValue:
    return c.emit(relay.EqualOp(c.emit(relay.AbsOp(x)), scalar(c, math.inf, x)))


@aten_op("atan2", "arctan2")
def atan2(c: Call) -> SSAValue:
    """atan(y / x) moved to x's half-plane, with C's atan2 at the edges: two infinities
    give the diagonals, two zeros keep their signs (atan2(+-0, -0) = +-pi)."""
    dtype = c.result_dtype(c.raw(0), c.raw(1))
    dtype = dtype if dtype.kind == "f" else np.dtype(np.float32)
    y, x = c.as_tensor(c.raw(0), dtype), c.as_tensor(c.raw(1), dtype)
    both_inf = c.emit(relay.LogicalAndOp(_is_inf(c, y), _is_inf(c, x)))
    y_q = c.emit(relay.WhereOp(both_inf, c.emit(relay.SignOp(y)), y))
    x_q = c.emit(relay.WhereOp(both_inf, c.emit(relay.SignOp(x)), x))
    q = c.emit(relay.AtanOp(c.emit(relay.DivideOp(y_q, x_q))))
    zero = scalar(c, 0.0, y)
    both_zero = c.emit(
        relay.LogicalAndOp(c.emit(relay.EqualOp(y, zero)), c.emit(relay.EqualOp(x, zero)))
    )
    q = c.emit(relay.WhereOp(both_zero, y, q))
    pi = scalar(c, math.pi, y)
    turned = c.emit(
        relay.WhereOp(
            _is_negative(c, y), c.emit(relay.SubtractOp(q, pi)), c.emit(relay.AddOp(q, pi))
        )
    )
    return c.emit(relay.WhereOp(_is_negative(c, x), turned, q))


@aten_op("hypot")
def hypot(c: Call) -> SSAValue:
    dtype = c.result_dtype(c.raw(0), c.raw(1))
    x, y = c.as_tensor(c.raw(0), dtype), c.as_tensor(c.raw(1), dtype)
    squares = c.emit(relay.AddOp(c.emit(relay.MultiplyOp(x, x)), c.emit(relay.MultiplyOp(y, y))))
    root = c.emit(relay.SqrtOp(squares))
    either_inf = c.emit(relay.LogicalOrOp(_is_inf(c, x), _is_inf(c, y)))
    return c.emit(relay.WhereOp(either_inf, scalar(c, math.inf, x), root))


@aten_op("isnan")
def isnan(c: Call) -> SSAValue:
    if c.dtype(0).kind != "f":
        return c.constant(np.zeros(c.shape(0), np.bool_))
    return c.emit(relay.IsNanOp(c.tensor(0)))


@aten_op("isinf")
def isinf(c: Call) -> SSAValue:
    if c.dtype(0).kind != "f":
        return c.constant(np.zeros(c.shape(0), np.bool_))
    return _is_inf(c, c.tensor(0))


@aten_op("elu", "selu", "celu")
def elu(c: Call) -> SSAValue:
    """scale * x for x > 0, else alpha * scale * (exp(x * input_scale) - 1)."""
    x = c.tensor(0)
    if c.name == "selu":
        alpha, scale, input_scale = 1.6732632423543772, 1.0507009873554805, 1.0
    elif c.name == "celu":
        alpha = c.float("alpha", 1.0)
        scale, input_scale = 1.0, 1 / alpha
    else:
        alpha, scale = c.float("alpha", 1.0), c.float("scale", 1.0)
        input_scale = c.float("input_scale", 1.0)
    inner = x if input_scale == 1 else c.emit(relay.MultiplyOp(x, scalar(c, input_scale, x)))
    negative = c.emit(relay.MultiplyOp(c.emit(relay.Expm1Op(inner)), scalar(c, alpha * scale, x)))
    positive = x if scale == 1 else c.emit(relay.MultiplyOp(x, scalar(c, scale, x)))
    above = c.emit(relay.GreaterOp(x, scalar(c, 0.0, x)))
    return c.emit(relay.WhereOp(above, positive, negative))


@aten_op("fill")
def fill(c: Call) -> SSAValue:
    """A tensor of `self`'s shape and dtype holding `value` (a number or a 0-d tensor)."""
    value = c.as_tensor(c.raw(1), c.dtype(0))
    return c.emit(relay.BroadcastToOp(value, shape=c.shape(0)))


@aten_op("copy")
def copy(c: Call) -> SSAValue:
    """`src` broadcast to `self`'s shape, in `self`'s dtype (the functional copy_)."""
    src = c.tensor("src", c.dtype(0))
    if tuple(src.type.get_shape()) == c.shape(0):
        return src
    return c.emit(relay.BroadcastToOp(src, shape=c.shape(0)))


@aten_op("native_dropout")
def native_dropout(c: Call) -> object:
    """Dropout outside training: the input, and a mask that keeps everything."""
    if c.value("train", None) is not False and c.float("p") != 0.0:
        raise c.unsupported("dropout in training mode (call model.eval() before capture)")
    return c.tensor(0), c.constant(np.ones(c.shape(0), np.bool_))


@aten_op("round")
def round_(c: Call) -> SSAValue:
    if c.int("decimals", 0) != 0:
        raise c.unsupported("round with decimals")
    return c.emit(relay.RoundOp(c.tensor(0)))


@aten_op("clamp", "clip", "clamp_min", "clamp_max")
def clamp(c: Call) -> SSAValue:
    x = c.tensor(0)
    lo, hi = c.raw(1, None), c.raw(2, None)
    if c.name == "clamp_max":
        lo, hi = None, lo
    if not isinstance(lo, SSAValue) and not isinstance(hi, SSAValue):
        a_min = -math.inf if lo is None else float(lo)
        a_max = math.inf if hi is None else float(hi)
        if c.dtype(0).kind == "f" and a_min <= a_max:
            return c.emit(relay.ClipOp(x, a_min=a_min, a_max=a_max))
    if lo is not None:
        x = binary(c, relay.MaximumOp, x, lo)
    if hi is not None:
        x = binary(c, relay.MinimumOp, x, hi)
    return x


@aten_op("hardtanh", "relu6")
def hardtanh(c: Call) -> SSAValue:
    lo, hi = (0.0, 6.0) if c.kind.endswith("relu6") else (c.float(1, -1.0), c.float(2, 1.0))
    return c.emit(relay.ClipOp(c.tensor(0), a_min=lo, a_max=hi))


@aten_op("leaky_relu")
def leaky_relu(c: Call) -> SSAValue:
    return c.emit(relay.LeakyReluOp(c.tensor(0), alpha=c.float(1, 0.01)))


@aten_op("gelu")
def gelu(c: Call) -> SSAValue:
    x = c.tensor(0)
    if c.value("approximate", "none") == "tanh":
        cube = c.emit(relay.MultiplyOp(c.emit(relay.MultiplyOp(x, x)), x))
        inner = c.emit(relay.AddOp(x, c.emit(relay.MultiplyOp(cube, scalar(c, 0.044715, x)))))
        inner = c.emit(relay.MultiplyOp(inner, scalar(c, math.sqrt(2 / math.pi), x)))
        gate = c.emit(relay.TanhOp(inner))
    else:
        gate = c.emit(relay.ErfOp(c.emit(relay.MultiplyOp(x, scalar(c, 1 / math.sqrt(2), x)))))
    one_plus = c.emit(relay.AddOp(gate, scalar(c, 1.0, x)))
    return c.emit(relay.MultiplyOp(c.emit(relay.MultiplyOp(x, scalar(c, 0.5, x))), one_plus))


@aten_op("silu")
def silu(c: Call) -> SSAValue:
    x = c.tensor(0)
    return c.emit(relay.MultiplyOp(x, c.emit(relay.SigmoidOp(x))))


@aten_op("hardsigmoid")
def hardsigmoid(c: Call) -> SSAValue:
    x = c.tensor(0)
    shifted = c.emit(
        relay.AddOp(c.emit(relay.MultiplyOp(x, scalar(c, 1 / 6, x))), scalar(c, 0.5, x))
    )
    return c.emit(relay.ClipOp(shifted, a_min=0.0, a_max=1.0))


@aten_op("hardswish")
def hardswish(c: Call) -> SSAValue:
    x = c.tensor(0)
    gate = c.emit(relay.ClipOp(c.emit(relay.AddOp(x, scalar(c, 3.0, x))), a_min=0.0, a_max=6.0))
    return c.emit(relay.MultiplyOp(x, c.emit(relay.MultiplyOp(gate, scalar(c, 1 / 6, x)))))


@aten_op("where")
def where(c: Call) -> SSAValue:
    if c.overload == "" and len(c.names) == 1:
        raise c.unsupported("where(condition) (data-dependent shape)")
    dtype = c.result_dtype(c.raw(1), c.raw(2))
    return c.emit(relay.WhereOp(c.tensor(0, np.bool_), c.tensor(1, dtype), c.tensor(2, dtype)))


@aten_op("masked_fill")
def masked_fill(c: Call) -> SSAValue:
    dtype = c.dtype(0)
    return c.emit(relay.WhereOp(c.tensor(1, np.bool_), c.tensor(2, dtype), c.tensor(0)))


def _cast_to(c: Call, dtype: np.dtype | None) -> SSAValue:
    x = c.tensor(0)
    return x if dtype is None else c.cast(x, dtype)


@aten_op("_to_copy", "to")
def to(c: Call) -> SSAValue:
    if "other" in c.names:
        return _cast_to(c, c.dtype("other"))
    return _cast_to(c, c.dtype_arg("dtype"))


@aten_op("type_as")
def type_as(c: Call) -> SSAValue:
    return _cast_to(c, c.dtype(1))


@aten_op("float", "double", "half", "long", "int", "bool")
def dtype_method(c: Call) -> SSAValue:
    names = {"float": np.float32, "double": np.float64, "half": np.float16, "long": np.int64}
    names |= {"int": np.int32, "bool": np.bool_}
    return _cast_to(c, np.dtype(names[c.name]))


@aten_op("clone", "contiguous", "detach", "alias", "lift_fresh_copy", "lift_fresh")
def identity(c: Call) -> SSAValue:
    return c.tensor(0)


@aten_op("dropout", "feature_dropout", "alpha_dropout")
def dropout(c: Call) -> SSAValue:
    if c.value("train", False):
        raise c.unsupported("dropout in training mode (call model.eval() before capture)")
    return c.tensor(0)
