// RUN: xrelay-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The value fits the optional's type.
func.func @f(%x: tensor<3xf32>) {
  %o = relay.opt_construct %x : (tensor<3xf32>) -> !relay.opt<tensor<4xf32>>
  func.return
}
// CHECK: error: 'relay.opt_construct' op value is tensor<3xf32>, expected tensor<4xf32>

// -----

// opt_has answers with a tensor<i1>.
func.func @f(%o: !relay.opt<tensor<3xf32>>) {
  %h = relay.opt_has %o : (!relay.opt<tensor<3xf32>>) -> tensor<i64>
  func.return
}
// CHECK: error: 'relay.opt_has' op result must be tensor<i1>

// -----

// opt_get gives the inner type.
func.func @f(%o: !relay.opt<tensor<3xf32>>) {
  %v = relay.opt_get %o : (!relay.opt<tensor<3xf32>>) -> tensor<3xi32>
  func.return
}
// CHECK: error: 'relay.opt_get' op result is tensor<3xi32>, expected tensor<3xf32>
