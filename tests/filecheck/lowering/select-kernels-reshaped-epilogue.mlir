// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=select-kernels}" | filecheck %s

// A transformer's dense layer: matmul on [tokens, hidden], a reshape back to
// [1, tokens, hidden], then the bias add and the residual add. The reshape keeps the last
// axis (the product's channels), so the bias and the residual join the GEMM's epilogue
// and the call returns the reshaped type: no add kernel is left.
// CHECK-LABEL: func.func @main
// CHECK-NOT:     relay.add
// CHECK:         %[[Y:.+]] = func.call @xr_gemm_0(%{{.+}}, %{{.+}}, %[[B:.+]], %[[R:.+]]) : (tensor<4x8xf32>, tensor<8x6xf32>, tensor<6xf32>, tensor<1x4x6xf32>) -> tensor<1x4x6xf32>
// CHECK-NEXT:    func.return %[[Y]]
// CHECK:       func.func private @xr_gemm_0(
// CHECK-SAME:    shift = true, residual = true
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>, %b: tensor<6xf32>, %r: tensor<1x4x6xf32>) -> tensor<1x4x6xf32> {
  %y = relay.nn.matmul %x, %w : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %y1 = relay.reshape %y {newshape = array<i64: 1, 4, 6>} : (tensor<4x6xf32>) -> tensor<1x4x6xf32>
  %y2 = relay.add %y1, %b : (tensor<1x4x6xf32>, tensor<6xf32>) -> tensor<1x4x6xf32>
  %y3 = relay.add %y2, %r : (tensor<1x4x6xf32>, tensor<1x4x6xf32>) -> tensor<1x4x6xf32>
  func.return %y3 : tensor<1x4x6xf32>
}
