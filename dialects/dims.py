"""Dynamic dimensions: a tensor dimension known only at run time, named by a symbol
(`batch`, `seq`) or an expression of symbols (`batch*seq`, `floor(h/2) + 1`).

A relay or qnn tensor type keeps such a dimension as `?` and lists the expressions of its
dynamic dimensions, in order, in a `#relay.dims` encoding:

    tensor<?x?x256xf32, #relay.dims<"batch", "seq">>
    tensor<?x256xf32, #relay.dims<"batch*seq">>

Shape rules see a type's dimensions through `shape_of` (ints and sympy expressions) and
build result types with `make_tensor`, so the same rule that checks static shapes proves
two symbolic dimensions equal (`batch*seq` and `seq*batch` are one expression) and rejects
the ones it cannot prove equal. A `?` with no expression (`tensor<?xf32>`, or `"?"` in the
list) is an unknown dimension equal to no other. Symbols are positive integers; `bind`
reads their values from concrete shapes and `substitute` makes a type static again.

sympy is imported on first use, so static models never load it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import DYNAMIC_INDEX, NoneAttr, TensorType
from xdsl.ir import Attribute, Data
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xrelay.errors import ShapeError

if TYPE_CHECKING:
    import sympy

Dim = Any  # int | sympy.Expr
ANONYMOUS = "?"
# In a reshape's newshape or a broadcast_to's shape, an entry given by an expression of the
# op's `dims` property (-1 keeps its meaning in reshape: inferred from the element count).
DYNAMIC_ENTRY = -2
# Functions an expression may use; every other identifier is a symbol.
_FUNCTIONS = ("floor", "ceiling", "Mod", "Max", "Min")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@irdl_attr_definition
class DimsAttr(Data[tuple[str, ...]]):
    """The expressions of a tensor type's dynamic dimensions, in order (a type encoding)."""

    name = "relay.dims"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> tuple[str, ...]:
        def entry() -> str:
            pos = parser.pos
            text = parser.parse_str_literal()
            try:
                return dim_str(parse_dim(text))  # canonical, so equal types compare equal
            except ShapeError as e:
                parser.raise_error(str(e), pos)

        return tuple(parser.parse_comma_separated_list(AttrParser.Delimiter.ANGLE, entry))

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_list(self.data, printer.print_string_literal)
        printer.print_string(">")


@cache
def _sympy() -> Any:
    import sympy

    return sympy


def symbol(name: str) -> sympy.Symbol:
    """The symbol of a dynamic dimension (a positive integer)."""
    if not _IDENT.fullmatch(name) or name in _FUNCTIONS:
        raise ShapeError(f"dimension name '{name}' is not an identifier (or names a function)")
    return _sympy().Symbol(name, integer=True, positive=True)


def symbol_name(text: str) -> str:
    """`text` made a valid symbol name (an ONNX dim_param may hold any string)."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", text)
    if not name or name[0].isdigit() or name in _FUNCTIONS:
        name = "d_" + name
    return name


def parse_dim(text: str) -> Dim:
    """A dimension from its textual form: an integer, `?`, or an expression of symbols."""
    text = text.strip()
    return unknown() if text == ANONYMOUS else _parse_expr(text)


@cache
def _parse_expr(text: str) -> Dim:
    if re.fullmatch(r"[0-9]+", text):
        return int(text)
    sp = _sympy()
    names = {n: symbol(n) for n in _IDENT.findall(text) if n not in _FUNCTIONS}
    funcs = {"floor": sp.floor, "ceiling": sp.ceiling, "Mod": sp.Mod, "Max": sp.Max, "Min": sp.Min}
    try:
        from sympy.parsing.sympy_parser import parse_expr

        value = parse_expr(text, local_dict={**names, **funcs}, global_dict={"Integer": sp.Integer})
    except Exception as e:  # noqa: BLE001 - sympy raises many kinds on malformed text
        raise ShapeError(f"malformed dimension expression '{text}': {e}") from None
    if not isinstance(value, sp.Expr) or not (value.is_integer or value.free_symbols):
        raise ShapeError(f"dimension expression '{text}' is not an integer expression")
    return normalize(value)


def unknown() -> Dim:
    """A dynamic dimension equal to no other."""
    return _sympy().Dummy("unknown", integer=True, positive=True)


def normalize(d: Dim) -> Dim:
    """An int for a constant, else the expression (sympy simplifies products and sums)."""
    if isinstance(d, int):
        return d
    d = _sympy().sympify(d)
    return int(d) if d.is_Integer else d


def is_static_dim(d: Dim) -> bool:
    return isinstance(d, int)


def dim_str(d: Dim) -> str:
    if isinstance(d, int):
        return str(d)
    if any(isinstance(s, _sympy().Dummy) for s in d.free_symbols):
        return ANONYMOUS
    return str(d).replace(" ", "")


def shape_of(t: TensorType) -> tuple[Dim, ...]:
    """The dimensions of a tensor type: ints, and sympy expressions for dynamic ones."""
    shape = t.get_shape()
    if DYNAMIC_INDEX not in shape:
        return shape
    encoding = t.encoding
    exprs = (
        encoding.data
        if isinstance(encoding, DimsAttr)
        else (ANONYMOUS,) * shape.count(DYNAMIC_INDEX)
    )
    if len(exprs) != shape.count(DYNAMIC_INDEX):
        raise ShapeError(
            f"{t}: {shape.count(DYNAMIC_INDEX)} dynamic dimensions but {len(exprs)} expressions"
        )
    it = iter(exprs)
    return tuple(d if d != DYNAMIC_INDEX else parse_dim(next(it)) for d in shape)


def make_tensor(elem: Attribute, shape: Iterable[Dim]) -> TensorType:
    """A tensor type of these dimensions (ints or expressions)."""
    dims = [normalize(d) for d in shape]
    exprs = [dim_str(d) for d in dims if not isinstance(d, int)]
    if any(isinstance(d, int) and d < 0 for d in dims):
        raise ShapeError(f"negative dimension in {[dim_str(d) for d in dims]}")
    static = [d if isinstance(d, int) else DYNAMIC_INDEX for d in dims]
    if not exprs:
        return TensorType(elem, static)
    if all(e == ANONYMOUS for e in exprs):
        return TensorType(elem, static)
    return TensorType(elem, static, DimsAttr(tuple(exprs)))


def is_dynamic(t: Attribute) -> bool:
    return isinstance(t, TensorType) and DYNAMIC_INDEX in t.get_shape()


def symbols_of(t: TensorType) -> set[str]:
    names: set[str] = set()
    for d in shape_of(t):
        if not isinstance(d, int):
            names |= {s.name for s in d.free_symbols if not isinstance(s, _sympy().Dummy)}
    return names


def fmt_dims(shape: Sequence[Dim]) -> str:
    """`batch x 3 x 224`-style text for messages: `[batch, 3, 224]`."""
    return "[" + ", ".join(dim_str(d) for d in shape) + "]"


def evaluate(d: Dim, binding: Mapping[str, int]) -> int:
    """The value of a dimension under a binding of its symbols."""
    if isinstance(d, int):
        return d
    free = {s.name for s in d.free_symbols}
    missing = free - set(binding)
    if missing:
        raise ShapeError(f"dimension {dim_str(d)} uses unbound symbols {sorted(missing)}")
    value = d.subs({symbol(n): int(binding[n]) for n in free})
    if not value.is_Integer:
        raise ShapeError(f"dimension {dim_str(d)} is not an integer under {dict(binding)}")
    return int(value)


def substitute(t: Attribute, binding: Mapping[str, int]) -> Attribute:
    """`t` with its dynamic dimensions evaluated under `binding` (other types unchanged)."""
    if not is_dynamic(t):
        return t
    assert isinstance(t, TensorType)
    shape = [evaluate(d, binding) for d in shape_of(t)]
    if any(d < 0 for d in shape):
        raise ShapeError(f"{t} has a negative dimension under {dict(binding)}")
    return TensorType(t.element_type, shape, NoneAttr())


def prod(dims: Iterable[Dim]) -> Dim:
    out: Dim = 1
    for d in dims:
        out = out * d
    return normalize(out)


def equal(a: Dim, b: Dim) -> bool:
    """Whether two dimensions are provably equal."""
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return _sympy().simplify(_sympy().sympify(a) - b) == 0


def simplify_ratio(a: Dim, b: Dim) -> Dim:
    """a / b, simplified (a whole number when b divides a)."""
    return _sympy().simplify(_sympy().sympify(a) / b)


def products(rows: Sequence[Sequence[Dim | str]]) -> Callable[[Mapping[str, int]], list[int]]:
    """For rows of factors (ints, expressions or their text), a function of a binding that
    returns each row's product: compiled once (sympy's lambdify over plain Python ints), so
    code that runs per call (a dynamic build's result shapes, its buffer sizes) does not
    substitute into expressions every time."""
    sp = _sympy()
    exprs = []
    for row in rows:
        expr = sp.Integer(1)
        for f in row:
            expr = expr * (parse_dim(f) if isinstance(f, str) else f)
        exprs.append(expr)
    names = sorted({s.name for e in exprs for s in e.free_symbols})
    fn = sp.lambdify([symbol(n) for n in names], exprs, modules="math")

    def evaluate_rows(binding: Mapping[str, int]) -> list[int]:
        return [int(v) for v in fn(*(int(binding[n]) for n in names))]

    evaluate_rows.names = names  # type: ignore[attr-defined]
    return evaluate_rows
