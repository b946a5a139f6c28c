// RUN: xrelay-opt %s -p "select-kernels,prepack-weights{vector-width=16}" --split-input-file | filecheck %s
// RUN: xrelay-opt %s -p "select-kernels,prepack-weights{vector-width=8}" --split-input-file | filecheck %s --check-prefix=AVX2

// A convolution of few pixels (7 x 7: two 32-wide panels would compute 64 columns, 8-row
// tiles of pixels 56) runs pixel-major with 16-float vectors: its weight packed in panels
// of 32 rows (48 channels -> 64), the declaration says so and reads the input directly
// (not `direct`: that is the packed path's band). With 8-float vectors it keeps the
// packed path.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    tensor<46080xf32> {xrelay.name = "w.packed3", xrelay.param, xrelay.pack = #kernel.pack<source = "w", operand = "a", rows = 48, k = 720, panel = 32>}
// CHECK:         func.func private @xr_gemm_{{[0-9]+}}
// CHECK-SAME:    a_packed = true, mpad = 64
// CHECK-SAME:    pixel_major = true>
// AVX2-LABEL:  func.func @main
// AVX2:          panel = 6>
// AVX2-NOT:      pixel_major
func.func @main(%x: tensor<1x80x7x7xf32> {xrelay.name = "x"}, %w: tensor<48x80x3x3xf32> {xrelay.name = "w", xrelay.param}) -> tensor<1x48x7x7xf32> {
  %c = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x80x7x7xf32>, tensor<48x80x3x3xf32>) -> tensor<1x48x7x7xf32>
  func.return %c : tensor<1x48x7x7xf32>
}

// -----

// 28 x 28 outputs (784 pixels: 800 columns in 32-wide panels) and a strided 1x1
// convolution keep the packed path.
// CHECK-LABEL: func.func @wide
// CHECK-NOT:     pixel_major
// CHECK:         return
func.func @wide(%x: tensor<1x80x28x28xf32> {xrelay.name = "x"}, %w: tensor<48x80x3x3xf32> {xrelay.name = "w", xrelay.param}, %v: tensor<64x80x1x1xf32> {xrelay.name = "v", xrelay.param}) -> (tensor<1x48x28x28xf32>, tensor<1x64x14x14xf32>) {
  %c = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x80x28x28xf32>, tensor<48x80x3x3xf32>) -> tensor<1x48x28x28xf32>
  %d = relay.nn.conv2d %x, %v {strides = array<i64: 2, 2>} : (tensor<1x80x28x28xf32>, tensor<64x80x1x1xf32>) -> tensor<1x64x14x14xf32>
  func.return %c, %d : tensor<1x48x28x28xf32>, tensor<1x64x14x14xf32>
}

// -----

// A window wider than 3 x 3 runs pixel-major on more pixels too (28 x 28): its im2col
// panels cost more to pack than its pixels' broadcasts.
// CHECK-LABEL: func.func @five
// CHECK:         func.func private @xr_gemm_{{[0-9]+}}
// CHECK-SAME:    window = {{\[}}[28, 28], [5, 5]
// CHECK-SAME:    pixel_major = true>
func.func @five(%x: tensor<1x16x28x28xf32> {xrelay.name = "x"}, %w: tensor<32x16x5x5xf32> {xrelay.name = "w", xrelay.param}) -> tensor<1x32x28x28xf32> {
  %c = relay.nn.conv2d %x, %w {padding = array<i64: 2, 2, 2, 2>} : (tensor<1x16x28x28xf32>, tensor<32x16x5x5xf32>) -> tensor<1x32x28x28xf32>
  func.return %c : tensor<1x32x28x28xf32>
}
