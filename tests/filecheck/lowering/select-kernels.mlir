// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=select-kernels}" | filecheck %s

// dense -> add(bias) -> relu becomes one call of a GEMM declaration that carries the
// geometry and the fused epilogue (a per-column shift and relu); the relay ops are gone.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[Y:.+]] = func.call @xr_gemm_0(%x, %w, %b) : (tensor<8x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT:    func.return %[[Y]]
// CHECK:       func.func private @xr_gemm_0(tensor<8x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<8x4xf32>
// CHECK-SAME:    xrelay.kernel = #kernel.gemm<m = 8, n = 4, k = 16, rsa = 16, csa = 1, rsb = 1, csb = 16, ldc = 4, shift = true, relu = true>
func.func @main(%x: tensor<8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %d = relay.nn.dense %x, %w : (tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<8x4xf32>
  %a = relay.add %d, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %r = relay.nn.relu %a : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %r : tensor<8x4xf32>
}
