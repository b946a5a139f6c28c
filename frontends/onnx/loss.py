"""ONNX losses composed of relay ops: NegativeLogLikelihoodLoss and
SoftmaxCrossEntropyLoss (log_softmax, then the same NLL), with class weights,
ignore_index and none/sum/mean reduction."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dims import prod, shape_of
from xrelay.frontends.common import dim_scalar
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.registry import onnx_op

REDUCTIONS = ("none", "sum", "mean")


def _reduction(b: Node) -> str:
    reduction = b.attr("reduction", "mean")
    if reduction not in REDUCTIONS:
        raise b.error(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
    return reduction


def nll(b: Node, log_prob: SSAValue, target: SSAValue, weight: SSAValue | None) -> SSAValue:
    """-log_prob[n, target[n, d...], d...] * weight[target], reduced; log_prob [N, C, d...],
    target [N, d...]. Targets equal to ignore_index count with weight 0."""
    elem = log_prob.type.element_type
    dtype = np.dtype(b.dtype(0))
    ignore = b.attr("ignore_index", None) if b.has_attr("ignore_index") else None
    mask = None
    if ignore is not None:
        ignored = b.constant(np.asarray(ignore, np.int64).astype(b.dtype(1)))
        mask = b.emit(relay.NotEqualOp(target, ignored))
        zero_index = b.constant(np.zeros((), b.dtype(1)))
        target = b.emit(relay.WhereOp(mask, target, zero_index))
    picked = b.emit(relay.GatherOp(log_prob, b.emit(relay.ExpandDimsOp(target, axis=1)), axis=1))
    loss = b.emit(relay.NegativeOp(b.emit(relay.SqueezeOp(picked, axis=(1,)))))
    weights = None
    if weight is not None:
        weights = b.emit(relay.TakeOp(weight, target, axis=0))
    if mask is not None:
        as_float = b.emit(relay.CastOp(mask, dtype=elem))
        weights = as_float if weights is None else b.emit(relay.MultiplyOp(weights, as_float))
    if weights is not None:
        loss = b.emit(relay.MultiplyOp(loss, weights))
    reduction = _reduction(b)
    if reduction == "none":
        return loss
    total = b.emit(relay.SumOp(loss))
    if reduction == "sum":
        return total
    if weights is None:
        count = dim_scalar(b, prod(shape_of(target.type)), dtype)  # run time if dynamic
        return b.emit(relay.DivideOp(total, count))
    return b.emit(relay.DivideOp(total, b.emit(relay.SumOp(weights))))


@onnx_op("NegativeLogLikelihoodLoss", since=12)
def negative_log_likelihood_loss(b: Node) -> SSAValue:
    if b.rank(0) < 2:
        raise b.error(f"input must have rank 2 or more, got {b.rank(0)}")
    return nll(b, b.input(0), b.input(1), b.optional_input(2))


@onnx_op("SoftmaxCrossEntropyLoss", since=12)
def softmax_cross_entropy_loss(b: Node) -> list[SSAValue]:
    if b.rank(0) < 2:
        raise b.error(f"scores must have rank 2 or more, got {b.rank(0)}")
    log_prob = b.emit(relay.LogSoftmaxOp(b.input(0), axis=1))
    loss = nll(b, log_prob, b.input(1), b.optional_input(2))
    return [loss, log_prob]
