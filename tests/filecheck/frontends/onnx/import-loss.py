# RUN: python %s | filecheck %s
# Import of ONNX losses: each case prints `// case: NAME` and the relay module.
import numpy as np
from onnx import TensorProto, helper

from onnx_lit import show, vi

# NLL with ignore_index and mean reduction: the target is masked, the picked log
# probabilities are weighted by the mask and the sum divided by the sum of the weights.
# CHECK-LABEL: // case: nll_ignore
# CHECK:       %[[M:.+]] = relay.not_equal %t, %{{.+}} : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
# CHECK:       %[[T:.+]] = relay.where %[[M]], %t, %{{.+}}
# CHECK:       %[[I:.+]] = relay.expand_dims %[[T]] {axis = 1 : i64}
# CHECK:       %[[G:.+]] = relay.gather %x, %[[I]] {axis = 1 : i64} : (tensor<3x5xf32>, tensor<3x1xi64>) -> tensor<3x1xf32>
# CHECK:       %[[W:.+]] = relay.cast %[[M]] {dtype = f32}
# CHECK:       %[[S:.+]] = relay.sum %{{.+}} : (tensor<3xf32>) -> tensor<f32>
# CHECK:       %[[D:.+]] = relay.sum %[[W]]
# CHECK:       relay.divide %[[S]], %[[D]]
show(
    "nll_ignore",
    [helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"], ignore_index=2)],
    [vi("x", [3, 5]), vi("t", [3], TensorProto.INT64)],
    [vi("y", None)],
)

# SoftmaxCrossEntropyLoss: log_softmax over the classes, then the same NLL; the second
# output is the log probabilities.
# CHECK-LABEL: // case: sce
# CHECK:       %[[L:.+]] = relay.nn.log_softmax %x {axis = 1 : i64}
# CHECK:       relay.gather %[[L]]
# CHECK:       func.return %{{.+}}, %[[L]] : tensor<f32>, tensor<3x5xf32>
show(
    "sce",
    [helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t"], ["y", "lp"], reduction="sum")],
    [vi("x", [3, 5]), vi("t", [3], TensorProto.INT64)],
    [vi("y", None), vi("lp", None)],
)
