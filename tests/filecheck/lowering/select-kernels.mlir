// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=select-kernels}" | filecheck %s

// dense -> add(bias) -> relu becomes one call of a GEMM declaration that carries the
// geometry and the fused epilogue (a per-column shift and relu); the relay ops are gone.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[Y:.+]] = func.call @xr_gemm_0(%x, %w, %b) : (tensor<8x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT:    func.return %[[Y]]
// CHECK:       func.func private @xr_gemm_0(tensor<8x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<8x4xf32>
// CHECK-SAME:    xrelay.kernel = "{\22a_packed\22: false, \22b_packed\22: false, \22batch\22: [], \22csa\22: 1, \22csb\22: 16, \22k\22: 16, \22ldc\22: 4, \22m\22: 8, \22mpad\22: 0, \22n\22: 4, \22npad\22: 0, \22per_row\22: false, \22relu\22: true, \22residual\22: false, \22rsa\22: 16, \22rsb\22: 1, \22scale\22: false, \22shift\22: true}"
func.func @main(%x: tensor<8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %d = relay.nn.dense %x, %w : (tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<8x4xf32>
  %a = relay.add %d, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %r = relay.nn.relu %a : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %r : tensor<8x4xf32>
}
