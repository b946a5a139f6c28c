# RUN: python %s | filecheck %s
# Import of ONNX tensor ops, including import-time folding of constant inputs.
import numpy as np
from onnx import TensorProto, helper

from onnx_lit import I64, init, show, vi

# Reshape's 0 copies the input dimension and -1 is inferred; the shape input is folded away.
# CHECK-LABEL: // case: reshape
# CHECK: func.func @main(%x: tensor<2x3x4xf32> {xrelay.name = "x"}) -> tensor<2x12xf32>
# CHECK-NEXT: %[[R:.+]] = relay.reshape %x {newshape = array<i64: 2, -1>} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
# CHECK-NEXT: func.return %[[R]]
show("reshape", [helper.make_node("Reshape", ["x", "s"], ["y"])], [vi("x", [2, 3, 4])], [vi("y", None)], [init("s", np.array([0, -1], np.int64))])

# Shape math on a static shape folds at import: only the Expand survives, as broadcast_to.
# CHECK-LABEL: // case: expand_by_shape
# CHECK: func.func @main(%x: tensor<3x1xf32> {xrelay.name = "x"}, %z: tensor<3x5xf32> {xrelay.name = "z"})
# CHECK-NOT: relay.shape_of
# CHECK: relay.broadcast_to %x {shape = array<i64: 3, 5>} : (tensor<3x1xf32>) -> tensor<3x5xf32>
show(
    "expand_by_shape",
    [helper.make_node("Shape", ["z"], ["s"]), helper.make_node("Expand", ["x", "s"], ["y"])],
    [vi("x", [3, 1]), vi("z", [3, 5])],
    [vi("y", None)],
)

# Slice with negative starts, steps and axes becomes strided_slice.
# CHECK-LABEL: // case: slice
# CHECK: relay.strided_slice %x {begin = array<i64: -1, 0>, end = array<i64: -9223372036854775808, 4>, strides = array<i64: -1, 2>, axes = array<i64: 1, 0>} : (tensor<4x6xf32>) -> tensor<2x6xf32>
show(
    "slice",
    [helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])],
    [vi("x", [4, 6])],
    [vi("y", None)],
    [
        init("st", np.array([-1, 0], np.int64)),
        init("en", np.array([np.iinfo(np.int64).min, 4], np.int64)),
        init("ax", np.array([1, 0], np.int64)),
        init("sp", np.array([-1, 2], np.int64)),
    ],
)

# Split with sizes gives several results; Concat joins them back.
# CHECK-LABEL: // case: split_concat
# CHECK: %[[S:.+]], %[[T:.+]] = relay.split %x {indices = array<i64: 2>, axis = 1 : i64} : (tensor<2x5xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>)
# CHECK: relay.concatenate %[[T]], %[[S]] {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<2x5xf32>
show(
    "split_concat",
    [
        helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=1),
        helper.make_node("Concat", ["b", "a"], ["y"], axis=1),
    ],
    [vi("x", [2, 5])],
    [vi("y", None)],
    [init("sizes", np.array([2, 3], np.int64))],
)

# Gather with run-time indices is take of the checked indices (an index out of range is
# an error at run time); Unsqueeze/Squeeze are reshape/squeeze.
# CHECK-LABEL: // case: gather
# CHECK: %[[I:.+]] = relay.check_indices %i, %x {what = "ONNX node 'Gather_0' (Gather)"} : (tensor<2xi64>, tensor<5x3xf32>) -> tensor<2xi64>
# CHECK: %[[G:.+]] = relay.take %x, %[[I]] : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
# CHECK: %[[U:.+]] = relay.reshape %[[G]] {newshape = array<i64: 1, 2, 3>} : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
# CHECK: relay.squeeze %[[U]] {axis = array<i64: 0>} : (tensor<1x2x3xf32>) -> tensor<2x3xf32>
show(
    "gather",
    [
        helper.make_node("Gather", ["x", "i"], ["g"]),
        helper.make_node("Unsqueeze", ["g", "zero"], ["u"]),
        helper.make_node("Squeeze", ["u", "zero"], ["y"]),
    ],
    [vi("x", [5, 3]), vi("i", [2], I64)],
    [vi("y", None)],
    [init("zero", np.array([0], np.int64))],
)

# A large constant fill (ConstantOfShape) is a broadcast scalar, not megabytes of IR.
# CHECK-LABEL: // case: constant_fill
# CHECK: %[[C:.+]] = relay.constant dense<2.500000e-01> : tensor<f32>
# CHECK: %[[B:.+]] = relay.broadcast_to %[[C]] {shape = array<i64: 256, 256>} : (tensor<f32>) -> tensor<256x256xf32>
# CHECK: relay.add %x, %[[B]]
show(
    "constant_fill",
    [
        helper.make_node(
            "ConstantOfShape", ["shape"], ["fill"],
            value=helper.make_tensor("v", TensorProto.FLOAT, [1], [0.25]),
        ),
        helper.make_node("Add", ["x", "fill"], ["y"]),
    ],
    [vi("x", [256, 256])],
    [vi("y", None)],
    [init("shape", np.array([256, 256], np.int64))],
)

# Where, Cast and comparisons keep their types.
# CHECK-LABEL: // case: where_cast
# CHECK: %[[L:.+]] = relay.less %x, %{{.+}} : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
# CHECK: %[[W:.+]] = relay.where %[[L]], %x, %{{.+}} : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
# CHECK: relay.cast %[[W]] {dtype = i32} : (tensor<4xf32>) -> tensor<4xi32>
show(
    "where_cast",
    [
        helper.make_node("Less", ["x", "zero"], ["l"]),
        helper.make_node("Where", ["l", "x", "zero"], ["w"]),
        helper.make_node("Cast", ["w"], ["y"], to=TensorProto.INT32),
    ],
    [vi("x", [4])],
    [vi("y", None)],
    [init("zero", np.array(0.0, np.float32))],
)
