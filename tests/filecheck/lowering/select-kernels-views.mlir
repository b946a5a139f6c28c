// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=select-kernels}" | filecheck %s

// Attention scores of 2 heads of 4 values over 5 tokens: q and k are the heads of [5, 8]
// projections (reshape, transpose, a scalar multiply, reshape). The batch_matmul reads
// the projections (results of ops: a function's arguments may be parameters, which are
// prepacked from plain layouts, so those are not read through) at the views' strides (q: rows 8 apart; k transposed: columns 8 apart;
// each head 4 values on) and the two scalars become its epilogue's scale (a vector of
// the 5 columns); the reshapes, transposes and multiplies are gone.
// CHECK-LABEL: func.func @main
// CHECK-NOT:     relay.transpose
// CHECK:         %[[S:.+]] = relay.broadcast_to %{{.+}} {shape = array<i64: 5>}
// CHECK-NEXT:    %[[Y:.+]] = func.call @xr_gemm_0(%[[Q:.+]], %[[K:.+]], %[[S]]) : (tensor<5x8xf32>, tensor<5x8xf32>, tensor<5xf32>) -> tensor<2x5x5xf32>
// CHECK-NEXT:    func.return %[[Y]]
// CHECK:       func.func private @xr_gemm_0(
// CHECK-SAME:    xrelay.kernel = #kernel.gemm<m = 5, n = 5, k = 4, rsa = 8, csa = 1, rsb = 1, csb = 8, ldc = 5, batch = {{\[}}[2, 4, 4, 25, 0]], scale = true>
func.func @main(%q: tensor<5x8xf32>, %k: tensor<5x8xf32>, %c: tensor<f32>) -> tensor<2x5x5xf32> {
  %qr = relay.nn.relu %q : (tensor<5x8xf32>) -> tensor<5x8xf32>
  %kr = relay.nn.relu %k : (tensor<5x8xf32>) -> tensor<5x8xf32>
  %q1 = relay.reshape %qr {newshape = array<i64: 5, 2, 4>} : (tensor<5x8xf32>) -> tensor<5x2x4xf32>
  %q2 = relay.transpose %q1 {axes = array<i64: 1, 0, 2>} : (tensor<5x2x4xf32>) -> tensor<2x5x4xf32>
  %q3 = relay.multiply %q2, %c : (tensor<2x5x4xf32>, tensor<f32>) -> tensor<2x5x4xf32>
  %k1 = relay.reshape %kr {newshape = array<i64: 5, 2, 4>} : (tensor<5x8xf32>) -> tensor<5x2x4xf32>
  %k2 = relay.transpose %k1 {axes = array<i64: 1, 2, 0>} : (tensor<5x2x4xf32>) -> tensor<2x4x5xf32>
  %k3 = relay.multiply %k2, %c : (tensor<2x4x5xf32>, tensor<f32>) -> tensor<2x4x5xf32>
  %y = relay.nn.batch_matmul %q3, %k3 : (tensor<2x5x4xf32>, tensor<2x4x5xf32>) -> tensor<2x5x5xf32>
  func.return %y : tensor<2x5x5xf32>
}
