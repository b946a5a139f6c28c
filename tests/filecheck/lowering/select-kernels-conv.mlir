// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=select-kernels}" | filecheck %s

// A 3x3 conv reads its input directly (the GEMM packs the im2col columns from it: the
// spec carries the window: input, kernel, strides, dilation, top/left padding, output);
// batch_norm folds into a per-row scale and shift computed from its vectors by relay ops.
// CHECK-LABEL: func.func @main
// CHECK:         relay.rsqrt
// CHECK-NOT:     linalg.generic
// CHECK:         func.call @xr_gemm_0(%w, %x, %{{.+}}, %{{.+}}) : (tensor<4x5x3x3xf32>, tensor<1x5x4x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
// CHECK-NOT:     relay.nn.batch_norm
// CHECK:       func.func private @xr_gemm_0
// CHECK-SAME:    xrelay.kernel = #kernel.gemm<m = 4, n = 16, k = 45, rsa = 45, csa = 1, rsb = 16, csb = 1, ldc = 16, per_row = true, scale = true, shift = true, window = {{\[}}[4, 4], [3, 3], [1, 1], [1, 1], [1, 1], [4, 4]]>
func.func @main(%x: tensor<1x5x4x4xf32>, %w: tensor<4x5x3x3xf32>, %g: tensor<4xf32>, %be: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %c = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x5x4x4xf32>, tensor<4x5x3x3xf32>) -> tensor<1x4x4x4xf32>
  %y = relay.nn.batch_norm %c, %g, %be, %m, %v : (tensor<1x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}
