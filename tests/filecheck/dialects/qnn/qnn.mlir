// RUN: %roundtrip | filecheck %s
// RUN: %generic-roundtrip | filecheck %s

// Conversions: per-tensor and per-channel parameters, narrow and i32 types.
// CHECK-LABEL: func.func @conversions
func.func @conversions(%x: tensor<1x4x2x2xf32>, %acc: tensor<1x4x2x2xi32>, %s: tensor<f32>, %z: tensor<i32>, %sc: tensor<4xf32>, %zc: tensor<4xi32>, %sc64: tensor<4xf64>) {
  // CHECK: qnn.quantize %{{.*}}, %{{.*}}, %{{.*}} {out_dtype = ui8} : (tensor<1x4x2x2xf32>, tensor<f32>, tensor<i32>) -> tensor<1x4x2x2xui8>
  %q = qnn.quantize %x, %s, %z {out_dtype = ui8} : (tensor<1x4x2x2xf32>, tensor<f32>, tensor<i32>) -> tensor<1x4x2x2xui8>
  // CHECK: qnn.quantize %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64, out_dtype = i8} : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xi32>) -> tensor<1x4x2x2xi8>
  %qc = qnn.quantize %x, %sc, %zc {axis = 1 : i64, out_dtype = i8} : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xi32>) -> tensor<1x4x2x2xi8>
  // CHECK: qnn.dequantize %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x4x2x2xui8>, tensor<f32>, tensor<i32>) -> tensor<1x4x2x2xf32>
  %d = qnn.dequantize %q, %s, %z : (tensor<1x4x2x2xui8>, tensor<f32>, tensor<i32>) -> tensor<1x4x2x2xf32>
  // CHECK: qnn.requantize %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64, out_dtype = ui8} : (tensor<1x4x2x2xi32>, tensor<4xf32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x4x2x2xui8>
  %r = qnn.requantize %acc, %sc, %z, %s, %z {axis = 1 : i64, out_dtype = ui8} : (tensor<1x4x2x2xi32>, tensor<4xf32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x4x2x2xui8>
  // TFLite's fixed-point rounding; its input scale may be f64 (an exact product of two f32 scales).
  // CHECK: qnn.requantize %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64, out_dtype = i8, rounding = "tflite"} : (tensor<1x4x2x2xi32>, tensor<4xf64>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x4x2x2xi8>
  %t = qnn.requantize %acc, %sc64, %z, %s, %z {axis = 1 : i64, out_dtype = i8, rounding = "tflite"} : (tensor<1x4x2x2xi32>, tensor<4xf64>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x4x2x2xi8>
  func.return
}

// Products accumulate in i32; the weight's parameters may be per output channel.
// CHECK-LABEL: func.func @products
func.func @products(%x: tensor<1x3x8x8xui8>, %w: tensor<4x3x3x3xi8>, %a: tensor<2x8xui8>, %wd: tensor<4x8xi8>, %b1: tensor<2x3x8xi8>, %b2: tensor<2x8x5xi8>, %s: tensor<f32>, %z: tensor<i32>, %sc: tensor<4xf32>) {
  // CHECK: qnn.conv2d %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xui8>, tensor<4x3x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<4xf32>) -> tensor<1x4x8x8xi32>
  %c = qnn.conv2d %x, %w, %z, %z, %s, %sc {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xui8>, tensor<4x3x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<4xf32>) -> tensor<1x4x8x8xi32>
  // CHECK: qnn.dense %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x8xui8>, tensor<4x8xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<2x4xi32>
  %d = qnn.dense %a, %wd, %z, %z, %s, %s : (tensor<2x8xui8>, tensor<4x8xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<2x4xi32>
  // CHECK: qnn.batch_matmul %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x3x8xi8>, tensor<2x8x5xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<2x3x5xi32>
  %m = qnn.batch_matmul %b1, %b2, %z, %z, %s, %s : (tensor<2x3x8xi8>, tensor<2x8x5xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<2x3x5xi32>
  func.return
}

// Quantized in, quantized out: add and mul broadcast, concatenate takes 3n + 2 operands.
// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: tensor<2x3xui8>, %b: tensor<3xui8>, %x: tensor<1x4x7x7xui8>, %s: tensor<f32>, %z: tensor<i32>) {
  // CHECK: qnn.add %{{.*}} {out_dtype = ui8} : (tensor<2x3xui8>, tensor<3xui8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<2x3xui8>
  %0 = qnn.add %a, %b, %s, %z, %s, %z, %s, %z {out_dtype = ui8} : (tensor<2x3xui8>, tensor<3xui8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<2x3xui8>
  // CHECK: qnn.mul %{{.*}} {out_dtype = i8} : (tensor<2x3xui8>, tensor<3xui8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<2x3xi8>
  %1 = qnn.mul %a, %b, %s, %z, %s, %z, %s, %z {out_dtype = i8} : (tensor<2x3xui8>, tensor<3xui8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<2x3xi8>
  // CHECK: qnn.concatenate %{{.*}} {axis = 1 : i64} : (tensor<2x3xui8>, tensor<2x3xui8>, tensor<f32>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<2x6xui8>
  %2 = qnn.concatenate %a, %a, %s, %s, %z, %z, %s, %z {axis = 1 : i64} : (tensor<2x3xui8>, tensor<2x3xui8>, tensor<f32>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<2x6xui8>
  // CHECK: qnn.global_avg_pool2d %{{.*}} : (tensor<1x4x7x7xui8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x4x1x1xui8>
  %3 = qnn.global_avg_pool2d %x, %s, %z, %s, %z : (tensor<1x4x7x7xui8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x4x1x1xui8>
  func.return
}
