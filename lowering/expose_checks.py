"""`expose-checks`: each `relay.check_indices` of @main becomes the smallest and largest of
its indices, computed by relay reductions and returned as one extra i64 result of @main
(two elements per checked axis, after the model's results). The module attribute
`xrelay.checks` lists, per pair, what the indices feed, the axis and its size; the runtime
(lowering/jit.py, lowering/export.py) reads the pair after every run and raises
`xrelay.Error` naming the node and the bad index. The indexed op itself keeps its clamped
addressing, so an out-of-range index never reads outside a buffer before it is reported.

Indices whose values are known here (constants) are checked now; empty ones need no check.

Before:
    %j = relay.check_indices %i, %x {what = "ONNX node 'g' (Gather)"} : ...
    %y = relay.take %x, %j : ...
    func.return %y
After:
    %l = relay.min %i : (tensor<2xi64>) -> tensor<i64>      (and relay.max, reshaped, joined)
    %y = relay.take %x, %i : ...
    func.return %y, %bounds : tensor<2x3xf32>, tensor<2xi64>
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xrelay.dialects import relay
from xrelay.dialects.constants import constant_value
from xrelay.dialects.dims import dim_str, evaluate, parse_dim, shape_of
from xrelay.dialects.dtypes import element_type
from xrelay.dialects.relay.tensor import check_index_values, index_error
from xrelay.errors import Error
from xrelay.signature import main_function

# module attribute: [[what, axis, size], ...], one per (min, max) pair of the extra result
CHECKS_ATTR = "xrelay.checks"
I64 = element_type(np.int64)


def _bounds(check: relay.CheckIndicesOp, new: list[Operation]) -> list[tuple[SSAValue, int]]:
    """(a [2] tensor of the smallest and largest index, axis) per checked axis."""
    indices = check.indices
    depth = check.attrs.depth
    rank = check.data.type.get_num_dims()
    axis = check.attrs.axis % rank

    def emit(op: Operation) -> SSAValue:
        new.append(op)
        return op.results[0]

    if indices.type.element_type != I64:
        indices = emit(relay.CastOp(indices, dtype=I64))
    parts = [(indices, axis)]
    if depth:
        last = indices.type.get_num_dims() - 1
        parts = [
            (emit(relay.StridedSliceOp(indices, begin=[j], end=[j + 1], axes=[last])), axis + j)
            for j in range(depth)
        ]
    out = []
    for values, ax in parts:
        low = emit(relay.ReshapeOp(emit(relay.MinOp(values)), newshape=(1,)))
        high = emit(relay.ReshapeOp(emit(relay.MaxOp(values)), newshape=(1,)))
        out.append((emit(relay.ConcatenateOp(low, high, axis=0)), ax))
    return out


def expose_checks(module: ModuleOp) -> None:
    main = main_function(module)
    checks = [op for op in main.walk() if isinstance(op, relay.CheckIndicesOp)]
    if not checks:
        return
    ret = main.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    pairs: list[SSAValue] = []
    table = []
    for check in checks:
        data_shape = shape_of(check.data.type)
        index_shape = shape_of(check.indices.type)
        value = constant_value(check.indices)
        if value is not None:
            axis = check.attrs.axis % len(data_shape)
            check_index_values(check.attrs.what, value, data_shape, axis, check.attrs.depth)
        elif 0 not in index_shape:  # empty indices need no check (symbols are >= 1)
            new: list[Operation] = []
            for bounds, axis in _bounds(check, new):
                pairs.append(bounds)
                size = data_shape[axis]  # a dynamic one is evaluated at run time
                table.append(
                    (check.attrs.what, axis, size if isinstance(size, int) else dim_str(size))
                )
            Rewriter.insert_op(new, InsertPoint.before(ret))
        check.result.replace_all_uses_with(check.indices)
        Rewriter.erase_op(check)
    if not pairs:
        return
    joined = pairs[0]
    if len(pairs) > 1:
        concat = relay.ConcatenateOp(*pairs, axis=0)
        Rewriter.insert_op(concat, InsertPoint.before(ret))
        joined = concat.results[0]
    Rewriter.replace_op(ret, func.ReturnOp(*ret.arguments, joined))
    inputs = list(main.function_type.inputs.data)
    outputs = [*main.function_type.outputs.data, joined.type]
    main.function_type = FunctionType.from_lists(inputs, outputs)
    if main.res_attrs is not None:
        main.res_attrs = ArrayAttr([*main.res_attrs.data, DictionaryAttr({})])
    module.attributes[CHECKS_ATTR] = ArrayAttr(
        [
            ArrayAttr(
                [
                    StringAttr(what),
                    IntegerAttr(axis, i64),
                    IntegerAttr(size, i64) if isinstance(size, int) else StringAttr(size),
                ]
            )
            for what, axis, size in table
        ]
    )


def read_checks(module: ModuleOp) -> list[tuple[str, int, int | str]]:
    """The (what, axis, size) of each pair of the extra result (none: no extra result); a
    dynamic size is its expression."""
    attr = module.attributes.get(CHECKS_ATTR)
    if not isinstance(attr, ArrayAttr):
        return []
    out = []
    for e in attr.data:
        size = e.data[2]
        out.append(
            (
                e.data[0].data,
                e.data[1].value.data,
                size.data if isinstance(size, StringAttr) else size.value.data,
            )
        )
    return out


def first_violation(
    checks: list[tuple[str, int, int | str]],
    bounds: np.ndarray,
    binding: Mapping[str, int] | None = None,
) -> Error | None:
    """The error of the first pair of `bounds` (min, max, ...) outside its axis, if any;
    `binding` gives the values of dynamic sizes' symbols."""
    for k, (what, axis, size) in enumerate(checks):
        if isinstance(size, str):
            size = evaluate(parse_dim(size), binding or {})
        low, high = int(bounds[2 * k]), int(bounds[2 * k + 1])
        if high >= size:
            return index_error(what, high, axis, size)
        if low < -size:
            return index_error(what, low, axis, size)
    return None


@dataclass(frozen=True)
class ExposeChecks(ModulePass):
    """Run-time index checks -> an extra result of @main (no options)."""

    name = "expose-checks"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        expose_checks(op)
