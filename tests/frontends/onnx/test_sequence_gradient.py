"""ONNX sequence ops (resolved at import) and the preview Gradient op, through the JIT."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from onnx import TensorProto, helper

F = TensorProto.FLOAT


def model(nodes, inputs, outputs, initializers=(), opset=13, extra=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    imports = [helper.make_opsetid("", opset), *extra]
    return helper.make_model(graph, opset_imports=imports)


def vi(name, shape, dtype=F):
    return helper.make_tensor_value_info(name, dtype, shape)


def run(m, *arrays):
    return xrelay.build(*xrelay.from_onnx(m)).run(*arrays)


def test_split_insert_erase_at_and_concat():
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    y = np.ones((1, 3), np.float32)
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["s"], axis=0),  # 4 rows, kept 2-d
        helper.make_node("SequenceErase", ["s", "one"], ["s1"]),  # drop row 1
        helper.make_node("SequenceInsert", ["s1", "y", "zero"], ["s2"]),  # y first
        helper.make_node("ConcatFromSequence", ["s2"], ["cat"], axis=0),
        helper.make_node("SequenceAt", ["s2", "minus1"], ["last"]),
        helper.make_node("SequenceLength", ["s2"], ["n"]),
    ]
    inits = [
        helper.make_tensor("one", TensorProto.INT64, [], [1]),
        helper.make_tensor("zero", TensorProto.INT64, [], [0]),
        helper.make_tensor("minus1", TensorProto.INT64, [], [-1]),
    ]
    m = model(
        nodes,
        [vi("x", [4, 3]), vi("y", [1, 3])],
        [vi("cat", [4, 3]), vi("last", [1, 3]), vi("n", [], TensorProto.INT64)],
        inits,
    )
    cat, last, n = run(m, x, y)
    np.testing.assert_array_equal(cat, np.concatenate([y, x[[0, 2, 3]]]))
    np.testing.assert_array_equal(last, x[3:4])
    assert n == 4


def test_stacking_on_a_new_axis():
    a, b = (
        np.arange(6, dtype=np.float32).reshape(2, 3),
        -np.arange(6, dtype=np.float32).reshape(2, 3),
    )
    nodes = [
        helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
        helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=-1, new_axis=1),
    ]
    (y,) = run(model(nodes, [vi("a", [2, 3]), vi("b", [2, 3])], [vi("y", [2, 3, 2])]), a, b)
    np.testing.assert_array_equal(y, np.stack([a, b], axis=-1))


def test_position_out_of_range_is_named():
    nodes = [
        helper.make_node("SequenceConstruct", ["a"], ["s"]),
        helper.make_node("SequenceAt", ["s", "p"], ["y"], name="at"),
    ]
    m = model(
        nodes, [vi("a", [2])], [vi("y", [2])], [helper.make_tensor("p", TensorProto.INT64, [], [3])]
    )
    with pytest.raises(
        xrelay.Error, match=r"'at' \(SequenceAt\): position 3 is out of range for a sequence of 1"
    ):
        xrelay.from_onnx(m)


def test_a_sequence_output_is_a_list():
    """A sequence graph output is a run-time sequence (docs/control-flow.md): lib.run
    returns its elements as a list (it was refused before)."""
    nodes = [helper.make_node("SequenceConstruct", ["a", "a"], ["s"])]
    seq = helper.make_tensor_sequence_value_info("s", F, [2])
    module, params = xrelay.from_onnx(model(nodes, [vi("a", [2])], [seq]))
    a = np.array([1.0, 2.0], np.float32)
    (out,) = xrelay.build(module, params).run(a=a)
    assert isinstance(out, list) and len(out) == 2
    np.testing.assert_array_equal(out[1], a)


TRAINING = helper.make_opsetid("ai.onnx.preview.training", 1)


def test_gradient_with_broadcasting_matches_finite_differences():
    """y = (a * b - a) / b with a broadcast over rows: dy/da sums over the broadcast axis."""
    nodes = [
        helper.make_node("Mul", ["a", "b"], ["ab"]),
        helper.make_node("Sub", ["ab", "a"], ["d"]),
        helper.make_node("Div", ["d", "b"], ["y"]),
        helper.make_node(
            "Gradient",
            ["a", "b"],
            ["da", "db"],
            domain="ai.onnx.preview.training",
            xs=["a", "b"],
            y="y",
        ),
    ]
    m = model(
        nodes,
        [vi("a", [3]), vi("b", [2, 3])],
        [vi("da", [3]), vi("db", [2, 3])],
        opset=12,
        extra=[TRAINING],
    )
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 2, 3).astype(np.float32)
    b = rng.uniform(0.5, 2, (2, 3)).astype(np.float32)
    da, db = run(m, a, b)
    # y = a - a / b: dy/da = sum over rows of (1 - 1/b); dy/db = a / b^2
    np.testing.assert_allclose(da, (1 - 1 / b).sum(axis=0), rtol=1e-5)
    np.testing.assert_allclose(db, np.broadcast_to(a, b.shape) / b**2, rtol=1e-5)


def test_gradient_through_an_op_without_a_rule_is_named():
    nodes = [
        helper.make_node("Exp", ["a"], ["y"], name="exp"),
        helper.make_node(
            "Gradient",
            ["a"],
            ["da"],
            domain="ai.onnx.preview.training",
            xs=["a"],
            y="y",
            name="grad",
        ),
    ]
    m = model(nodes, [vi("a", [3])], [vi("da", [3])], opset=12, extra=[TRAINING])
    with pytest.raises(
        xrelay.Error, match=r"'grad' \(Gradient\): unsupported gradient through Exp \('exp'\)"
    ):
        xrelay.from_onnx(m)
