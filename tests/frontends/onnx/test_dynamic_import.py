"""ONNX models with dynamic dimensions: dim_params become symbols, shape arithmetic on
them is done at import, one build runs every shape; and the CLI on such a model."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import xrelay
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)


def flatten_model(x_dims: list) -> onnx.ModelProto:
    """MatMul + bias + Relu, then Reshape to [batch, -1] with the target computed from
    Shape -> Gather -> Unsqueeze -> Concat (what exporters emit)."""
    inits = [
        numpy_helper.from_array(rng.standard_normal((16, 8)).astype(np.float32), "W"),
        numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "B"),
        numpy_helper.from_array(np.array(0, np.int64), "i0"),
        numpy_helper.from_array(np.array([0], np.int64), "ax0"),
        numpy_helper.from_array(np.array([-1], np.int64), "m1"),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["m"]),
        helper.make_node("Add", ["m", "B"], ["a"]),
        helper.make_node("Relu", ["a"], ["r"]),
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "i0"], ["b0"]),
        helper.make_node("Unsqueeze", ["b0", "ax0"], ["b1"]),
        helper.make_node("Concat", ["b1", "m1"], ["target"], axis=0),
        helper.make_node("Reshape", ["r", "target"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "flatten",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_dims)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_dim_params_become_symbols_and_one_build_runs_all_shapes():
    model = flatten_model(["batch", "seq", 16])
    module, params = xrelay.from_onnx(model)
    text = str(module)
    assert '#relay.dims<"batch", "seq">' in text
    assert '#relay.dims<"batch", "8*seq">' in text  # the output: [batch, -1] of [batch, seq, 8]
    lib = xrelay.build(module, params)
    session = ort.InferenceSession(model.SerializeToString())
    for shape in [(1, 1, 16), (3, 5, 16), (2, 7, 16)]:
        x = rng.standard_normal(shape).astype(np.float32)
        (got,) = lib.run(x=x)
        (want,) = session.run(None, {"x": x})
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert lib.native is not None and lib.compiles == 1  # one build for every shape


def test_unnamed_dynamic_dimension_is_named_after_the_input():
    dim = onnx.TensorShapeProto.Dimension()  # neither dim_value nor dim_param
    model = flatten_model([None, 4, 16])
    model.graph.input[0].type.tensor_type.shape.dim[0].CopyFrom(dim)
    module, _ = xrelay.from_onnx(model)
    assert '#relay.dims<"x_0">' in str(module)


def test_shape_override_specializes_and_checks_rank():
    module, _ = xrelay.from_onnx(flatten_model(["batch", "seq", 16]), shape={"x": (2, 3, 16)})
    assert "relay.dims" not in str(module)
    with pytest.raises(xrelay.Error, match="shape= gives input 'x' rank 2"):
        xrelay.from_onnx(flatten_model(["batch", "seq", 16]), shape={"x": (2, 3)})


def test_unsupported_shape_arithmetic_names_the_node():
    inits = [numpy_helper.from_array(np.array([1], np.int64), "k")]
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Max", ["s", "k"], ["t"], name="max_of_dims"),
        helper.make_node("Reshape", ["x", "t"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(xrelay.Error, match=r"'max_of_dims' \(Max\): computes with dynamic dim"):
        xrelay.from_onnx(model)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "xrelay.tools.cli", *args],
        check=False,
        capture_output=True,
        text=True,
    )


def test_cli_runs_dynamic_models(tmp_path):
    path = tmp_path / "flatten.onnx"
    onnx.save(flatten_model(["batch", "seq", 16]), path)
    result = run_cli("run", str(path), "--dim", "batch=3", "--dim", "seq=5")
    assert result.returncode == 0, result.stderr
    assert "y: shape [3, 40] float32" in result.stdout
    result = run_cli("run", str(path), "--shape", "x=2x4x16")
    assert result.returncode == 0, result.stderr
    assert "y: shape [2, 32] float32" in result.stdout
    bad = tmp_path / "bad.npy"
    np.save(bad, np.zeros((2, 3, 15), np.float32))
    result = run_cli("run", str(path), "--input", f"x={bad}")
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "xrelay: error: input 'x' axis 2 has size 15, but the model fixes it to 16 "
        "(expects float32[batch, seq, 16])"
    )
    result = run_cli("run", str(path), "--shape", "x=2y4")
    assert result.returncode == 1
    assert "--shape takes NAME=DIMxDIMx..." in result.stderr
