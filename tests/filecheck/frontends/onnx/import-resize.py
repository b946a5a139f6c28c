# RUN: python %s | filecheck %s
# Import of ONNX Resize: per-axis gathers with import-time taps and weights.
import numpy as np
from onnx import helper

from onnx_lit import init, show, vi

# Linear 2x upsampling of H and W: each axis gathers 2 taps per output row and sums them
# weighted; N and C (scale 1) are left alone.
# CHECK-LABEL: // case: linear
# CHECK:       %[[G:.+]] = relay.take %x, %{{.+}} {axis = 2 : i64} : (tensor<1x1x2x2xf32>, tensor<8xi64>) -> tensor<1x1x8x2xf32>
# CHECK:       %[[R:.+]] = relay.reshape %[[G]] {newshape = array<i64: 1, 1, 4, 2, 2>}
# CHECK:       %[[M:.+]] = relay.multiply %[[R]], %{{.+}} : (tensor<1x1x4x2x2xf32>, tensor<4x2x1xf32>)
# CHECK:       relay.sum %[[M]] {axis = array<i64: 3>} : (tensor<1x1x4x2x2xf32>) -> tensor<1x1x4x2xf32>
# CHECK:       relay.take %{{.+}}, %{{.+}} {axis = 3 : i64} : (tensor<1x1x4x2xf32>, tensor<8xi64>) -> tensor<1x1x4x8xf32>
show(
    "linear",
    [helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear")],
    [vi("x", [1, 1, 2, 2])],
    [vi("y", None)],
    [init("scales", np.array([1, 1, 2, 2], np.float32))],
)

# Nearest: one tap per output element, a plain take.
# CHECK-LABEL: // case: nearest
# CHECK:       %[[T:.+]] = relay.take %x, %{{.+}} {axis = 3 : i64} : (tensor<1x1x2x2xf32>, tensor<6xi64>) -> tensor<1x1x2x6xf32>
# CHECK-NEXT:  func.return %[[T]]
show(
    "nearest",
    [helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest")],
    [vi("x", [1, 1, 2, 2])],
    [vi("y", None)],
    [init("scales", np.array([1, 1, 1, 3], np.float32))],
)
