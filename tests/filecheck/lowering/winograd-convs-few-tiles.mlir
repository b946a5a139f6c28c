// RUN: xrelay-opt %s -p "winograd-convs{vector-width=16},select-kernels,prepack-weights{vector-width=16}" | filecheck %s

// ResNet-50's 512 -> 512 3x3 convolution on 7x7 with 16-float products: 16 tiles of 2x2 per
// term, under MIN_TILES, but its products run pixel-major (16 tiles are two 8-row tiles of
// the micro-kernel, not half of a 32-column panel): F(2x2, 3x3), the transformed weight packed
// per term in 32-row panels (panel = 32, mpad 512), the GEMM declaration pixel-major.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    %{{[^:]+}}: tensor<16x512x512xf32> {xrelay.name = "w.winograd2", xrelay.param, xrelay.winograd = "w"}
// CHECK-SAME:    #kernel.pack<source = "w.winograd2", operand = "a", rows = 512, k = 512, groups = 16, panel = 32>
// CHECK:       func.func private @xr_gemm_{{[0-9]+}}
// CHECK-SAME:    #kernel.gemm<m = 512, n = 16, k = 512, {{.*}}batch = {{\[}}[16, 262144, {{.*}}]], per_row = true, a_packed = true, mpad = 512, window = {{.*}}, pixel_major = true, winograd = true>
func.func @main(%x: tensor<1x512x7x7xf32> {xrelay.name = "x"}, %w: tensor<512x512x3x3xf32> {xrelay.name = "w", xrelay.param}) -> tensor<1x512x7x7xf32> {
  %c = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x512x7x7xf32>, tensor<512x512x3x3xf32>) -> tensor<1x512x7x7xf32>
  func.return %c : tensor<1x512x7x7xf32>
}
