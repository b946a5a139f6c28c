"""One native build for every size (lowering/dynamic_sizes.py): modules with dynamic
dimensions compile once, run at many sizes against numpy/onnxruntime, refuse bad sizes
before native code runs, and fall back to a build per binding where an op has no dynamic
lowering yet."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import xrelay
from onnx import TensorProto, helper

rng = np.random.default_rng(0)


def dense_module(k: int) -> str:
    t_x = f'tensor<?x{k}xf32, #relay.dims<"n">>'
    t_y = 'tensor<?x16xf32, #relay.dims<"n">>'
    return f"""
    func.func @main(%x: {t_x}, %w: tensor<16x{k}xf32> {{xrelay.param}}) -> {t_y} {{
      %0 = relay.nn.dense %x, %w : ({t_x}, tensor<16x{k}xf32>) -> {t_y}
      %1 = relay.nn.relu %0 : ({t_y}) -> {t_y}
      func.return %1 : {t_y}
    }}
    """


def test_dense_with_a_run_time_row_count_on_prepacked_weights():
    """The runtime GEMM gets M as an argument and reads the weight prepacked; M of 1-3
    (where it would otherwise pick its unpacked few-rows path) included. The weight, a
    parameter after the dynamic input, is replaced by its packed copy."""
    w = rng.standard_normal((16, 40)).astype(np.float32)
    lib = xrelay.build(xrelay.parse_module(dense_module(40)), {"w": w}, cache=False)
    assert lib.native is not None and lib.compiles == 1, lib.refused
    for n in (1, 2, 3, 4, 5, 64, 130):
        x = rng.standard_normal((n, 40)).astype(np.float32)
        (y,) = lib.run(x=x)
        assert y.shape == (n, 16)
        np.testing.assert_allclose(y, np.maximum(x @ w.T, 0), rtol=1e-5, atol=1e-5)


def attention_model() -> onnx.ModelProto:
    """softmax(q k^T) v over [batch, seq, 8]: GEMMs whose M, N, K and batch strides are
    all run-time values."""
    dims = ["batch", "seq", 8]
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["s"]),
        helper.make_node("Softmax", ["s"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["o"]),
        helper.make_node("Shape", ["o"], ["shape"]),
        helper.make_node("Concat", ["o", "q"], ["both"], axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "attention",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, dims) for n in "qkv"],
        [
            helper.make_tensor_value_info("o", TensorProto.FLOAT, dims),
            helper.make_tensor_value_info("shape", TensorProto.INT64, [3]),
            helper.make_tensor_value_info("both", TensorProto.FLOAT, ["batch", None, 8]),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_attention_over_run_time_batch_and_sequence_matches_onnxruntime():
    ort = pytest.importorskip("onnxruntime")
    model = attention_model()
    module, params = xrelay.from_onnx(model)
    lib = xrelay.build(module, params, cache=False)
    assert lib.native is not None, lib.refused
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch, seq in [(1, 1), (2, 3), (3, 17), (1, 64)]:
        feeds = {n: rng.standard_normal((batch, seq, 8)).astype(np.float32) for n in "qkv"}
        for got, want in zip(lib.run(**feeds), sess.run(None, feeds)):
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert lib.compiles == 1


def test_sizes_that_break_a_rule_are_refused_before_native_code_runs():
    model = attention_model()
    lib = xrelay.build(*xrelay.from_onnx(model), cache=False)
    q = np.zeros((2, 3, 8), np.float32)
    with pytest.raises(xrelay.Error, match=r"input 'k' axis 1 has size 4, but dimension 'seq' is 3"):
        lib.run(q=q, k=np.zeros((2, 4, 8), np.float32), v=q)
    with pytest.raises(xrelay.Error, match=r"input 'v' axis 2 has size 9, but the model fixes it to 8"):
        lib.run(q=q, k=q, v=np.zeros((2, 3, 9), np.float32))


def test_a_binding_whose_values_exceed_the_memory_limit_is_an_error(monkeypatch):
    """The scores [batch, seq, seq] of a long sequence: checked against
    XRELAY_MAX_TENSOR_BYTES from the binding, before anything is allocated."""
    lib = xrelay.build(*xrelay.from_onnx(attention_model()), cache=False)
    monkeypatch.setenv("XRELAY_MAX_TENSOR_BYTES", str(1 << 20))
    q = np.zeros((1, 600, 8), np.float32)  # the scores: 600 * 600 * 4 bytes > 1 MiB
    with pytest.raises(xrelay.Error, match=r"a value of shape \[batch x seq x seq\]|over the limit"):
        lib.run(q=q, k=q, v=q)
    small = np.ones((1, 4, 8), np.float32)
    assert lib.run(q=small, k=small, v=small)[0].shape == (1, 4, 8)


def test_an_op_without_a_dynamic_lowering_builds_per_binding():
    """ArgMax has no run-time-size lowering yet: the library says why and compiles each
    binding instead, with the same answers."""
    graph = helper.make_graph(
        [helper.make_node("ArgMax", ["x"], ["y"], axis=1, keepdims=0)],
        "argmax",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, ["n"])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    lib = xrelay.build(*xrelay.from_onnx(model), cache=False)
    assert lib.native is None and "relay.argmax" in lib.refused
    for n in (2, 5):
        x = rng.standard_normal((n, 4)).astype(np.float32)
        np.testing.assert_array_equal(lib.run(x=x)[0], x.argmax(1))
    assert lib.compiles == 2
