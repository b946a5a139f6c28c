// RUN: xrelay-opt %s --split-input-file --verify-diagnostics | filecheck %s

// One malformed op per case; each gives one diagnostic line naming its location and op.

// relay.constant: the result type differs from the value's.
func.func @f() {
  %0 = "relay.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  func.return
}
// CHECK: tensor-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.constant' op result type tensor<3xf32> does not match the inferred tensor<2xf32>

// -----

// relay.reshape: a new shape with another element count.
func.func @f(%x: tensor<2x3x4xf32>) {
  %0 = relay.reshape %x {newshape = array<i64: 5, 5>} : (tensor<2x3x4xf32>) -> tensor<5x5xf32>
  func.return
}
// CHECK: tensor-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.reshape' op cannot reshape tensor<2x3x4xf32> to [5, 5]

// -----

// relay.transpose: axes that are not a permutation.
func.func @f(%x: tensor<2x3x4xf32>) {
  %0 = relay.transpose %x {axes = array<i64: 0, 1>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return
}
// CHECK: tensor-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.transpose' op axes [0, 1] are not a permutation of rank 3

// -----

// relay.concatenate: operands differ off the axis.
func.func @f(%x: tensor<2x3x4xf32>, %y: tensor<2x4x4xf32>) {
  %0 = relay.concatenate %x, %y {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<2x4x4xf32>) -> tensor<2x3x8xf32>
  func.return
}
// CHECK: tensor-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.concatenate' op operands differ off axis 2: tensor<2x3x4xf32>, tensor<2x4x4xf32>

// -----

// relay.split: decreasing indices.
func.func @f(%x: tensor<2x3x4xf32>) {
  %0:3 = relay.split %x {indices = array<i64: 3, 1>, axis = 2 : i64} : (tensor<2x3x4xf32>) -> (tensor<2x3x3xf32>, tensor<2x3x1xf32>, tensor<2x3x3xf32>)
  func.return
}
// CHECK: tensor-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.split' op indices [3, 1] must increase within 0..4

// -----

// relay.squeeze: an axis that is not of size 1.
func.func @f(%x: tensor<2x3x4xf32>) {
  %0 = relay.squeeze %x {axis = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  func.return
}
// CHECK: tensor-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.squeeze' op cannot squeeze axis 1 of size 3

// -----

// relay.expand_dims: an axis beyond the new rank.
func.func @f(%x: tensor<3xf32>) {
  %0 = relay.expand_dims %x {axis = 3 : i64} : (tensor<3xf32>) -> tensor<3x1xf32>
  func.return
}
// CHECK: tensor-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.expand_dims' op axis 3 is out of range for rank 2

// -----

// relay.nn.batch_flatten: a scalar.
func.func @f(%x: tensor<f32>) {
  %0 = relay.nn.batch_flatten %x : (tensor<f32>) -> tensor<1x1xf32>
  func.return
}
// CHECK: tensor-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.batch_flatten' op needs a tensor of rank at least 1

// -----

// relay.broadcast_to: a shape the data does not broadcast to.
func.func @f(%x: tensor<3xf32>) {
  %0 = relay.broadcast_to %x {shape = array<i64: 2, 4>} : (tensor<3xf32>) -> tensor<2x4xf32>
  func.return
}
// CHECK: tensor-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.broadcast_to' op cannot broadcast tensor<3xf32> to [2, 4]

// -----

// relay.strided_slice: a zero stride.
func.func @f(%x: tensor<2x3x4xf32>) {
  %0 = relay.strided_slice %x {begin = array<i64: 0>, end = array<i64: 1>, strides = array<i64: 0>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return
}
// CHECK: tensor-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.strided_slice' op strides must not be 0

// -----

// relay.strided_slice: begin and end of different lengths.
func.func @f(%x: tensor<2x3x4xf32>) {
  %0 = relay.strided_slice %x {begin = array<i64: 0, 0>, end = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return
}
// CHECK: tensor-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.strided_slice' op begin, end, strides and axes differ in length

// -----

// relay.take: float indices.
func.func @f(%x: tensor<2x3x4xf32>, %i: tensor<2xf32>) {
  %0 = relay.take %x, %i : (tensor<2x3x4xf32>, tensor<2xf32>) -> tensor<2x3x4xf32>
  func.return
}
// CHECK: tensor-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.take' op expects integer indices, got tensor<2xf32>

// -----

// relay.tile: negative repeats.
func.func @f(%x: tensor<2x3x4xf32>) {
  %0 = relay.tile %x {reps = array<i64: -1>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return
}
// CHECK: tensor-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.tile' op reps [-1] must not be negative

// -----

// relay.shape_of: a result that is not rank-sized i64.
func.func @f(%x: tensor<2x3x4xf32>) {
  %0 = relay.shape_of %x : (tensor<2x3x4xf32>) -> tensor<3xi32>
  func.return
}
// CHECK: tensor-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.shape_of' op result type tensor<3xi32> does not match the inferred tensor<3xi64>

// -----

// relay.gather: indices of another rank than the data.
func.func @f(%x: tensor<2x3xf32>, %i: tensor<2xi64>) {
  %0 = relay.gather %x, %i : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2xf32>
  func.return
}
// CHECK: tensor-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.gather' op data tensor<2x3xf32> and indices tensor<2xi64> differ in rank

// -----

// relay.gather_nd: index tuples longer than the data's rank.
func.func @f(%x: tensor<2x3xf32>, %i: tensor<4x3xi64>) {
  %0 = relay.gather_nd %x, %i : (tensor<2x3xf32>, tensor<4x3xi64>) -> tensor<4xf32>
  func.return
}
// CHECK: tensor-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.gather_nd' op indices tensor<4x3xi64> do not index data tensor<2x3xf32> with batch_dims 0

// -----

// relay.arange: a boolean range.
func.func @f() {
  %0 = relay.arange {shape = array<i64: 3>, dtype = i1} : () -> tensor<3xi1>
  func.return
}
// CHECK: tensor-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.arange' op dtype must be an integer or float type, got i1

// -----

// relay.check_indices: gather_nd-style indices must end in an axis of `depth`.
func.func @f(%x: tensor<2x3xf32>, %i: tensor<5x3xi64>) {
  %0 = relay.check_indices %i, %x {depth = 2 : i64} : (tensor<5x3xi64>, tensor<2x3xf32>) -> tensor<5x3xi64>
  func.return
}
// CHECK: tensor-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.check_indices' op indices tensor<5x3xi64> must end in an axis of 2

// -----

// relay.check_indices: float indices.
func.func @f(%x: tensor<2x3xf32>, %i: tensor<5xf32>) {
  %0 = relay.check_indices %i, %x : (tensor<5xf32>, tensor<2x3xf32>) -> tensor<5xf32>
  func.return
}
// CHECK: tensor-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.check_indices' op expects integer indices, got tensor<5xf32>
