// RUN: xrelay-opt %s -p "qnn-int-products{group=4 vector-width=16 tiles=true}" | filecheck %s

// With AMX tiles (lowering/kernels/amx.py) the weights are packed as the tiles read them:
// every K block's groups of 4 values rounded up to 16 (one 64-byte tile row), here K = 10
// -> 16 words; a dense weight as B's panels of 32 columns (4 -> 32 x 64 bytes), a
// pointwise convolution's weight as A's row-major rows padded to 32; the spec says `tiles`.
// A unit-stride 3x3 convolution reads its input's words directly (kernels/amx_conv.py,
// `direct`): its weight is 32 rows x 9 taps x 64 channels (18432 bytes), and it pads the
// input as it reads it (no relay.pad; the window keeps the padding, `fill` the zero point).
// CHECK-LABEL: func.func @dense
// CHECK-SAME:    %[[P:[0-9]+]]: tensor<2048xi8> {xrelay.name = "w.i8.1.packed", xrelay.param}
// CHECK:         func.call @xr_igemm_1(%x, %[[P]], %{{[0-9]+}})
func.func @dense(%x: tensor<2x10xi8> {xrelay.name = "x"}, %w: tensor<10x4xi8> {xrelay.name = "w", xrelay.param}) -> tensor<2x4xi32> {
  %zx = relay.constant dense<-3> : tensor<i32>
  %zw = relay.constant dense<0> : tensor<i32>
  %sx = relay.constant dense<0.5> : tensor<f32>
  %sw = relay.constant dense<0.25> : tensor<f32>
  %wt = relay.transpose %w {axes = array<i64: 1, 0>} : (tensor<10x4xi8>) -> tensor<4x10xi8>
  %y = qnn.dense %x, %wt, %zx, %zw, %sx, %sw : (tensor<2x10xi8>, tensor<4x10xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<2x4xi32>
  func.return %y : tensor<2x4xi32>
}

// CHECK-LABEL: func.func @conv
// CHECK-SAME:    %[[P:[0-9]+]]: tensor<18432xi8> {xrelay.name = "w.i8.2.packed", xrelay.param}
// CHECK-NOT:     relay.pad
// CHECK:         func.call @xr_igemm_2(%[[P]], %x, %{{[0-9]+}})
func.func @conv(%x: tensor<1x64x5x5xui8> {xrelay.name = "x"}, %w: tensor<8x64x3x3xi8> {xrelay.name = "w", xrelay.param}) -> tensor<1x8x5x5xi32> {
  %zx = relay.constant dense<7> : tensor<i32>
  %zw = relay.constant dense<0> : tensor<i32>
  %sx = relay.constant dense<0.5> : tensor<f32>
  %sw = relay.constant dense<0.25> : tensor<f32>
  %y = qnn.conv2d %x, %w, %zx, %zw, %sx, %sw {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x64x5x5xui8>, tensor<8x64x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<1x8x5x5xi32>
  func.return %y : tensor<1x8x5x5xi32>
}

// Few pixels and a long K, which the VNNI kernel runs pixel-major, stay channels x pixels
// on tiles: the weight is A, nothing is transposed back.
// CHECK-LABEL: func.func @few_pixels
// CHECK:         func.call @xr_igemm_3(%{{[0-9]+}}, %x, %{{[0-9]+}})
// CHECK-SAME:      -> tensor<1x4x3x3xi32>
// CHECK-NOT:     relay.transpose
// CHECK:         func.return
// The declarations: mpad 32 for the convolutions' A, npad 32 for the dense product's B.
// CHECK:         func.func private @xr_igemm_1
// CHECK-SAME:      b_packed = true, {{.*}}npad = 32, group = 4, tiles = true
// CHECK:         func.func private @xr_igemm_2
// CHECK-SAME:      a_packed = true, {{.*}}mpad = 32, {{.*}}group = 4, tiles = true, direct = true, fill = 7,
// CHECK-SAME:      window = {{\[}}[5, 5], [3, 3], [1, 1], [1, 1], [1, 1], [5, 5]]
// CHECK:         func.func private @xr_igemm_3
// CHECK-SAME:      a_packed = true, {{.*}}mpad = 32, {{.*}}group = 4, tiles = true
// CHECK-NOT:       direct
func.func @few_pixels(%x: tensor<1x1024x3x3xui8> {xrelay.name = "x"}, %w: tensor<4x1024x1x1xi8> {xrelay.name = "w", xrelay.param}) -> tensor<1x4x3x3xi32> {
  %zx = relay.constant dense<5> : tensor<i32>
  %zw = relay.constant dense<0> : tensor<i32>
  %sx = relay.constant dense<0.5> : tensor<f32>
  %sw = relay.constant dense<0.25> : tensor<f32>
  %y = qnn.conv2d %x, %w, %zx, %zw, %sx, %sw : (tensor<1x1024x3x3xui8>, tensor<4x1024x1x1xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<1x4x3x3xi32>
  func.return %y : tensor<1x4x3x3xi32>
}
