// RUN: xrelay-opt %s -p expose-checks | filecheck %s

// Each run-time index check becomes the min and max of its indices (per component for
// gather_nd-style checks), joined into one extra i64 result of @main; the module lists
// what each pair checks. Constant indices are checked here and need no result.
// CHECK:       builtin.module attributes {xrelay.checks = {{\[}}["ONNX node 'g' (Gather)", 0 : i64, 5 : i64], ["node 'n'", 0 : i64, 5 : i64], ["node 'n'", 1 : i64, 3 : i64]]}
// CHECK-LABEL: func.func @main
// CHECK-SAME:    -> (tensor<2x3xf32>, tensor<3x3xf32>, tensor<6xi64>)
// CHECK-NOT:     relay.check_indices
// CHECK:         relay.take %x, %i
// CHECK:         relay.min %i : (tensor<2xi64>) -> tensor<i64>
// CHECK:         relay.max %i : (tensor<2xi64>) -> tensor<i64>
// CHECK:         relay.cast %t {dtype = i64}
// CHECK:         relay.strided_slice %{{.*}} {begin = array<i64: 0>, end = array<i64: 1>, axes = array<i64: 1>}
// CHECK:         %[[ALL:.*]] = relay.concatenate {{.*}} -> tensor<6xi64>
// CHECK:         func.return %{{.*}}, %{{.*}}, %[[ALL]]
func.func @main(%x: tensor<5x3xf32> {xrelay.name = "x"}, %i: tensor<2xi64> {xrelay.name = "i"}, %t: tensor<3x2xi32> {xrelay.name = "t"}) -> (tensor<2x3xf32>, tensor<3x3xf32>) {
  %j = relay.check_indices %i, %x {what = "ONNX node 'g' (Gather)"} : (tensor<2xi64>, tensor<5x3xf32>) -> tensor<2xi64>
  %y = relay.take %x, %j : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %c = relay.constant dense<[0, 4]> : tensor<2xi64>
  %k = relay.check_indices %c, %x {what = "constant"} : (tensor<2xi64>, tensor<5x3xf32>) -> tensor<2xi64>
  %u = relay.check_indices %t, %x {depth = 2 : i64, what = "node 'n'"} : (tensor<3x2xi32>, tensor<5x3xf32>) -> tensor<3x2xi32>
  %z = relay.gather_nd %x, %u : (tensor<5x3xf32>, tensor<3x2xi32>) -> tensor<3xf32>
  %w = relay.take %x, %k : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %s = relay.concatenate %w, %w {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %r = relay.strided_slice %s {begin = array<i64: 0>, end = array<i64: 3>} : (tensor<4x3xf32>) -> tensor<3x3xf32>
  func.return %y, %r : tensor<2x3xf32>, tensor<3x3xf32>
}
