// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=select-kernels}" | filecheck %s
// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=emit-runtime}" | filecheck %s --check-prefix=RT

// An f32 NCHW convolution with at most 4 input channels per group (here depthwise: one)
// becomes a call of a runtime narrow convolution declaration whose #kernel.narrow_conv
// holds its geometry and its epilogue: batch_norm folds into a scale and a shift computed
// by relay ops, relu follows. The runtime holds one function per declaration (the padded
// buffer with the stride's two phases, then the taps), split over units (images x groups
// x blocks of output channels), and its wrapper.
// CHECK-LABEL: func.func @main
// CHECK:         relay.rsqrt
// CHECK-NOT:     linalg.generic
// CHECK:         %[[Y:.+]] = func.call @xr_conv_0(%x, %w, %{{.+}}, %{{.+}}) : (tensor<2x4x9x9xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x5x5xf32>
// CHECK-NOT:     relay.nn.batch_norm
// CHECK-NOT:     relay.nn.relu
// A stem (3 input channels, 24 outputs: units of 8 output channels) with its bias.
// CHECK:         %[[S:.+]] = func.call @xr_conv_1(%s, %sw, %sb) : (tensor<1x3x16x16xf32>, tensor<24x3x3x3xf32>, tensor<24xf32>) -> tensor<1x24x8x8xf32>
// CHECK:         func.return %[[Y]], %[[S]]
// CHECK:       func.func private @xr_conv_0(tensor<2x4x9x9xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x5x5xf32>
// CHECK-SAME:    xrelay.kernel = #kernel.narrow_conv<n = 2, groups = 4, h = 9, w = 9, oh = 5, ow = 5, kh = 3, kw = 3, sh = 2, sw = 2, pt = 1, pl = 1, scale = true, shift = true, relu = true>
// CHECK:       func.func private @xr_conv_1
// CHECK-SAME:    xrelay.kernel = #kernel.narrow_conv<cg = 3, og = 24, h = 16, w = 16, oh = 8, ow = 8, kh = 3, kw = 3, sh = 2, sw = 2, pt = 1, pl = 1, shift = true>
// RT:          xrelay.runtime = "
// RT-SAME:       define internal void @xr_conv_0.conv_part(ptr %x, ptr %w, ptr %sc, ptr %sh, ptr %res, ptr %y, i64 %units, i64 %p0, i64 %p1)
// RT-SAME:       define dso_local void @xr_conv_0(ptr %x, ptr %w, ptr %sc, ptr %sh, ptr %y)
// RT-SAME:       call void @xr_conv_0.conv(ptr %x, ptr %w, ptr %sc, ptr %sh, ptr null, ptr %y, i64 8)
// RT-SAME:       call void @xr_conv_1.conv(ptr %x, ptr %w, ptr null, ptr %sh, ptr null, ptr %y, i64 3)
func.func @main(%x: tensor<2x4x9x9xf32>, %w: tensor<4x1x3x3xf32>, %g: tensor<4xf32>, %be: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %s: tensor<1x3x16x16xf32>, %sw: tensor<24x3x3x3xf32>, %sb: tensor<24xf32>) -> (tensor<2x4x5x5xf32>, tensor<1x24x8x8xf32>) {
  %c = relay.nn.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, groups = 4 : i64} : (tensor<2x4x9x9xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x5x5xf32>
  %b = relay.nn.batch_norm %c, %g, %be, %m, %v : (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x5x5xf32>
  %y = relay.nn.relu %b : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %sc = relay.nn.conv2d %s, %sw {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x16x16xf32>, tensor<24x3x3x3xf32>) -> tensor<1x24x8x8xf32>
  %sy = relay.nn.bias_add %sc, %sb {axis = 1 : i64} : (tensor<1x24x8x8xf32>, tensor<24xf32>) -> tensor<1x24x8x8xf32>
  func.return %y, %sy : tensor<2x4x5x5xf32>, tensor<1x24x8x8xf32>
}

