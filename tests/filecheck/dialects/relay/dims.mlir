// RUN: %roundtrip | filecheck %s
// RUN: %generic-roundtrip | filecheck %s

// Dynamic dimensions are `?` with their expressions in a #relay.dims encoding; shape rules
// compute with the symbols (a product from reshape's -1, a sum from concatenate, a conv's
// output size) and an expression prints in one canonical form ("seq*batch" -> "batch*seq").
// CHECK-LABEL: func.func @encoder
// CHECK-SAME: (%x: tensor<?x?x8xf32, #relay.dims<"batch", "seq">>
// CHECK: relay.reshape %x {newshape = array<i64: -1, 8>} : (tensor<?x?x8xf32, #relay.dims<"batch", "seq">>) -> tensor<?x8xf32, #relay.dims<"batch*seq">>
// CHECK: relay.nn.dense {{.*}} -> tensor<?x4xf32, #relay.dims<"batch*seq">>
// CHECK: relay.reshape {{.*}} {newshape = array<i64: -2, -2, 4>, dims = #relay.dims<"batch", "seq">}
// CHECK: relay.concatenate {{.*}} -> tensor<?x?x4xf32, #relay.dims<"batch", "2*seq">>
func.func @encoder(%x: tensor<?x?x8xf32, #relay.dims<"batch", "seq">>, %w: tensor<4x8xf32>) -> tensor<?x?x4xf32, #relay.dims<"batch", "2*seq">> {
  %r = relay.reshape %x {newshape = array<i64: -1, 8>} : (tensor<?x?x8xf32, #relay.dims<"batch", "seq">>) -> tensor<?x8xf32, #relay.dims<"seq*batch">>
  %d = relay.nn.dense %r, %w : (tensor<?x8xf32, #relay.dims<"batch*seq">>, tensor<4x8xf32>) -> tensor<?x4xf32, #relay.dims<"batch*seq">>
  %b = relay.reshape %d {newshape = array<i64: -2, -2, 4>, dims = #relay.dims<"batch", "seq">} : (tensor<?x4xf32, #relay.dims<"batch*seq">>) -> tensor<?x?x4xf32, #relay.dims<"batch", "seq">>
  %c = relay.concatenate %b, %b {axis = 1 : i64} : (tensor<?x?x4xf32, #relay.dims<"batch", "seq">>, tensor<?x?x4xf32, #relay.dims<"batch", "seq">>) -> tensor<?x?x4xf32, #relay.dims<"batch", "2*seq">>
  func.return %c : tensor<?x?x4xf32, #relay.dims<"batch", "2*seq">>
}

// A convolution's output size is an expression of the input's.
// CHECK-LABEL: func.func @conv
// CHECK: relay.nn.conv2d {{.*}} -> tensor<?x4x?x?xf32, #relay.dims<"n", "floor(h/2-1/2)+1", "floor(w/2-1/2)+1">>
func.func @conv(%x: tensor<?x3x?x?xf32, #relay.dims<"n", "h", "w">>, %w: tensor<4x3x3x3xf32>) -> tensor<?x4x?x?xf32, #relay.dims<"n", "floor(h/2-1/2)+1", "floor(w/2-1/2)+1">> {
  %y = relay.nn.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<?x3x?x?xf32, #relay.dims<"n", "h", "w">>, tensor<4x3x3x3xf32>) -> tensor<?x4x?x?xf32, #relay.dims<"n", "floor(h/2-1/2)+1", "floor(w/2-1/2)+1">>
  func.return %y : tensor<?x4x?x?xf32, #relay.dims<"n", "floor(h/2-1/2)+1", "floor(w/2-1/2)+1">>
}
