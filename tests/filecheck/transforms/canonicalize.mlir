// RUN: xrelay-opt %s -p canonicalize --split-input-file | filecheck %s

// Transposes that compose to the identity, then x * 1 and x + 0, leave x.
// CHECK-LABEL: func.func @identities
// CHECK-NEXT:    func.return %x
func.func @identities(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %one = relay.constant dense<1.0> : tensor<f32>
  %zero = relay.constant dense<0.0> : tensor<2x3xf32>
  %t = relay.transpose %x {axes = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %u = relay.transpose %t {axes = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %m = relay.multiply %one, %u : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %a = relay.add %m, %zero : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = relay.reshape %a {newshape = array<i64: 2, 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = relay.cast %r {dtype = f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %c : tensor<2x3xf32>
}

// -----

// Two reshapes become one; two transposes compose into one.
// CHECK-LABEL: func.func @chains
// CHECK-NEXT:    %[[R:.+]] = relay.reshape %x {newshape = array<i64: 6>} : (tensor<2x3xf32>) -> tensor<6xf32>
// CHECK-NEXT:    %[[T:.+]] = relay.transpose %y {axes = array<i64: 2, 0, 1>}
// CHECK-NEXT:    func.return %[[R]], %[[T]]
func.func @chains(%x: tensor<2x3xf32>, %y: tensor<2x3x4xf32>) -> (tensor<6xf32>, tensor<4x2x3xf32>) {
  %a = relay.reshape %x {newshape = array<i64: 3, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %b = relay.reshape %a {newshape = array<i64: 6>} : (tensor<3x2xf32>) -> tensor<6xf32>
  %t = relay.transpose %y {axes = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %u = relay.transpose %t {axes = array<i64: 2, 1, 0>} : (tensor<3x2x4xf32>) -> tensor<4x2x3xf32>
  func.return %b, %u : tensor<6xf32>, tensor<4x2x3xf32>
}

// -----

// no_fuse: x * 2, a broadcasting x + 0 (the result is larger than x) and x - 0 on the left
// are not identities and stay.
// CHECK-LABEL: func.func @no_fuse_not_identities
// CHECK:         relay.multiply %x, %{{.+}}
// CHECK:         relay.add %x, %{{.+}} : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK:         relay.subtract %{{.+}}, %x
func.func @no_fuse_not_identities(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<2x3xf32>, tensor<3xf32>) {
  %two = relay.constant dense<2.0> : tensor<f32>
  %zero = relay.constant dense<0.0> : tensor<2x3xf32>
  %zero1 = relay.constant dense<0.0> : tensor<f32>
  %m = relay.multiply %x, %two : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %a = relay.add %x, %zero : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = relay.subtract %zero1, %x : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %m, %a, %s : tensor<3xf32>, tensor<2x3xf32>, tensor<3xf32>
}
