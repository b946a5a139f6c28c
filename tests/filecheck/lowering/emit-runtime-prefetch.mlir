// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=emit-runtime}" | filecheck %s

// The micro-kernel fetches the next panel's lines into L2 during its own arithmetic, one
// line per k iteration while k < %pfn (a burst before the tile stalls the core until the
// fetches are in flight); xr_gemm_serial passes it a stream (A's next row panel on a
// prepacked A's first column panel, else B's share of its next panel), not null. Before
// each tile xr_gemm_serial fetches the next tile's rows of C into L1 for writing (rw 1,
// locality 3), and of the residual where there is one.
// CHECK:      builtin.module attributes {{{.*}}xrelay.runtime = "
// CHECK-SAME:   define internal void @xr_ukr(i64 %kc, ptr noalias %ap, ptr noalias %bp, ptr %c, i64 %ldc, i64 %acc, i64 %epi, ptr %pf, i64 %pfn,
// CHECK-SAME:   icmp slt i64 %[[K:[^,]+]], %pfn
// CHECK-SAME:   mul i64 %[[K]], 16
// CHECK-SAME:   call void @llvm.prefetch.p0(ptr
// CHECK-SAME:   define internal void @xr_gemm_serial(
// CHECK-SAME:   call void @llvm.prefetch.p0(ptr %p.{{[0-9]+}}, i32 1, i32 3, i32 1)
// CHECK-SAME:   icmp ne ptr %res, null
// CHECK-SAME:   call void @llvm.prefetch.p0(ptr %p.{{[0-9]+}}, i32 0, i32 3, i32 1)
// CHECK-SAME:   call void @xr_ukr(i64 %{{[^,]+}}, ptr %{{[^,]+}}, ptr %{{[^,]+}}, ptr %{{[^,]+}}, i64 %ldc, i64 %{{[^,]+}}, i64 %{{[^,]+}}, ptr %p.{{[0-9]+}}, i64 %t.{{[0-9]+}},
func.func @main(%x: tensor<8x16xf32> {xrelay.name = "x"}, %w: tensor<4x16xf32> {xrelay.name = "w"}) -> tensor<8x4xf32> {
  %d = relay.nn.dense %x, %w : (tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<8x4xf32>
  func.return %d : tensor<8x4xf32>
}
