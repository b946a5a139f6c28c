"""ONNX If, Loop and Scan unrolled at import, through the JIT against onnx's reference."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import xrelay
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, inits=(), opset=13):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def check(m, feeds: dict, bound: dict | None = None):
    bound = bound or {}
    want = ReferenceEvaluator(m).run(None, {**feeds, **bound})
    got = xrelay.build(*xrelay.from_onnx(m, const_inputs=bound)).run(**feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-6)


def branch(name, node):
    return helper.make_graph([node], name, [], [vi("out_" + name, F, [3])])


def test_if_takes_the_branch_its_known_condition_picks():
    then = branch("then", helper.make_node("Add", ["x", "x"], ["out_then"]))
    other = branch("else", helper.make_node("Neg", ["x"], ["out_else"]))
    m = model(
        [helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
        [vi("c", B, []), vi("x", F, [3])],
        [vi("y", F, [3])],
    )
    x = np.array([1, -2, 3], np.float32)
    for c in (True, False):
        check(m, {"x": x}, {"c": np.array(c)})


def loop_body():
    """carried s -> s * x + i; scan output s; stop once max(s) >= 50."""
    nodes = [
        helper.make_node("Cast", ["i"], ["fi"], to=F),
        helper.make_node("Mul", ["s", "x"], ["sx"]),
        helper.make_node("Add", ["sx", "fi"], ["s_out"]),
        helper.make_node("ReduceMax", ["s_out"], ["top"], keepdims=0),
        helper.make_node("Less", ["top", "limit"], ["go"]),
        helper.make_node("Identity", ["s_out"], ["scan"]),
    ]
    inputs = [vi("i", I64, []), vi("c", B, []), vi("s", F, [2])]
    outputs = [vi("go", B, []), vi("s_out", F, [2]), vi("scan", F, [2])]
    return helper.make_graph(nodes, "body", inputs, outputs)


def test_loop_carries_values_stacks_scan_outputs_and_stops_on_its_condition():
    inits = [
        helper.make_tensor("x", F, [2], [2.0, 3.0]),
        helper.make_tensor("limit", F, [], [50.0]),
        helper.make_tensor("trip", I64, [], [10]),
        helper.make_tensor("c0", B, [], [True]),
        helper.make_tensor("s0", F, [2], [1.0, 1.0]),
    ]
    m = model(
        [helper.make_node("Loop", ["trip", "c0", "s0"], ["s", "all"], body=loop_body())],
        [],
        [vi("s", F, [2]), vi("all", F, None)],
        inits,
    )
    # frozen: float initializers are otherwise parameters, and the condition must be known
    lib = xrelay.build(*xrelay.from_onnx(m, freeze_params=True))
    (s, stacked), want = lib.run(), ReferenceEvaluator(m).run(None, {})
    np.testing.assert_allclose(s, want[0])
    np.testing.assert_allclose(stacked, want[1])
    assert stacked.shape[0] < 10  # the condition ended it early


def test_a_loop_condition_known_only_at_run_time_runs_in_the_vm():
    """A Loop whose body computes its condition from an input is a relay.loop (it was
    refused before): one build, the iterations each input asks for."""
    body = loop_body()
    inits = [helper.make_tensor("limit", F, [], [50.0]), helper.make_tensor("trip", I64, [], [10])]
    m = model(
        [helper.make_node("Loop", ["trip", "c0", "s0"], ["s", "all"], body=body, name="loop")],
        [vi("x", F, [2]), vi("c0", B, []), vi("s0", F, [2])],
        [vi("s", F, [2]), vi("all", F, None)],
        inits,
    )
    module, params = xrelay.from_onnx(m)
    assert "relay.loop" in str(module)
    lib = xrelay.build(module, params)
    for x in ([2.0, 3.0], [1.0, 1.5]):
        s, steps = np.ones(2, np.float32), []
        for i in range(10):
            s = s * np.float32(x) + np.float32(i)
            steps.append(s)
            if s.max() >= 50:
                break
        got = lib.run(x=np.array(x, np.float32), c0=np.array(True), s0=np.ones(2, np.float32))
        np.testing.assert_allclose(got[0], s, rtol=1e-6)
        np.testing.assert_allclose(got[1], np.stack(steps), rtol=1e-6)


def test_scan_reverse_input_and_output_on_axis_1():
    body = helper.make_graph(
        [
            helper.make_node("Add", ["acc", "row"], ["acc_out"]),
            helper.make_node("Mul", ["acc_out", "row"], ["out"]),
        ],
        "body",
        [vi("acc", F, [3]), vi("row", F, [3])],
        [vi("acc_out", F, [3]), vi("out", F, [3])],
    )
    node = helper.make_node(
        "Scan",
        ["init", "xs"],
        ["final", "ys"],
        body=body,
        num_scan_inputs=1,
        scan_input_directions=[1],
        scan_output_axes=[1],
    )
    m = model(
        [node],
        [vi("init", F, [3]), vi("xs", F, [4, 3])],
        [vi("final", F, [3]), vi("ys", F, [3, 4])],
    )
    rng = np.random.default_rng(0)
    init = rng.standard_normal(3).astype(np.float32)
    xs = rng.standard_normal((4, 3)).astype(np.float32)
    final, ys = xrelay.build(*xrelay.from_onnx(m)).run(init, xs)
    # onnx's reference has no reverse scan: the expected values are computed here
    acc, outs = init, []
    for row in xs[::-1]:
        acc = acc + row
        outs.append(acc * row)
    np.testing.assert_allclose(final, acc, rtol=1e-6)
    np.testing.assert_allclose(ys, np.stack(outs, axis=1), rtol=1e-6)


def test_a_scalar_bfloat16_input():
    m = model(
        [helper.make_node("Cast", ["x"], ["y"], to=F)],
        [vi("x", TensorProto.BFLOAT16, [])],
        [vi("y", F, [])],
    )
    (y,) = xrelay.build(*xrelay.from_onnx(m)).run(np.array(1.5, ml_dtypes.bfloat16))
    assert y.shape == () and y == 1.5


def test_a_loop_of_constant_inputs_over_a_run_time_value():
    """All of the Loop's own inputs are constants, but its body reads a graph input: the
    Loop is not folded as a whole, its body's nodes are emitted per step."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["ci"], ["co"]), helper.make_node("Add", ["x", "x"], ["y"])],
        "body",
        [vi("i", I64, []), vi("ci", B, [])],
        [vi("co", B, []), vi("y", F, [4])],
    )
    inits = [helper.make_tensor("trip", I64, [], [2]), helper.make_tensor("c", B, [], [True])]
    m = model(
        [helper.make_node("Loop", ["trip", "c"], ["ys"], body=body)],
        [vi("x", F, [4])],
        [vi("ys", F, None)],
        inits,
    )
    check(m, {"x": np.arange(4, dtype=np.float32)})


def test_a_loop_longer_than_the_unrolling_limit_runs_in_the_vm():
    """A constant trip count above MAX_STEPS is a relay.loop from the start."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["s", "one"], ["s_out"]),
            helper.make_node("Identity", ["c"], ["c_out"]),
        ],
        "body",
        [vi("i", I64, []), vi("c", B, []), vi("s", F, [1])],
        [vi("c_out", B, []), vi("s_out", F, [1])],
        [helper.make_tensor("one", F, [1], [1.0])],
    )
    inits = [helper.make_tensor("trip", I64, [], [2000]), helper.make_tensor("c0", B, [], [True])]
    m = model(
        [helper.make_node("Loop", ["trip", "c0", "x"], ["s"], body=body)],
        [vi("x", F, [1])],
        [vi("s", F, [1])],
        inits,
    )
    module, params = xrelay.from_onnx(m)
    assert "relay.loop" in str(module)
    (got,) = xrelay.build(module, params).run(x=np.array([0.5], np.float32))
    np.testing.assert_array_equal(got, [2000.5])
