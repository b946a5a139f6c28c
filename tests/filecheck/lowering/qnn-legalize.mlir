// RUN: xrelay-opt %s -p qnn-legalize | filecheck %s
// RUN: xrelay-opt %s -p qnn-legalize,relay-to-linalg | filecheck %s --check-prefix=LINALG

// requantize: (a - in_zp) as f32, times in_scale / out_scale (per channel: reshaped along
// the axis), rounded half to even, plus the output zero point, clipped, cast.
// CHECK-LABEL: func.func @requantize
// CHECK:         %[[M:.+]] = relay.divide %s, %ys
// CHECK-NEXT:    %[[D:.+]] = relay.subtract %a, %z : (tensor<1x4xi32>, tensor<i32>) -> tensor<1x4xi32>
// CHECK-NEXT:    %[[F:.+]] = relay.cast %[[D]] {dtype = f32}
// CHECK-NEXT:    %[[MR:.+]] = relay.reshape %[[M]] {newshape = array<i64: 1, 4>}
// CHECK-NEXT:    %[[P:.+]] = relay.multiply %[[F]], %[[MR]]
// CHECK-NEXT:    %[[R:.+]] = relay.round %[[P]]
// CHECK-NEXT:    %[[Z:.+]] = relay.cast %yz {dtype = f32}
// CHECK-NEXT:    %[[S:.+]] = relay.add %[[R]], %[[Z]]
// CHECK-NEXT:    %[[C:.+]] = relay.clip %[[S]] {a_min = 0.000000e+00 : f64, a_max = 2.550000e+02 : f64}
// CHECK-NEXT:    relay.cast %[[C]] {dtype = ui8} : (tensor<1x4xf32>) -> tensor<1x4xui8>
// LINALG-LABEL:  func.func @requantize
// LINALG:          math.roundeven
// LINALG:          arith.fptoui %{{.*}} : f32 to i8
func.func @requantize(%a: tensor<1x4xi32>, %s: tensor<4xf32>, %z: tensor<i32>, %ys: tensor<f32>, %yz: tensor<i32>) -> tensor<1x4xui8> {
  %y = qnn.requantize %a, %s, %z, %ys, %yz {axis = 1 : i64, out_dtype = ui8} : (tensor<1x4xi32>, tensor<4xf32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x4xui8>
  func.return %y : tensor<1x4xui8>
}

// dense: both operands widened to i32 (ui8 zero-extends, i8 sign-extends), zero points
// subtracted, then an i32 dense: the loop nest multiplies and accumulates in i32.
// CHECK-LABEL: func.func @dense
// CHECK:         %[[X:.+]] = relay.cast %x {dtype = i32} : (tensor<2x8xui8>) -> tensor<2x8xi32>
// CHECK-NEXT:    %[[XC:.+]] = relay.subtract %[[X]], %z
// CHECK-NEXT:    %[[W:.+]] = relay.cast %w {dtype = i32} : (tensor<4x8xi8>) -> tensor<4x8xi32>
// CHECK-NEXT:    %[[WC:.+]] = relay.subtract %[[W]], %z
// CHECK-NEXT:    relay.nn.dense %[[XC]], %[[WC]] : (tensor<2x8xi32>, tensor<4x8xi32>) -> tensor<2x4xi32>
// LINALG-LABEL:  func.func @dense(%x: tensor<2x8xi8>
// LINALG:          arith.extui %{{.*}} : i8 to i32
// LINALG:          arith.extsi %{{.*}} : i8 to i32
// LINALG:          iterator_types = ["parallel", "reduction", "parallel"]
// LINALG:          arith.muli %{{.*}}, %{{.*}} : i32
// LINALG-NEXT:     arith.addi %{{.*}}, %{{.*}} : i32
func.func @dense(%x: tensor<2x8xui8>, %w: tensor<4x8xi8>, %s: tensor<f32>, %z: tensor<i32>) -> tensor<2x4xi32> {
  %y = qnn.dense %x, %w, %z, %z, %s, %s : (tensor<2x8xui8>, tensor<4x8xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<2x4xi32>
  func.return %y : tensor<2x4xi32>
}

// conv2d: the weight zero point is per output channel, reshaped along axis 0.
// CHECK-LABEL: func.func @conv2d
// CHECK:         relay.subtract %{{.*}}, %{{.*}} : (tensor<4x3x3x3xi32>, tensor<4x1x1x1xi32>)
// CHECK:         relay.nn.conv2d %{{.*}}, %{{.*}} {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xi32>, tensor<4x3x3x3xi32>) -> tensor<1x4x8x8xi32>
func.func @conv2d(%x: tensor<1x3x8x8xui8>, %w: tensor<4x3x3x3xi8>, %s: tensor<f32>, %z: tensor<i32>, %wz: tensor<4xi32>) -> tensor<1x4x8x8xi32> {
  %y = qnn.conv2d %x, %w, %z, %wz, %s, %s {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xui8>, tensor<4x3x3x3xi8>, tensor<i32>, tensor<4xi32>, tensor<f32>, tensor<f32>) -> tensor<1x4x8x8xi32>
  func.return %y : tensor<1x4x8x8xi32>
}

// concatenate: an input whose scale and zero point are the output's constants is taken as
// it is (its requantization would be the identity); the other input is requantized.
// CHECK-LABEL: func.func @concatenate_shared_parameters
// CHECK:         %[[B:.+]] = relay.cast %{{.+}} {dtype = ui8} : (tensor<2x3xf32>) -> tensor<2x3xui8>
// CHECK-NEXT:    relay.concatenate %a, %[[B]] {axis = 1 : i64}
func.func @concatenate_shared_parameters(%a: tensor<2x3xui8>, %b: tensor<2x3xui8>) -> tensor<2x6xui8> {
  %s = relay.constant dense<0.5> : tensor<f32>
  %t = relay.constant dense<0.25> : tensor<f32>
  %z = relay.constant dense<3> : tensor<i32>
  %y = qnn.concatenate %a, %b, %s, %t, %z, %z, %s, %z {axis = 1 : i64} : (tensor<2x3xui8>, tensor<2x3xui8>, tensor<f32>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<2x6xui8>
  func.return %y : tensor<2x6xui8>
}
