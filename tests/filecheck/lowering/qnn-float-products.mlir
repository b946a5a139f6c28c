// RUN: xrelay-opt %s -p qnn-float-products | filecheck %s

// dense, ui8 data (zero point 128: |x - zx| <= 128) and an i8 weight parameter (zero point
// 0: |w| <= 128): chunks of 2^24 / (128 * 128) = 1024 along K = 2500, so three f32
// products on new f32 parameters, each cast to i32 and summed; the weight's transpose is
// gone with its last use.
// CHECK-LABEL: func.func @dense
// CHECK-SAME:    %w: tensor<2500x4xi8> {xrelay.name = "w", xrelay.param}
// CHECK-SAME:    %{{.*}}: tensor<4x1024xf32> {xrelay.name = "w.f32.1.0", xrelay.param}
// CHECK-SAME:    %{{.*}}: tensor<4x1024xf32> {xrelay.name = "w.f32.1.1024", xrelay.param}
// CHECK-SAME:    %{{.*}}: tensor<4x452xf32> {xrelay.name = "w.f32.1.2048", xrelay.param}
// CHECK-NOT:     relay.transpose
// CHECK:         %[[XF:.+]] = relay.cast %x {dtype = f32} : (tensor<2x2500xui8>) -> tensor<2x2500xf32>
// CHECK:         %[[XC:.+]] = relay.subtract %[[XF]], %{{.+}} : (tensor<2x2500xf32>, tensor<f32>)
// CHECK:         %[[S0:.+]] = relay.strided_slice %[[XC]] {begin = array<i64: 0>, end = array<i64: 1024>
// CHECK-NEXT:    %[[P0:.+]] = relay.nn.dense %[[S0]], %{{.+}} : (tensor<2x1024xf32>, tensor<4x1024xf32>) -> tensor<2x4xf32>
// CHECK:         relay.nn.dense
// CHECK:         %[[S2:.+]] = relay.strided_slice %[[XC]] {begin = array<i64: 2048>, end = array<i64: 2500>
// CHECK-NEXT:    relay.nn.dense %[[S2]], %{{.+}} : (tensor<2x452xf32>, tensor<4x452xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[I0:.+]] = relay.cast %[[P0]] {dtype = i32}
// CHECK-NEXT:    relay.cast %{{.+}} {dtype = i32}
// CHECK-NEXT:    relay.add %[[I0]]
// CHECK-NEXT:    relay.cast %{{.+}} {dtype = i32}
// CHECK-NEXT:    %[[SUM:.+]] = relay.add
// CHECK-NEXT:    func.return %[[SUM]] : tensor<2x4xi32>
func.func @dense(%x: tensor<2x2500xui8> {xrelay.name = "x"}, %w: tensor<2500x4xi8> {xrelay.name = "w", xrelay.param}) -> tensor<2x4xi32> {
  %zx = relay.constant dense<128> : tensor<i32>
  %zw = relay.constant dense<0> : tensor<i32>
  %sx = relay.constant dense<0.5> : tensor<f32>
  %sw = relay.constant dense<0.25> : tensor<f32>
  %wt = relay.transpose %w {axes = array<i64: 1, 0>} : (tensor<2500x4xi8>) -> tensor<4x2500xi8>
  %y = qnn.dense %x, %wt, %zx, %zw, %sx, %sw : (tensor<2x2500xui8>, tensor<4x2500xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<2x4xi32>
  func.return %y : tensor<2x4xi32>
}

// conv2d, K = 200 channels x 9 > 1024: chunks of 1024 / 9 = 113 input channels, the data
// sliced along its channel axis; the attributes carried to each f32 convolution.
// CHECK-LABEL: func.func @conv
// CHECK:         relay.strided_slice %{{.+}} {begin = array<i64: 0>, end = array<i64: 113>, strides = array<i64: 1>, axes = array<i64: 1>}
// CHECK-NEXT:    relay.nn.conv2d %{{.+}}, %{{.+}} {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x113x5x5xf32>, tensor<8x113x3x3xf32>) -> tensor<1x8x5x5xf32>
// CHECK:         relay.nn.conv2d %{{.+}}, %{{.+}} {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x87x5x5xf32>, tensor<8x87x3x3xf32>) -> tensor<1x8x5x5xf32>
func.func @conv(%x: tensor<1x200x5x5xui8> {xrelay.name = "x"}, %w: tensor<8x200x3x3xi8> {xrelay.name = "w", xrelay.param}) -> tensor<1x8x5x5xi32> {
  %zx = relay.constant dense<128> : tensor<i32>
  %zw = relay.constant dense<0> : tensor<i32>
  %sx = relay.constant dense<0.5> : tensor<f32>
  %sw = relay.constant dense<0.25> : tensor<f32>
  %y = qnn.conv2d %x, %w, %zx, %zw, %sx, %sw {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x200x5x5xui8>, tensor<8x200x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<1x8x5x5xi32>
  func.return %y : tensor<1x8x5x5xi32>
}

// Left to qnn-legalize: a weight computed at run time (not a parameter).
// CHECK-LABEL: func.func @computed_weight
// CHECK:         qnn.dense
// CHECK-NOT:     relay.nn.dense
func.func @computed_weight(%x: tensor<2x8xui8> {xrelay.name = "x"}, %w: tensor<4x8xi8> {xrelay.name = "w"}) -> tensor<2x4xi32> {
  %zx = relay.constant dense<128> : tensor<i32>
  %zw = relay.constant dense<0> : tensor<i32>
  %sx = relay.constant dense<0.5> : tensor<f32>
  %sw = relay.constant dense<0.25> : tensor<f32>
  %y = qnn.dense %x, %w, %zx, %zw, %sx, %sw : (tensor<2x8xui8>, tensor<4x8xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<2x4xi32>
  func.return %y : tensor<2x4xi32>
}
