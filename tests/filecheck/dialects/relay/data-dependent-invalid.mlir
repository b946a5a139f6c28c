// RUN: xrelay-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The size is a dimension name.
func.func @f(%x: tensor<3xf32>) {
  %i = relay.nonzero %x {size = "2x"} : (tensor<3xf32>) -> tensor<1x?xi64, #relay.dims<"nz">>
  func.return
}
// CHECK: error: 'relay.nonzero' op size '2x' is not a dimension name

// -----

// The result carries the size the op names.
func.func @f(%x: tensor<6xf32>) {
  %u:4 = relay.unique %x {size = "u"} : (tensor<6xf32>) -> (tensor<?xf32, #relay.dims<"v">>, tensor<?xi64, #relay.dims<"u">>, tensor<6xi64>, tensor<?xi64, #relay.dims<"u">>)
  func.return
}
// CHECK: error: 'relay.unique' op result type {{.*}} does not match the inferred

// -----

// Scores are [batch, classes, boxes] for the boxes given.
func.func @f(%b: tensor<1x6x4xf32>, %s: tensor<1x2x5xf32>, %k: tensor<i64>, %t: tensor<f32>) {
  %n = relay.non_max_suppression %b, %s, %k, %t, %t {size = "n"} : (tensor<1x6x4xf32>, tensor<1x2x5xf32>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<?x3xi64, #relay.dims<"n">>
  func.return
}
// CHECK: error: 'relay.non_max_suppression' op scores must be [batch, classes, boxes]

// -----

// A slice's bounds are 0-d i64 and its step is not 0.
func.func @f(%x: tensor<4xf32>, %lo: tensor<i64>) {
  %j = relay.slice_indices %x, %lo, %lo {size = "n", step = 0 : i64} : (tensor<4xf32>, tensor<i64>, tensor<i64>) -> tensor<?xi64, #relay.dims<"n">>
  func.return
}
// CHECK: error: 'relay.slice_indices' op step must not be 0

// -----

// TopK's k is a 0-d i64.
func.func @f(%x: tensor<4xf32>, %k: tensor<1xi64>) {
  %v, %i = relay.topk %x, %k {size = "n"} : (tensor<4xf32>, tensor<1xi64>) -> (tensor<?xf32, #relay.dims<"n">>, tensor<?xi64, #relay.dims<"n">>)
  func.return
}
// CHECK: error: 'relay.topk' op k must be tensor<i64>, got tensor<1xi64>

// -----

// match_dims pairs a data axis with a ref axis.
func.func @f(%x: tensor<?xf32, #relay.dims<"a">>, %r: tensor<?xf32, #relay.dims<"b">>) {
  %y = relay.match_dims %x, %r {pairs = array<i64: 0>} : (tensor<?xf32, #relay.dims<"a">>, tensor<?xf32, #relay.dims<"b">>) -> tensor<?xf32, #relay.dims<"b">>
  func.return
}
// CHECK: error: 'relay.match_dims' op pairs must list (data axis, ref axis) pairs
