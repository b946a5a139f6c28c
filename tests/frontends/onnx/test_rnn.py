"""ONNX RNN/GRU/LSTM (unrolled) through the JIT against onnx's reference implementation,
on options the backend node cases leave out."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

F = TensorProto.FLOAT


def build(op, inputs, n_out, **attrs):
    names = [n for n, _ in inputs]
    outs = ["Y", "Y_h", "Y_c"][:n_out]
    node = helper.make_node(op, names, outs, **attrs)
    graph = helper.make_graph(
        [node],
        op,
        [
            helper.make_tensor_value_info(
                n, F if a.dtype == np.float32 else TensorProto.INT32, a.shape
            )
            for n, a in inputs
        ],
        [helper.make_tensor_value_info(o, F, None) for o in outs],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])


def check(op, inputs, n_out, **attrs):
    """sequence_lens, where given, is bound at import (it must be known)."""
    model = build(op, inputs, n_out, **attrs)
    bound = {n: a for n, a in inputs if n == "sequence_lens"}
    arrays = [a for n, a in inputs if n not in bound]
    want = ReferenceEvaluator(model).run(None, dict(inputs))
    got = xrelay.build(*xrelay.from_onnx(model, const_inputs=bound)).run(*arrays)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def weights(rng, dirs, gates, hidden, size, batch, seq, layout=0):
    x = rng.standard_normal((batch, seq, size) if layout else (seq, batch, size)).astype(np.float32)
    w = rng.standard_normal((dirs, gates * hidden, size)).astype(np.float32) * 0.5
    r = rng.standard_normal((dirs, gates * hidden, hidden)).astype(np.float32) * 0.5
    bias = rng.standard_normal((dirs, 2 * gates * hidden)).astype(np.float32) * 0.5
    h0 = rng.standard_normal((batch, dirs, hidden) if layout else (dirs, batch, hidden)).astype(
        np.float32
    )
    return x, w, r, bias, h0


def test_gru_linear_before_reset_bidirectional_with_initial_state():
    rng = np.random.default_rng(0)
    x, w, r, bias, h0 = weights(rng, 2, 3, 4, 3, 2, 5)
    lens = np.full(2, 5, np.int32)
    inputs = [("X", x), ("W", w), ("R", r), ("B", bias), ("sequence_lens", lens), ("initial_h", h0)]
    check("GRU", inputs, 2, hidden_size=4, direction="bidirectional", linear_before_reset=1)


def test_lstm_peepholes_layout1_bidirectional():
    rng = np.random.default_rng(1)
    x, w, r, bias, h0 = weights(rng, 2, 4, 3, 2, 2, 4, layout=1)
    c0 = rng.standard_normal(h0.shape).astype(np.float32)
    p = rng.standard_normal((2, 9)).astype(np.float32)
    lens = np.full(2, 4, np.int32)
    inputs = [
        ("X", x),
        ("W", w),
        ("R", r),
        ("B", bias),
        ("sequence_lens", lens),
        ("initial_h", h0),
        ("initial_c", c0),
        ("P", p),
    ]
    check("LSTM", inputs, 3, hidden_size=3, direction="bidirectional", layout=1)


def test_rnn_relu_reverse():
    """onnx's reference has no Relu for RNN: the expected values are computed here."""
    rng = np.random.default_rng(2)
    x, w, r, bias, _ = weights(rng, 1, 1, 4, 3, 2, 3)
    inputs = [("X", x), ("W", w), ("R", r), ("B", bias)]
    model = build("RNN", inputs, 2, hidden_size=4, direction="reverse", activations=["Relu"])
    y, y_h = xrelay.build(*xrelay.from_onnx(model)).run(x, w, r, bias)
    h = np.zeros((2, 4), np.float32)
    want = np.zeros((3, 1, 2, 4), np.float32)
    for t in reversed(range(3)):
        h = np.maximum(x[t] @ w[0].T + h @ r[0].T + bias[0, :4] + bias[0, 4:], 0)
        want[t, 0] = h
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y_h, h[None], rtol=1e-5, atol=1e-6)


def test_clip_and_short_sequences_are_refused():
    rng = np.random.default_rng(3)
    x, w, r, bias, _ = weights(rng, 1, 1, 4, 3, 2, 3)
    with pytest.raises(xrelay.Error, match=r"\(RNN\): unsupported RNN with clip"):
        xrelay.from_onnx(build("RNN", [("X", x), ("W", w), ("R", r)], 2, hidden_size=4, clip=1.0))
    lens = np.array([3, 2], np.int32)
    model = build(
        "RNN",
        [("X", x), ("W", w), ("R", r), ("B", bias), ("sequence_lens", lens)],
        2,
        hidden_size=4,
    )
    with pytest.raises(
        xrelay.Error, match=r"sequence_lens \[3, 2\] shorter than the sequence \(3\)"
    ):
        xrelay.from_onnx(model, const_inputs={"sequence_lens": lens})
