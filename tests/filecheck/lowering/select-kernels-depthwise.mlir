// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=select-kernels}" | filecheck %s
// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=emit-runtime}" | filecheck %s --check-prefix=RT

// An f32 NCHW convolution with one input channel per group becomes a call of a runtime
// depthwise declaration whose #kernel.depthwise holds its geometry (planes = N * O) and
// its epilogue: batch_norm folds into a scale and a shift computed by relay ops, relu
// follows. The runtime holds one function per declaration (the padded buffer with the
// stride's two phases, then the taps), split over planes, and its wrapper.
// CHECK-LABEL: func.func @main
// CHECK:         relay.rsqrt
// CHECK-NOT:     linalg.generic
// CHECK:         %[[Y:.+]] = func.call @xr_dw_0(%x, %w, %{{.+}}, %{{.+}}) : (tensor<2x4x9x9xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x5x5xf32>
// CHECK-NOT:     relay.nn.batch_norm
// CHECK-NOT:     relay.nn.relu
// CHECK:         func.return %[[Y]]
// CHECK:       func.func private @xr_dw_0(tensor<2x4x9x9xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x5x5xf32>
// CHECK-SAME:    xrelay.kernel = #kernel.depthwise<planes = 8, c = 4, o = 4, h = 9, w = 9, oh = 5, ow = 5, kh = 3, kw = 3, sh = 2, sw = 2, pt = 1, pl = 1, scale = true, shift = true, relu = true>
// RT:          xrelay.runtime = "
// RT-SAME:       define internal void @xr_dw_0.dw_part(ptr %x, ptr %w, ptr %sc, ptr %sh, ptr %res, ptr %y, i64 %planes, i64 %p0, i64 %p1)
// RT-SAME:       define dso_local void @xr_dw_0(ptr %x, ptr %w, ptr %sc, ptr %sh, ptr %y)
// RT-SAME:       call void @xr_dw_0.dw(ptr %x, ptr %w, ptr %sc, ptr %sh, ptr null, ptr %y, i64 8)
func.func @main(%x: tensor<2x4x9x9xf32>, %w: tensor<4x1x3x3xf32>, %g: tensor<4xf32>, %be: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<2x4x5x5xf32> {
  %c = relay.nn.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, groups = 4 : i64} : (tensor<2x4x9x9xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x5x5xf32>
  %b = relay.nn.batch_norm %c, %g, %be, %m, %v : (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x5x5xf32>
  %y = relay.nn.relu %b : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  func.return %y : tensor<2x4x5x5xf32>
}
