// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=select-kernels}" | filecheck %s

// A grouped 1x1 conv whose result is shuffled across its 4 groups (ShuffleNet: reshape to
// [N, g, C/g, H, W], swap axes 1 and 2, reshape back) writes the shuffled channels itself:
// row j of group i is channel j * 4 + i, so the group's C stride is H*W = 25 (the last
// number but one of its batch loop) and the row stride ldc is 4 * 25. No reshape or
// transpose is left.
// CHECK-LABEL: func.func @main
// CHECK:         %[[Y:.+]] = func.call @xr_gemm_0(%w, %x) : (tensor<16x5x1x1xf32>, tensor<1x20x5x5xf32>) -> tensor<1x16x5x5xf32>
// CHECK-NEXT:    func.return %[[Y]]
// CHECK:       func.func private @xr_gemm_0
// CHECK-SAME:    ldc = 100, batch = {{\[}}[4, 20, 125, 25, 4]], per_row = true
func.func @main(%x: tensor<1x20x5x5xf32>, %w: tensor<16x5x1x1xf32>) -> tensor<1x16x5x5xf32> {
  %c = relay.nn.conv2d %x, %w {groups = 4 : i64} : (tensor<1x20x5x5xf32>, tensor<16x5x1x1xf32>) -> tensor<1x16x5x5xf32>
  %s = relay.reshape %c {newshape = array<i64: 1, 4, 4, 5, 5>} : (tensor<1x16x5x5xf32>) -> tensor<1x4x4x5x5xf32>
  %t = relay.transpose %s {axes = array<i64: 0, 2, 1, 3, 4>} : (tensor<1x4x4x5x5xf32>) -> tensor<1x4x4x5x5xf32>
  %y = relay.reshape %t {newshape = array<i64: 1, 16, 5, 5>} : (tensor<1x4x4x5x5xf32>) -> tensor<1x16x5x5xf32>
  func.return %y : tensor<1x16x5x5xf32>
}
