"""Shared machinery of the relay dialect: the op base class, attribute helpers, shape helpers.

Every relay op is a `RelayOp`: operands are ranked tensors (a dimension may be dynamic, named
by a symbol: dialects/dims.py); the result
types follow from the operand types and the properties by the op's `infer` rule. The
constructor runs the rule to build the result types, and the verifier runs it again and
compares, so a hand-written or rewritten op with a wrong result type fails verification with
a message naming the op and the shapes.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    I64,
    AnyFloat,
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    VarOperandDef,
    VarResultDef,
    opt_prop_def,
    prop_def,
    traits_def,
)
from xdsl.traits import HasCanonicalizationPatternsTrait, Pure
from xrelay.dialects.dims import Dim, dim_str, is_dynamic, make_tensor, shape_of
from xrelay.errors import ShapeError

Shape = tuple[Dim, ...]


# --- attributes <-> Python values --------------------------------------------------------


def to_attr(value: Any) -> Attribute:
    """Python value -> property attribute: bool -> i1, int -> i64, float -> f64, str ->
    string, sequence of ints -> array<i64>, sequence of floats -> array<f64>."""
    if isinstance(value, Attribute):
        return value
    if isinstance(value, np.generic):  # numpy scalars as the Python values they hold
        value = value.item()
    if isinstance(value, bool):
        return BoolAttr.from_bool(value)
    if isinstance(value, int):
        return IntegerAttr(value, i64)
    if isinstance(value, float):
        return FloatAttr(value, f64)
    if isinstance(value, str):
        return StringAttr(value)
    if isinstance(value, Sequence | np.ndarray):
        items = [v.item() if isinstance(v, np.generic) else v for v in value]
        if all(isinstance(v, int) and not isinstance(v, bool) for v in items):
            return DenseArrayBase.from_list(i64, [int(v) for v in items])
        if all(isinstance(v, int | float) for v in items):
            return DenseArrayBase.from_list(f64, [float(v) for v in items])
    raise TypeError(f"cannot turn {value!r} into a relay attribute")


def to_py(attr: Attribute | None) -> Any:
    """Property attribute -> Python value (the inverse of `to_attr`); types stay attributes."""
    if attr is None or isinstance(attr, TypeAttribute):
        return attr
    if isinstance(attr, IntegerAttr):
        value = attr.value.data
        return bool(value) if attr.type == i1 else value
    if isinstance(attr, FloatAttr):
        return attr.value.data
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, DenseArrayBase):
        return tuple(attr.iter_values())
    if isinstance(attr, ArrayAttr):
        return tuple(to_py(a) for a in attr.data)
    return attr


class Attrs(dict[str, Any]):
    """An op's properties as Python values, defaults filled in; read as `attrs.strides`."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


# Property declarations read as `strides = ints_prop((1, 1))`: the default is filled in at
# construction and left out of the custom textual form.


def ints_prop(default: Sequence[int] | None = None) -> Any:
    if default is None:
        return prop_def(DenseArrayBase[I64])
    return prop_def(DenseArrayBase[I64], default_value=DenseArrayBase.from_list(i64, default))


def opt_ints_prop() -> Any:
    return opt_prop_def(DenseArrayBase[I64])


def int_prop(default: int | None = None) -> Any:
    if default is None:
        return prop_def(IntegerAttr[I64])
    return prop_def(IntegerAttr[I64], default_value=IntegerAttr(default, i64))


def float_prop(default: float | None = None) -> Any:
    if default is None:
        return prop_def(FloatAttr[Float64Type])
    return prop_def(FloatAttr[Float64Type], default_value=FloatAttr(default, f64))


def bool_prop(default: bool) -> Any:
    return prop_def(BoolAttr, default_value=BoolAttr.from_bool(default))


def str_prop(default: str) -> Any:
    return prop_def(StringAttr, default_value=StringAttr(default))


def type_prop(default: Attribute | None = None) -> Any:
    if default is None:
        return prop_def(TypeAttribute)
    return prop_def(TypeAttribute, default_value=default)


# --- shape helpers -------------------------------------------------------------------------


def fmt_type(t: Attribute) -> str:
    if isinstance(t, TensorType):
        dims = "x".join(_fmt_dim(dim_str(d)) for d in shape_of(t))
        return f"tensor<{dims + 'x' if dims else ''}{t.element_type}>"
    return str(t)


def is_float(elem: Attribute) -> bool:
    return isinstance(elem, AnyFloat)


def is_bool(elem: Attribute) -> bool:
    return elem == i1


def _fmt_dim(text: str) -> str:
    return text if text.isidentifier() or text.isdigit() or text == "?" else f"({text})"


def tensor(shape: Sequence[Dim], elem: Attribute) -> TensorType:
    """A tensor type of these dimensions (ints, or expressions of symbols: dialects/dims.py)."""
    return make_tensor(elem, shape)


# --- the op base ---------------------------------------------------------------------------


class RelayCanonicalization(HasCanonicalizationPatternsTrait):
    """Every relay op's canonicalization patterns, from `dialects/relay/canonicalize.py`
    (imported on first use: the patterns build relay ops, so they load after the dialect)."""

    def get_patterns(self, op: type[Operation]) -> tuple[Any, ...]:
        from xrelay.dialects.relay.canonicalize import CANONICALIZATION

        return CANONICALIZATION.get(op, ())

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[Any, ...]:
        return ()


class RelayOp(IRDLOperation, ABC):
    """Base of every relay op: Pure, properties printed in the attribute dictionary, result
    types inferred by `infer` from the operand types and the properties."""

    traits = traits_def(Pure(), RelayCanonicalization())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    def __init__(self, *operands: SSAValue | Operation, **attrs: Any) -> None:
        """Build the op from its operands in order and its properties as Python values
        (`None` means the default); raises `ShapeError` if the shape rule fails."""
        values = [SSAValue.get(o) for o in operands]
        props = {k: to_attr(v) for k, v in attrs.items() if v is not None}
        result_types = type(self).checked_infer(
            [v.type for v in values], type(self).attrs_of(props), type(self).name
        )
        super().__init__(
            operands=self._group(values, [d for _, d in self.get_irdl_definition().operands]),
            result_types=self._group(
                list(result_types), [d for _, d in self.get_irdl_definition().results]
            ),
            properties=props,
        )

    @staticmethod
    def _group(flat: list[Any], defs: Sequence[Any]) -> list[Any]:
        """Split a flat list over operand/result definitions (at most one variadic)."""
        n_single = sum(1 for d in defs if not isinstance(d, VarOperandDef | VarResultDef))
        grouped: list[Any] = []
        pos = 0
        for d in defs:
            if isinstance(d, VarOperandDef | VarResultDef):
                count = len(flat) - n_single
                grouped.append(flat[pos : pos + count])
                pos += count
            else:
                grouped.append(flat[pos])
                pos += 1
        return grouped

    @classmethod
    def attrs_of(cls, props: Mapping[str, Attribute]) -> Attrs:
        """The op's properties as Python values, with declared defaults filled in."""
        view = Attrs()
        for name, pdef in cls.get_irdl_definition().properties.items():
            view[name] = to_py(props.get(name, pdef.default_value))
        return view

    @property
    def attrs(self) -> Attrs:
        return type(self).attrs_of(self.properties)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        """Result types from operand types and properties; raises ShapeError."""
        raise NotImplementedError

    @classmethod
    def checked_infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        """`infer`, where a rule that cannot decide a comparison of symbolic dimensions (sympy
        raises TypeError) is a ShapeError naming the op and its operand types."""
        try:
            return cls.infer(types, attrs, name)
        except TypeError as e:
            if not any(is_dynamic(t) for t in types):
                raise
            raise ShapeError(
                f"'{name}' cannot decide its shape rule for dynamic operands "
                f"{', '.join(fmt_type(t) for t in types)}: {e}"
            ) from None

    def verify_(self) -> None:
        # properties parse from the attribute dictionary: a name there that is not one of
        # them and has no dialect prefix (`xrelay.target`) is a misspelled property
        unknown = sorted(a for a in self.attributes if "." not in a)
        if unknown:
            known = sorted(self.get_irdl_definition().properties) or ["none"]
            raise ShapeError(
                f"'{self.name}' has no attribute '{unknown[0]}' (its attributes: "
                f"{', '.join(known)})"
            )
        expected = type(self).checked_infer([o.type for o in self.operands], self.attrs, self.name)
        actual = [r.type for r in self.results]
        if list(expected) != actual:
            raise ShapeError(
                f"'{self.name}' result type {', '.join(fmt_type(t) for t in actual)} does not "
                f"match the inferred {', '.join(fmt_type(t) for t in expected)}"
            )


# --- rule helpers shared by the op families ----------------------------------------------


def ranked(name: str, t: Attribute, what: str = "operand") -> TensorType:
    if not isinstance(t, TensorType):
        raise ShapeError(f"'{name}' expects a tensor {what}, got {t}")
    return t


def norm_axis(name: str, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ShapeError(f"'{name}' axis {axis} is out of range for rank {rank}")
    return axis % rank


def norm_axes(name: str, axes: Sequence[int], rank: int) -> list[int]:
    out = [norm_axis(name, a, rank) for a in axes]
    if len(set(out)) != len(out):
        raise ShapeError(f"'{name}' repeats an axis in {list(axes)}")
    return out


def same_elem(name: str, types: Sequence[TensorType]) -> Attribute:
    elems = {t.element_type for t in types}
    if len(elems) != 1:
        raise ShapeError(
            f"'{name}' operands differ in element type: {', '.join(fmt_type(t) for t in types)}"
        )
    return types[0].element_type


def broadcast(name: str, types: Sequence[TensorType]) -> Shape:
    """numpy broadcasting of the operand shapes, or a ShapeError naming them. A symbol
    against a size (`batch` and 4) gives the size: the symbol's value must then be 1 or 4
    (checked when the module is specialized); two different symbols do not broadcast."""
    shapes = [shape_of(t) for t in types]
    rank = max(len(s) for s in shapes)
    out: list[Dim] = []
    for i in range(rank):
        dims = {s[i - rank + len(s)] for s in shapes if i - rank + len(s) >= 0} - {1}
        static = {d for d in dims if isinstance(d, int)}
        if len(static) == 1 and len(dims) > 1 and all(d.is_Symbol for d in dims - static):
            # a symbol against a size: it must be 1 or that size, which specialization
            # checks when the symbol has a value
            dims = static
        if len(dims) > 1:
            raise ShapeError(
                f"'{name}' operand shapes are not broadcastable: "
                + ", ".join(fmt_type(t) for t in types)
            )
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def expect_float(name: str, t: TensorType) -> None:
    if not is_float(t.element_type):
        raise ShapeError(f"'{name}' expects a floating-point tensor, got {fmt_type(t)}")


def expect_rank(name: str, t: TensorType, rank: int, what: str = "data") -> None:
    if t.get_num_dims() != rank:
        raise ShapeError(f"'{name}' expects {what} of rank {rank}, got {fmt_type(t)}")


def expect_len(name: str, attr: str, values: Sequence[Any], n: int) -> None:
    if len(values) != n:
        raise ShapeError(f"'{name}' attribute {attr} needs {n} values, got {list(values)}")


def expect_count(name: str, types: Sequence[Attribute], n: int) -> list[TensorType]:
    if len(types) != n:
        raise ShapeError(f"'{name}' takes {n} operands, got {len(types)}")
    return [ranked(name, t) for t in types]
