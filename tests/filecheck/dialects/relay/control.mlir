// RUN: xrelay-opt %s | xrelay-opt | filecheck %s

// relay.if / relay.loop round-trip: regions read outer values, branch results of
// different sizes meet in a fresh symbol, a loop-carried value grows.
func.func @main(%c: tensor<i1>, %a: tensor<3xf32>, %b: tensor<5xf32>, %m: tensor<i64>) -> (tensor<?xf32, #relay.dims<"r">>, tensor<?xf32, #relay.dims<"n">>, tensor<?x3xf32, #relay.dims<"steps">>) {
  %r = relay.if %c : (tensor<i1>) -> tensor<?xf32, #relay.dims<"r">> {
    %t = relay.add %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    relay.yield %t : tensor<3xf32>
  } else {
    relay.yield %b : tensor<5xf32>
  }
  %x:2 = relay.loop %m, %c, %a : (tensor<i64>, tensor<i1>, tensor<3xf32>) -> (tensor<?xf32, #relay.dims<"n">>, tensor<?x3xf32, #relay.dims<"steps">>) {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %xi: tensor<?xf32, #relay.dims<"k">>):
    %y = relay.concatenate %xi, %a : (tensor<?xf32, #relay.dims<"k">>, tensor<3xf32>) -> tensor<?xf32, #relay.dims<"k+3">>
    relay.yield %ci, %y, %a : tensor<i1>, tensor<?xf32, #relay.dims<"k+3">>, tensor<3xf32>
  }
  func.return %r, %x#0, %x#1 : tensor<?xf32, #relay.dims<"r">>, tensor<?xf32, #relay.dims<"n">>, tensor<?x3xf32, #relay.dims<"steps">>
}

// CHECK:      %r = relay.if %c : (tensor<i1>) -> tensor<?xf32, #relay.dims<"r">> {
// CHECK-NEXT:   %t = relay.add %a, %a
// CHECK-NEXT:   relay.yield %t : tensor<3xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT:   relay.yield %b : tensor<5xf32>
// CHECK-NEXT: }
// CHECK:      relay.loop %m, %c, %a : (tensor<i64>, tensor<i1>, tensor<3xf32>) -> (tensor<?xf32, #relay.dims<"n">>, tensor<?x3xf32, #relay.dims<"steps">>) {
// CHECK-NEXT: ^{{.*}}(%i: tensor<i64>, %ci: tensor<i1>, %xi: tensor<?xf32, #relay.dims<"k">>):
// CHECK:        relay.yield %ci, %y, %a : tensor<i1>, tensor<?xf32, #relay.dims<"k+3">>, tensor<3xf32>
