// RUN: xrelay-opt %s --split-input-file -p "lower-to-llvm{stop-after=select-kernels}" | filecheck %s
// RUN: xrelay-opt %s --split-input-file -p "lower-to-llvm{stop-after=emit-runtime}" | filecheck %s --check-prefix=RT

// An f32 NCHW max pool of static shape becomes a call of a runtime pool declaration whose
// #kernel.pool holds its geometry (planes = N * C; the bottom and right padding follow
// from the output); two pools of one geometry share a declaration. The runtime holds
// xr_maxpool_3x3s2d1x1 (rows into a row buffer, then columns: one function per window, its taps unrolled) and a wrapper passing the geometry.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[A:.+]] = func.call @xr_pool_0(%x) : (tensor<2x3x9x9xf32>) -> tensor<2x3x5x5xf32>
// CHECK-NEXT:    %[[B:.+]] = func.call @xr_pool_0(%y) : (tensor<2x3x9x9xf32>) -> tensor<2x3x5x5xf32>
// CHECK:       func.func private @xr_pool_0(tensor<2x3x9x9xf32>) -> tensor<2x3x5x5xf32>
// CHECK-SAME:    xrelay.kernel = #kernel.pool<planes = 6, h = 9, w = 9, oh = 5, ow = 5, kh = 3, kw = 3, sh = 2, sw = 2, pt = 1, pl = 1>
// RT:          xrelay.runtime = "
// RT-SAME:       define internal void @xr_maxpool_3x3s2d1x1_part(
// RT-SAME:       @xr_pool_0.geo = internal constant [13 x i64] [i64 9, i64 9, i64 5, i64 5, i64 3, i64 3, i64 2, i64 2, i64 1, i64 1, i64 1, i64 1, i64 11]
// RT-SAME:       call void @xr_maxpool_3x3s2d1x1(ptr %x, ptr %y, ptr @xr_pool_0.geo, i64 6, ptr null)
func.func @main(%x: tensor<2x3x9x9xf32>, %y: tensor<2x3x9x9xf32>) -> (tensor<2x3x5x5xf32>, tensor<2x3x5x5xf32>) {
  %a = relay.nn.max_pool2d %x {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<2x3x9x9xf32>) -> tensor<2x3x5x5xf32>
  %b = relay.nn.max_pool2d %y {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<2x3x9x9xf32>) -> tensor<2x3x5x5xf32>
  func.return %a, %b : tensor<2x3x5x5xf32>, tensor<2x3x5x5xf32>
}

// -----

// An average pool's call also passes its divisors, the lowering's: a constant [OH, OW]
// (without count_include_pad, the corner windows of a 3x3 pool with padding 1 hold 4
// input cells, the edges 6, the interior 9). The runtime holds xr_avgpool_3x3s1d1x1.
// CHECK-LABEL: func.func @main
// CHECK:         %[[D:.+]] = relay.constant dense<{{\[}}[4.000000e+00, 6.000000e+00, 6.000000e+00, 4.000000e+00]
// CHECK-NEXT:    %[[A:.+]] = func.call @xr_pool_0(%x, %[[D]]) : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK:       func.func private @xr_pool_0(tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK-SAME:    xrelay.kernel = #kernel.pool<planes = 2, h = 4, w = 4, oh = 4, ow = 4, kh = 3, kw = 3, pt = 1, pl = 1, average = true>
// RT:          xrelay.runtime = "
// RT-SAME:       define internal void @xr_avgpool_3x3s1d1x1_part(
// RT-SAME:       define dso_local void @xr_pool_0(ptr %x, ptr %d, ptr %y)
// RT-SAME:       call void @xr_avgpool_3x3s1d1x1(ptr %x, ptr %y, ptr @xr_pool_0.geo, i64 2, ptr %d)
func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %a = relay.nn.avg_pool2d %x {pool_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %a : tensor<1x2x4x4xf32>
}
