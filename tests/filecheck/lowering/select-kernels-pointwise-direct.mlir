// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=select-kernels}" | filecheck %s

// A pointwise convolution (1x1, stride 1, no padding) of many pixels and few output
// channels reads its input in place (kernels/gemm_direct.py): `direct` with a 1x1
// window, no band copied and no B panels packed. Few pixels (8 x 8) keep the plain
// product; so does a strided 1x1 (the packed path copies every other value).
// CHECK-LABEL: func.func @main
// CHECK: func.func private @xr_gemm_0({{.*}}) -> tensor<1x16x32x32xf32> attributes {xrelay.kernel = #kernel.gemm<m = 16, n = 1024, k = 64, {{.*}}direct = true, window = {{\[}}[32, 32], [1, 1], [1, 1], [1, 1], [0, 0], [32, 32]]>}
// CHECK: func.func private @xr_gemm_1({{.*}}) -> tensor<1x16x8x8xf32> attributes {xrelay.kernel = #kernel.gemm<m = 16, n = 64, k = 64, rsa = 64, csa = 1, rsb = 64, csb = 1, ldc = 64, per_row = true>}
// CHECK: func.func private @xr_gemm_2({{.*}}) -> tensor<1x16x16x16xf32> attributes {xrelay.kernel = #kernel.gemm<m = 16, n = 256, k = 64,
// CHECK-NOT: direct = true
// CHECK-SAME: [2, 2]
func.func @main(%x: tensor<1x64x32x32xf32> {xrelay.name = "x"}, %w: tensor<16x64x1x1xf32> {xrelay.name = "w"}, %y: tensor<1x64x8x8xf32> {xrelay.name = "y"}) -> (tensor<1x16x32x32xf32>, tensor<1x16x8x8xf32>, tensor<1x16x16x16xf32>) {
  %c = relay.nn.conv2d %x, %w : (tensor<1x64x32x32xf32>, tensor<16x64x1x1xf32>) -> tensor<1x16x32x32xf32>
  %d = relay.nn.conv2d %y, %w : (tensor<1x64x8x8xf32>, tensor<16x64x1x1xf32>) -> tensor<1x16x8x8xf32>
  %e = relay.nn.conv2d %x, %w {strides = array<i64: 2, 2>} : (tensor<1x64x32x32xf32>, tensor<16x64x1x1xf32>) -> tensor<1x16x16x16xf32>
  func.return %c, %d, %e : tensor<1x16x32x32xf32>, tensor<1x16x8x8xf32>, tensor<1x16x16x16xf32>
}
