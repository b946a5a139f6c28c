// RUN: xrelay-opt %s -p "hoist-constants{min-elements=4}" | filecheck %s
// RUN: xrelay-opt %s -p "hoist-constants{min-elements=7}" | filecheck %s --check-prefix=SMALL

// A constant of at least min-elements elements becomes a hidden parameter of @main.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    %[[C:[^:]+]]: tensor<2x3xf32> {xrelay.name = "__const0", xrelay.param}
// CHECK-NOT:     relay.constant
// CHECK:         relay.add %x, %[[C]]
// Below the threshold it stays a constant.
// SMALL:         relay.constant dense<1.000000e+00> : tensor<2x3xf32>
func.func @main(%x: tensor<2x3xf32> {xrelay.name = "x"}) -> tensor<2x3xf32> {
  %c = relay.constant dense<1.0> : tensor<2x3xf32>
  %y = relay.add %x, %c : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
