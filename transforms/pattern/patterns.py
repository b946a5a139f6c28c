"""The dataflow pattern language over relay SSA values (TVM's DFPattern in spirit).

    conv = is_op("nn.conv2d")(wildcard(), is_constant())
    biased = is_op("nn.bias_add")(conv, is_constant())
    act = is_op("nn.relu")(biased) | is_op("clip")(biased).has_attr({"a_min": 0.0})
    m = act.match(value)          # a Match (truthy) holding what each sub-pattern bound

A pattern matches a value: `wildcard()` anything, `is_constant()` a relay.constant (or a
constant splat), `is_var(name)` an argument of the function, `is_op(name)(args...)` a result
of that op whose operands match `args` in order, `is_tuple([...])` the whole variadic
operand list of an op (concatenate), `is_tuple_get_item(p, i)` result `i` of a multi-result
op. `p1 | p2` tries p1 then p2; `p.optional(f)` is `f(p) | p`; `has_attr`, `has_dtype` and
`has_shape` add constraints. A pattern object used twice must bind the same value twice.
Op names are written without the dialect prefix for relay ("nn.conv2d") or with any other
dialect's ("qnn.conv2d").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dtypes import numpy_dtype
from xrelay.errors import Error


class PatternError(Error):
    """A malformed pattern (wrong argument kinds, an empty op name, ...)."""


class Match:
    """The result of a successful match: each sub-pattern's bound values, in match order."""

    def __init__(self, bindings: dict[int, tuple[Pattern, SSAValue]]) -> None:
        self._bindings = bindings

    def __bool__(self) -> bool:
        return True

    def __getitem__(self, pattern: Pattern) -> SSAValue:
        return self._bindings[id(pattern)][1]

    def get(self, pattern: Pattern) -> SSAValue | None:
        entry = self._bindings.get(id(pattern))
        return entry[1] if entry is not None else None

    def bound(self) -> list[tuple[Pattern, SSAValue]]:
        """(pattern, value) pairs in match order."""
        return list(self._bindings.values())

    def node_map(self) -> dict[Pattern, list[SSAValue]]:
        """TVM's node_map: pattern -> [value]."""
        return {p: [v] for p, v in self._bindings.values()}


Bindings = dict[int, tuple["Pattern", SSAValue]]


class Pattern:
    """Base of all patterns."""

    def match(self, value: SSAValue) -> Match | None:
        bindings: Bindings = {}
        return Match(bindings) if self.bind(value, bindings) else None

    def bind(self, value: SSAValue, bindings: Bindings) -> bool:
        """Match `value`, recording bindings; on failure `bindings` may hold partial entries
        (callers that backtrack pass a copy)."""
        seen = bindings.get(id(self))
        if seen is not None:
            return seen[1] is value or self._same_op(seen[1], value)
        if not self._matches(value, bindings):
            return False
        bindings[id(self)] = (self, value)
        return True

    def _matches(self, value: SSAValue, bindings: Bindings) -> bool:
        raise NotImplementedError

    def _same_op(self, a: SSAValue, b: SSAValue) -> bool:
        """An op pattern binds the op: two results of one op are the same binding."""
        return isinstance(self, CallPattern) and _owner(a) is not None and _owner(a) is _owner(b)

    # --- combinators ---------------------------------------------------------------------

    def __or__(self, other: Pattern) -> Pattern:
        return AltPattern(self, _check(other, "alternative"))

    def optional(self, wrap: Callable[[Pattern], Pattern]) -> Pattern:
        """`wrap(self) | self`: e.g. `conv.optional(lambda x: is_op("nn.relu")(x))`."""
        return AltPattern(_check(wrap(self), "optional"), self)

    def has_attr(self, attrs: Mapping[str, Any]) -> Pattern:
        return ConstraintPattern(self, _AttrCheck(dict(attrs)), f"has_attr({attrs})")

    def has_dtype(self, dtype: Any) -> Pattern:
        want = np.dtype(dtype)
        return ConstraintPattern(self, lambda v: _dtype(v) == want, f"has_dtype({want})")

    def has_shape(self, shape: Sequence[int]) -> Pattern:
        want = tuple(int(d) for d in shape)
        return ConstraintPattern(self, lambda v: _shape(v) == want, f"has_shape({list(want)})")


def _check(p: Any, what: str) -> Pattern:
    if not isinstance(p, Pattern):
        raise PatternError(f"{what} must be a pattern, got {type(p).__name__}")
    return p


def _dtype(value: SSAValue) -> np.dtype | None:
    t = value.type
    return numpy_dtype(t.element_type) if isinstance(t, TensorType) else None


def _shape(value: SSAValue) -> tuple[int, ...] | None:
    t = value.type
    return tuple(t.get_shape()) if isinstance(t, TensorType) else None


def _owner(value: SSAValue) -> Operation | None:
    return value.owner if isinstance(value, OpResult) else None


class WildcardPattern(Pattern):
    def _matches(self, value: SSAValue, bindings: Bindings) -> bool:
        return True


class ConstantPattern(Pattern):
    def _matches(self, value: SSAValue, bindings: Bindings) -> bool:
        op = _owner(value)
        if isinstance(op, relay.BroadcastToOp):  # the compact form of a constant splat
            op = _owner(op.data)
        return isinstance(op, relay.ConstantOp)


class VarPattern(Pattern):
    def __init__(self, name: str | None) -> None:
        self.name = name

    def _matches(self, value: SSAValue, bindings: Bindings) -> bool:
        if not isinstance(value, BlockArgument):
            return False
        return self.name is None or _arg_name(value) == self.name


def _arg_name(arg: BlockArgument) -> str | None:
    fn = arg.owner.parent_op()
    attrs = getattr(fn, "arg_attrs", None)
    if attrs is not None:
        entry = attrs.data[arg.index].data.get("xrelay.name")
        if entry is not None:
            return entry.data
    return arg.name_hint


class OpPattern:
    """`is_op(name)`: call it with the operand patterns."""

    def __init__(self, name: str) -> None:
        if not name or not isinstance(name, str):
            raise PatternError(f"is_op needs an op name, got {name!r}")
        self.name = name if "." in name and name.split(".")[0] in _DIALECTS else f"relay.{name}"

    def __call__(self, *args: Pattern) -> CallPattern:
        for i, a in enumerate(args):
            _check(a, f"argument {i} of is_op('{self.name}')")
        return CallPattern(self.name, list(args))


_DIALECTS = ("relay", "qnn", "arith", "linalg", "func", "tensor")


class CallPattern(Pattern):
    def __init__(self, name: str, args: list[Pattern]) -> None:
        self.name = name
        self.args = args

    def _matches(self, value: SSAValue, bindings: Bindings) -> bool:
        op = _owner(value)
        if op is None or op.name != self.name:
            return False
        operands = list(op.operands)
        if len(self.args) == 1 and isinstance(self.args[0], TuplePattern):
            return self.args[0].bind_list(operands, bindings)
        if len(operands) != len(self.args):
            return False
        return all(p.bind(v, bindings) for p, v in zip(self.args, operands))


class TuplePattern(Pattern):
    """`is_tuple([...])`: as the only argument of is_op, the op's whole operand list."""

    def __init__(self, fields: Sequence[Pattern]) -> None:
        self.fields = [_check(f, "a tuple field") for f in fields]

    def _matches(self, value: SSAValue, bindings: Bindings) -> bool:
        raise PatternError("is_tuple matches an op's operand list: use it inside is_op(...)")

    def bind_list(self, values: list[SSAValue], bindings: Bindings) -> bool:
        if len(values) != len(self.fields):
            return False
        return all(p.bind(v, bindings) for p, v in zip(self.fields, values))


class TupleGetItemPattern(Pattern):
    def __init__(self, source: Pattern, index: int) -> None:
        self.source = _check(source, "is_tuple_get_item's source")
        self.index = index

    def _matches(self, value: SSAValue, bindings: Bindings) -> bool:
        if not isinstance(value, OpResult) or value.index != self.index:
            return False
        return self.source.bind(value, bindings)


class AltPattern(Pattern):
    def __init__(self, left: Pattern, right: Pattern) -> None:
        self.left, self.right = left, right

    def _matches(self, value: SSAValue, bindings: Bindings) -> bool:
        for option in (self.left, self.right):
            trial = dict(bindings)
            if option.bind(value, trial):
                bindings.update(trial)
                return True
        return False


class ConstraintPattern(Pattern):
    def __init__(self, inner: Pattern, check: Callable[[SSAValue], bool], text: str) -> None:
        self.inner = inner
        self.check = check
        self.text = text

    def _matches(self, value: SSAValue, bindings: Bindings) -> bool:
        return self.check(value) and self.inner.bind(value, bindings)


class _AttrCheck:
    """Compare an op's properties (as Python values) with the expected ones."""

    def __init__(self, attrs: dict[str, Any]) -> None:
        self.attrs = attrs

    def __call__(self, value: SSAValue) -> bool:
        op = _owner(value)
        if op is None:
            return False
        actual = op.attrs if hasattr(op, "attrs") and not callable(op.attrs) else {}
        for key, want in self.attrs.items():
            if key not in actual or not _equal(actual[key], want):
                return False
        return True


def _equal(actual: Any, want: Any) -> bool:
    if isinstance(want, list | tuple):
        return isinstance(actual, list | tuple) and list(actual) == list(want)
    return actual == want


def wildcard() -> Pattern:
    return WildcardPattern()


def is_constant() -> Pattern:
    return ConstantPattern()


def is_var(name: str | None = None) -> Pattern:
    return VarPattern(name)


def is_op(name: str) -> OpPattern:
    return OpPattern(name)


def is_tuple(fields: Sequence[Pattern]) -> Pattern:
    return TuplePattern(fields)


def is_tuple_get_item(source: Pattern, index: int) -> Pattern:
    return TupleGetItemPattern(source, index)
