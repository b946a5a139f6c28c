# RUN: python %s | filecheck %s
# Import of ONNX quantized ops into qnn: each case prints `// case: NAME` and the module.
import numpy as np
from onnx import TensorProto, helper

from onnx_lit import init, show, vi

U8, I8 = TensorProto.UINT8, TensorProto.INT8
w = np.arange(-8, 10, dtype=np.int8).reshape(2, 1, 3, 3)

# QLinearConv: an i32 qnn.conv2d with per-channel weight scales, the int32 bias added,
# then a requantize by x_scale * w_scale to the output's quantization.
# CHECK-LABEL: // case: qlinearconv
# CHECK:       %[[C:.+]] = qnn.conv2d %x, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xui8>, tensor<2x1x3x3xi8>, tensor<i32>, tensor<2xi32>, tensor<f32>, tensor<2xf32>) -> tensor<1x2x4x4xi32>
# CHECK:       %[[S:.+]] = relay.multiply %{{.+}}, %{{.+}} : (tensor<f32>, tensor<2xf32>) -> tensor<2xf32>
# CHECK:       %[[A:.+]] = relay.nn.bias_add %[[C]], %{{.+}} : (tensor<1x2x4x4xi32>, tensor<2xi32>)
# CHECK:       qnn.requantize %[[A]], %[[S]], %{{.+}}, %{{.+}}, %{{.+}} {axis = 1 : i64, out_dtype = ui8}
show(
    "qlinearconv",
    [
        helper.make_node(
            "QLinearConv",
            ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
            ["y"],
            pads=[1, 1, 1, 1],
        )
    ],
    [vi("x", [1, 1, 4, 4], U8)],
    [vi("y", None, U8)],
    [
        init("xs", np.float32(0.1)),
        init("xz", np.uint8(128)),
        init("w", w),
        init("ws", np.array([0.01, 0.02], np.float32)),
        init("wz", np.zeros(2, np.int8)),
        init("ys", np.float32(0.2)),
        init("yz", np.uint8(10)),
        init("b", np.array([5, -5], np.int32)),
    ],
)

# QDQ: DequantizeLinear -> MatMul -> QuantizeLinear folds into qnn.dense (the weight
# transposed to [N, K]) and a requantize; no float matmul is left.
# CHECK-LABEL: // case: qdq_matmul
# CHECK-NOT:   relay.nn.matmul
# CHECK:       %[[WT:.+]] = relay.transpose %{{.+}} {axes = array<i64: 1, 0>} : (tensor<3x4xi8>) -> tensor<4x3xi8>
# CHECK:       %[[D:.+]] = qnn.dense %x, %[[WT]]
# CHECK:       qnn.requantize %[[D]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {out_dtype = ui8}
show(
    "qdq_matmul",
    [
        helper.make_node("DequantizeLinear", ["x", "s", "z"], ["xf"]),
        helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"]),
        helper.make_node("MatMul", ["xf", "wf"], ["yf"]),
        helper.make_node("QuantizeLinear", ["yf", "s", "z"], ["y"]),
    ],
    [vi("x", [2, 3], U8)],
    [vi("y", None, U8)],
    [
        init("s", np.float32(0.05)),
        init("z", np.uint8(100)),
        init("w", np.arange(12, dtype=np.int8).reshape(3, 4)),
        init("ws", np.float32(0.01)),
        init("wz", np.int8(0)),
    ],
    opset=19,
)
