"""Giving dynamic dimensions values: every tensor type of a module (block arguments,
results, function types) has its dimension expressions (dialects/dims.py) evaluated under a
binding, and every op target that lists expressions in a `dims` property (reshape's
newshape, broadcast_to's shape) gets the values. The `specialize-shapes` pass
(transforms/specialize_shapes.py) runs this and verifies; the reference executor runs it
on dynamic modules too.

A module with `relay.deferred` nodes (dialects/relay/deferred.py) also needs the values of
the graph inputs they read: `specialize_types(module, binding, values=...)` converts each
one, in program order, with those values, and binds the fresh symbols of its results to
the sizes the conversion gives, so the ops after it specialize with them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, FunctionType, ModuleOp, i64
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.rewriter import Rewriter
from xrelay.dialects.constants import constant_value
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
from xrelay.dialects.relay.deferred import DeferredOp, expand
from xrelay.dialects.relay.tensor import ShapeOfOp
from xrelay.errors import Error, ShapeError

Evaluator = Callable[[Operation, list[np.ndarray]], list[np.ndarray]]


def specialize_types(
    module: ModuleOp,
    binding: Mapping[str, int],
    locate: Callable[[Operation], str] = lambda op: op.name,
    values: Mapping[int, np.ndarray] | None = None,
    evaluate_op: Evaluator | None = None,
) -> None:
    """Evaluate every dynamic dimension in `module` (in place) under `binding`; raises
    `xrelay.Error` naming the op (`locate` gives its location) when one cannot be
    evaluated. `values` (by @main argument index) are the run-time values `relay.deferred`
    nodes read, directly or through a few ops of shape arithmetic, which `evaluate_op`
    computes (the reference executor's); their results' symbols join the binding as each
    node is converted."""
    binding = dict(binding)
    functions = []
    value_of = _Values(values or {}, evaluate_op)
    for op in list(module.walk()):
        try:
            if isinstance(op, DeferredOp):
                _expand_deferred(op, binding, value_of)
            elif isinstance(op, func.FuncOp):
                _specialize_op(op, binding, function_type=False)
                functions.append(op)
            else:
                _specialize_op(op, binding)
        except ShapeError as e:
            raise Error(f"{locate(op)}: '{op.name}': {e}") from None
    for fn in functions:  # after the body: deferred nodes' symbols are bound by then
        try:
            _specialize_function_type(fn, binding)
        except ShapeError as e:
            raise Error(f"{locate(fn)}: '{fn.name}': {e}") from None


def has_deferred(module: ModuleOp) -> bool:
    return any(isinstance(op, DeferredOp) for op in module.walk())


def deferred_inputs(fn: func.FuncOp) -> list[int]:
    """The argument indices of `fn` whose values `relay.deferred` nodes read (directly, or
    through the ops that compute their value operands)."""
    found: set[int] = set()
    seen: set[Operation] = set()
    stack = [
        op.inputs[i] for op in fn.walk() if isinstance(op, DeferredOp) for i in op.value_indices
    ]
    while stack:
        value = stack.pop()
        if isinstance(value, BlockArgument):
            if value.block is fn.body.block:
                found.add(value.index)
        elif isinstance(value.owner, Operation) and value.owner not in seen:
            seen.add(value.owner)
            if constant_value(value) is None and not isinstance(value.owner, ShapeOfOp):
                stack.extend(value.owner.operands)
    return sorted(found)


class _Values:
    """The values of SSA values a deferred node reads: @main arguments' from the run,
    constants', and those of the ops between (each evaluated once)."""

    def __init__(self, args: Mapping[int, np.ndarray], evaluate_op: Evaluator | None) -> None:
        self.args, self.evaluate_op = args, evaluate_op
        self.known: dict[SSAValue, np.ndarray] = {}

    def __call__(self, value: SSAValue) -> np.ndarray | None:
        if isinstance(value, BlockArgument):
            return self.args.get(value.index)
        if value in self.known:
            return self.known[value]
        constant = constant_value(value)
        if constant is not None:
            return constant
        op = value.owner
        if isinstance(op, ShapeOfOp):  # its operand's type is specialized by now
            shape = op.operands[0].type.get_shape()
            return np.asarray(shape, dtype=np.int64) if -1 not in shape else None
        if self.evaluate_op is None or not isinstance(op, Operation) or op.regions:
            return None
        operands = [self(v) for v in op.operands]
        if any(v is None for v in operands):
            return None
        for result, array in zip(op.results, self.evaluate_op(op, operands)):
            self.known[result] = array
        return self.known[value]


def _expand_deferred(op: DeferredOp, binding: dict[str, int], value_of: _Values) -> None:
    known: dict[int, np.ndarray] = {}
    for i in op.value_indices:
        operand = op.inputs[i]
        value = value_of(operand)
        if value is None and isinstance(operand, BlockArgument):
            raise ShapeError(
                f"{op.op_type.data} reads argument {operand.index} as a value: give its "
                "value (xrelay.build and the debug executor take it from each run's inputs)"
            )
        if value is None:
            raise ShapeError(
                f"{op.op_type.data} reads operand {i} as a value, but it is not computed from "
                "graph inputs and constants alone"
            )
        known[i] = np.asarray(value)
    results = list(expand(op, known))
    if len(results) != len(op.outputs):
        raise ShapeError(
            f"{op.op_type.data} gave {len(results)} results for {len(op.outputs)} declared"
        )
    for i, (old, new) in enumerate(zip(op.outputs, results)):
        old_shape, new_type = shape_of(old.type), new.type
        new_shape = shape_of(new_type)
        if len(old_shape) != len(new_shape) or old.type.element_type != new_type.element_type:
            raise ShapeError(f"result {i} is {new_type}, but {old.type} was declared")
        for d, size in zip(old_shape, new_shape):
            if not isinstance(size, int):
                raise ShapeError(f"result {i} is {new_type}, which is still dynamic")
            if isinstance(d, int):
                if d != size:
                    raise ShapeError(f"result {i} is {new_type}, but {old.type} was declared")
            elif d.is_Dummy:
                continue  # an unknown dimension (`?`): any size, equal to no other
            elif d.is_Symbol:
                if binding.setdefault(d.name, size) != size:
                    raise ShapeError(
                        f"result {i} has size {size} where '{d.name}' is {binding[d.name]}"
                    )
            elif evaluate(d, binding) != size:
                raise ShapeError(f"result {i} is {new_type}, but {old.type} was declared")
        old.replace_all_uses_with(new)
    op.detach()
    op.erase()


def specialize_op(op: Operation, binding: Mapping[str, int]) -> None:
    """One op's types (results, block arguments) and `dims` property under `binding`."""
    _specialize_op(op, binding, function_type=False)


def _specialize_op(op: Operation, binding: Mapping[str, int], function_type: bool = True) -> None:
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
    if function_type and isinstance(op, func.FuncOp):
        _specialize_function_type(op, binding)
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


def _specialize_function_type(op: func.FuncOp, binding: Mapping[str, int]) -> None:
    """Arguments and results under `binding`; a result with an unknown (`?`) dimension
    takes the type its `func.return` operand has by now (a deferred node's result)."""
    ft = op.function_type
    ret = op.body.blocks.last.last_op if op.body.blocks else None
    returned = list(ret.operands) if isinstance(ret, func.ReturnOp) else []
    outputs = []
    for i, t in enumerate(ft.outputs):
        if (
            is_dynamic(t)
            and any(dim_str(d) == ANONYMOUS for d in shape_of(t))
            and i < len(returned)
            and not is_dynamic(returned[i].type)
        ):
            outputs.append(returned[i].type)
        else:
            outputs.append(_value_type(t, binding, "result"))
    op.function_type = FunctionType.from_lists(
        [_value_type(t, binding, "argument") for t in ft.inputs], outputs
    )


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
