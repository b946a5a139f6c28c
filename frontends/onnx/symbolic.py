"""Shape arithmetic on dynamic dimensions at import time.

`Shape` of a tensor with dynamic dimensions gives an int64 vector whose entries are sympy
expressions (a numpy object array); the nodes that compute with such vectors (Gather,
Concat, Unsqueeze, Slice, Mul, ...: what exporters emit between `Shape` and a `Reshape`
target) are evaluated here on those arrays instead of converted, so a target like
`[batch, seq, 4, 64]` reaches `relay.reshape` as expressions of the input's symbols.
A vector whose entries all become integers is an ordinary int64 array again.

An op that takes such a vector as a shape operand (a Range's bounds, a Slice's starts and
ends, an Expand or Tile target: `SHAPE_OPERANDS`) and whose result cannot be an import-time
array (its length is an expression) is converted instead: its converter reads the
expressions with `b.const` and emits the IR. Any other op on such a vector is an error
naming the node.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
from xrelay.dialects.dims import normalize

Attrs = dict[str, Any]

# The inputs of an op that are shapes, bounds or counts rather than data: an op whose only
# symbolic inputs are among these is converted (into IR) when it cannot be evaluated here.
SHAPE_OPERANDS: dict[str, tuple[int, ...]] = {
    "Range": (0, 1, 2),
    "Slice": (1, 2, 3, 4),
    "Expand": (1,),
    "ConstantOfShape": (0,),
    "Reshape": (1,),
    "Tile": (1,),
}


class Undecidable(Exception):
    """The node's result on these expressions is not an import-time array (its length is
    an expression, or a comparison of expressions has no one answer)."""


def is_symbolic(array: Any) -> bool:
    return isinstance(array, np.ndarray) and array.dtype == object


def symbolic_array(values: Any) -> np.ndarray:
    """An int64 array if every entry is an integer, else an object array of expressions."""
    array = np.asarray(values, dtype=object)
    flat = [normalize(v) for v in array.reshape(-1)]
    if all(isinstance(v, int) for v in flat):
        return np.asarray(flat, dtype=np.int64).reshape(array.shape)
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(array.shape)


def _div(a: Any, b: Any) -> Any:
    """Integer division as ONNX does it (toward zero); an expression divides by flooring,
    exact for the non-negative quotients of dimensions."""
    a, b = normalize(a), normalize(b)
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a < 0) == (b < 0) else -q
    return a // b


def ceiling_div(a: Any, b: int) -> Any:
    """ceil(a / b) for a dimension expression or int `a` and a nonzero int `b`."""
    a = normalize(a)
    if isinstance(a, int):
        return -(-a // b)
    import sympy

    return normalize(sympy.ceiling(a / b))


def _ints(array: Any) -> list[int]:
    """The entries of a bounds or axes operand, which must be integers here."""
    values = [normalize(v) for v in np.asarray(array, dtype=object).reshape(-1)]
    if not all(isinstance(v, int) for v in values):
        raise Undecidable
    return values


def _slice(inputs: list[np.ndarray], attrs: Attrs) -> np.ndarray:
    data = inputs[0]
    if len(inputs) >= 3:
        starts, ends = _ints(inputs[1]), _ints(inputs[2])
        axes = _ints(inputs[3]) if len(inputs) > 3 and inputs[3] is not None else None
        steps = _ints(inputs[4]) if len(inputs) > 4 and inputs[4] is not None else None
    else:
        starts, ends = list(attrs["starts"]), list(attrs["ends"])
        axes, steps = attrs.get("axes"), None
    axes = list(range(len(starts))) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    index = [slice(None)] * data.ndim
    for a, s, e, st in zip(axes, starts, ends, steps):
        index[a] = slice(s, e, st)
    return data[tuple(index)]


def _unsqueeze(inputs: list[np.ndarray], attrs: Attrs) -> np.ndarray:
    axes = _ints(inputs[1]) if len(inputs) > 1 else list(attrs["axes"])
    out = inputs[0]
    rank = out.ndim + len(axes)
    for a in sorted(a % rank for a in axes):
        out = np.expand_dims(out, a)
    return out


def _squeeze(inputs: list[np.ndarray], attrs: Attrs) -> np.ndarray:
    axes = _ints(inputs[1]) if len(inputs) > 1 and inputs[1] is not None else attrs.get("axes")
    return np.squeeze(inputs[0], axis=None if axes is None else tuple(axes))


def _gather(inputs: list[np.ndarray], attrs: Attrs) -> np.ndarray:
    indices = np.asarray(_ints(inputs[1]), dtype=np.int64).reshape(np.shape(inputs[1]))
    return np.take(inputs[0], indices, axis=attrs.get("axis", 0))


# How each comparison reads the difference of its operands: (test of an int, sympy property)
_SIGN_TESTS = {
    "eq": (lambda d: d == 0, "is_zero"),
    "lt": (lambda d: d < 0, "is_negative"),
    "le": (lambda d: d <= 0, "is_nonpositive"),
}


def _compare(kind: str, swap: bool = False) -> Callable[[list[np.ndarray], Attrs], np.ndarray]:
    """An elementwise comparison of dimensions through the sign of their difference
    (symbols are positive integers), a bool array; Undecidable when the expressions leave
    it open (`seq < 8`)."""
    int_test, prop = _SIGN_TESTS[kind]

    def compare(x: Any, y: Any) -> bool:
        diff = normalize(y - x if swap else x - y)
        answer = int_test(diff) if isinstance(diff, int) else getattr(diff, prop)
        if answer is None:
            raise Undecidable
        return bool(answer)

    def apply(inputs: list[np.ndarray], attrs: Attrs) -> np.ndarray:
        a, b = (np.asarray(x, dtype=object) for x in inputs)
        return np.vectorize(compare, otypes=[bool])(a, b)

    return apply


def _where(inputs: list[np.ndarray], attrs: Attrs) -> np.ndarray:
    cond = np.asarray(inputs[0])
    if cond.dtype == object:
        raise Undecidable
    return np.where(cond.astype(bool), *(np.asarray(x, dtype=object) for x in inputs[1:]))


def _expand(inputs: list[np.ndarray], attrs: Attrs) -> np.ndarray:
    target = _ints(inputs[1])
    data = np.asarray(inputs[0], dtype=object)
    shape = np.broadcast_shapes(data.shape, tuple(target))
    return np.broadcast_to(data, shape)


def _cast(inputs: list[np.ndarray], attrs: Attrs) -> np.ndarray:
    """To an integer type: the same expressions; to bool: whether each is nonzero; to a
    float type: not evaluated (float arithmetic on dimensions is not shape arithmetic)."""
    to = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(attrs["to"]))
    if to == np.bool_:
        return np.logical_not(_compare("eq")([inputs[0], np.zeros((), np.int64)], attrs))
    if to.kind not in "iu":
        raise Undecidable
    return inputs[0]


def _unary(fn: Callable[[Any], Any]) -> Callable[[list[np.ndarray], Attrs], np.ndarray]:
    def apply(inputs: list[np.ndarray], attrs: Attrs) -> np.ndarray:
        return np.vectorize(fn, otypes=[object])(np.asarray(inputs[0], dtype=object))

    return apply


def _binary(fn: Callable[[Any, Any], Any]) -> Callable[[list[np.ndarray], Attrs], np.ndarray]:
    def apply(inputs: list[np.ndarray], attrs: Attrs) -> np.ndarray:
        a, b = (np.asarray(x, dtype=object) for x in inputs)
        return np.vectorize(fn, otypes=[object])(a, b)

    return apply


EVALUATORS: dict[str, Callable[[list[np.ndarray], Attrs], np.ndarray]] = {
    "Identity": lambda i, a: i[0],
    "Shape": lambda i, a: np.asarray(i[0].shape, dtype=np.int64)[a.get("start", 0) : a.get("end")],
    "Size": lambda i, a: np.asarray(i[0].size, dtype=np.int64),
    "Cast": _cast,
    "Gather": _gather,
    "Concat": lambda i, a: np.concatenate(i, axis=a["axis"]),
    "Unsqueeze": _unsqueeze,
    "Squeeze": _squeeze,
    "Slice": _slice,
    "Reshape": lambda i, a: _reshape(i[0], _ints(i[1]), a),
    "Add": _binary(lambda x, y: x + y),
    "Sub": _binary(lambda x, y: x - y),
    "Mul": _binary(lambda x, y: x * y),
    "Div": _binary(_div),
    "Neg": _unary(lambda x: -x),
    "Abs": _unary(abs),
    "Equal": _compare("eq"),
    "Less": _compare("lt"),
    "LessOrEqual": _compare("le"),
    "Greater": _compare("lt", swap=True),
    "GreaterOrEqual": _compare("le", swap=True),
    "Where": _where,
    "Expand": _expand,
    "ReduceProd": lambda i, a: np.asarray(np.prod(i[0]), dtype=object).reshape(
        (1,) * i[0].ndim if a.get("keepdims", 1) else ()
    ),
}


def _reshape(data: np.ndarray, target: list[int], attrs: Attrs) -> np.ndarray:
    if not attrs.get("allowzero", 0):
        target = [data.shape[i] if d == 0 else d for i, d in enumerate(target)]
    return data.reshape(target)


def evaluate(node: onnx.NodeProto, inputs: list[np.ndarray | None]) -> np.ndarray | None:
    """The node's output on symbolic shape vectors, or None if it is not shape arithmetic
    this module evaluates (or its result is not an import-time array)."""
    fn = EVALUATORS.get(node.op_type)
    if fn is None or node.domain not in ("", "ai.onnx") or len(node.output) != 1:
        return None
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    try:
        out = fn(list(inputs), attrs)
    except Undecidable:
        return None
    if isinstance(out, np.ndarray) and out.dtype == bool:
        return out
    return symbolic_array(out)  # (numpy gives a lone entry for a 0-d result)


def convertible(node: onnx.NodeProto, inputs: list[np.ndarray | None]) -> bool:
    """Whether the node's symbolic inputs are all shape operands its converter reads as
    expressions (so it can be converted into IR when it cannot be evaluated here)."""
    operands = SHAPE_OPERANDS.get(node.op_type, ()) if node.domain in ("", "ai.onnx") else ()
    return all(i in operands for i, x in enumerate(inputs) if is_symbolic(x))
