// RUN: xrelay-opt %s -p "select-kernels{vector_width=16}" | filecheck %s --check-prefix=V16
// RUN: xrelay-opt %s -p "select-kernels{vector_width=8}" | filecheck %s --check-prefix=V8

// A pointwise convolution that will run pixel-major (few pixels, K >= 256: 16-float
// vectors only) carries a 1x1 window, without `direct`: prepack-weights makes it
// pixel-major and each tile's pixels are broadcast from the input, not packed. With
// 8-float vectors it stays a plain product (B a matrix, packed into panels).
// V16: #kernel.gemm<m = 64, n = 169, k = 256, rsa = 256, csa = 1, rsb = 169, csb = 1, ldc = 169, per_row = true, window = {{\[}}[13, 13], [1, 1], [1, 1], [1, 1], [0, 0], [13, 13]]>
// V8: #kernel.gemm<m = 64, n = 169, k = 256, rsa = 256, csa = 1, rsb = 169, csb = 1, ldc = 169, per_row = true>
func.func @main(%x: tensor<1x256x13x13xf32> {xrelay.name = "x"}, %w: tensor<64x256x1x1xf32> {xrelay.name = "w"}) -> tensor<1x64x13x13xf32> {
  %c = relay.nn.conv2d %x, %w : (tensor<1x256x13x13xf32>, tensor<64x256x1x1xf32>) -> tensor<1x64x13x13xf32>
  func.return %c : tensor<1x64x13x13xf32>
}
