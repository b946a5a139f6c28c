"""Run-time index checks (relay.check_indices, lowering/expose_checks.py): gathers and
scatters whose indices arrive at run time match onnxruntime in range, and out of range are
an `xrelay.Error` naming the node, the index and the axis, in the JIT, the debug executor,
a loaded artifact, a dynamic build and an exported C library; constant indices out of range
are refused at import."""

from __future__ import annotations

import shutil

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import xrelay
from onnx import TensorProto, helper

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3)).astype(np.float32)


def model(op: str, index_shape, attrs=None, updates=None, batch=4) -> onnx.ModelProto:
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3]),
        helper.make_tensor_value_info("i", TensorProto.INT64, index_shape),
    ]
    names = ["x", "i"]
    if updates is not None:
        inputs.append(helper.make_tensor_value_info("u", TensorProto.FLOAT, updates))
        names.append("u")
    graph = helper.make_graph(
        [helper.make_node(op, names, ["y"], name="n", **(attrs or {}))],
        "m",
        inputs,
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


# op, index shape, attributes, update shape, good indices, (bad indices, axis, bad value)
CASES = {
    "gather": ("Gather", [2], {}, None, [[0, -4]], [([0, 4], 0, 4), ([-5, 1], 0, -5)]),
    "gather_axis1": ("Gather", [2], {"axis": 1}, None, [[2, -3]], [([3, 0], 1, 3)]),
    "gather_elements": (
        "GatherElements", [2, 3], {"axis": 0}, None, [[[3, 0, -1], [1, 2, 0]]],
        [([[0, 0, 0], [0, 9, 0]], 0, 9)],
    ),
    "gather_nd": (
        "GatherND", [2, 2], {}, None, [[[3, 2], [0, -1]]], [([[1, 1], [0, 3]], 1, 3)],
    ),
    "scatter_elements": (
        "ScatterElements", [1, 3], {"axis": 0}, [1, 3], [[[3, 0, -2]]],
        [([[0, 4, 0]], 0, 4)],
    ),
    "scatter_nd": (
        "ScatterND", [2, 1], {}, [2, 3], [[[3], [-4]]], [([[1], [7]], 0, 7)],
    ),
}  # fmt: skip


def _feeds(case, indices):
    feeds = {"x": X, "i": np.asarray(indices, np.int64)}
    if case[3] is not None:
        feeds["u"] = np.ones(case[3], np.float32)
    return feeds


@pytest.mark.parametrize("name", CASES)
def test_in_range_matches_onnxruntime_and_out_of_range_is_an_error(name):
    case = CASES[name]
    op, index_shape, attrs, updates, goods, bads = case
    m = model(op, index_shape, attrs, updates)
    mod, params = xrelay.from_onnx(m)
    lib = xrelay.build(mod, params)
    debug = xrelay.create_executor("debug", mod, params)
    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for good in goods:
        feeds = _feeds(case, good)
        expected = session.run(None, feeds)[0]
        np.testing.assert_allclose(lib.run(**feeds)[0], expected, rtol=1e-6)
        np.testing.assert_allclose(debug.run(**feeds)[0], expected, rtol=1e-6)
    for bad, axis, value in bads:
        feeds = _feeds(case, bad)
        with pytest.raises(Exception):  # onnxruntime refuses these too
            session.run(None, feeds)
        message = f"ONNX node 'n' ({op}): index {value} is out of range for axis {axis}"
        for executor in (lib, debug):
            with pytest.raises(xrelay.Error, match=message.replace("(", r"\(").replace(")", r"\)")):
                executor.run(**feeds)
        # a failed run leaves the library usable
        np.testing.assert_allclose(lib.run(**_feeds(case, goods[0]))[0], expected, rtol=1e-6)


def test_constant_indices_out_of_range_are_refused_at_import():
    graph = helper.make_graph(
        [helper.make_node("Gather", ["x", "i"], ["y"], name="g")],
        "m",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("i", TensorProto.INT64, [2], [0, 5])],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(xrelay.Error, match=r"ONNX node 'g' \(Gather\): index 5 is out of range"):
        xrelay.from_onnx(m)


def test_artifacts_and_dynamic_builds_keep_the_checks(tmp_path):
    mod, params = xrelay.from_onnx(model("Gather", [2], batch="n"))
    lib = xrelay.build(mod, params)  # dynamic: one specialization per size of n
    for rows in (2, 5):
        x = np.ones((rows, 3), np.float32)
        assert lib.run(x=x, i=np.array([0, rows - 1]))[0].shape == (2, 3)
        with pytest.raises(xrelay.Error, match=f"index {rows} is out of range for axis 0"):
            lib.run(x=x, i=np.array([0, rows]))
    static = xrelay.build(*xrelay.from_onnx(model("Gather", [2])))
    static.save(tmp_path / "m.xrl")
    loaded = xrelay.load(tmp_path / "m.xrl")
    with pytest.raises(xrelay.Error, match="index 4 is out of range"):
        loaded.run(x=X, i=np.array([4, 0]))
    np.testing.assert_array_equal(loaded.run(x=X, i=np.array([3, 0]))[0], X[[3, 0]])


@pytest.mark.skipif(
    shutil.which("cc") is None or shutil.which("objcopy") is None,
    reason="export_library needs a C compiler and objcopy",
)
def test_exported_c_library_returns_a_status(tmp_path):
    from .test_export import run_from_c

    lib = xrelay.build(*xrelay.from_onnx(model("Gather", [2])))
    good = run_from_c(lib, "gather", tmp_path, [X, np.array([3, -1])])
    np.testing.assert_array_equal(good[0], X[[3, -1]])
    run_from_c(lib, "gather", tmp_path, [X, np.array([3, 4])], status=3)


def test_a_dynamic_library_cannot_be_exported(tmp_path):
    lib = xrelay.build(*xrelay.from_onnx(model("Gather", [2], batch="n")))
    with pytest.raises(xrelay.Error, match="pin the inputs' shapes"):
        lib.export_library(tmp_path / "m.so")
