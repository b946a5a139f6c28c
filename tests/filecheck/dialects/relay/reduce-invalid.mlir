// RUN: xrelay-opt %s --split-input-file --verify-diagnostics | filecheck %s

// One malformed op per case; each gives one diagnostic line naming its location and op.

// relay.sum: an axis out of range.
func.func @f(%x: tensor<2x3x4xf32>) {
  %0 = relay.sum %x {axis = array<i64: 3>} : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
  func.return
}
// CHECK: reduce-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.sum' op axis 3 is out of range for rank 3

// -----

// relay.mean: a repeated axis.
func.func @f(%x: tensor<2x3x4xf32>) {
  %0 = relay.mean %x {axis = array<i64: 0, -3>} : (tensor<2x3x4xf32>) -> tensor<3x4xf32>
  func.return
}
// CHECK: reduce-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.mean' op repeats an axis in [0, -3]

// -----

// relay.max: a result without keepdims' size-1 axes.
func.func @f(%x: tensor<2x3x4xf32>) {
  %0 = relay.max %x {axis = array<i64: 0>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<3x4xf32>
  func.return
}
// CHECK: reduce-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.max' op result type tensor<3x4xf32> does not match the inferred tensor<1x3x4xf32>

// -----

// relay.min: an axis out of range.
func.func @f(%x: tensor<2x3x4xf32>) {
  %0 = relay.min %x {axis = array<i64: -4>} : (tensor<2x3x4xf32>) -> tensor<3x4xf32>
  func.return
}
// CHECK: reduce-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.min' op axis -4 is out of range for rank 3

// -----

// relay.prod: a wrong result element type.
func.func @f(%x: tensor<2x3x4xf32>) {
  %0 = relay.prod %x : (tensor<2x3x4xf32>) -> tensor<f64>
  func.return
}
// CHECK: reduce-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.prod' op result type tensor<f64> does not match the inferred tensor<f32>

// -----

// relay.argmax: a float result.
func.func @f(%x: tensor<2x3x4xf32>) {
  %0 = relay.argmax %x : (tensor<2x3x4xf32>) -> tensor<3x4xf32>
  func.return
}
// CHECK: reduce-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.argmax' op result type tensor<3x4xf32> does not match the inferred tensor<3x4xi64>

// -----

// relay.argmin: an axis out of range.
func.func @f(%x: tensor<2x3x4xf32>) {
  %0 = relay.argmin %x {axis = 5 : i64} : (tensor<2x3x4xf32>) -> tensor<3x4xi64>
  func.return
}
// CHECK: reduce-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.argmin' op axis 5 is out of range for rank 3

// -----

// relay.sum: i1 data.
func.func @f(%x: tensor<3xi1>) {
  %0 = relay.sum %x : (tensor<3xi1>) -> tensor<i1>
  func.return
}
// CHECK: reduce-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.sum' op does not reduce i1 tensors, got tensor<3xi1>
