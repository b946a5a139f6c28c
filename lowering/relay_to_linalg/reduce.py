"""Lowerings of dialects/relay/reduce.py: reductions as linalg.generic with reduction
iterators over a filled accumulator."""

from __future__ import annotations

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import f32, f64, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.ir.affine import AffineExpr
from xrelay.dialects import relay
from xrelay.dialects.dims import Dim
from xrelay.dialects.dims import prod as dim_prod
from xrelay.dialects.dtypes import numpy_dtype
from xrelay.lowering.dynamic_sizes import DynamicUnsupported
from xrelay.lowering.relay_to_linalg.builder import (
    Body,
    Emitter,
    amap,
    dims,
    identity,
    is_float,
    result_shape,
    shape_of,
)

# f32 sums over at least this many values accumulate in f64
WIDE_SUM_COUNT = 1024


def lowest(elem: Attribute) -> float | int:
    return -np.inf if is_float(elem) else int(np.iinfo(numpy_dtype(elem)).min)


def highest(elem: Attribute) -> float | int:
    return np.inf if is_float(elem) else int(np.iinfo(numpy_dtype(elem)).max)


def reduce_into(
    e: Emitter, data: SSAValue, axes: list[int], keepdims: bool, init: float, kind: str
) -> SSAValue:
    """Reduce `data` over `axes` with the scalar op `kind`, starting from `init`."""
    shape = shape_of(data)
    rank = len(shape)
    elem = data.type.element_type
    d = dims(rank)
    out_shape = (
        [1 if i in axes else n for i, n in enumerate(shape)]
        if keepdims
        else [n for i, n in enumerate(shape) if i not in axes]
    )
    out_exprs: list[AffineExpr | int] = (
        [0 if i in axes else d[i] for i in range(rank)]
        if keepdims
        else [d[i] for i in range(rank) if i not in axes]
    )
    iterators = ["reduction" if i in axes else "parallel" for i in range(rank)]
    count = dim_prod(shape[a] for a in axes)
    # a long f32 sum accumulates in f64 (sequential f32 loses about count * 2^-24 of the
    # total: 1 % over 10^6 values); short ones stay in f32, which the vector units prefer;
    # a count known only at run time is taken as long
    long = not isinstance(count, int) or count >= WIDE_SUM_COUNT
    wide = f64 if kind == "add" and elem == f32 and long else None
    return e.accumulate(
        [data],
        [identity(rank)],
        out_shape,
        amap(rank, out_exprs),
        iterators,
        elem,
        init,
        lambda b, acc, x: b.binary(kind, acc, x),
        acc_elem=wide,
    )


REDUCERS = {
    relay.SumOp: ("add", lambda elem: 0),
    relay.MeanOp: ("add", lambda elem: 0),
    relay.ProdOp: ("mul", lambda elem: 1),
    relay.MaxOp: ("max", lowest),
    relay.MinOp: ("min", highest),
}


def lower_reduce(e: Emitter, op) -> SSAValue:
    shape = shape_of(op.data)
    rank = len(shape)
    axes = list(range(rank)) if op.attrs.axis is None else sorted(a % rank for a in op.attrs.axis)
    if not axes:
        return op.data
    kind, init = REDUCERS[type(op)]
    elem = op.data.type.element_type
    result = reduce_into(e, op.data, axes, op.attrs.keepdims, init(elem), kind)
    if isinstance(op, relay.MeanOp):
        count = dim_prod(shape[a] for a in axes)
        result = e.map(
            [result],
            result_shape(op),
            elem,
            lambda b: b.binary("div", b.args[0], count_value(e, b, count, elem)),
        )
    return result


def count_value(e: Emitter, b: Body, count: Dim, elem: Attribute) -> SSAValue:
    """A number of elements as a scalar of `elem` in a generic's body: a constant, or the
    run-time size converted (a dynamic count)."""
    if isinstance(count, int):
        return b.const(count, elem)
    if e.sizes is None:
        raise DynamicUnsupported("a dynamic count outside @main")
    n = b.add(arith.IndexCastOp(e.sizes.value(count), i64))
    return b.cast(n, elem)


def lower_arg_reduce(e: Emitter, op) -> SSAValue:
    shape = shape_of(op.data)
    rank = len(shape)
    axis = op.attrs.axis % rank
    elem = op.data.type.element_type
    out_shape = list(op.results[0].type.get_shape())
    d = dims(rank)
    out_exprs: list[AffineExpr | int] = (
        [0 if i == axis else d[i] for i in range(rank)]
        if op.attrs.keepdims
        else [d[i] for i in range(rank) if i != axis]
    )
    is_max = isinstance(op, relay.ArgmaxOp)
    best = e.full(out_shape, elem, lowest(elem) if is_max else highest(elem))
    where = e.full(out_shape, i64, 0)
    pred = ("ge" if is_max else "le") if op.attrs.select_last_index else ("gt" if is_max else "lt")

    def body(b: Body) -> list[SSAValue]:
        x, acc, acc_i = b.args
        i = b.add(arith.IndexCastOp(b.idx(axis), i64))
        better = b.cmp(pred, x, acc)
        if is_float(elem):
            # NaN wins, as numpy and the ONNX reference have it: the first NaN, or the
            # last with select_last_index
            x_nan = b.unary("isnan", x)
            if not op.attrs.select_last_index:
                x_nan = b.add(arith.AndIOp(x_nan, b.add(arith.CmpfOp(acc, acc, "ord"))))
            better = b.add(arith.OrIOp(better, x_nan))
        return [b.select(better, x, acc), b.select(better, i, acc_i)]

    iterators = ["reduction" if i == axis else "parallel" for i in range(rank)]
    out_map = amap(rank, out_exprs)
    _, index = e.generic(
        [op.data], [identity(rank)], [best, where], [out_map, out_map], iterators, body
    )
    return index


LOWERINGS = {
    **{cls: lower_reduce for cls in REDUCERS},
    relay.ArgmaxOp: lower_arg_reduce,
    relay.ArgminOp: lower_arg_reduce,
}

DYNAMIC = frozenset({lower_reduce})
