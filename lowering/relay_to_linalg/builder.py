"""Helpers the relay -> linalg lowerings share: an emitter that inserts ops before the relay
op being lowered, `linalg.generic` construction from affine maps and a body callback, and
scalar arithmetic that picks the arith/math op for an element type.

Every lowering writes to a fresh `tensor.empty` (destination-passing style, what bufferize
expects). Index arithmetic that affine maps cannot express (padding, gathers, concatenation)
happens inside the body with `linalg.index` and `tensor.extract`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import arith, math, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    Signedness,
    TensorType,
    bf16,
    f16,
    f32,
    i1,
)
from xdsl.dialects.linalg import attrs as linalg_attrs
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.rewriter import InsertPoint, Rewriter
from xrelay.dialects import dims as dimexpr
from xrelay.dialects.arith_extras import RemFOp
from xrelay.dialects.dims import Dim
from xrelay.dialects.dtypes import dense_from_numpy
from xrelay.dialects.tensor_extras import ReshapeOp as DynamicReshapeOp
from xrelay.errors import Error
from xrelay.ir import location_str
from xrelay.lowering.dynamic_sizes import DynamicUnsupported, SymbolSizes

index = IndexType()


def elem_of(value: SSAValue) -> Attribute:
    t = value.type
    assert isinstance(t, TensorType)
    return t.element_type


def shape_of(value: SSAValue) -> tuple[Dim, ...]:
    """A tensor value's dimensions: ints, and sympy expressions for dynamic ones (only
    lowerings listed in DYNAMIC_LOWERINGS ever see those)."""
    t = value.type
    assert isinstance(t, TensorType)
    return dimexpr.shape_of(t)


def result_shape(op: Operation, i: int = 0) -> tuple[Dim, ...]:
    t = op.results[i].type
    assert isinstance(t, TensorType)
    return dimexpr.shape_of(t)


def is_float(elem: Attribute) -> bool:
    return isinstance(elem, AnyFloat)


def is_unsigned(elem: Attribute) -> bool:
    """ui8..ui64, and i1 (a bool compares, extends and converts as an unsigned bit)."""
    return elem == i1 or (
        isinstance(elem, IntegerType) and elem.signedness.data == Signedness.UNSIGNED
    )


def dims(n: int) -> list[AffineExpr]:
    return [AffineExpr.dimension(i) for i in range(n)]


def amap(n_dims: int, results: Sequence[AffineExpr | int]) -> AffineMapAttr:
    exprs = tuple(AffineExpr.constant(r) if isinstance(r, int) else r for r in results)
    return AffineMapAttr(AffineMap(n_dims, 0, exprs))


def identity(n: int) -> AffineMapAttr:
    return amap(n, dims(n))


def broadcast_map(in_shape: Sequence[Dim], out_shape: Sequence[Dim]) -> AffineMapAttr:
    """numpy broadcasting as an indexing map: trailing-aligned, size-1 dims read index 0.
    A dynamic dimension broadcasts only against itself (one that may be 1 at run time and
    stretch, a symbol against a size, needs a specialized build)."""
    n = len(out_shape)
    offset = n - len(in_shape)
    results: list[AffineExpr | int] = []
    for i, size in enumerate(in_shape):
        out = out_shape[offset + i]
        dynamic = not (isinstance(size, int) and isinstance(out, int))
        if dynamic and size != 1 and not dimexpr.equal(size, out):
            raise DynamicUnsupported(
                f"dimension {dimexpr.dim_str(size)} broadcast to {dimexpr.dim_str(out)}"
            )
        results.append(0 if size == 1 and out != 1 else AffineExpr.dimension(offset + i))
    return amap(n, results)


def const_op(value: float | bool, elem: Attribute) -> arith.ConstantOp:
    """A scalar arith.constant of an element (or index) type."""
    if isinstance(elem, IndexType):
        return arith.ConstantOp.from_int_and_width(int(value), index)
    if is_float(elem):
        return arith.ConstantOp(FloatAttr(float(value), elem))
    assert isinstance(elem, IntegerType)
    if elem == i1:
        return arith.ConstantOp(IntegerAttr(-1 if value else 0, i1))
    return arith.ConstantOp(IntegerAttr(int(value), elem))


def accumulator_type(elem: Attribute) -> Attribute:
    """The type sums of `elem` accumulate in: f32 for the half-precision floats."""
    return f32 if elem in (f16, bf16) else elem


class Body:
    """Builds the single block of a linalg.generic: block arguments are the scalar inputs
    and outputs; helpers emit arith/math ops on them."""

    def __init__(self, arg_types: Sequence[Attribute]) -> None:
        self.block = Block(arg_types=arg_types)
        self._index_cache: dict[int, SSAValue] = {}

    @property
    def args(self) -> tuple[SSAValue, ...]:
        return self.block.args

    def add(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def idx(self, d: int) -> SSAValue:
        """The iteration index along loop dimension d."""
        if d not in self._index_cache:
            self._index_cache[d] = self.add(linalg.IndexOp(d))
        return self._index_cache[d]

    def const(self, value: float | bool, elem: Attribute) -> SSAValue:
        return self.add(const_op(value, elem))

    def iconst(self, value: int) -> SSAValue:
        return self.const(value, index)

    # --- scalar arithmetic by element type -----------------------------------------------

    def binary(self, kind: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(scalar_binary(kind, a, b))

    def cmp(self, pred: str, a: SSAValue, b: SSAValue) -> SSAValue:
        """pred in eq ne lt le gt ge; floats compare ordered (unordered for ne)."""
        if is_float(a.type):
            fp = {"eq": "oeq", "ne": "une"}.get(pred, "o" + pred)
            return self.add(arith.CmpfOp(a, b, fp))
        sign = "u" if is_unsigned(a.type) else "s"
        return self.add(arith.CmpiOp(a, b, {"eq": "eq", "ne": "ne"}.get(pred, sign + pred)))

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(arith.SelectOp(cond, a, b))

    def unary(self, kind: str, x: SSAValue) -> SSAValue:
        return scalar_unary(self, kind, x)

    def cast(self, x: SSAValue, to: Attribute) -> SSAValue:
        return scalar_cast(self, x, to)

    def size(self, size: int | SSAValue) -> SSAValue:
        """A size as an index value: a constant, or a run-time size as is."""
        return self.iconst(size) if isinstance(size, int) else size

    def in_range(self, i: SSAValue, size: int | SSAValue) -> SSAValue:
        """0 <= i < size, for an index value."""
        lo = self.cmp("ge", i, self.iconst(0))
        hi = self.cmp("lt", i, self.size(size))
        return self.add(arith.AndIOp(lo, hi))

    def clamp(self, i: SSAValue, size: int | SSAValue) -> SSAValue:
        lo = self.add(arith.MaxSIOp(i, self.iconst(0)))
        if isinstance(size, int):
            return self.add(arith.MinSIOp(lo, self.iconst(size - 1)))
        last = self.add(arith.SubiOp(size, self.iconst(1)))
        return self.add(arith.MinSIOp(lo, last))

    def affine(self, expr_terms: Sequence[tuple[int, SSAValue]], constant: int = 0) -> SSAValue:
        """sum(coefficient * index) + constant, on index values."""
        acc = self.iconst(constant)
        for coeff, value in expr_terms:
            term = value if coeff == 1 else self.add(arith.MuliOp(value, self.iconst(coeff)))
            acc = self.add(arith.AddiOp(acc, term))
        return acc

    def extract(self, source: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
        return self.add(tensor.ExtractOp(source, list(indices), elem_of(source)))


def scalar_binary(kind: str, a: SSAValue, b: SSAValue) -> Operation:
    t = a.type
    if is_float(t):
        table: dict[str, type[Operation]] = {
            "add": arith.AddfOp,
            "sub": arith.SubfOp,
            "mul": arith.MulfOp,
            "div": arith.DivfOp,
            "max": arith.MaximumfOp,
            "min": arith.MinimumfOp,
            "pow": math.PowFOp,
            "rem": RemFOp,
        }
    elif t == i1:
        table = {"and": arith.AndIOp, "or": arith.OrIOp, "xor": arith.XOrIOp}
    else:
        table = {
            "add": arith.AddiOp,
            "sub": arith.SubiOp,
            "mul": arith.MuliOp,
            "div": arith.DivSIOp,
            "floordiv": arith.FloorDivSIOp,
            "rem": arith.RemSIOp,
            "max": arith.MaxSIOp,
            "min": arith.MinSIOp,
            "and": arith.AndIOp,
            "or": arith.OrIOp,
            "xor": arith.XOrIOp,
        }
        if is_unsigned(t):
            table |= {
                "div": arith.DivUIOp,
                "floordiv": arith.DivUIOp,
                "rem": arith.RemUIOp,
                "max": arith.MaxUIOp,
                "min": arith.MinUIOp,
            }
    cls = table.get(kind)
    if cls is None:
        raise Error(f"no scalar '{kind}' for element type {t}")
    return cls(a, b)


# Math ops the hand-written bodies ask for by name. Relay's unary ops do not come through
# here: relay-to-linalg applies the math op of their row in relay.UNARY_TABLE.
MATH_UNARY: dict[str, type[Operation]] = {
    "exp": math.ExpOp,
    "log": math.LogOp,
    "rsqrt": math.RsqrtOp,
    "sqrt": math.SqrtOp,
    "floor": math.FloorOp,
}


def scalar_unary(body: Body, kind: str, x: SSAValue) -> SSAValue:
    t = x.type
    if kind in MATH_UNARY:
        return body.add(MATH_UNARY[kind](x))
    if kind == "neg":
        if is_float(t):
            return body.add(arith.NegfOp(x))
        return body.binary("sub", body.const(0, t), x)
    if kind == "abs" and is_unsigned(t):
        return x
    if kind == "abs":
        return body.add(math.AbsFOp(x) if is_float(t) else math.AbsIOp(x))
    if kind == "sign":
        zero = body.const(0, t)
        pos = body.select(body.cmp("gt", x, zero), body.const(1, t), zero)
        return body.select(body.cmp("lt", x, zero), body.const(-1, t), pos)
    if kind == "not":
        return body.binary("xor", x, body.const(True, i1))
    if kind == "bitnot":  # xor with all ones (the type's max for unsigned types)
        ones = (1 << t.width.data) - 1 if is_unsigned(t) else -1  # type: ignore[union-attr]
        return body.binary("xor", x, body.const(ones, t))
    if kind == "reciprocal":
        return body.binary("div", body.const(1, t), x)
    if kind == "sigmoid":
        e = body.add(math.ExpOp(body.unary("neg", x)))
        return body.binary("div", body.const(1, t), body.binary("add", body.const(1, t), e))
    if kind == "relu":
        return body.binary("max", x, body.const(0, t))
    if kind == "isnan":
        return body.add(arith.CmpfOp(x, x, "uno"))
    raise Error(f"no scalar '{kind}' for element type {t}")


def scalar_cast(body: Body, x: SSAValue, to: Attribute) -> SSAValue:
    src = x.type
    if src == to:
        return x
    if to == i1:
        return body.cmp("ne", x, body.const(0, src))
    if is_float(src) and is_float(to):
        wider = to.bitwidth > src.bitwidth  # type: ignore[union-attr]
        return body.add(arith.ExtFOp(x, to) if wider else arith.TruncFOp(x, to))
    if is_float(to):
        return body.add(arith.UIToFPOp(x, to) if is_unsigned(src) else arith.SIToFPOp(x, to))
    assert isinstance(to, IntegerType)
    if is_float(src):
        return body.add(arith.FPToUIOp(x, to) if is_unsigned(to) else arith.FPToSIOp(x, to))
    assert isinstance(src, IntegerType)
    if to.width.data > src.width.data:
        return body.add(arith.ExtUIOp(x, to) if is_unsigned(src) else arith.ExtSIOp(x, to))
    if to.width.data == src.width.data:  # i8 <-> ui8: the same bits
        return body.add(arith.BitcastOp(x, to))
    return body.add(arith.TruncIOp(x, to))


class Emitter:
    """Inserts the lowering of one relay op just before it."""

    def __init__(self, op: Operation, sizes: SymbolSizes | None = None) -> None:
        """`sizes`: the run-time sizes of the function's dynamic dimensions (None in a
        function with static shapes only)."""
        self.op = op
        self.rewriter = Rewriter()
        self.sizes = sizes

    def error(self, message: str) -> Error:
        return Error(f"{location_str(self.op)}: cannot lower '{self.op.name}': {message}")

    def insert(self, op: Operation) -> SSAValue:
        op.location = self.op.location
        self.rewriter.insert_op(op, InsertPoint.before(self.op))
        return op.results[0]

    def empty(self, shape: Sequence[Dim], elem: Attribute) -> SSAValue:
        t = dimexpr.make_tensor(elem, shape)
        if not dimexpr.is_dynamic(t):
            return self.insert(tensor.EmptyOp([], t))
        return self.insert(tensor.EmptyOp(self.sizes_or_fail().sizes(dimexpr.shape_of(t)), t))

    def size_value(self, d: Dim) -> int | SSAValue:
        """A dimension for a body: an int, or the index value of a dynamic one."""
        if isinstance(d, int):
            return d
        return self.sizes_or_fail().value(d)

    def full(self, shape: Sequence[Dim], elem: Attribute, value: float | bool) -> SSAValue:
        """linalg.fill of a fresh tensor with a scalar."""
        c = self.insert(const_op(value, elem))
        return self.insert(linalg.FillOp([c], [self.empty(shape, elem)]))

    def reshape(self, value: SSAValue, shape: Sequence[Dim]) -> SSAValue:
        """The same elements in another shape (row-major order kept): a tensor.reshape, a
        view once bufferized; a dynamic target's sizes are run-time values."""
        target = dimexpr.make_tensor(value.type.element_type, shape)
        if not dimexpr.is_dynamic(target):
            sizes = self.constant(np.array(target.get_shape(), np.int64))
            return self.insert(tensor.ReshapeOp(value, sizes, target))
        values = [self.sizes_or_fail().value(d) for d in dimexpr.shape_of(target)]
        sizes = self.insert(tensor.FromElementsOp(*values))
        return self.insert(DynamicReshapeOp(value, sizes, target))

    def sizes_or_fail(self) -> SymbolSizes:
        """The function's run-time sizes (DynamicUnsupported outside a dynamic @main)."""
        if self.sizes is None:
            raise DynamicUnsupported("a dynamic dimension outside @main")
        return self.sizes

    def constant(self, array: np.ndarray) -> SSAValue:
        return self.insert(arith.ConstantOp(dense_from_numpy(array)))

    def generic(
        self,
        inputs: Sequence[SSAValue],
        in_maps: Sequence[AffineMapAttr],
        outputs: Sequence[SSAValue],
        out_maps: Sequence[AffineMapAttr],
        iterators: Sequence[str],
        body_fn: Callable[[Body], Sequence[SSAValue] | SSAValue],
    ) -> list[SSAValue]:
        """A linalg.generic over `iterators` ("parallel"/"reduction"); `body_fn` gets the
        body (block args: input scalars then output scalars) and returns the yielded values."""
        body = Body([elem_of(v) for v in (*inputs, *outputs)])
        yielded = body_fn(body)
        values = [yielded] if isinstance(yielded, SSAValue) else list(yielded)
        body.block.add_op(linalg.YieldOp(*values))
        kinds = {
            "parallel": linalg_attrs.IteratorTypeAttr.parallel(),
            "reduction": linalg_attrs.IteratorTypeAttr.reduction(),
        }
        op = linalg.GenericOp(
            list(inputs),
            list(outputs),
            Region(body.block),
            [*in_maps, *out_maps],
            [kinds[k] for k in iterators],
            [v.type for v in outputs],
        )
        self.insert(op)
        return list(op.results)

    def accumulate(
        self,
        inputs: Sequence[SSAValue],
        in_maps: Sequence[AffineMapAttr],
        out_shape: Sequence[Dim],
        out_map: AffineMapAttr,
        iterators: Sequence[str],
        elem: Attribute,
        init: float,
        combine: Callable[..., SSAValue],
        acc_elem: Attribute | None = None,
    ) -> SSAValue:
        """A reduction generic into a filled accumulator. Half-precision sums accumulate in
        f32 (or in `acc_elem`) and round once at the end: `combine(body, acc, *inputs)`
        sees float inputs already widened to the accumulator's type."""
        acc_elem = acc_elem or accumulator_type(elem)
        acc = self.full(out_shape, acc_elem, init)

        def body(b: Body) -> SSAValue:
            args = [
                b.cast(a, acc_elem) if a.type == elem and is_float(elem) else a
                for a in b.args[: len(inputs)]
            ]
            return combine(b, b.args[len(inputs)], *args)

        (y,) = self.generic(inputs, in_maps, [acc], [out_map], iterators, body)
        if acc_elem != elem:
            y = self.map([y], out_shape, elem, lambda b: b.cast(b.args[0], elem))
        return y

    def map(
        self,
        inputs: Sequence[SSAValue],
        out_shape: Sequence[Dim],
        out_elem: Attribute,
        body_fn: Callable[[Body], SSAValue],
        in_maps: Sequence[AffineMapAttr] | None = None,
    ) -> SSAValue:
        """An elementwise generic over `out_shape`, inputs broadcast numpy-style by default."""
        n = len(out_shape)
        maps = (
            in_maps
            if in_maps is not None
            else [broadcast_map(shape_of(v), out_shape) for v in inputs]
        )
        (result,) = self.generic(
            inputs,
            maps,
            [self.empty(out_shape, out_elem)],
            [identity(n)],
            ["parallel"] * n,
            body_fn,
        )
        return result


Lowering = Callable[[Emitter, Any], Sequence[SSAValue] | SSAValue]
