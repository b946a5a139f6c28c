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

// conv2d 3x3 with padding, u8 data (zero point 7): im2col [n, C, kh, kw, OH, OW] in the
// data's type, padded with the zero point (a 0-d input of the generic), then the GEMM
// with A the weight packed in 6-row panels (8 rows -> 12, K = 27 -> 28 bytes or 14 i16
// words) and the correction per row (output channel).
// CHECK-LABEL: func.func @conv
// G4-SAME:       %[[P:[0-9]+]]: tensor<336xi8> {xrelay.name = "w.i8.2.packed", xrelay.param}
// G2-SAME:       %[[P:[0-9]+]]: tensor<336xi16> {xrelay.name = "w.i8.2.packed", xrelay.param}
// CHECK-SAME:    %[[C:[0-9]+]]: tensor<8xi32> {xrelay.name = "w.i8.2.correction", xrelay.param}
// CHECK:         %[[PAD:[0-9]+]] = relay.constant dense<7> : tensor<ui8>
// CHECK:         %[[COLS:[0-9]+]] = linalg.generic {{.*}} ins(%[[PAD]] : tensor<ui8>) outs(%{{.+}} : tensor<1x3x3x3x5x5xui8>)
// CHECK:         arith.select %{{.+}}, %{{.+}}, %{{.+}} : ui8
// CHECK:         func.call @xr_igemm_2(%[[P]], %[[COLS]], %[[C]])
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
