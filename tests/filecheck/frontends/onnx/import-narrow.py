# RUN: python %s | filecheck %s
# Import of narrow ONNX types: tensors are carried in a storage type (float8 bits in ui8,
# bfloat16 bits in ui16, int4 values in i8) and @main names the type users see in
# `xrelay.dtype`; casts are relay arithmetic on the storage.
from onnx import TensorProto, helper

from onnx_lit import show, vi

# Decoding float8: the code indexes a table of the format's 256 values.
# CHECK-LABEL: // case: f8_to_f32
# CHECK:       func.func @main(%x: tensor<4xui8> {xrelay.name = "x", xrelay.dtype = "float8_e4m3fn"}) -> tensor<4xf32>
# CHECK:       %[[I:.+]] = relay.cast %x {dtype = i32} : (tensor<4xui8>) -> tensor<4xi32>
# CHECK:       %[[T:.+]] = relay.constant dense<{{.+}}> : tensor<256xf32>
# CHECK:       relay.take %[[T]], %[[I]] : (tensor<256xf32>, tensor<4xi32>) -> tensor<4xf32>
show(
    "f8_to_f32",
    [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)],
    [vi("x", [4], TensorProto.FLOAT8E4M3FN)],
    [vi("y", None)],
)

# Encoding bfloat16: the f32 bits, rounded to nearest even on the integer bits (add
# 0x7fff plus the lowest kept bit), shifted down; the result is marked as bfloat16.
# CHECK-LABEL: // case: f32_to_bf16
# CHECK:       func.func @main(%x: tensor<4xf32> {xrelay.name = "x"}) -> (tensor<4xui16> {xrelay.dtype = "bfloat16"})
# CHECK:       %[[B:.+]] = relay.reinterpret %x {dtype = i32} : (tensor<4xf32>) -> tensor<4xi32>
# CHECK:       relay.bitwise_and %[[B]], %{{.+}} : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
# CHECK:       relay.right_shift
# CHECK:       relay.isnan %x
# CHECK:       relay.cast %{{.+}} {dtype = ui16} : (tensor<4xi32>) -> tensor<4xui16>
show(
    "f32_to_bf16",
    [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.BFLOAT16)],
    [vi("x", [4])],
    [vi("y", None)],
)

# int4 is its value in i8: a cast wraps to 4 bits (shift up, arithmetic shift down).
# CHECK-LABEL: // case: f32_to_int4
# CHECK:       -> (tensor<4xi8> {xrelay.dtype = "int4"})
# CHECK:       relay.cast %x {dtype = i64}
# CHECK:       relay.left_shift %{{.+}}, %{{.+}} : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
# CHECK:       relay.right_shift
# CHECK:       relay.cast %{{.+}} {dtype = i8} : (tensor<4xi64>) -> tensor<4xi8>
show(
    "f32_to_int4",
    [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.INT4)],
    [vi("x", [4])],
    [vi("y", None)],
)

# Any other op on bfloat16 computes in f32: decode, the op, encode.
# CHECK-LABEL: // case: bf16_relu
# CHECK:       relay.left_shift
# CHECK:       %[[F:.+]] = relay.reinterpret %{{.+}} {dtype = f32} : (tensor<4xui32>) -> tensor<4xf32>
# CHECK:       relay.nn.relu %[[F]]
# CHECK:       relay.cast %{{.+}} {dtype = ui16}
show(
    "bf16_relu",
    [helper.make_node("Relu", ["x"], ["y"])],
    [vi("x", [4], TensorProto.BFLOAT16)],
    [vi("y", None)],
)
