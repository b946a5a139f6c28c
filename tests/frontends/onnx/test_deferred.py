"""Graph inputs that decide shapes (a Reshape target, reduction axes, TopK's k, Slice
bounds): imported as `relay.deferred`, built once, and converted per distinct value at run
time with the op's own semantics; onnxruntime is the reference."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import xrelay
from onnx import TensorProto, helper, numpy_helper
from xrelay.dialects import relay
from xrelay.ir import parse_module

ort = pytest.importorskip("onnxruntime")

rng = np.random.default_rng(0)
F, I64 = TensorProto.FLOAT, TensorProto.INT64


def model(nodes, inputs, outputs, inits=(), opset=18) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def check(m: onnx.ModelProto, feeds_list: list[dict[str, np.ndarray]]):
    """One import and one build; every feed against onnxruntime, and the debug executor
    agreeing; returns the library."""
    module, params = xrelay.from_onnx(m)
    assert any(isinstance(op, relay.DeferredOp) for op in module.walk())
    lib = xrelay.build(module, params)
    debug = xrelay.create_executor("debug", module, params)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    ref = ort.InferenceSession(m.SerializeToString(), options, providers=["CPUExecutionProvider"])
    for feeds in feeds_list:
        want = ref.run(None, feeds)
        for got in (lib.run(**feeds), debug.run(**feeds)):
            assert [g.shape for g in got] == [w.shape for w in want]
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    return lib


def test_reshape_target_from_a_graph_input():
    m = model(
        [helper.make_node("Reshape", ["x", "s"], ["y"])],
        [("x", F, [2, 3, 4]), ("s", I64, [2])],
        [("y", F, None)],
    )
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    shapes = [[6, 4], [-1, 2], [0, 12], [4, -1], [6, 4]]
    lib = check(m, [{"x": x, "s": np.array(s, np.int64)} for s in shapes])
    assert lib.compiles == 4  # one per distinct value


def test_reduction_axes_then_more_ops():
    """Axes given at run time, keepdims=0 (ONNX inference leaves the rank open), a Reshape
    with a run-time target before it and a broadcast against a constant after it."""
    m = model(
        [
            helper.make_node("Reshape", ["x", "s"], ["r"]),
            helper.make_node("Add", ["r", "b"], ["a"]),
            helper.make_node("ReduceSum", ["a", "axes"], ["y"], keepdims=0),
        ],
        [("x", F, ["n", 3, 4]), ("s", I64, [2]), ("axes", I64, [1])],
        [("y", F, None)],
        [("b", np.ones(4, np.float32))],
    )
    feeds = [
        {
            "x": rng.standard_normal((n, 3, 4)).astype(np.float32),
            "s": np.array(s),
            "axes": np.array(a),
        }
        for n, s, a in ((2, [6, 4], [0]), (2, [-1, 4], [1]), (3, [9, 4], [-1]))
    ]
    check(m, feeds)


def test_topk_k_and_slice_bounds():
    m = model(
        [
            helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1),
            helper.make_node("Slice", ["v", "starts", "ends", "axes"], ["y"]),
        ],
        [
            ("x", F, [3, 8]),
            ("k", I64, [1]),
            ("starts", I64, [1]),
            ("ends", I64, [1]),
            ("axes", I64, [1]),
        ],
        [("y", F, None), ("i", I64, None)],
    )
    x = rng.standard_normal((3, 8)).astype(np.float32)
    feeds = [
        {
            "x": x,
            "k": np.array([k]),
            "starts": np.array([s]),
            "ends": np.array([e]),
            "axes": np.array([a]),
        }
        for k, s, e, a in ((5, 1, 4, 1), (2, 0, 1, 0), (8, -3, 100, 1))
    ]
    check(m, feeds)


def test_deferred_module_round_trips_as_text():
    m = model(
        [helper.make_node("Reshape", ["x", "s"], ["y"])],
        [("x", F, [2, 3]), ("s", I64, [1])],
        [("y", F, None)],
    )
    module, params = xrelay.from_onnx(m)
    again = parse_module(str(module))
    assert str(again) == str(module)
    lib = xrelay.build(again, params)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(lib.run(x=x, s=np.array([6]))[0], x.reshape(6))


def test_a_bad_value_is_an_error_naming_the_node():
    m = model(
        [helper.make_node("Reshape", ["x", "s"], ["y"])],
        [("x", F, [2, 3]), ("s", I64, [2])],
        [("y", F, None)],
    )
    module, params = xrelay.from_onnx(m)
    lib = xrelay.build(module, params)
    with pytest.raises(xrelay.Error, match="Reshape"):
        lib.run(x=np.zeros((2, 3), np.float32), s=np.array([4, 4]))


def test_a_broadcast_the_value_breaks_is_an_error():
    """`y_1` broadcasts against 4 at import; a value that makes it 3 is refused."""
    m = model(
        [
            helper.make_node("Reshape", ["x", "s"], ["r"]),
            helper.make_node("Add", ["r", "b"], ["y"]),
        ],
        [("x", F, [12]), ("s", I64, [2])],
        [("y", F, None)],
        [("b", np.ones(4, np.float32))],
    )
    module, params = xrelay.from_onnx(m)
    lib = xrelay.build(module, params)
    x = np.arange(12, dtype=np.float32)
    np.testing.assert_array_equal(lib.run(x=x, s=np.array([3, 4]))[0], x.reshape(3, 4) + 1)
    with pytest.raises(xrelay.Error, match="not broadcastable"):
        lib.run(x=x, s=np.array([4, 3]))


def test_a_shape_computed_from_small_inputs_is_deferred():
    """The target is computed (Cast, Mul) from a small graph input: the run's value gives
    it before native code runs."""
    m = model(
        [
            helper.make_node("Cast", ["f"], ["c"], to=I64),
            helper.make_node("Mul", ["c", "two"], ["s"]),
            helper.make_node("Reshape", ["x", "s"], ["y"]),
        ],
        [("x", F, [2, 6]), ("f", F, [2])],
        [("y", F, None)],
        [("two", np.array([1, 2], np.int64))],
    )
    x = rng.standard_normal((2, 6)).astype(np.float32)
    check(m, [{"x": x, "f": np.array(f, np.float32)} for f in ([2, 3], [6, 1], [1, 6])])


def test_a_shape_computed_from_data_stays_an_import_error():
    m = model(
        [
            helper.make_node("ArgMax", ["t"], ["s"], axis=1, keepdims=0),
            helper.make_node("Reshape", ["x", "s"], ["y"]),
        ],
        [("x", F, [2, 3]), ("t", F, [2, 100])],
        [("y", F, None)],
    )
    with pytest.raises(xrelay.Error, match="'Reshape_1' .*computed at run time"):
        xrelay.from_onnx(m)


def test_a_shape_of_a_deferred_result_feeds_another():
    """Pad by run-time widths, then Slice up to the padded shape minus one: the second
    node's bounds come from the first one's result shape (CenterCropPad's expansion)."""
    m = model(
        [
            helper.make_node("Pad", ["x", "p"], ["y"]),
            helper.make_node("Shape", ["y"], ["s"]),
            helper.make_node("Sub", ["s", "one"], ["e"]),
            helper.make_node("Slice", ["y", "start", "e"], ["z"]),
        ],
        [("x", F, [4, 6]), ("p", I64, [4])],
        [("z", F, None)],
        [("one", np.ones(2, np.int64)), ("start", np.ones(2, np.int64))],
    )
    x = rng.standard_normal((4, 6)).astype(np.float32)
    check(m, [{"x": x, "p": np.array(p)} for p in ([1, 0, 2, 1], [0, 0, 0, 0], [3, 2, 1, 1])])
