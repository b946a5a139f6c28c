// RUN: %roundtrip | filecheck %s
// RUN: %generic-roundtrip | filecheck %s

// Constants of several element types, including a scalar and a splat.
// CHECK-LABEL: func.func @constants
func.func @constants() {
  // CHECK: relay.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %f = relay.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK: relay.constant dense<[1, -2, 3]> : tensor<3xi64>
  %i = relay.constant dense<[1, -2, 3]> : tensor<3xi64>
  // CHECK: relay.constant dense<[true, false]> : tensor<2xi1>
  %b = relay.constant dense<[true, false]> : tensor<2xi1>
  // CHECK: relay.constant dense<3.500000e+00> : tensor<f32>
  %s = relay.constant dense<3.5> : tensor<f32>
  // CHECK: relay.constant dense<0.000000e+00> : tensor<2x3xf32>
  %z = relay.constant dense<0.0> : tensor<2x3xf32>
  func.return
}

// Shape manipulation.
// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<2x3x4xf32>, %y: tensor<1x3x1xf32>, %v: tensor<3xf32>) {
  // CHECK: relay.reshape %{{.*}} {newshape = array<i64: 6, -1>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %r = relay.reshape %x {newshape = array<i64: 6, -1>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  // CHECK: relay.transpose %{{.*}} {axes = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %t = relay.transpose %x {axes = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  // CHECK: relay.transpose %{{.*}} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %tr = relay.transpose %x : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  // CHECK: relay.squeeze %{{.*}} : (tensor<1x3x1xf32>) -> tensor<3xf32>
  %sq = relay.squeeze %y : (tensor<1x3x1xf32>) -> tensor<3xf32>
  // CHECK: relay.squeeze %{{.*}} {axis = array<i64: -1>} : (tensor<1x3x1xf32>) -> tensor<1x3xf32>
  %sq1 = relay.squeeze %y {axis = array<i64: -1>} : (tensor<1x3x1xf32>) -> tensor<1x3xf32>
  // CHECK: relay.expand_dims %{{.*}} {axis = 1 : i64, num_newaxis = 2 : i64} : (tensor<3xf32>) -> tensor<3x1x1xf32>
  %e = relay.expand_dims %v {axis = 1 : i64, num_newaxis = 2 : i64} : (tensor<3xf32>) -> tensor<3x1x1xf32>
  // CHECK: relay.nn.batch_flatten %{{.*}} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  %bf = relay.nn.batch_flatten %x : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  // CHECK: relay.broadcast_to %{{.*}} {shape = array<i64: 2, 4, 3>} : (tensor<3xf32>) -> tensor<2x4x3xf32>
  %bc = relay.broadcast_to %v {shape = array<i64: 2, 4, 3>} : (tensor<3xf32>) -> tensor<2x4x3xf32>
  // CHECK: relay.tile %{{.*}} {reps = array<i64: 2, 1, 3>} : (tensor<2x3x4xf32>) -> tensor<4x3x12xf32>
  %tl = relay.tile %x {reps = array<i64: 2, 1, 3>} : (tensor<2x3x4xf32>) -> tensor<4x3x12xf32>
  // CHECK: relay.shape_of %{{.*}} : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %so = relay.shape_of %x : (tensor<2x3x4xf32>) -> tensor<3xi64>
  func.return
}

// Concatenate, split (several results), strided_slice, take.
// CHECK-LABEL: func.func @slicing
func.func @slicing(%x: tensor<2x3x4xf32>, %z: tensor<2x1x4xf32>, %idx: tensor<5xi64>, %idx2: tensor<2x2xi32>) {
  // CHECK: relay.concatenate %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x4x4xf32>
  %c = relay.concatenate %x, %z {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x4x4xf32>
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}} = relay.split %{{.*}} {indices = array<i64: 1, 3>, axis = 2 : i64} : (tensor<2x3x4xf32>) -> (tensor<2x3x1xf32>, tensor<2x3x2xf32>, tensor<2x3x1xf32>)
  %s:3 = relay.split %x {indices = array<i64: 1, 3>, axis = 2 : i64} : (tensor<2x3x4xf32>) -> (tensor<2x3x1xf32>, tensor<2x3x2xf32>, tensor<2x3x1xf32>)
  // CHECK: relay.strided_slice %{{.*}} {begin = array<i64: 0, 1>, end = array<i64: 9223372036854775807, -1>, strides = array<i64: 2, 1>, axes = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<1x3x2xf32>
  %ss = relay.strided_slice %x {begin = array<i64: 0, 1>, end = array<i64: 9223372036854775807, -1>, strides = array<i64: 2, 1>, axes = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<1x3x2xf32>
  // CHECK: relay.strided_slice %{{.*}} {begin = array<i64: -1>, end = array<i64: -2>, strides = array<i64: -1>} : (tensor<2x3x4xf32>) -> tensor<1x3x4xf32>
  %rev = relay.strided_slice %x {begin = array<i64: -1>, end = array<i64: -2>, strides = array<i64: -1>} : (tensor<2x3x4xf32>) -> tensor<1x3x4xf32>
  // CHECK: relay.take %{{.*}}, %{{.*}} {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<5xi64>) -> tensor<2x3x5xf32>
  %tk = relay.take %x, %idx {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<5xi64>) -> tensor<2x3x5xf32>
  // CHECK: relay.take %{{.*}}, %{{.*}} {mode = "wrap"} : (tensor<2x3x4xf32>, tensor<2x2xi32>) -> tensor<2x2x3x4xf32>
  %tk2 = relay.take %x, %idx2 {mode = "wrap"} : (tensor<2x3x4xf32>, tensor<2x2xi32>) -> tensor<2x2x3x4xf32>
  func.return
}

// Element gather (the result has the indices' shape) and gather by index tuples.
// CHECK-LABEL: func.func @gathers
func.func @gathers(%x: tensor<2x3x4xf32>, %i: tensor<2x3x2xi64>, %t: tensor<5x2xi64>) {
  // CHECK: relay.gather %{{.*}}, %{{.*}} {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<2x3x2xi64>) -> tensor<2x3x2xf32>
  %g = relay.gather %x, %i {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<2x3x2xi64>) -> tensor<2x3x2xf32>
  // CHECK: relay.gather_nd %{{.*}}, %{{.*}} : (tensor<2x3x4xf32>, tensor<5x2xi64>) -> tensor<5x4xf32>
  %n = relay.gather_nd %x, %t : (tensor<2x3x4xf32>, tensor<5x2xi64>) -> tensor<5x4xf32>
  // CHECK: relay.check_indices %{{.*}}, %{{.*}} {axis = 1 : i64, what = "node 'g'"} : (tensor<2x3x2xi64>, tensor<2x3x4xf32>) -> tensor<2x3x2xi64>
  %c = relay.check_indices %i, %x {axis = 1 : i64, what = "node 'g'"} : (tensor<2x3x2xi64>, tensor<2x3x4xf32>) -> tensor<2x3x2xi64>
  // CHECK: relay.check_indices %{{.*}}, %{{.*}} {depth = 2 : i64, what = "node 'n'"} : (tensor<5x2xi64>, tensor<2x3x4xf32>) -> tensor<5x2xi64>
  %d = relay.check_indices %t, %x {depth = 2 : i64, what = "node 'n'"} : (tensor<5x2xi64>, tensor<2x3x4xf32>) -> tensor<5x2xi64>
  func.return
}

// A range 0..n-1 of a static or dynamic length.
// CHECK-LABEL: func.func @ranges
func.func @ranges() {
  // CHECK: relay.arange {shape = array<i64: 4>} : () -> tensor<4xi64>
  %a = relay.arange {shape = array<i64: 4>} : () -> tensor<4xi64>
  // CHECK: relay.arange {shape = array<i64: -2>, dims = #relay.dims<"seq">, dtype = f32} : () -> tensor<?xf32, #relay.dims<"seq">>
  %b = relay.arange {shape = array<i64: -2>, dims = #relay.dims<"seq">, dtype = f32} : () -> tensor<?xf32, #relay.dims<"seq">>
  func.return
}
