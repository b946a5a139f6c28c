// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=emit-runtime}" | filecheck %s

// A convolution's GEMM wrapper passes its window (H, W, KH, KW, SH, SW, DH, DW, PT, PL, OH,
// OW) and whether B is read directly (0 here: strides) as a constant: the GEMM packs B's
// im2col panels from the input with xr_pack_conv, and no column buffer is allocated.
// CHECK:      builtin.module attributes {{{.*}}xrelay.runtime = "
// CHECK-SAME:   define internal void @xr_pack_conv(
// CHECK-SAME:   @llvm.masked.load.v{{8|16}}f32.p0
// CHECK-SAME:   @xr_gemm_0.geo = internal constant [13 x i64] [i64 5, i64 6, i64 3, i64 3, i64 2, i64 2, i64 1, i64 1, i64 1, i64 0, i64 3, i64 2, i64 0]
// CHECK-SAME:   define dso_local void @xr_gemm_0(ptr %a, ptr %b, ptr %c)
// CHECK-SAME:   call void @xr_sgemm({{.*}}, ptr @xr_gemm_0.geo)
// CHECK-NOT:  linalg.generic
func.func @main(%x: tensor<1x5x5x6xf32> {xrelay.name = "x"}, %w: tensor<4x5x3x3xf32> {xrelay.name = "w"}) -> tensor<1x4x3x2xf32> {
  %c = relay.nn.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 0>} : (tensor<1x5x5x6xf32>, tensor<4x5x3x3xf32>) -> tensor<1x4x3x2xf32>
  func.return %c : tensor<1x4x3x2xf32>
}
