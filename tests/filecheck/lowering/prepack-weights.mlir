// RUN: xrelay-opt %s -p "select-kernels,prepack-weights{vector-width=8}" --split-input-file | filecheck %s
// RUN: xrelay-opt %s -p "select-kernels,prepack-weights{vector-width=16}" --split-input-file | filecheck %s --check-prefix=WIDE

// A product whose weight is a parameter reads it packed: one new parameter that says how
// it is made from the weight, shared by both calls, and a declaration that says B is packed
// (columns padded to 16); the unpacked declaration is gone.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    %[[P:[^:]+]]: tensor<256xf32> {xrelay.name = "w.packed3", xrelay.param, xrelay.pack = #kernel.pack<source = "w", operand = "b", rows = 4, k = 16>}
// CHECK:         func.call @[[G:xr_gemm_[0-9]+]](%x, %[[P]])
// CHECK:         func.call @[[G]](%x, %[[P]])
// CHECK-NOT:     func.func private @xr_gemm_0(
// CHECK:         func.func private @[[G]](tensor<8x16xf32>, tensor<256xf32>) -> tensor<8x4xf32>
// CHECK-SAME:    b_packed = true, npad = 16>
// With 16-float vectors (AVX-512) the micro-kernel's tiles and B's panels are 32 wide, and
// the module records the width for emit-runtime.
// WIDE:          builtin.module attributes {xrelay.vector_width = 16 : i64}
// WIDE:          tensor<512xf32> {xrelay.name = "w.packed3", xrelay.param, xrelay.pack = #kernel.pack<source = "w", operand = "b", rows = 4, k = 16, panel = 32>}
// WIDE:          b_packed = true, npad = 32>
func.func @main(%x: tensor<8x16xf32> {xrelay.name = "x"}, %w: tensor<4x16xf32> {xrelay.name = "w", xrelay.param}) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %d = relay.nn.dense %x, %w : (tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<8x4xf32>
  %e = relay.nn.dense %x, %w : (tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<8x4xf32>
  func.return %d, %e : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// A convolution's weights (A) are packed per group in panels of the micro-kernel's rows:
// 6 with AVX2 (8 -> 12 rows), 8 with AVX-512 (8 rows, no padding).
// CHECK-LABEL: func.func @main
// CHECK-SAME:    tensor<540xf32> {xrelay.name = "w.packed3", xrelay.param, xrelay.pack = #kernel.pack<source = "w", operand = "a", rows = 8, k = 45, panel = 6>}
// CHECK:         func.func private @xr_gemm_1
// CHECK-SAME:    a_packed = true, mpad = 12, window = {{\[}}[4, 4], [3, 3], [1, 1], [1, 1], [0, 0], [2, 2]]>
// WIDE:          tensor<360xf32> {xrelay.name = "w.packed3", xrelay.param, xrelay.pack = #kernel.pack<source = "w", operand = "a", rows = 8, k = 45, panel = 8>}
// WIDE:          func.func private @xr_gemm_1
// WIDE-SAME:     a_packed = true, mpad = 8, window
func.func @main(%x: tensor<1x5x4x4xf32> {xrelay.name = "x"}, %w: tensor<8x5x3x3xf32> {xrelay.name = "w", xrelay.param}) -> tensor<1x8x2x2xf32> {
  %c = relay.nn.conv2d %x, %w : (tensor<1x5x4x4xf32>, tensor<8x5x3x3xf32>) -> tensor<1x8x2x2xf32>
  func.return %c : tensor<1x8x2x2xf32>
}

// -----

// A weight that is a data input (not a parameter) is read as it is.
// CHECK-LABEL: func.func @no_pack_input
// CHECK-NOT:     xrelay.pack
// CHECK:         func.func private @xr_gemm_0
// CHECK-NOT:     b_packed
func.func @no_pack_input(%x: tensor<8x16xf32> {xrelay.name = "x"}, %w: tensor<4x16xf32> {xrelay.name = "w"}) -> tensor<8x4xf32> {
  %d = relay.nn.dense %x, %w : (tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<8x4xf32>
  func.return %d : tensor<8x4xf32>
}
