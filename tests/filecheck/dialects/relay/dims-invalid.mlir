// RUN: xrelay-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Shape rules reject what the symbols cannot prove: two different symbols do not broadcast.
func.func @f(%a: tensor<?x4xf32, #relay.dims<"batch">>, %b: tensor<?x4xf32, #relay.dims<"seq">>) {
  %0 = relay.add %a, %b : (tensor<?x4xf32, #relay.dims<"batch">>, tensor<?x4xf32, #relay.dims<"seq">>) -> tensor<?x4xf32, #relay.dims<"batch">>
  func.return
}
// CHECK: dims-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.add' op operand shapes are not broadcastable: tensor<batchx4xf32>, tensor<seqx4xf32>

// -----

// A result type whose expression differs from the inferred one.
func.func @f(%a: tensor<?x4xf32, #relay.dims<"batch">>) {
  %0 = relay.reshape %a {newshape = array<i64: -1>} : (tensor<?x4xf32, #relay.dims<"batch">>) -> tensor<?xf32, #relay.dims<"2*batch">>
  func.return
}
// CHECK: dims-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.reshape' op result type tensor<(2*batch)xf32> does not match the inferred tensor<(4*batch)xf32>

// -----

// A reshape whose element count cannot be proved equal.
func.func @f(%a: tensor<?x4xf32, #relay.dims<"batch">>) {
  %0 = relay.reshape %a {newshape = array<i64: -2, 4>, dims = #relay.dims<"seq">} : (tensor<?x4xf32, #relay.dims<"batch">>) -> tensor<?x4xf32, #relay.dims<"seq">>
  func.return
}
// CHECK: dims-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.reshape' op cannot reshape tensor<batchx4xf32> to [seq, 4]

// -----

// A malformed expression.
// CHECK: dims-invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: malformed dimension expression 'batch+*2'
func.func @f(%a: tensor<?x4xf32, #relay.dims<"batch+*2">>) {
  func.return
}
