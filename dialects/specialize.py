"""Giving dynamic dimensions values: every tensor type of a module (block arguments,
results, function types) has its dimension expressions (dialects/dims.py) evaluated under a
binding, and every op target that lists expressions in a `dims` property (reshape's
newshape, broadcast_to's shape) gets the values. The `specialize-shapes` pass
(transforms/specialize_shapes.py) runs this and verifies; the reference executor runs it
on dynamic modules too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, FunctionType, ModuleOp, i64
from xdsl.ir import Attribute, Operation
from xdsl.rewriter import Rewriter
from xrelay.dialects.dims import (
    ANONYMOUS,
    DYNAMIC_ENTRY,
    DimsAttr,
    dim_str,
    evaluate,
    is_dynamic,
    parse_dim,
    shape_of,
    substitute,
)
from xrelay.errors import Error, ShapeError


def specialize_types(
    module: ModuleOp,
    binding: Mapping[str, int],
    locate: Callable[[Operation], str] = lambda op: op.name,
) -> None:
    """Evaluate every dynamic dimension in `module` (in place) under `binding`; raises
    `xrelay.Error` naming the op (`locate` gives its location) when one cannot be
    evaluated."""
    for op in module.walk():
        try:
            _specialize_op(op, binding)
        except ShapeError as e:
            raise Error(f"{locate(op)}: '{op.name}': {e}") from None


def _specialize_op(op: Operation, binding: Mapping[str, int]) -> None:
    for region in op.regions:
        for block in region.blocks:
            for arg in list(block.args):
                new = _value_type(arg.type, binding, f"block argument {arg.index}")
                if new is not arg.type:
                    Rewriter.replace_value_with_new_type(arg, new)
    for i, result in enumerate(list(op.results)):
        new = _value_type(result.type, binding, f"result {i}")
        if new is not result.type:
            Rewriter.replace_value_with_new_type(result, new)
    if isinstance(op, func.FuncOp):
        ft = op.function_type
        op.function_type = FunctionType.from_lists(
            [_value_type(t, binding, "argument") for t in ft.inputs],
            [_value_type(t, binding, "result") for t in ft.outputs],
        )
    dims = op.properties.get("dims")
    if isinstance(dims, DimsAttr):
        target = _target_property(op)
        it = iter(dims.data)
        values = [
            evaluate(parse_dim(next(it)), binding) if d == DYNAMIC_ENTRY else d
            for d in op.properties[target].iter_values()
        ]
        op.properties[target] = DenseArrayBase.from_list(i64, values)
        del op.properties["dims"]


def _target_property(op: Operation) -> str:
    for name in ("newshape", "shape"):
        if isinstance(op.properties.get(name), DenseArrayBase):
            return name
    raise ShapeError("has a dims property but no newshape or shape to fill")


def _value_type(t: Attribute, binding: Mapping[str, int], what: str) -> Attribute:
    if not is_dynamic(t):
        return t
    if any(dim_str(d) == ANONYMOUS for d in shape_of(t)):
        raise ShapeError(f"{what} {t} has a dimension with no name, which no binding can give")
    return substitute(t, binding)
