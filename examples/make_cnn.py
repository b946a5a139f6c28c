"""Writes examples/cnn.onnx: a small Conv-Relu-MaxPool-Gemm-Softmax classifier on a
1x3x32x32 image with seeded random weights (run: python examples/make_cnn.py)."""

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)


def weight(name: str, *shape: int) -> onnx.TensorProto:
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    return numpy_helper.from_array((rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32), name)


nodes = [
    helper.make_node("Conv", ["image", "conv1.w", "conv1.b"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
    helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
    helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2], name="pool1"),
    helper.make_node("Conv", ["p1", "conv2.w", "conv2.b"], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
    helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
    helper.make_node("MaxPool", ["r2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2], name="pool2"),
    helper.make_node("Flatten", ["p2"], ["f"], name="flatten"),
    helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["logits"], transB=1, name="fc"),
    helper.make_node("Softmax", ["logits"], ["probabilities"], axis=1, name="softmax"),
]
inits = [
    weight("conv1.w", 8, 3, 3, 3),
    weight("conv1.b", 8),
    weight("conv2.w", 16, 8, 3, 3),
    weight("conv2.b", 16),
    weight("fc.w", 10, 16 * 8 * 8),
    weight("fc.b", 10),
]
graph = helper.make_graph(
    nodes,
    "small_cnn",
    [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 32, 32])],
    [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [1, 10])],
    initializer=inits,
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="xrelay")
onnx.checker.check_model(model)
onnx.save(model, str(Path(__file__).with_name("cnn.onnx")))
