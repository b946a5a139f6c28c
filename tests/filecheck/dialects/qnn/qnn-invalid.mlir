// RUN: xrelay-opt %s --split-input-file --verify-diagnostics | filecheck %s

// One malformed op per case; each gives one diagnostic line naming its location and op.

// qnn.quantize: per-channel parameters whose length is not the axis length.
func.func @f(%x: tensor<1x4x2x2xf32>, %s: tensor<3xf32>, %z: tensor<3xi32>) {
  %0 = qnn.quantize %x, %s, %z {axis = 1 : i64, out_dtype = i8} : (tensor<1x4x2x2xf32>, tensor<3xf32>, tensor<3xi32>) -> tensor<1x4x2x2xi8>
  func.return
}
// CHECK: qnn-invalid.mlir:[[# @LINE - 3]]:3: error: 'qnn.quantize' op scale has 3 entries but the axis has 4

// -----

// qnn.quantize: an output type that is not a quantized integer type.
func.func @f(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<i32>) {
  %0 = qnn.quantize %x, %s, %z {out_dtype = f16} : (tensor<4xf32>, tensor<f32>, tensor<i32>) -> tensor<4xf16>
  func.return
}
// CHECK: qnn-invalid.mlir:[[# @LINE - 3]]:3: error: 'qnn.quantize' op out_dtype must be one of i8, ui8, i16, ui16, i32, got f16

// -----

// qnn.dequantize: a float input.
func.func @f(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<i32>) {
  %0 = qnn.dequantize %x, %s, %z : (tensor<4xf32>, tensor<f32>, tensor<i32>) -> tensor<4xf32>
  func.return
}
// CHECK: qnn-invalid.mlir:[[# @LINE - 3]]:3: error: 'qnn.dequantize' op expects a quantized (i8, ui8, i16, ui16, i32) data, got tensor<4xf32>

// -----

// qnn.dequantize: a zero point that is not i32.
func.func @f(%x: tensor<4xi8>, %s: tensor<f32>, %z: tensor<i8>) {
  %0 = qnn.dequantize %x, %s, %z : (tensor<4xi8>, tensor<f32>, tensor<i8>) -> tensor<4xf32>
  func.return
}
// CHECK: qnn-invalid.mlir:[[# @LINE - 3]]:3: error: 'qnn.dequantize' op zero point must be a tensor of i32, got tensor<i8>

// -----

// qnn.requantize: an unknown rounding.
func.func @f(%x: tensor<1x4xi32>, %s: tensor<f32>, %z: tensor<i32>) {
  %0 = qnn.requantize %x, %s, %z, %s, %z {out_dtype = i8, rounding = "up"} : (tensor<1x4xi32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x4xi8>
  func.return
}
// CHECK: qnn-invalid.mlir:[[# @LINE - 3]]:3: error: 'qnn.requantize' op rounding 'up' is not one of ('half_to_even', 'tflite', 'tflite_single')

// -----

// qnn.requantize: an f64 input scale needs rounding "tflite".
func.func @f(%x: tensor<1x4xi32>, %s: tensor<f32>, %s64: tensor<f64>, %z: tensor<i32>) {
  %0 = qnn.requantize %x, %s64, %z, %s, %z {out_dtype = i8} : (tensor<1x4xi32>, tensor<f64>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x4xi8>
  func.return
}
// CHECK: qnn-invalid.mlir:[[# @LINE - 3]]:3: error: 'qnn.requantize' op input scale must be a tensor of f32, got tensor<f64>

// -----

// qnn.requantize: per-channel output parameters.
func.func @f(%x: tensor<1x4xi32>, %s: tensor<f32>, %z: tensor<i32>, %sc: tensor<4xf32>) {
  %0 = qnn.requantize %x, %s, %z, %sc, %z {out_dtype = ui8} : (tensor<1x4xi32>, tensor<f32>, tensor<i32>, tensor<4xf32>, tensor<i32>) -> tensor<1x4xui8>
  func.return
}
// CHECK: qnn-invalid.mlir:[[# @LINE - 3]]:3: error: 'qnn.requantize' op output scale must be a scalar, got tensor<4xf32>

// -----

// qnn.conv2d: per-channel weight scales that do not match the output channels.
func.func @f(%x: tensor<1x3x8x8xui8>, %w: tensor<4x3x3x3xi8>, %s: tensor<f32>, %z: tensor<i32>, %sc: tensor<5xf32>) {
  %0 = qnn.conv2d %x, %w, %z, %z, %s, %sc : (tensor<1x3x8x8xui8>, tensor<4x3x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<5xf32>) -> tensor<1x4x6x6xi32>
  func.return
}
// CHECK: qnn-invalid.mlir:[[# @LINE - 3]]:3: error: 'qnn.conv2d' op weight scale has 5 entries but the axis has 4

// -----

// qnn.dense: a narrow accumulator.
func.func @f(%x: tensor<2x8xui8>, %w: tensor<4x8xi8>, %s: tensor<f32>, %z: tensor<i32>) {
  %0 = qnn.dense %x, %w, %z, %z, %s, %s {out_dtype = i8} : (tensor<2x8xui8>, tensor<4x8xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<2x4xi8>
  func.return
}
// CHECK: qnn-invalid.mlir:[[# @LINE - 3]]:3: error: 'qnn.dense' op accumulates in i32, not i8

// -----

// qnn.concatenate: operands that are not 3n + 2.
func.func @f(%a: tensor<2x3xui8>, %s: tensor<f32>, %z: tensor<i32>) {
  %0 = qnn.concatenate %a, %a, %s, %z, %s, %z {axis = 1 : i64} : (tensor<2x3xui8>, tensor<2x3xui8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<2x6xui8>
  func.return
}
// CHECK: qnn-invalid.mlir:[[# @LINE - 3]]:3: error: 'qnn.concatenate' op takes 3n + 2 operands (n >= 1), got 6

// -----

// qnn.batch_matmul: per-channel parameters (per tensor only).
func.func @f(%a: tensor<2x3x8xi8>, %b: tensor<2x8x4xi8>, %s: tensor<f32>, %z: tensor<i32>, %sc: tensor<4xf32>) {
  %0 = qnn.batch_matmul %a, %b, %z, %z, %s, %sc : (tensor<2x3x8xi8>, tensor<2x8x4xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<4xf32>) -> tensor<2x3x4xi32>
  func.return
}
// CHECK: qnn-invalid.mlir:[[# @LINE - 3]]:3: error: 'qnn.batch_matmul' op weight scale must be a scalar, got tensor<4xf32>

// -----

// qnn.add: operands that do not broadcast.
func.func @f(%a: tensor<2x3xui8>, %b: tensor<4xui8>, %s: tensor<f32>, %z: tensor<i32>) {
  %0 = qnn.add %a, %b, %s, %z, %s, %z, %s, %z {out_dtype = ui8} : (tensor<2x3xui8>, tensor<4xui8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<2x3xui8>
  func.return
}
// CHECK: qnn-invalid.mlir:[[# @LINE - 3]]:3: error: 'qnn.add' op operand shapes are not broadcastable: tensor<2x3xf32>, tensor<4xf32>

// -----

// qnn.mul: a float operand.
func.func @f(%a: tensor<3xf32>, %s: tensor<f32>, %z: tensor<i32>) {
  %0 = qnn.mul %a, %a, %s, %z, %s, %z, %s, %z {out_dtype = ui8} : (tensor<3xf32>, tensor<3xf32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<3xui8>
  func.return
}
// CHECK: qnn-invalid.mlir:[[# @LINE - 3]]:3: error: 'qnn.mul' op expects a quantized (i8, ui8, i16, ui16, i32) lhs, got tensor<3xf32>

// -----

// qnn.global_avg_pool2d: data that is not 4-d.
func.func @f(%x: tensor<4x7x7xui8>, %s: tensor<f32>, %z: tensor<i32>) {
  %0 = qnn.global_avg_pool2d %x, %s, %z, %s, %z : (tensor<4x7x7xui8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<4x1x1xui8>
  func.return
}
// CHECK: qnn-invalid.mlir:[[# @LINE - 3]]:3: error: 'qnn.global_avg_pool2d' op expects data of rank 4, got tensor<4x7x7xui8>
