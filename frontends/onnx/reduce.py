"""ONNX reductions -> relay: Reduce{Sum,Mean,Max,Min,Prod}, ArgMax, ArgMin."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dims import shape_of
from xrelay.dialects.dtypes import element_type
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.registry import onnx_op
from xrelay.frontends.onnx.symbolic import is_symbolic

# op type -> (relay op, first opset where axes is an input rather than an attribute)
REDUCES = {
    "ReduceSum": (relay.SumOp, 13),
    "ReduceMean": (relay.MeanOp, 18),
    "ReduceMax": (relay.MaxOp, 18),
    "ReduceMin": (relay.MinOp, 18),
    "ReduceProd": (relay.ProdOp, 18),
}


def _axes(b: Node, axes_input_since: int) -> list[int] | None:
    """The reduction axes (None: all), or [] for a no-op reduction."""
    if b.opset >= axes_input_since:
        axes = [int(a) for a in b.const(1)] if b.has_input(1) else None
    else:
        axes = b.attr("axes", None)
    if not axes:
        return [] if b.attr("noop_with_empty_axes", 0) else None
    return list(axes)


def _reduce(b: Node) -> SSAValue:
    cls, axes_input_since = REDUCES[b.op_type]
    axes = _axes(b, axes_input_since)
    if axes == []:
        return b.input(0)
    return b.emit(cls(b.input(0), axis=axes, keepdims=bool(b.attr("keepdims", 1))))


for _name in REDUCES:
    onnx_op(_name)(_reduce)


# op type -> (first opset with axes as an input, (pre, reduction, post)) where pre/post are
# elementwise relay ops applied before and after the reduction
COMPOSED = {
    "ReduceSumSquare": (18, ("square", relay.SumOp, None)),
    "ReduceL1": (18, (relay.AbsOp, relay.SumOp, None)),
    "ReduceL2": (18, ("square", relay.SumOp, relay.SqrtOp)),
    "ReduceLogSum": (18, (None, relay.SumOp, relay.LogOp)),
    "ReduceLogSumExp": (18, ("shifted_exp", relay.SumOp, relay.LogOp)),
}


def _composed_reduce(b: Node) -> SSAValue:
    since, (pre, reduce, post) = COMPOSED[b.op_type]
    axes = _axes(b, since)
    keepdims = bool(b.attr("keepdims", 1))
    x = b.input(0)
    if axes == []:
        axes, keepdims = [], True  # no-op reduction: apply pre/post elementwise
    shift = None
    if pre == "square":
        x = b.emit(relay.MultiplyOp(x, x))
    elif pre == "shifted_exp":  # log(sum(exp(x - max))) + max never overflows
        shift = b.emit(relay.MaxOp(x, axis=axes or None, keepdims=True))
        x = b.emit(relay.ExpOp(b.emit(relay.SubtractOp(x, shift))))
    elif pre is not None:
        x = b.emit(pre(x))
    y = b.emit(reduce(x, axis=axes or None, keepdims=keepdims)) if axes != [] else x
    if post is not None:
        y = b.emit(post(y))
    if shift is not None:
        if not keepdims:
            shift = b.emit(relay.ReshapeOp(shift, newshape=shape_of(y.type)))
        y = b.emit(relay.AddOp(y, shift))
    return y


for _name in COMPOSED:
    onnx_op(_name)(_composed_reduce)


def _arg_reduce(b: Node) -> SSAValue:
    cls = relay.ArgmaxOp if b.op_type == "ArgMax" else relay.ArgminOp
    return b.emit(
        cls(
            b.input(0),
            axis=b.attr("axis", 0),
            keepdims=bool(b.attr("keepdims", 1)),
            select_last_index=bool(b.attr("select_last_index", 0)),
        )
    )


onnx_op("ArgMax")(_arg_reduce)
onnx_op("ArgMin")(_arg_reduce)


TOPK_MAX_K = 64


@onnx_op("TopK", since=10)
def top_k(b: Node) -> list[SSAValue]:
    """The k largest (or smallest) values along the axis, in order, with their indices
    (equal values: the lower index first): k rounds of arg-max, each taking the winner
    out by masking its position (k is at most TOPK_MAX_K)."""
    x = b.input(0)
    shape = b.shape(0)
    rank = len(shape)
    axis = b.axis(b.attr("axis", -1), rank)
    if b.opset >= 10 and (not b.is_const(1) or is_symbolic(b.const(1))):
        return _run_time_top_k(b, axis)
    k = int(np.asarray(b.const(1)).reshape(-1)[0]) if b.opset >= 10 else int(b.attr("k"))
    if not 0 <= k <= shape[axis]:
        raise b.error(f"k = {k} is outside [0, {shape[axis]}]")
    if k > TOPK_MAX_K:
        raise b.unsupported(f"TopK with k = {k} (at most {TOPK_MAX_K})")
    if k == 0:
        raise b.unsupported("TopK with k = 0 (an empty result)")
    largest = bool(b.attr("largest", 1)) if b.opset >= 11 else True
    dtype = np.dtype(b.dtype(0))
    if dtype.kind == "f":
        worst = -np.inf if largest else np.inf
    else:
        info = np.iinfo(dtype)
        worst = info.min if largest else info.max
    position = [1] * rank
    position[axis] = shape[axis]
    iota = b.constant(np.arange(shape[axis], dtype=np.int64).reshape(position))
    pick = relay.ArgmaxOp if largest else relay.ArgminOp
    taken = b.constant(np.asarray(worst, dtype))
    values, indices = [], []
    rest = x
    for _ in range(k):
        index = b.emit(pick(rest, axis=axis, keepdims=True))
        index = b.emit(relay.CastOp(index, dtype=element_type(np.int64)))
        values.append(b.emit(relay.GatherOp(x, index, axis=axis)))
        indices.append(index)
        hit = b.emit(relay.EqualOp(iota, index))
        rest = b.emit(relay.WhereOp(hit, taken, rest))
    if k == 1:
        return [values[0], indices[0]]
    return [
        b.emit(relay.ConcatenateOp(*values, axis=axis)),
        b.emit(relay.ConcatenateOp(*indices, axis=axis)),
    ]


def _run_time_top_k(b: Node, axis: int) -> list[SSAValue]:
    """TopK whose k is computed at run time: a result of data-dependent size (relay.topk,
    computed by the VM). Sorted output only (`sorted` = 0 allows any order: sorted is one)."""
    k = b.input(1)
    if b.dtype(1) != np.int64 or b.shape(1) not in ((), (1,)):
        raise b.error(f"k must be one int64, got {b.dtype(1)}{list(b.shape(1))}")
    if b.shape(1) == (1,):
        k = b.emit(relay.ReshapeOp(k, newshape=[]))
    largest = int(b.attr("largest", 1)) if b.opset >= 11 else 1
    size = b.importer.fresh_symbol(f"{b.name}_k")
    op = b.emit(relay.TopKOp(b.input(0), k, axis=axis, largest=largest, size=size))
    return list(op.results)
