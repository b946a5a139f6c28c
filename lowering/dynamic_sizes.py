"""Run-time sizes in the lowering: the value of a dynamic dimension as an `index` SSA value.

A dynamic dimension of a tensor type is an expression of symbols (`batch`, `seq*batch`,
`floor(h/2)+1`; dialects/dims.py). In `@main` every symbol is the size of some axis of an
argument (`tensor.dim %x, 0`), and every expression is integer arithmetic on those
(`arith.muli`, `arith.floordivsi`, ...). `SymbolSizes` materializes both once per function,
at its top, so every later op can use them: `tensor.empty` sizes, the sizes the runtime
GEMM takes, loop bounds. A module whose symbols are not all sizes of `@main`'s arguments,
or an expression outside integer arithmetic, is `DynamicUnsupported`: `build` then
compiles each binding of the symbols instead (lowering/dynamic.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects import arith, func, memref, tensor
from xdsl.dialects.builtin import IndexType, MemRefType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xrelay.dialects import dims
from xrelay.errors import Error

index = IndexType()


class DynamicUnsupported(Error):
    """A module with dynamic dimensions that the lowering cannot compile for all sizes at
    once (an op without a dynamic lowering, a symbol no argument gives)."""


def is_dynamic_function(fn: func.FuncOp) -> bool:
    return any(dims.is_dynamic(t) for t in (*fn.function_type.inputs, *fn.function_type.outputs))


def symbol_sources(fn: func.FuncOp) -> dict[str, tuple[int, int]]:
    """Each symbol of the function's argument types -> (argument, axis) that gives it: the
    first axis whose dimension is exactly that symbol."""
    sources: dict[str, tuple[int, int]] = {}
    for i, t in enumerate(fn.function_type.inputs):
        if not dims.is_dynamic(t):
            continue
        for axis, d in enumerate(dims.shape_of(t)):
            if not isinstance(d, int) and d.is_Symbol and not d.is_Dummy:
                sources.setdefault(d.name, (i, axis))
    return sources


class SymbolSizes:
    """Index values of dimension expressions in one function, inserted at its top (after
    one another, in first-request order) and reused."""

    def __init__(self, fn: func.FuncOp, args: Sequence[SSAValue] | None = None) -> None:
        """`args`: the values of the function's arguments (tensors, or their buffers during
        bufferize; default: the block's arguments)."""
        self.fn = fn
        self.block = fn.body.block
        self.args = list(args) if args is not None else list(self.block.args)
        self.sources = symbol_sources(fn)
        self.values: dict[Any, SSAValue] = {}
        self.consts: dict[int, SSAValue] = {}
        self.last: Operation | None = None
        self.rewriter = Rewriter()

    def _insert(self, op: Operation) -> SSAValue:
        point = (
            InsertPoint.after(self.last)
            if self.last is not None
            else InsertPoint.at_start(self.block)
        )
        self.rewriter.insert_op(op, point)
        self.last = op
        return op.results[0]

    def const(self, value: int) -> SSAValue:
        if value not in self.consts:
            self.consts[value] = self._insert(arith.ConstantOp.from_int_and_width(value, index))
        return self.consts[value]

    def symbol(self, name: str) -> SSAValue:
        source = self.sources.get(name)
        if source is None:
            raise DynamicUnsupported(
                f"dimension '{name}' is not the size of an axis of an input of "
                f"@{self.fn.sym_name.data}"
            )
        arg, axis = source
        value = self.args[arg]
        dim = memref.DimOp if isinstance(value.type, MemRefType) else tensor.DimOp
        return self._insert(dim(value, self.const(axis)))

    def value(self, d: dims.Dim) -> SSAValue:
        """The index value of a dimension (an int or an expression of symbols)."""
        if isinstance(d, int):
            return self.const(d)
        key = dims.dim_str(d)
        if key == dims.ANONYMOUS:
            raise DynamicUnsupported("a dimension of unknown size has no run-time value")
        if key not in self.values:
            self.values[key] = self._expr(d)
        return self.values[key]

    def sizes(self, shape: Sequence[dims.Dim]) -> list[SSAValue]:
        """The values of the dynamic entries of a shape, in order (tensor.empty's operands)."""
        return [self.value(d) for d in shape if not isinstance(d, int)]

    def _expr(self, e: Any) -> SSAValue:
        sp = dims._sympy()
        if e.is_Integer:
            return self.const(int(e))
        if e.is_Symbol:
            return self.symbol(e.name)
        if isinstance(e, sp.Add):
            return self._fold(arith.AddiOp, e.args)
        if isinstance(e, sp.Mul) and all(a.is_integer for a in e.args):
            return self._fold(arith.MuliOp, e.args)
        if isinstance(e, sp.Pow) and e.exp.is_Integer and int(e.exp) > 0:
            return self._fold(arith.MuliOp, [e.base] * int(e.exp))
        if isinstance(e, sp.Max | sp.Min):
            return self._fold(arith.MaxSIOp if isinstance(e, sp.Max) else arith.MinSIOp, e.args)
        if isinstance(e, sp.floor | sp.ceiling):
            num, den = sp.fraction(sp.together(e.args[0]))
            if not den.is_Integer or int(den) <= 0:
                raise DynamicUnsupported(f"cannot compute the dimension {dims.dim_str(e)}")
            if isinstance(e, sp.ceiling):  # ceil(n/d) = floor((n + d - 1)/d) for d > 0
                num = num + den - 1
            n = self.value(dims.normalize(num))
            return self._insert(arith.FloorDivSIOp(n, self.const(int(den))))
        if isinstance(e, sp.Mod):
            return self._insert(arith.RemSIOp(self.value(e.args[0]), self.value(e.args[1])))
        raise DynamicUnsupported(f"cannot compute the dimension {dims.dim_str(e)}")

    def _fold(self, cls: type[Operation], args: Sequence[Any]) -> SSAValue:
        acc = self.value(dims.normalize(args[0]))
        for a in args[1:]:
            acc = self._insert(cls(acc, self.value(dims.normalize(a))))
        return acc
