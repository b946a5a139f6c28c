"""ONNX RNN, GRU and LSTM, unrolled over the (static) sequence length.

Each time step is relay dense products of the step's input and the previous hidden state
with the direction's weights, plus the biases, through the gate activations. Directions
forward, reverse and bidirectional; layout 0 ([seq, batch, ...]) and 1 ([batch, seq, ...]);
initial states; LSTM peepholes; GRU `linear_before_reset`. Refused with a message: other
activation functions than the defaults (Sigmoid/Tanh/Relu by name are accepted), `clip`,
and `sequence_lens` shorter than the sequence.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dims import Dim, shape_of
from xrelay.frontends.common import stack
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.registry import onnx_op

ACTIVATIONS: dict[str, type] = {
    "Sigmoid": relay.SigmoidOp,
    "Tanh": relay.TanhOp,
    "Relu": relay.ReluOp,
}
# op type -> (gates, default activations)
CELLS = {
    "RNN": (1, ["Tanh"]),
    "GRU": (3, ["Sigmoid", "Tanh"]),
    "LSTM": (4, ["Sigmoid", "Tanh", "Tanh"]),
}


class Cell:
    """The weights of one direction and the emit helpers."""

    def __init__(self, b: Node, d: int, hidden: int, gates: int, acts: list[str]):
        self.b, self.hidden = b, hidden
        index = b.constant(np.array(d, np.int64))
        pick = lambda i: b.emit(relay.TakeOp(b.input(i), index, axis=0))
        self.w, self.r = pick(1), pick(2)
        # RNN and LSTM add both biases to every gate: one sum; GRU needs them per gate
        self.bias: SSAValue | None = None
        self.wb: list[SSAValue] | None = None
        self.rb: list[SSAValue] | None = None
        if b.has_input(3):
            wb, rb = b.emit(relay.SplitOp(pick(3), indices=[gates * hidden], axis=0)).results
            if b.op_type == "GRU":
                self.wb, self.rb = self.split(wb, 3), self.split(rb, 3)
            else:
                self.bias = b.emit(relay.AddOp(wb, rb))
        # GRU applies R per gate (its reset gate scales the state before R_h)
        self.r_gates = self.split(self.r, 3, axis=0) if b.op_type == "GRU" else []
        self.peep = pick(7) if b.op_type == "LSTM" and b.has_input(7) else None
        self.acts: list[Callable[[SSAValue], SSAValue]] = [
            (lambda x, cls=ACTIVATIONS[a]: b.emit(cls(x))) for a in acts
        ]

    def split(self, x: SSAValue, parts: int, axis: int = -1) -> list[SSAValue]:
        """`x` as `parts` pieces of hidden_size along `axis` (the gates)."""
        if parts == 1:
            return [x]
        indices = [self.hidden * i for i in range(1, parts)]
        return list(self.b.emit(relay.SplitOp(x, indices=indices, axis=axis)).results)

    def dense(self, x: SSAValue, w: SSAValue) -> SSAValue:
        return self.b.emit(relay.DenseOp(x, w))

    def add(self, *xs: SSAValue) -> SSAValue:
        out = xs[0]
        for x in xs[1:]:
            out = self.b.emit(relay.AddOp(out, x))
        return out

    def mul(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.b.emit(relay.MultiplyOp(x, y))


def _rnn_step(c: Cell, x: SSAValue, h: SSAValue, _state) -> tuple[SSAValue, None]:
    pre = c.add(c.dense(x, c.w), c.dense(h, c.r), *([c.bias] if c.bias is not None else []))
    return c.acts[0](pre), None


def _gru_step(c: Cell, x: SSAValue, h: SSAValue, _state) -> tuple[SSAValue, None]:
    b = c.b
    xz, xr, xh = c.split(c.dense(x, c.w), 3)
    r_z, r_r, r_h = c.r_gates
    wb, rb = c.wb, c.rb

    def biased(v: SSAValue, i: int) -> SSAValue:
        return c.add(v, wb[i], rb[i]) if wb is not None and rb is not None else v

    f, g = c.acts[0], c.acts[1]
    z = f(biased(c.add(xz, c.dense(h, r_z)), 0))
    r = f(biased(c.add(xr, c.dense(h, r_r)), 1))
    if b.attr("linear_before_reset", 0):
        hr = c.dense(h, r_h)
        if rb is not None:
            hr = c.add(hr, rb[2])
        pre = c.add(xh, c.mul(r, hr))
        if wb is not None:
            pre = c.add(pre, wb[2])
    else:
        pre = biased(c.add(xh, c.dense(c.mul(r, h), r_h)), 2)
    candidate = g(pre)
    one = b.constant(np.ones((), np.float32))
    keep = c.mul(z, h)
    new = c.mul(b.emit(relay.SubtractOp(one, z)), candidate)
    return c.add(new, keep), None


def _lstm_step(c: Cell, x: SSAValue, h: SSAValue, cell: SSAValue) -> tuple[SSAValue, SSAValue]:
    pre = c.add(c.dense(x, c.w), c.dense(h, c.r), *([c.bias] if c.bias is not None else []))
    i, o, f_, g_ = c.split(pre, 4)
    f, g, hact = c.acts
    p_i = p_o = p_f = None
    if c.peep is not None:
        p_i, p_o, p_f = c.split(c.peep, 3)
    if p_i is not None:
        i = c.add(i, c.mul(p_i, cell))
        f_ = c.add(f_, c.mul(p_f, cell))
    new_cell = c.add(c.mul(f(f_), cell), c.mul(f(i), g(g_)))
    if p_o is not None:
        o = c.add(o, c.mul(p_o, new_cell))
    return c.mul(f(o), hact(new_cell)), new_cell


STEPS = {"RNN": _rnn_step, "GRU": _gru_step, "LSTM": _lstm_step}


def _initial(b: Node, i: int, d: int, batch: Dim, hidden: int, layout: int) -> SSAValue:
    if not b.has_input(i):
        return b.full(0, np.float32, (batch, hidden))
    value = b.input(i)
    if layout:  # [batch, dirs, hidden]
        value = b.emit(relay.TransposeOp(value, axes=(1, 0, 2)))
    return b.emit(relay.TakeOp(value, b.constant(np.array(d, np.int64)), axis=0))


def recurrent(b: Node) -> list[SSAValue | None]:
    gates, defaults = CELLS[b.op_type]
    if b.dtype(0) != np.float32:
        raise b.unsupported(f"{b.op_type} on {b.dtype(0)} (float32 only)")
    if b.has_attr("clip"):
        raise b.unsupported(f"{b.op_type} with clip")
    direction = b.attr("direction", "forward")
    dirs = {"forward": [0], "reverse": [1], "bidirectional": [0, 1]}.get(direction)
    if dirs is None:
        raise b.error(f"unknown direction '{direction}'")
    per_dir = len(defaults)
    acts = list(b.attr("activations", defaults * len(dirs)))
    unknown = [a for a in acts if a not in ACTIVATIONS]
    if unknown or len(acts) != per_dir * len(dirs):
        raise b.unsupported(f"activations {acts}")
    layout = int(b.attr("layout", 0))
    x = b.input(0)
    if layout:
        x = b.emit(relay.TransposeOp(x, axes=(1, 0, 2)))
    seq, batch, _ = shape_of(x.type)  # type: ignore[arg-type]
    # the steps are unrolled at import: the sequence length must be known
    (seq,) = b.static_dims([seq], f"{b.op_type} sequence length")
    hidden = int(b.attr("hidden_size"))
    if b.shape(1)[1] != gates * hidden:
        raise b.error(
            f"W has {b.shape(1)[1]} rows; {b.op_type} needs {gates} x hidden_size {hidden}"
        )
    if b.has_input(4):
        lens = np.asarray(b.const(4))
        if np.any(lens != seq):
            raise b.unsupported(f"sequence_lens {lens.tolist()} shorter than the sequence ({seq})")
    step = STEPS[b.op_type]
    ys, hs, cs = [], [], []
    for k, reverse in enumerate(dirs):
        cell = Cell(b, k, hidden, gates, acts[k * per_dir : (k + 1) * per_dir])
        h = _initial(b, 5, k, batch, hidden, layout)
        c = _initial(b, 6, k, batch, hidden, layout) if b.op_type == "LSTM" else None
        outs: list[SSAValue] = [None] * seq  # type: ignore[list-item]
        for t in reversed(range(seq)) if reverse else range(seq):
            xt = b.emit(relay.TakeOp(x, b.constant(np.array(t, np.int64)), axis=0))
            h, c = step(cell, xt, h, c)
            outs[t] = h
        ys.append(stack(b, outs, 0))
        hs.append(h)
        cs.append(c)
    y, y_h = stack(b, ys, 1), stack(b, hs, 0)
    y_c = stack(b, cs, 0) if b.op_type == "LSTM" else None
    if layout:
        y = b.emit(relay.TransposeOp(y, axes=(2, 0, 1, 3)))
        y_h = b.emit(relay.TransposeOp(y_h, axes=(1, 0, 2)))
        if y_c is not None:
            y_c = b.emit(relay.TransposeOp(y_c, axes=(1, 0, 2)))
    return [y, y_h, y_c][: len(b.node.output)]


for _op in CELLS:
    onnx_op(_op, since=7)(recurrent)
