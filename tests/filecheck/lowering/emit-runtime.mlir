// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=emit-runtime}" | filecheck %s
// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=parallel-loops},emit-runtime{threads=false}" | filecheck %s --check-prefix=SERIAL

// The module carries the runtime it calls as LLVM IR: the GEMM, one wrapper per GEMM
// declaration, the arena and the thread count.
// CHECK:      builtin.module attributes {{{.*}}xrelay.runtime = "
// CHECK-SAME:   @xr_num_threads = dso_local global i32 1
// CHECK-SAME:   define dso_local void @xr_gemm_0(ptr %a, ptr %b, ptr %c)
// CHECK-SAME:   call void @xr_sgemm(
// Without threads the runtime declares none of libgomp's entry points.
// SERIAL:     builtin.module attributes {{{.*}}xrelay.runtime = "
// SERIAL-NOT:   GOMP_parallel
// SERIAL-SAME:  @xr_sgemm
func.func @main(%x: tensor<8x16xf32> {xrelay.name = "x"}, %w: tensor<4x16xf32> {xrelay.name = "w"}) -> tensor<8x4xf32> {
  %d = relay.nn.dense %x, %w : (tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<8x4xf32>
  func.return %d : tensor<8x4xf32>
}
