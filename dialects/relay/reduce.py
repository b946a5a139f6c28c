"""Reduction relay ops: sum, mean, max, min, prod over a set of axes, and argmax/argmin
along one axis."""

from __future__ import annotations

from abc import ABC

from xdsl.dialects.builtin import TensorType, i64
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, result_def
from xrelay.dialects.dims import shape_of
from xrelay.errors import ShapeError

from .base import (
    Attrs,
    RelayOp,
    bool_prop,
    expect_count,
    fmt_type,
    int_prop,
    is_bool,
    norm_axes,
    norm_axis,
    opt_ints_prop,
    tensor,
)


def reduced_shape(shape: tuple[int, ...], axes: list[int], keepdims: bool) -> list[int]:
    if keepdims:
        return [1 if i in axes else d for i, d in enumerate(shape)]
    return [d for i, d in enumerate(shape) if i not in axes]


class ReduceOp(RelayOp, ABC):
    """Reduce over `axis` (every axis when absent), keeping them as size 1 if `keepdims`.

    %y = relay.sum %x {axis = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    axis = opt_ints_prop()
    keepdims = bool_prop(False)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        if is_bool(data.element_type):
            raise ShapeError(f"'{name}' does not reduce i1 tensors, got {fmt_type(data)}")
        shape = shape_of(data)
        axes = (
            list(range(len(shape)))
            if attrs.axis is None
            else norm_axes(name, attrs.axis, len(shape))
        )
        return [tensor(reduced_shape(shape, axes, attrs.keepdims), data.element_type)]


@irdl_op_definition
class SumOp(ReduceOp):
    """Sum over the axes."""

    name = "relay.sum"


@irdl_op_definition
class MeanOp(ReduceOp):
    """Arithmetic mean over the axes."""

    name = "relay.mean"


@irdl_op_definition
class MaxOp(ReduceOp):
    """Maximum over the axes."""

    name = "relay.max"


@irdl_op_definition
class MinOp(ReduceOp):
    """Minimum over the axes."""

    name = "relay.min"


@irdl_op_definition
class ProdOp(ReduceOp):
    """Product over the axes."""

    name = "relay.prod"


class ArgReduceOp(RelayOp, ABC):
    """Index (i64) of the extreme value along one `axis`; the first on ties unless
    `select_last_index`.

    %i = relay.argmax %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2xi64>
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    axis = int_prop(0)
    keepdims = bool_prop(False)
    select_last_index = bool_prop(False)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        shape = shape_of(data)
        axis = norm_axis(name, attrs.axis, len(shape))
        return [tensor(reduced_shape(shape, [axis], attrs.keepdims), i64)]


@irdl_op_definition
class ArgmaxOp(ArgReduceOp):
    """Index of the maximum along the axis."""

    name = "relay.argmax"


@irdl_op_definition
class ArgminOp(ArgReduceOp):
    """Index of the minimum along the axis."""

    name = "relay.argmin"


REDUCE_OPS = [SumOp, MeanOp, MaxOp, MinOp, ProdOp, ArgmaxOp, ArgminOp]
