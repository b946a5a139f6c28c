# RUN: python %s | filecheck %s
# Import of ONNX nn ops: each case prints `// case: NAME` and the relay module.
import numpy as np
from onnx import helper

from onnx_lit import init, show, vi

rng = np.random.default_rng(0)
w = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
bias = np.ones(4, np.float32)

# Conv with pads, strides and groups becomes conv2d; the bias becomes bias_add on axis 1.
# CHECK-LABEL: // case: conv
# CHECK: func.func @main(%x: tensor<1x4x9x9xf32> {xrelay.name = "x"}, %w: tensor<4x2x3x3xf32> {xrelay.name = "w", xrelay.param}, %b: tensor<4xf32> {xrelay.name = "b", xrelay.param})
# CHECK: %[[C:.+]] = relay.nn.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x4x9x9xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x5x5xf32>
# CHECK: relay.nn.bias_add %[[C]], %b : (tensor<1x4x5x5xf32>, tensor<4xf32>) -> tensor<1x4x5x5xf32>
show(
    "conv",
    [helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1], strides=[2, 2], group=2)],
    [vi("x", [1, 4, 9, 9])],
    [vi("y", None)],
    [init("w", w), init("b", bias)],
)

# SAME_UPPER auto padding puts the odd cell at the end.
# CHECK-LABEL: // case: conv_same_upper
# CHECK: relay.nn.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 1, 1>, groups = 2 : i64}
show(
    "conv_same_upper",
    [helper.make_node("Conv", ["x", "w"], ["y"], auto_pad="SAME_UPPER", strides=[2, 2], group=2)],
    [vi("x", [1, 4, 8, 8])],
    [vi("y", None)],
    [init("w", w)],
)

# Gemm with transB is a dense; alpha/beta scale the product and the bias.
# CHECK-LABEL: // case: gemm
# CHECK: %[[D:.+]] = relay.nn.dense %a, %bw : (tensor<2x3xf32>, tensor<5x3xf32>) -> tensor<2x5xf32>
# CHECK: %[[S:.+]] = relay.multiply %[[D]], %{{.+}} : (tensor<2x5xf32>, tensor<f32>) -> tensor<2x5xf32>
# CHECK: relay.add %[[S]], %{{.+}} : (tensor<2x5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
show(
    "gemm",
    [helper.make_node("Gemm", ["a", "bw", "c"], ["y"], transB=1, alpha=2.0)],
    [vi("a", [2, 3])],
    [vi("y", None)],
    [init("bw", np.ones((5, 3), np.float32) * 0.5), init("c", np.arange(5, dtype=np.float32))],
)

# Pools keep ceil mode and count_include_pad; a 4-d global pool is global_avg_pool2d.
# CHECK-LABEL: // case: pools
# CHECK: relay.nn.max_pool2d %x {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, ceil_mode = true} : (tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32>
# CHECK: relay.nn.avg_pool2d %{{.+}} {pool_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = true} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
# CHECK: relay.nn.global_avg_pool2d %{{.+}} : (tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32>
show(
    "pools",
    [
        helper.make_node("MaxPool", ["x"], ["m"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
        helper.make_node("AveragePool", ["m"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1),
        helper.make_node("GlobalAveragePool", ["a"], ["y"]),
    ],
    [vi("x", [1, 2, 8, 8])],
    [vi("y", None)],
)

# Softmax before opset 13 works on the input coerced to 2-d at `axis`.
# CHECK-LABEL: // case: softmax_opset11
# CHECK: %[[F:.+]] = relay.reshape %x {newshape = array<i64: 2, 12>} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
# CHECK: %[[S:.+]] = relay.nn.softmax %[[F]] {axis = 1 : i64} : (tensor<2x12xf32>) -> tensor<2x12xf32>
# CHECK: relay.reshape %[[S]] {newshape = array<i64: 2, 3, 4>} : (tensor<2x12xf32>) -> tensor<2x3x4xf32>
show("softmax_opset11", [helper.make_node("Softmax", ["x"], ["y"], axis=1)], [vi("x", [2, 3, 4])], [vi("y", None)], opset=11)

# BatchNormalization in inference mode is batch_norm; LayerNormalization is layer_norm.
# CHECK-LABEL: // case: norms
# CHECK: relay.nn.batch_norm %x, %s, %s, %s, %s {epsilon = 0.0010000000474974513 : f64} : (tensor<1x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x2x2xf32>
# CHECK: relay.nn.layer_norm %{{.+}}, %g, %g {axis = 2 : i64} : (tensor<1x3x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<1x3x2x2xf32>
show(
    "norms",
    [
        helper.make_node("BatchNormalization", ["x", "s", "s", "s", "s"], ["n"], epsilon=1e-3),
        helper.make_node("LayerNormalization", ["n", "g", "g"], ["y"], axis=2),
    ],
    [vi("x", [1, 3, 2, 2])],
    [vi("y", None)],
    [init("s", np.ones(3, np.float32)), init("g", np.ones((2, 2), np.float32) * 2)],
    opset=17,
)

# Elu has no relay op: it is composed of where/exp/subtract/multiply.
# CHECK-LABEL: // case: elu
# CHECK: %[[NEG:.+]] = relay.less %x, %{{.+}} : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
# CHECK: %[[EXP:.+]] = relay.exp %x
# CHECK: relay.where %[[NEG]], %{{.+}}, %x : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
show("elu", [helper.make_node("Elu", ["x"], ["y"], alpha=0.5)], [vi("x", [4])], [vi("y", None)])
