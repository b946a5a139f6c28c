// RUN: xrelay-opt %s -p qdq-to-qnn --split-input-file | filecheck %s

// A QDQ conv + bias + relu (onnxruntime's QDQ format): the conv of two dequantized values
// becomes qnn.conv2d, the int32 bias (scale x_scale * w_scale, zero point 0) joins the
// accumulator, and quantize(relu(...)) becomes a requantize clipped at the zero point.
// CHECK-LABEL: func.func @conv_bias_relu
// CHECK:         %[[C:.+]] = qnn.conv2d %xq, %w, %xz, %wz, %xs, %ws {padding = array<i64: 1, 1, 1, 1>}
// CHECK:         %[[S:.+]] = relay.constant dense<2.000000e-04> : tensor<f32>
// CHECK:         %[[A:.+]] = relay.nn.bias_add %[[C]], %b : (tensor<1x2x4x4xi32>, tensor<2xi32>)
// CHECK:         %[[R:.+]] = qnn.requantize %[[A]], %[[S]], %{{.+}}, %ys, %yz {axis = 1 : i64, out_dtype = ui8}
// CHECK-NEXT:    %[[Y:.+]] = relay.clip %[[R]] {a_min = 1.000000e+01 : f64, a_max = 2.550000e+02 : f64}
// CHECK-NEXT:    func.return %[[Y]]
// CHECK-NOT:     relay.nn.conv2d
func.func @conv_bias_relu(%xq: tensor<1x1x4x4xui8>, %w: tensor<2x1x3x3xi8>, %b: tensor<2xi32>) -> tensor<1x2x4x4xui8> {
  %xs = relay.constant dense<0.02> : tensor<f32>
  %xz = relay.constant dense<128> : tensor<i32>
  %ws = relay.constant dense<0.01> : tensor<f32>
  %wz = relay.constant dense<0> : tensor<i32>
  %bs = relay.constant dense<2.0e-04> : tensor<f32>
  %ys = relay.constant dense<0.05> : tensor<f32>
  %yz = relay.constant dense<10> : tensor<i32>
  %x = qnn.dequantize %xq, %xs, %xz : (tensor<1x1x4x4xui8>, tensor<f32>, tensor<i32>) -> tensor<1x1x4x4xf32>
  %wf = qnn.dequantize %w, %ws, %wz : (tensor<2x1x3x3xi8>, tensor<f32>, tensor<i32>) -> tensor<2x1x3x3xf32>
  %bf = qnn.dequantize %b, %bs, %wz : (tensor<2xi32>, tensor<f32>, tensor<i32>) -> tensor<2xf32>
  %c = relay.nn.conv2d %x, %wf {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  %a = relay.nn.bias_add %c, %bf {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %r = relay.nn.relu %a : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = qnn.quantize %r, %ys, %yz {out_dtype = ui8} : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<i32>) -> tensor<1x2x4x4xui8>
  func.return %y : tensor<1x2x4x4xui8>
}

// -----

// Two dequantized values added and quantized: qnn.add; a reshape of a dequantized value
// moves below the dequantize.
// CHECK-LABEL: func.func @add_and_reshape
// CHECK:         %[[R:.+]] = relay.reshape %a {newshape = array<i64: 4>} : (tensor<2x2xui8>) -> tensor<4xui8>
// CHECK:         qnn.add %[[R]], %b, %s, %z, %s, %z, %s, %z {out_dtype = ui8}
func.func @add_and_reshape(%a: tensor<2x2xui8>, %b: tensor<4xui8>) -> tensor<4xui8> {
  %s = relay.constant dense<0.1> : tensor<f32>
  %z = relay.constant dense<3> : tensor<i32>
  %af = qnn.dequantize %a, %s, %z : (tensor<2x2xui8>, tensor<f32>, tensor<i32>) -> tensor<2x2xf32>
  %ar = relay.reshape %af {newshape = array<i64: 4>} : (tensor<2x2xf32>) -> tensor<4xf32>
  %bf = qnn.dequantize %b, %s, %z : (tensor<4xui8>, tensor<f32>, tensor<i32>) -> tensor<4xf32>
  %sum = relay.add %ar, %bf : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = qnn.quantize %sum, %s, %z {out_dtype = ui8} : (tensor<4xf32>, tensor<f32>, tensor<i32>) -> tensor<4xui8>
  func.return %y : tensor<4xui8>
}

// -----

// no_fuse: an op without an integer form (sigmoid) keeps its float op between the
// dequantize and the quantize.
// CHECK-LABEL: func.func @no_fuse_sigmoid
// CHECK:         qnn.dequantize
// CHECK-NEXT:    relay.sigmoid
// CHECK-NEXT:    qnn.quantize
func.func @no_fuse_sigmoid(%a: tensor<4xui8>) -> tensor<4xui8> {
  %s = relay.constant dense<0.1> : tensor<f32>
  %z = relay.constant dense<3> : tensor<i32>
  %af = qnn.dequantize %a, %s, %z : (tensor<4xui8>, tensor<f32>, tensor<i32>) -> tensor<4xf32>
  %g = relay.sigmoid %af : (tensor<4xf32>) -> tensor<4xf32>
  %y = qnn.quantize %g, %s, %z {out_dtype = ui8} : (tensor<4xf32>, tensor<f32>, tensor<i32>) -> tensor<4xui8>
  func.return %y : tensor<4xui8>
}

// -----

// no_fuse: a bias whose scale is not x_scale * w_scale stays a float add.
// CHECK-LABEL: func.func @no_fuse_bias_scale
// CHECK:         qnn.dense
// CHECK:         relay.add
func.func @no_fuse_bias_scale(%x: tensor<1x4xui8>, %w: tensor<2x4xi8>, %b: tensor<2xi32>) -> tensor<1x2xf32> {
  %s = relay.constant dense<0.5> : tensor<f32>
  %z = relay.constant dense<0> : tensor<i32>
  %xf = qnn.dequantize %x, %s, %z : (tensor<1x4xui8>, tensor<f32>, tensor<i32>) -> tensor<1x4xf32>
  %wf = qnn.dequantize %w, %s, %z : (tensor<2x4xi8>, tensor<f32>, tensor<i32>) -> tensor<2x4xf32>
  %bf = qnn.dequantize %b, %s, %z : (tensor<2xi32>, tensor<f32>, tensor<i32>) -> tensor<2xf32>
  %d = relay.nn.dense %xf, %wf : (tensor<1x4xf32>, tensor<2x4xf32>) -> tensor<1x2xf32>
  %y = relay.add %d, %bf : (tensor<1x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  func.return %y : tensor<1x2xf32>
}

// -----

// A max pool of a dequantized value (positive scale) pools the integers: dequantization is
// increasing, so the window's maximum is the same element; the quantize after it (same
// scale and zero point) is then a requantize qnn-legalize drops.
// CHECK-LABEL: func.func @max_pool_of_dequantized
// CHECK:         %[[P:.+]] = relay.nn.max_pool2d %xq {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x2x5x5xui8>) -> tensor<1x2x2x2xui8>
// CHECK:         qnn.requantize %[[P]], %s, %z, %s, %z
// CHECK-NOT:     relay.nn.max_pool2d
func.func @max_pool_of_dequantized(%xq: tensor<1x2x5x5xui8>) -> tensor<1x2x2x2xui8> {
  %s = relay.constant dense<0.1> : tensor<f32>
  %z = relay.constant dense<3> : tensor<i32>
  %x = qnn.dequantize %xq, %s, %z : (tensor<1x2x5x5xui8>, tensor<f32>, tensor<i32>) -> tensor<1x2x5x5xf32>
  %p = relay.nn.max_pool2d %x {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x2x2xf32>
  %y = qnn.quantize %p, %s, %z {out_dtype = ui8} : (tensor<1x2x2x2xf32>, tensor<f32>, tensor<i32>) -> tensor<1x2x2x2xui8>
  func.return %y : tensor<1x2x2x2xui8>
}

// -----

// A negative scale makes dequantization decreasing: the pool stays on floats.
// CHECK-LABEL: func.func @no_max_pool_negative_scale
// CHECK:         relay.nn.max_pool2d %{{.+}} : (tensor<1x1x4x4xf32>)
func.func @no_max_pool_negative_scale(%xq: tensor<1x1x4x4xi8>) -> tensor<1x1x2x2xf32> {
  %s = relay.constant dense<-0.1> : tensor<f32>
  %z = relay.constant dense<0> : tensor<i32>
  %x = qnn.dequantize %xq, %s, %z : (tensor<1x1x4x4xi8>, tensor<f32>, tensor<i32>) -> tensor<1x1x4x4xf32>
  %p = relay.nn.max_pool2d %x {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  func.return %p : tensor<1x1x2x2xf32>
}
