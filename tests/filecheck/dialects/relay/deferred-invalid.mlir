// RUN: xrelay-opt %s --split-input-file --verify-diagnostics | filecheck %s

// A value operand must be statically shaped.
func.func @f(%x: tensor<2x3xf32>, %s: tensor<?xi64, #relay.dims<"n">>) {
  %0 = relay.deferred %x, %s {source = "onnx", op_type = "Reshape", payload = "", value_operands = array<i64: 1>} : (tensor<2x3xf32>, tensor<?xi64, #relay.dims<"n">>) -> tensor<?x?xf32, #relay.dims<"a", "b">>
  func.return
}
// CHECK: deferred-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.deferred' op 'relay.deferred': value operand 1 must be statically shaped, got tensor<?xi64, #relay.dims<"n">>

// -----

// Value operands index the operands.
func.func @f(%x: tensor<2x3xf32>) {
  %0 = relay.deferred %x {source = "onnx", op_type = "Reshape", payload = "", value_operands = array<i64: 3>} : (tensor<2x3xf32>) -> tensor<?xf32, #relay.dims<"a">>
  func.return
}
// CHECK: deferred-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.deferred' op 'relay.deferred': value operand 3 out of range (1 operands)

// -----

// A symbol against a size is fine, but two sizes that differ are not.
func.func @f(%a: tensor<3xf32>, %b: tensor<4xf32>) {
  %0 = relay.add %a, %b : (tensor<3xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}
// CHECK: deferred-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.add' op operand shapes are not broadcastable: tensor<3xf32>, tensor<4xf32>
