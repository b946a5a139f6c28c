// RUN: xrelay-opt %s -p dce,cse | filecheck %s
// Relay ops are Pure, so xDSL's dce and cse apply to them: the unused exp goes, the equal
// constants and the repeated multiply merge.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[A:.+]] = relay.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[M:.+]] = relay.multiply %x, %[[A]]
// CHECK-NEXT:    %[[S:.+]] = relay.add %[[M]], %[[M]]
// CHECK-NEXT:    func.return %[[S]]
// CHECK-NOT:     relay.exp
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = relay.constant dense<2.0> : tensor<f32>
  %b = relay.constant dense<2.0> : tensor<f32>
  %m1 = relay.multiply %x, %a : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %m2 = relay.multiply %x, %b : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %dead = relay.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %s = relay.add %m1, %m2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}
