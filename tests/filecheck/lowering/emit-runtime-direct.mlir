// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=emit-runtime}" | filecheck %s

// A unit-stride convolution (K = 8 * 9 = 72) whose virtual columns (rows of the padded
// input, Wp = 6 values each: 3 * 6 + 4 = 22, one tile as for its 16 pixels) cost no more
// tiles is read directly: the geometry's 13th value is 1, and the runtime holds
// xr_gemm_direct (the band, the per-k offsets, xr_ukr_d's loads at src + off[k], runs
// stored by xr_edge), which xr_gemm_serial calls. The band's rows are copied by vectors;
// xr_ukr_d stores a tile that crosses an output row through two masked stores (%split,
// %from2, %count, %gap): outputs rows of a tile or more, whole rows of A; other tiles go
// through the scratch tile and xr_edge.
// CHECK:      builtin.module attributes {{{.*}}xrelay.runtime = "
// CHECK-SAME:   define internal void @xr_gemm_serial(
// CHECK-SAME:   call void @xr_gemm_direct(
// CHECK-SAME:   define internal void @xr_ukr_d({{.*}}, i64 %split, i64 %from2, i64 %count, i64 %gap)
// CHECK-SAME:   %{{[a-z0-9.]+}} = icmp sge i64 %split, {{16|32}}
// CHECK-SAME:   call void @llvm.masked.store.v{{8|16}}f32.p0(
// CHECK-SAME:   define internal void @xr_gemm_direct(
// CHECK-SAME:   call <{{8|16}} x float> @llvm.masked.load.v{{8|16}}f32.p0(
// CHECK-SAME:   call void @llvm.masked.store.v{{8|16}}f32.p0(
// CHECK-SAME:   icmp sge i64 %{{[a-z0-9.]+}}, {{16|32}}
// CHECK-SAME:   call void @xr_ukr_d(
// CHECK-SAME:   call void @xr_ukr_d(
// CHECK-SAME:   call void @xr_edge(
// CHECK-SAME:   @xr_gemm_0.geo = internal constant [13 x i64] [i64 4, i64 4, i64 3, i64 3, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 4, i64 4, i64 1]
func.func @main(%x: tensor<1x8x4x4xf32> {xrelay.name = "x"}, %w: tensor<4x8x3x3xf32> {xrelay.name = "w"}) -> tensor<1x4x4x4xf32> {
  %c = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x4x4xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x4x4xf32>
  func.return %c : tensor<1x4x4x4xf32>
}
