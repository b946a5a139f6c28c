// RUN: %roundtrip | filecheck %s
// RUN: %generic-roundtrip | filecheck %s

// Reductions over some or all axes, with and without keepdims.
// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<2x3x4xf32>, %i: tensor<5x6xi32>) {
  // CHECK: relay.sum %{{.*}} {axis = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %sum = relay.sum %x {axis = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  // CHECK: relay.mean %{{.*}} {axis = array<i64: -1, 0>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  %mean = relay.mean %x {axis = array<i64: -1, 0>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  // CHECK: relay.max %{{.*}} : (tensor<2x3x4xf32>) -> tensor<f32>
  %max = relay.max %x : (tensor<2x3x4xf32>) -> tensor<f32>
  // CHECK: relay.min %{{.*}} {axis = array<i64: 0>} : (tensor<5x6xi32>) -> tensor<6xi32>
  %min = relay.min %i {axis = array<i64: 0>} : (tensor<5x6xi32>) -> tensor<6xi32>
  // CHECK: relay.prod %{{.*}} {keepdims = true} : (tensor<5x6xi32>) -> tensor<1x1xi32>
  %prod = relay.prod %i {keepdims = true} : (tensor<5x6xi32>) -> tensor<1x1xi32>
  // CHECK: relay.argmax %{{.*}} {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x4xi64>
  %amax = relay.argmax %x {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x4xi64>
  // CHECK: relay.argmin %{{.*}} {axis = -1 : i64, keepdims = true, select_last_index = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xi64>
  %amin = relay.argmin %x {axis = -1 : i64, keepdims = true, select_last_index = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xi64>
  func.return
}
