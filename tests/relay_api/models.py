"""Small ONNX models with seeded random weights for the Relay API tests, and their
onnxruntime outputs. `batch` is an int, or a dim_param name for a dynamic batch."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def _weights(rng: np.random.Generator, name: str, *shape: int) -> onnx.TensorProto:
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    return numpy_helper.from_array(
        (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32), name
    )


def _model(nodes, inputs, outputs, inits, name: str) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(model)
    return model


def cnn(batch: int | str = 1, size: int = 16) -> onnx.ModelProto:
    """input [batch, 3, size, size] -> Conv-BatchNorm-Relu-MaxPool-Conv-Relu-
    GlobalAveragePool-Flatten-Gemm -> logits [batch, 10] and their Softmax (two outputs)."""
    rng = np.random.default_rng(0)
    n = helper.make_node
    nodes = [
        n("Conv", ["input", "c1.w", "c1.b"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        n("BatchNormalization", ["c1", "bn.g", "bn.b", "bn.m", "bn.v"], ["bn"], name="bn1"),
        n("Relu", ["bn"], ["r1"], name="relu1"),
        n("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2], name="pool1"),
        n("Conv", ["p1", "c2.w", "c2.b"], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
        n("Relu", ["c2"], ["r2"], name="relu2"),
        n("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        n("Flatten", ["g"], ["f"], name="flatten"),
        n("Gemm", ["f", "fc.w", "fc.b"], ["logits"], transB=1, name="fc"),
        n("Softmax", ["logits"], ["probabilities"], axis=1, name="softmax"),
    ]
    inits = [
        _weights(rng, "c1.w", 8, 3, 3, 3),
        _weights(rng, "c1.b", 8),
        numpy_helper.from_array(rng.uniform(0.5, 1.5, 8).astype(np.float32), "bn.g"),
        _weights(rng, "bn.b", 8),
        _weights(rng, "bn.m", 8),
        numpy_helper.from_array(rng.uniform(0.5, 1.5, 8).astype(np.float32), "bn.v"),
        _weights(rng, "c2.w", 16, 8, 3, 3),
        _weights(rng, "c2.b", 16),
        _weights(rng, "fc.w", 10, 16),
        _weights(rng, "fc.b", 10),
    ]
    image = helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 3, size, size])
    outputs = [
        helper.make_tensor_value_info(name, TensorProto.FLOAT, [batch, 10])
        for name in ("logits", "probabilities")
    ]
    return _model(nodes, [image], outputs, inits, "cnn")


def mlp(batch: int | str = "batch") -> onnx.ModelProto:
    """x [batch, 16] -> Gemm-Relu-Gemm-Tanh -> y [batch, 4]."""
    rng = np.random.default_rng(1)
    n = helper.make_node
    nodes = [
        n("Gemm", ["x", "w1", "b1"], ["h"], transB=1, name="fc1"),
        n("Relu", ["h"], ["r"], name="relu"),
        n("Gemm", ["r", "w2", "b2"], ["z"], transB=1, name="fc2"),
        n("Tanh", ["z"], ["y"], name="tanh"),
    ]
    inits = [
        _weights(rng, "w1", 32, 16),
        _weights(rng, "b1", 32),
        _weights(rng, "w2", 4, 32),
        _weights(rng, "b2", 4),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 4])
    return _model(nodes, [x], [y], inits, "mlp")


def attention(batch: int | str = 2, seq: int = 6, dim: int = 8) -> onnx.ModelProto:
    """Single-head self-attention with two inputs: softmax(q k^T / sqrt(d) + mask) v."""
    rng = np.random.default_rng(2)
    n = helper.make_node
    nodes = [
        n("MatMul", ["x", "wq"], ["q"], name="q"),
        n("MatMul", ["x", "wk"], ["k"], name="k"),
        n("MatMul", ["x", "wv"], ["v"], name="v"),
        n("Transpose", ["k"], ["kt"], perm=[0, 2, 1], name="kt"),
        n("MatMul", ["q", "kt"], ["s"], name="scores"),
        n("Mul", ["s", "scale"], ["ss"], name="scale"),
        n("Add", ["ss", "mask"], ["sm"], name="mask"),
        n("Softmax", ["sm"], ["p"], axis=-1, name="softmax"),
        n("MatMul", ["p", "v"], ["out"], name="out"),
    ]
    inits = [
        _weights(rng, "wq", dim, dim),
        _weights(rng, "wk", dim, dim),
        _weights(rng, "wv", dim, dim),
        numpy_helper.from_array(np.array(1 / np.sqrt(dim), np.float32), "scale"),
    ]
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, seq, dim]),
        helper.make_tensor_value_info("mask", TensorProto.FLOAT, [batch, 1, seq]),
    ]
    out = helper.make_tensor_value_info("out", TensorProto.FLOAT, [batch, seq, dim])
    return _model(nodes, inputs, [out], inits, "attention")


def onnxruntime_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def assert_close(got, want, rtol: float = 1e-4, atol: float = 1e-5) -> None:
    """`got` (an NDArray or numpy array) equals `want` within rtol plus atol times the
    output's scale."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    scale = max(float(np.abs(want).max()) if want.size else 1.0, 1e-6)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * scale)
