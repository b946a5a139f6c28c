"""ai.onnx.preview.training Gradient: reverse-mode differentiation at import time.

Gradient(xs, zs, y) outputs dY/dX for each X in `xs`: the vector-Jacobian product with a
seed of ones (the gradient of the sum of Y), through the nodes between `xs` and `y`. The
rules below are the ops it can differentiate; any other op on the path is refused by name.
The node's inputs must be `xs` + `zs` themselves (the gradient at the graph's own values).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dims import Dim, shape_of
from xrelay.dialects.dtypes import numpy_dtype
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.registry import onnx_op

TRAINING = "ai.onnx.preview.training"

# op type -> (its inputs, the output's adjoint) -> the adjoint of each input
Rule = Callable[[Node, list[SSAValue], SSAValue], list[SSAValue]]


def _emit(b: Node, cls: type, *args: SSAValue) -> SSAValue:
    return b.emit(cls(*args))


RULES: dict[str, Rule] = {
    "Identity": lambda b, x, g: [g],
    "Neg": lambda b, x, g: [_emit(b, relay.NegativeOp, g)],
    "Add": lambda b, x, g: [g, g],
    "Sub": lambda b, x, g: [g, _emit(b, relay.NegativeOp, g)],
    "Mul": lambda b, x, g: [
        _emit(b, relay.MultiplyOp, g, x[1]),
        _emit(b, relay.MultiplyOp, g, x[0]),
    ],
    "Div": lambda b, x, g: [
        _emit(b, relay.DivideOp, g, x[1]),
        _emit(
            b,
            relay.NegativeOp,
            _emit(
                b,
                relay.DivideOp,
                _emit(b, relay.MultiplyOp, g, x[0]),
                _emit(b, relay.MultiplyOp, x[1], x[1]),
            ),
        ),
    ],
}


def _shape(x: SSAValue) -> tuple[Dim, ...]:
    return shape_of(x.type)  # type: ignore[arg-type]


def _unbroadcast(b: Node, g: SSAValue, shape: tuple[int, ...]) -> SSAValue:
    """The adjoint of a value broadcast from `shape`: summed over the broadcast axes."""
    gs = _shape(g)
    if gs == shape:
        return g
    lead = len(gs) - len(shape)
    axes = [*range(lead), *(lead + i for i, d in enumerate(shape) if d == 1 and gs[lead + i] != 1)]
    if axes:
        g = b.emit(relay.SumOp(g, axis=tuple(axes), keepdims=False))
    return g if _shape(g) == shape else b.emit(relay.ReshapeOp(g, newshape=shape))


@onnx_op("Gradient", since=1, domain=TRAINING, structured=True)
def gradient(b: Node) -> list[SSAValue | None]:
    xs, zs, y = list(b.attr("xs")), list(b.attr("zs", [])), b.attr("y")
    if list(b.node.input) != xs + zs:
        raise b.unsupported("Gradient at values other than its xs and zs")
    env = b.importer.env
    producers = {out: node for node in b.importer.graph.node for out in node.output}
    # the nodes y depends on, back to the independent variables
    path, stack, seen = set(), [y], set(xs + zs)
    while stack:
        name = stack.pop()
        if name in seen or name not in producers:
            continue
        seen.add(name)
        node = producers[name]
        path.add(id(node))
        stack.extend(i for i in node.input if i)
    order = [n for n in b.importer.graph.node if id(n) in path]

    def value(name: str) -> SSAValue:
        return b.ssa(env[name])

    seed = b.constant(np.ones((), dtype=numpy_dtype(value(y).type.element_type)))
    adjoint: dict[str, SSAValue] = {y: b.emit(relay.BroadcastToOp(seed, shape=_shape(value(y))))}
    for node in reversed(order):
        g = adjoint.get(node.output[0])
        if g is None:
            continue
        rule = RULES.get(node.op_type)
        if rule is None or len(node.output) != 1:
            raise b.unsupported(
                f"gradient through {node.op_type} ('{node.name or node.output[0]}')"
            )
        inputs = [value(i) for i in node.input]
        for name, x, dx in zip(node.input, inputs, rule(b, inputs, g)):
            dx = _unbroadcast(b, dx, _shape(x))
            adjoint[name] = dx if name not in adjoint else b.emit(relay.AddOp(adjoint[name], dx))
    outs: list[SSAValue | None] = []
    for x in xs:
        if x in adjoint:
            outs.append(adjoint[x])
        else:  # y does not depend on x
            outs.append(b.full(0, b.dtype(xs.index(x)), _shape(value(x))))
    return outs
