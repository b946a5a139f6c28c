"""ONNX reductions -> relay: Reduce{Sum,Mean,Max,Min,Prod}, ArgMax, ArgMin."""

from __future__ import annotations

from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.registry import onnx_op

# op type -> (relay op, first opset where axes is an input rather than an attribute)
REDUCES = {
    "ReduceSum": (relay.SumOp, 13),
    "ReduceMean": (relay.MeanOp, 18),
    "ReduceMax": (relay.MaxOp, 18),
    "ReduceMin": (relay.MinOp, 18),
    "ReduceProd": (relay.ProdOp, 18),
}


def _reduce(b: Node) -> SSAValue:
    cls, axes_input_since = REDUCES[b.op_type]
    if b.opset >= axes_input_since:
        axes = [int(a) for a in b.const(1)] if b.has_input(1) else None
    else:
        axes = b.attr("axes", None)
    keepdims = bool(b.attr("keepdims", 1))
    if not axes:
        if b.attr("noop_with_empty_axes", 0):
            return b.input(0)
        axes = None
    return b.emit(cls(b.input(0), axis=axes, keepdims=keepdims))


for _name in REDUCES:
    onnx_op(_name)(_reduce)


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
