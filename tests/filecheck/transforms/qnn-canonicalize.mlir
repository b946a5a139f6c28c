// RUN: xrelay-opt %s -p qnn-fold-quantize-constants,qnn-remove-clip-after-requantize --split-input-file | filecheck %s
// RUN: xrelay-opt %s -p qnn-fold-quantize-constants --split-input-file | filecheck %s --check-prefix=FOLD
// RUN: xrelay-opt %s -p qnn-dense-bias-as-add --split-input-file | filecheck %s --check-prefix=BIAS

// The seed: one quantized 1x1 conv as PyTorch's frontend imports it (float weight and bias
// quantized by qnn.quantize, requantize to i32, clip, cast) and as TFLite's does (int8
// weight, int32 bias, requantize straight to ui8). After the two passes both functions are
// the same IR: the CHECK block below is repeated verbatim for each (and
// tests/unit/test_qnn_passes.py compares the printed bodies).

// CHECK-LABEL: func.func @from_pytorch
// CHECK:         %[[W:.+]] = relay.constant dense<{{\[\[\[\[}}50]]], {{\[\[\[}}-25]]]]> : tensor<2x1x1x1xi8>
// CHECK-NEXT:    %[[C:.+]] = qnn.conv2d %x, %[[W]], %xz, %wz, %xs, %ws : (tensor<1x1x4x4xui8>, tensor<2x1x1x1xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<1x2x4x4xi32>
// CHECK-NEXT:    %[[B:.+]] = relay.constant dense<[500, -1000]> : tensor<2xi32>
// CHECK-NEXT:    %[[A:.+]] = relay.nn.bias_add %[[C]], %[[B]]
// CHECK-NEXT:    %[[Y:.+]] = qnn.requantize %[[A]], %bs, %wz, %ys, %yz {out_dtype = ui8} : (tensor<1x2x4x4xi32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x2x4x4xui8>
// CHECK-NEXT:    func.return %[[Y]]
// FOLD-LABEL:  func.func @from_pytorch
// FOLD-NOT:      qnn.quantize
// FOLD:          relay.clip
// FOLD:          relay.cast
func.func @from_pytorch(%x: tensor<1x1x4x4xui8>) -> tensor<1x2x4x4xui8> {
  %xs = relay.constant dense<0.02> : tensor<f32>
  %xz = relay.constant dense<128> : tensor<i32>
  %ws = relay.constant dense<0.01> : tensor<f32>
  %wz = relay.constant dense<0> : tensor<i32>
  %bs = relay.constant dense<2.0e-04> : tensor<f32>
  %ys = relay.constant dense<0.05> : tensor<f32>
  %yz = relay.constant dense<100> : tensor<i32>
  %wf = relay.constant dense<[[[[0.5]]], [[[-0.25]]]]> : tensor<2x1x1x1xf32>
  %w = qnn.quantize %wf, %ws, %wz {out_dtype = i8} : (tensor<2x1x1x1xf32>, tensor<f32>, tensor<i32>) -> tensor<2x1x1x1xi8>
  %c = qnn.conv2d %x, %w, %xz, %wz, %xs, %ws : (tensor<1x1x4x4xui8>, tensor<2x1x1x1xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<1x2x4x4xi32>
  %bf = relay.constant dense<[0.1, -0.2]> : tensor<2xf32>
  %b = qnn.quantize %bf, %bs, %wz {out_dtype = i32} : (tensor<2xf32>, tensor<f32>, tensor<i32>) -> tensor<2xi32>
  %a = relay.nn.bias_add %c, %b : (tensor<1x2x4x4xi32>, tensor<2xi32>) -> tensor<1x2x4x4xi32>
  %r = qnn.requantize %a, %bs, %wz, %ys, %yz {out_dtype = i32} : (tensor<1x2x4x4xi32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x2x4x4xi32>
  %cl = relay.clip %r {a_min = 0.0 : f64, a_max = 255.0 : f64} : (tensor<1x2x4x4xi32>) -> tensor<1x2x4x4xi32>
  %y = relay.cast %cl {dtype = ui8} : (tensor<1x2x4x4xi32>) -> tensor<1x2x4x4xui8>
  func.return %y : tensor<1x2x4x4xui8>
}

// CHECK-LABEL: func.func @from_tflite
// CHECK:         %[[W:.+]] = relay.constant dense<{{\[\[\[\[}}50]]], {{\[\[\[}}-25]]]]> : tensor<2x1x1x1xi8>
// CHECK-NEXT:    %[[C:.+]] = qnn.conv2d %x, %[[W]], %xz, %wz, %xs, %ws : (tensor<1x1x4x4xui8>, tensor<2x1x1x1xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<1x2x4x4xi32>
// CHECK-NEXT:    %[[B:.+]] = relay.constant dense<[500, -1000]> : tensor<2xi32>
// CHECK-NEXT:    %[[A:.+]] = relay.nn.bias_add %[[C]], %[[B]]
// CHECK-NEXT:    %[[Y:.+]] = qnn.requantize %[[A]], %bs, %wz, %ys, %yz {out_dtype = ui8} : (tensor<1x2x4x4xi32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x2x4x4xui8>
// CHECK-NEXT:    func.return %[[Y]]
func.func @from_tflite(%x: tensor<1x1x4x4xui8>) -> tensor<1x2x4x4xui8> {
  %xs = relay.constant dense<0.02> : tensor<f32>
  %xz = relay.constant dense<128> : tensor<i32>
  %ws = relay.constant dense<0.01> : tensor<f32>
  %wz = relay.constant dense<0> : tensor<i32>
  %bs = relay.constant dense<2.0e-04> : tensor<f32>
  %ys = relay.constant dense<0.05> : tensor<f32>
  %yz = relay.constant dense<100> : tensor<i32>
  %w = relay.constant dense<[[[[50]]], [[[-25]]]]> : tensor<2x1x1x1xi8>
  %c = qnn.conv2d %x, %w, %xz, %wz, %xs, %ws : (tensor<1x1x4x4xui8>, tensor<2x1x1x1xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<1x2x4x4xi32>
  %b = relay.constant dense<[500, -1000]> : tensor<2xi32>
  %a = relay.nn.bias_add %c, %b : (tensor<1x2x4x4xi32>, tensor<2xi32>) -> tensor<1x2x4x4xi32>
  %y = qnn.requantize %a, %bs, %wz, %ys, %yz {out_dtype = ui8} : (tensor<1x2x4x4xi32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x2x4x4xui8>
  func.return %y : tensor<1x2x4x4xui8>
}

// -----

// A clip to a sub-range (a fused relu above the zero point) stays, on the narrow type.
// CHECK-LABEL: func.func @relu_clip_stays
// CHECK:         %[[R:.+]] = qnn.requantize %a, %s, %z, %s, %yz {out_dtype = ui8}
// CHECK-NEXT:    %[[C:.+]] = relay.clip %[[R]] {a_min = 1.000000e+02 : f64, a_max = 2.550000e+02 : f64} : (tensor<4xui8>) -> tensor<4xui8>
// CHECK-NEXT:    func.return %[[C]]
func.func @relu_clip_stays(%a: tensor<4xi32>, %s: tensor<f32>, %z: tensor<i32>, %yz: tensor<i32>) -> tensor<4xui8> {
  %r = qnn.requantize %a, %s, %z, %s, %yz {out_dtype = i32} : (tensor<4xi32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<4xi32>
  %cl = relay.clip %r {a_min = 100.0 : f64, a_max = 300.0 : f64} : (tensor<4xi32>) -> tensor<4xi32>
  %y = relay.cast %cl {dtype = ui8} : (tensor<4xi32>) -> tensor<4xui8>
  func.return %y : tensor<4xui8>
}

// no_fuse: the requantized i32 value has another user, so the clip must stay.
// CHECK-LABEL: func.func @no_fuse_shared
// CHECK:         qnn.requantize %a, %s, %z, %s, %z {out_dtype = i32}
// CHECK:         relay.clip
// CHECK:         relay.cast
func.func @no_fuse_shared(%a: tensor<4xi32>, %s: tensor<f32>, %z: tensor<i32>) -> (tensor<4xui8>, tensor<4xi32>) {
  %r = qnn.requantize %a, %s, %z, %s, %z {out_dtype = i32} : (tensor<4xi32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<4xi32>
  %cl = relay.clip %r {a_min = 0.0 : f64, a_max = 255.0 : f64} : (tensor<4xi32>) -> tensor<4xi32>
  %y = relay.cast %cl {dtype = ui8} : (tensor<4xi32>) -> tensor<4xui8>
  func.return %y, %r : tensor<4xui8>, tensor<4xi32>
}

// no_fuse: quantize of a run-time value stays.
// CHECK-LABEL: func.func @no_fold_runtime
// CHECK:         qnn.quantize %x
func.func @no_fold_runtime(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<i32>) -> tensor<4xi8> {
  %q = qnn.quantize %x, %s, %z {out_dtype = i8} : (tensor<4xf32>, tensor<f32>, tensor<i32>) -> tensor<4xi8>
  func.return %q : tensor<4xi8>
}

// -----

// A qnn.dense's bias_add on the last axis (PyTorch's quantized linear) is the add that
// TFLite's FULLY_CONNECTED and the float dense_bias composites use.
// BIAS-LABEL: func.func @dense_bias_as_add
// BIAS:         %[[D:.+]] = qnn.dense %x, %w
// BIAS-NEXT:    %[[Y:.+]] = relay.add %[[D]], %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// BIAS-NEXT:    func.return %[[Y]]
func.func @dense_bias_as_add(%x: tensor<2x4xi8>, %w: tensor<3x4xi8>, %b: tensor<3xi32>, %s: tensor<f32>, %z: tensor<i32>) -> tensor<2x3xi32> {
  %d = qnn.dense %x, %w, %z, %z, %s, %s : (tensor<2x4xi8>, tensor<3x4xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<2x3xi32>
  %y = relay.nn.bias_add %d, %b {axis = -1 : i64} : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  func.return %y : tensor<2x3xi32>
}

// no_fuse: a bias along the rows (axis 0) is not the dense layer's bias.
// BIAS-LABEL: func.func @no_fuse_dense_row_bias
// BIAS:         relay.nn.bias_add %{{.+}}, %b {axis = 0 : i64}
func.func @no_fuse_dense_row_bias(%x: tensor<2x4xi8>, %w: tensor<3x4xi8>, %b: tensor<2xi32>, %s: tensor<f32>, %z: tensor<i32>) -> tensor<2x3xi32> {
  %d = qnn.dense %x, %w, %z, %z, %s, %s : (tensor<2x4xi8>, tensor<3x4xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<2x3xi32>
  %y = relay.nn.bias_add %d, %b {axis = 0 : i64} : (tensor<2x3xi32>, tensor<2xi32>) -> tensor<2x3xi32>
  func.return %y : tensor<2x3xi32>
}

// no_fuse: a convolution's bias_add (channels, axis 1) stays.
// BIAS-LABEL: func.func @no_fuse_conv_bias
// BIAS:         relay.nn.bias_add
func.func @no_fuse_conv_bias(%x: tensor<1x1x4x4xi8>, %w: tensor<2x1x1x1xi8>, %b: tensor<2xi32>, %s: tensor<f32>, %z: tensor<i32>) -> tensor<1x2x4x4xi32> {
  %c = qnn.conv2d %x, %w, %z, %z, %s, %s : (tensor<1x1x4x4xi8>, tensor<2x1x1x1xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<1x2x4x4xi32>
  %y = relay.nn.bias_add %c, %b : (tensor<1x2x4x4xi32>, tensor<2xi32>) -> tensor<1x2x4x4xi32>
  func.return %y : tensor<1x2x4x4xi32>
}
