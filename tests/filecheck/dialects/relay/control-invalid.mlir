// RUN: xrelay-opt %s --split-input-file --verify-diagnostics | filecheck %s

// A condition is a 0-d boolean.
func.func @f(%c: tensor<2xi1>, %a: tensor<3xf32>) {
  %r = relay.if %c : (tensor<2xi1>) -> tensor<3xf32> {
    relay.yield %a : tensor<3xf32>
  } else {
    relay.yield %a : tensor<3xf32>
  }
  func.return
}
// CHECK: error: 'relay.if' op condition must be tensor<i1>, got tensor<2xi1>

// -----

// A branch may not yield a static size the result contradicts.
func.func @f(%c: tensor<i1>, %a: tensor<3xf32>, %b: tensor<5xf32>) {
  %r = relay.if %c : (tensor<i1>) -> tensor<3xf32> {
    relay.yield %a : tensor<3xf32>
  } else {
    relay.yield %b : tensor<5xf32>
  }
  func.return
}
// CHECK: error: 'relay.if' op else branch value 0 is tensor<5xf32>, expected tensor<3xf32>

// -----

// The body yields the condition, the carried values and the scan elements.
func.func @f(%m: tensor<i64>, %c: tensor<i1>, %a: tensor<3xf32>) {
  %x = relay.loop %m, %c, %a : (tensor<i64>, tensor<i1>, tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %xi: tensor<3xf32>):
    relay.yield %xi : tensor<3xf32>
  }
  func.return
}
// CHECK: error: 'relay.loop' op body yields 1 values, expected 2 (condition, 1 carried, 0 scan)

// -----

// The trip count is a 0-d i64.
func.func @f(%m: tensor<i32>, %c: tensor<i1>) {
  relay.loop %m, %c : (tensor<i32>, tensor<i1>) -> () {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>):
    relay.yield %ci : tensor<i1>
  }
  func.return
}
// CHECK: error: 'relay.loop' op max_trip must be tensor<i64>, got tensor<i32>

// -----

// A carried value keeps its element type.
func.func @f(%m: tensor<i64>, %c: tensor<i1>, %a: tensor<3xf32>, %b: tensor<3xi32>) {
  %x = relay.loop %m, %c, %a : (tensor<i64>, tensor<i1>, tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %xi: tensor<3xf32>):
    relay.yield %ci, %b : tensor<i1>, tensor<3xi32>
  }
  func.return
}
// CHECK: error: 'relay.loop' op yielded value 0 is tensor<3xi32>, expected tensor<3xf32>
