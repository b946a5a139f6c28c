// RUN: xrelay-opt %s -p "qnn-int-products{group=4 vector-width=16}" | filecheck %s --check-prefixes=CHECK,G4
// RUN: xrelay-opt %s -p "qnn-int-products{group=2 vector-width=8}" | filecheck %s --check-prefixes=CHECK,G2

// dense, s8 data (zero point -3: read as u8 by xor 0x80, so zu = 125) and an s8 weight
// parameter (zero point 0): a call of the 8-bit GEMM on the data and the weight packed in
// words (B's panels of 2 x vector width columns, K = 10 padded to whole words: 32 x 12
// bytes with G = 4, 16 x 10 i16 with G = 2), and the correction -zu * sum_k w per column;
// the weight's transpose is gone with its last use.
// CHECK-LABEL: func.func @dense
// G4-SAME:       %[[P:[0-9]+]]: tensor<384xi8> {xrelay.name = "w.i8.1.packed", xrelay.param}
// G2-SAME:       %[[P:[0-9]+]]: tensor<160xi16> {xrelay.name = "w.i8.1.packed", xrelay.param}
// CHECK-SAME:    %[[C:[0-9]+]]: tensor<4xi32> {xrelay.name = "w.i8.1.correction", xrelay.param}
// CHECK-NOT:     relay.transpose
// CHECK-NOT:     qnn.dense
// CHECK:         %[[Y:[a-z0-9]+]] = func.call @xr_igemm_1(%x, %[[P]], %[[C]])
// CHECK-NEXT:    func.return %[[Y]] : tensor<2x4xi32>
func.func @dense(%x: tensor<2x10xi8> {xrelay.name = "x"}, %w: tensor<10x4xi8> {xrelay.name = "w", xrelay.param}) -> tensor<2x4xi32> {
  %zx = relay.constant dense<-3> : tensor<i32>
  %zw = relay.constant dense<0> : tensor<i32>
  %sx = relay.constant dense<0.5> : tensor<f32>
  %sw = relay.constant dense<0.25> : tensor<f32>
  %wt = relay.transpose %w {axes = array<i64: 1, 0>} : (tensor<10x4xi8>) -> tensor<4x10xi8>
  %y = qnn.dense %x, %wt, %zx, %zw, %sx, %sw : (tensor<2x10xi8>, tensor<4x10xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<2x4xi32>
  func.return %y : tensor<2x4xi32>
}

// conv2d 3x3 with padding, u8 data (zero point 7): the data padded with the zero point,
// then the GEMM makes its columns from that (implicit im2col: the window's geometry, no
// padding left, in the spec: checked with the declarations at the end), with A the
// weight packed in 6-row panels (8 rows -> 12, K = 27 -> 28 bytes or 14 i16 words) and
// the correction per row (output channel).
// CHECK-LABEL: func.func @conv
// G4-SAME:       %[[P:[0-9]+]]: tensor<336xi8> {xrelay.name = "w.i8.2.packed", xrelay.param}
// G2-SAME:       %[[P:[0-9]+]]: tensor<336xi16> {xrelay.name = "w.i8.2.packed", xrelay.param}
// CHECK-SAME:    %[[C:[0-9]+]]: tensor<8xi32> {xrelay.name = "w.i8.2.correction", xrelay.param}
// CHECK:         %[[X:[0-9]+]] = relay.nn.pad %x {pad_width = array<i64: 0, 0, 0, 0, 1, 1, 1, 1>, pad_value = 7.000000e+00 : f64}
// CHECK-NEXT:    func.call @xr_igemm_2(%[[P]], %[[X]], %[[C]])
// CHECK-SAME:      -> tensor<1x8x5x5xi32>
func.func @conv(%x: tensor<1x3x5x5xui8> {xrelay.name = "x"}, %w: tensor<8x3x3x3xi8> {xrelay.name = "w", xrelay.param}) -> tensor<1x8x5x5xi32> {
  %zx = relay.constant dense<7> : tensor<i32>
  %zw = relay.constant dense<0> : tensor<i32>
  %sx = relay.constant dense<0.5> : tensor<f32>
  %sw = relay.constant dense<0.25> : tensor<f32>
  %y = qnn.conv2d %x, %w, %zx, %zw, %sx, %sw {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x5x5xui8>, tensor<8x3x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<1x8x5x5xi32>
  func.return %y : tensor<1x8x5x5xi32>
}

// u8 data with zero point 0 needs no correction; a weight zero point that is not the s8
// one (3) is left for qnn-float-products.
// CHECK-LABEL: func.func @left
// CHECK-NOT:     correction
// CHECK:         func.call @xr_igemm_3(%x, %{{.+}}) : (tensor<2x10xui8>, tensor<{{[0-9]+}}xi{{8|16}}>) -> tensor<2x4xi32>
// CHECK:         qnn.dense %x, %v
// CHECK-NOT:     xr_igemm
// CHECK:         func.return
func.func @left(%x: tensor<2x10xui8> {xrelay.name = "x"}, %w: tensor<4x10xi8> {xrelay.name = "w", xrelay.param}, %v: tensor<4x10xi8> {xrelay.name = "v", xrelay.param}) -> (tensor<2x4xi32>, tensor<2x4xi32>) {
  %zx = relay.constant dense<0> : tensor<i32>
  %zw = relay.constant dense<0> : tensor<i32>
  %zv = relay.constant dense<3> : tensor<i32>
  %sx = relay.constant dense<0.5> : tensor<f32>
  %sw = relay.constant dense<0.25> : tensor<f32>
  %y = qnn.dense %x, %w, %zx, %zw, %sx, %sw : (tensor<2x10xui8>, tensor<4x10xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<2x4xi32>
  %z = qnn.dense %x, %v, %zx, %zv, %sx, %sw : (tensor<2x10xui8>, tensor<4x10xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<2x4xi32>
  func.return %y, %z : tensor<2x4xi32>, tensor<2x4xi32>
}

// 1x1 conv2d, then a constant bias, a per-channel requantize (half to even) and a clip:
// the kernel requantizes in its epilogue. The bias minus the requantize's input zero point
// (2) joins the correction (-zu * sum w is 0: u8 data, zero point 0), the multipliers
// in_scale / out_scale are an f32 parameter, and the call's second result, the bytes,
// replaces the clip; the clip's [5, 250] is the clamp; the i32 result is left as scratch.
// CHECK-LABEL: func.func @requantized
// CHECK-SAME:    %[[P:[0-9]+]]: tensor<{{[0-9]+}}xi{{8|16}}> {xrelay.name = "w.i8.4.packed", xrelay.param}
// CHECK-SAME:    %[[C:[0-9]+]]: tensor<4xi32> {xrelay.name = "w.i8.4.correction", xrelay.param}
// CHECK-SAME:    %[[M:[0-9]+]]: tensor<4xf32> {xrelay.name = "w.i8.4.multipliers", xrelay.param}
// CHECK-NOT:     relay.nn.bias_add
// CHECK-NOT:     qnn.requantize
// CHECK-NOT:     relay.clip
// CHECK:         %{{.+}}, %[[Q:[a-z0-9]+]] = func.call @xr_igemm_4(%[[P]], %x, %[[M]], %[[C]])
// CHECK-SAME:      -> (tensor<1x4x3x3xi32>, tensor<1x4x3x3xui8>)
// CHECK:         func.return %[[Q]] : tensor<1x4x3x3xui8>
func.func @requantized(%x: tensor<1x6x3x3xui8> {xrelay.name = "x"}, %w: tensor<4x6x1x1xi8> {xrelay.name = "w", xrelay.param}) -> tensor<1x4x3x3xui8> {
  %zx = relay.constant dense<0> : tensor<i32>
  %zw = relay.constant dense<0> : tensor<i32>
  %sx = relay.constant dense<0.5> : tensor<f32>
  %sw = relay.constant dense<0.25> : tensor<f32>
  %y = qnn.conv2d %x, %w, %zx, %zw, %sx, %sw : (tensor<1x6x3x3xui8>, tensor<4x6x1x1xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<1x4x3x3xi32>
  %bias = relay.constant dense<[1, -2, 3, 40]> : tensor<4xi32>
  %b = relay.nn.bias_add %y, %bias : (tensor<1x4x3x3xi32>, tensor<4xi32>) -> tensor<1x4x3x3xi32>
  %si = relay.constant dense<[0.125, 0.25, 0.5, 0.0625]> : tensor<4xf32>
  %zi = relay.constant dense<2> : tensor<i32>
  %so = relay.constant dense<0.25> : tensor<f32>
  %zo = relay.constant dense<9> : tensor<i32>
  %r = qnn.requantize %b, %si, %zi, %so, %zo {axis = 1 : i64, out_dtype = ui8} : (tensor<1x4x3x3xi32>, tensor<4xf32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x4x3x3xui8>
  %c = relay.clip %r {a_min = 5.0 : f64, a_max = 250.0 : f64} : (tensor<1x4x3x3xui8>) -> tensor<1x4x3x3xui8>
  func.return %c : tensor<1x4x3x3xui8>
}

// The same on 9 output pixels (at most PIXEL_MAJOR_MAX, batch 1) with K = 1024 (at least
// PIXEL_MAJOR_MIN_K): the product is pixels x channels, the data A read in place (row
// stride 1, a pixel's channels 9 apart), the weight packed as B's panels, the multipliers
// and the correction per column; the bytes [1, 9, 4] are transposed back to channels x
// pixels. A 3x3 convolution would keep its window in the spec: the GEMM makes A as the
// im2col's transpose. With VNNI (G4) the product reads the input's words directly
// (vnni_conv.py) and stores its bytes channel-major (`pixel_major`): no transpose back.
// CHECK-LABEL: func.func @pixel_major
// CHECK:         %{{.+}}, %[[Q:[a-z0-9]+]] = func.call @xr_igemm_5(%x, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}})
// G2-SAME:         -> (tensor<1x9x4xi32>, tensor<1x9x4xui8>)
// G2-NEXT:       %[[T:[a-z0-9]+]] = relay.transpose %[[Q]] {axes = array<i64: 0, 2, 1>}
// G2-NEXT:       %[[R:[a-z0-9]+]] = relay.reshape %[[T]] {newshape = array<i64: 1, 4, 3, 3>}
// G2:            func.return %[[R]] : tensor<1x4x3x3xui8>
// G4-SAME:         -> (tensor<1x4x3x3xi32>, tensor<1x4x3x3xui8>)
// G4-NOT:        relay.transpose
// G4:            func.return %[[Q]] : tensor<1x4x3x3xui8>
// A dense product of few output channels (4 here, under half a panel of B's columns)
// runs weight-major: the weight packed as A's rows, the samples B's columns read [N, K]
// (rsb 1, csb K), multipliers and correction per row; the [4, 64] result is transposed
// back.
// CHECK-LABEL: func.func @narrow
// CHECK:         %[[N:[a-z0-9]+]] = func.call @xr_igemm_6(%{{[0-9]+}}, %x, %{{[0-9]+}})
// CHECK-SAME:      -> tensor<4x64xi32>
// CHECK-NEXT:    %[[NT:[a-z0-9]+]] = relay.transpose %[[N]] {axes = array<i64: 1, 0>}
// CHECK-NEXT:    func.return %[[NT]] : tensor<64x4xi32>
// The declarations (at the module's end): @conv's window, @requantized's epilogue.
// CHECK:         func.func private @xr_igemm_2
// CHECK-SAME:      window = {{\[}}[7, 7], [3, 3], [1, 1], [1, 1], [0, 0], [5, 5]]
// CHECK:         func.func private @xr_igemm_4
// CHECK-SAME:      scale = true, shift = true
// CHECK-SAME:      requantize = true, out_zero_point = 9, out_min = 5, out_max = 250
// CHECK:         func.func private @xr_igemm_5
// CHECK-SAME:      m = 9, n = 4, k = 1024, rsa = 1, csa = 9, ldc = 4, scale = true, shift = true, b_packed = true
// G4-SAME:         direct = true
// G4-SAME:         pixel_major = true
// CHECK:         func.func private @xr_igemm_6
// CHECK-SAME:      m = 4, n = 64, k = 10, rsb = 1, csb = 10, ldc = 64, per_row = true, shift = true, a_packed = true
func.func @pixel_major(%x: tensor<1x1024x3x3xui8> {xrelay.name = "x"}, %w: tensor<4x1024x1x1xi8> {xrelay.name = "w", xrelay.param}) -> tensor<1x4x3x3xui8> {
  %zx = relay.constant dense<0> : tensor<i32>
  %zw = relay.constant dense<0> : tensor<i32>
  %sx = relay.constant dense<0.5> : tensor<f32>
  %sw = relay.constant dense<0.25> : tensor<f32>
  %y = qnn.conv2d %x, %w, %zx, %zw, %sx, %sw : (tensor<1x1024x3x3xui8>, tensor<4x1024x1x1xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<1x4x3x3xi32>
  %bias = relay.constant dense<[1, -2, 3, 40]> : tensor<4xi32>
  %b = relay.nn.bias_add %y, %bias : (tensor<1x4x3x3xi32>, tensor<4xi32>) -> tensor<1x4x3x3xi32>
  %si = relay.constant dense<[0.125, 0.25, 0.5, 0.0625]> : tensor<4xf32>
  %zi = relay.constant dense<2> : tensor<i32>
  %so = relay.constant dense<0.25> : tensor<f32>
  %zo = relay.constant dense<9> : tensor<i32>
  %r = qnn.requantize %b, %si, %zi, %so, %zo {axis = 1 : i64, out_dtype = ui8} : (tensor<1x4x3x3xi32>, tensor<4xf32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x4x3x3xui8>
  func.return %r : tensor<1x4x3x3xui8>
}

func.func @narrow(%x: tensor<64x10xi8> {xrelay.name = "x"}, %w: tensor<4x10xi8> {xrelay.name = "w", xrelay.param}) -> tensor<64x4xi32> {
  %zx = relay.constant dense<-3> : tensor<i32>
  %zw = relay.constant dense<0> : tensor<i32>
  %sx = relay.constant dense<0.5> : tensor<f32>
  %sw = relay.constant dense<0.25> : tensor<f32>
  %y = qnn.dense %x, %w, %zx, %zw, %sx, %sw : (tensor<64x10xi8>, tensor<4x10xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<64x4xi32>
  func.return %y : tensor<64x4xi32>
}
