// RUN: xrelay-opt %s -p qnn-lookup-tables | filecheck %s

// dequantize -> batch_norm -> quantize from u8 to u8 becomes a call of the runtime's table
// lookup with a new parameter, the table [C, 256] of the result's type (computed under
// build; xrelay-opt only changes the IR); the dequantize after it stays. (Per-channel
// tables need planes of at least 128 bytes.)
// CHECK-LABEL: func.func @chain
// CHECK-SAME:    %[[T:[0-9]+]]: tensor<4x256xui8> {xrelay.name = "table.1", xrelay.param}
// CHECK-NOT:     relay.nn.batch_norm
// CHECK:         %[[Q:.+]] = func.call @xr_lut_1(%x, %[[T]]) : (tensor<1x4x12x12xui8>, tensor<4x256xui8>) -> tensor<1x4x12x12xui8>
// CHECK:         qnn.dequantize %[[Q]]
func.func @chain(%x: tensor<1x4x12x12xui8> {xrelay.name = "x"}, %gamma: tensor<4xf32> {xrelay.name = "gamma", xrelay.param}, %beta: tensor<4xf32> {xrelay.name = "beta", xrelay.param}, %mean: tensor<4xf32> {xrelay.name = "mean", xrelay.param}, %var: tensor<4xf32> {xrelay.name = "var", xrelay.param}) -> tensor<1x4x12x12xf32> {
  %s = relay.constant dense<0.05> : tensor<f32>
  %z = relay.constant dense<128> : tensor<i32>
  %dq = qnn.dequantize %x, %s, %z : (tensor<1x4x12x12xui8>, tensor<f32>, tensor<i32>) -> tensor<1x4x12x12xf32>
  %bn = relay.nn.batch_norm %dq, %gamma, %beta, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<1x4x12x12xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x12x12xf32>
  %q = qnn.quantize %bn, %s, %z {out_dtype = ui8} : (tensor<1x4x12x12xf32>, tensor<f32>, tensor<i32>) -> tensor<1x4x12x12xui8>
  %r = qnn.dequantize %q, %s, %z : (tensor<1x4x12x12xui8>, tensor<f32>, tensor<i32>) -> tensor<1x4x12x12xf32>
  func.return %r : tensor<1x4x12x12xf32>
}

// Per-tensor parameters and s8 data: one row, entries read at the value xor 0x80.
// CHECK-LABEL: func.func @per_tensor
// CHECK-SAME:    tensor<1x256xi8> {xrelay.name = "table.2", xrelay.param}
// CHECK:         func.call @xr_lut_2
func.func @per_tensor(%x: tensor<3x10xi8> {xrelay.name = "x"}) -> tensor<3x10xi8> {
  %s = relay.constant dense<0.05> : tensor<f32>
  %s2 = relay.constant dense<0.07> : tensor<f32>
  %z = relay.constant dense<-4> : tensor<i32>
  %dq = qnn.dequantize %x, %s, %z : (tensor<3x10xi8>, tensor<f32>, tensor<i32>) -> tensor<3x10xf32>
  %r = relay.nn.relu %dq : (tensor<3x10xf32>) -> tensor<3x10xf32>
  %q = qnn.quantize %r, %s2, %z {out_dtype = i8} : (tensor<3x10xf32>, tensor<f32>, tensor<i32>) -> tensor<3x10xi8>
  func.return %q : tensor<3x10xi8>
}

// A chain that ends in f32 (nothing quantizes it again) and a requantize with the same
// parameters on both sides (the identity) followed by a relu stay as they are.
// CHECK-LABEL: func.func @stays
// CHECK-NOT:     func.call
// CHECK:         relay.nn.batch_norm
// CHECK:         qnn.requantize
// CHECK:         func.return
func.func @stays(%x: tensor<1x4x12x12xui8> {xrelay.name = "x"}, %gamma: tensor<4xf32> {xrelay.name = "gamma", xrelay.param}, %beta: tensor<4xf32> {xrelay.name = "beta", xrelay.param}, %mean: tensor<4xf32> {xrelay.name = "mean", xrelay.param}, %var: tensor<4xf32> {xrelay.name = "var", xrelay.param}) -> (tensor<1x4x12x12xf32>, tensor<1x4x12x12xui8>) {
  %s = relay.constant dense<0.05> : tensor<f32>
  %z = relay.constant dense<128> : tensor<i32>
  %dq = qnn.dequantize %x, %s, %z : (tensor<1x4x12x12xui8>, tensor<f32>, tensor<i32>) -> tensor<1x4x12x12xf32>
  %bn = relay.nn.batch_norm %dq, %gamma, %beta, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<1x4x12x12xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x12x12xf32>
  %y = relay.add %x, %x : (tensor<1x4x12x12xui8>, tensor<1x4x12x12xui8>) -> tensor<1x4x12x12xui8>
  %rq = qnn.requantize %y, %s, %z, %s, %z {out_dtype = ui8} : (tensor<1x4x12x12xui8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x4x12x12xui8>
  %r = relay.nn.relu %rq : (tensor<1x4x12x12xui8>) -> tensor<1x4x12x12xui8>
  func.return %bn, %r : tensor<1x4x12x12xf32>, tensor<1x4x12x12xui8>
}
// A concatenation requantizes each input whose parameters are not its own (qnn-legalize's
// arithmetic): split into a qnn.requantize per such input and a relay.concatenate, the
// lone requantization is a table; %y, with the output's parameters, goes in as it is.
// CHECK-LABEL: func.func @concat
// CHECK-SAME:    tensor<1x256xui8> {xrelay.name = "table.3", xrelay.param}
// CHECK:         %[[L:.+]] = func.call @xr_lut_3(%x,
// CHECK-NEXT:    relay.concatenate %[[L]], %y {axis = 1 : i64}
// CHECK-NOT:     qnn.concatenate
func.func @concat(%x: tensor<1x16x20x20xui8> {xrelay.name = "x"}, %y: tensor<1x16x20x20xui8> {xrelay.name = "y"}) -> tensor<1x32x20x20xui8> {
  %s1 = relay.constant dense<0.02> : tensor<f32>
  %s2 = relay.constant dense<0.03> : tensor<f32>
  %z1 = relay.constant dense<0> : tensor<i32>
  %z2 = relay.constant dense<3> : tensor<i32>
  %c = qnn.concatenate %x, %y, %s1, %s2, %z1, %z2, %s2, %z2 {axis = 1 : i64} : (tensor<1x16x20x20xui8>, tensor<1x16x20x20xui8>, tensor<f32>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x32x20x20xui8>
  func.return %c : tensor<1x32x20x20xui8>
}
// The declarations say how to walk the data: planes of one channel, the flip for s8.
// CHECK:         func.func private @xr_lut_1(
// CHECK-SAME:      #kernel.lut<channels = 4, plane = 144>
// CHECK:         func.func private @xr_lut_2(
// CHECK-SAME:      #kernel.lut<plane = 30, per_channel = false, flip = 128>
// One table for 6,400 bytes: planes of at most 4,096 bytes for the threads to share.
// CHECK:         func.func private @xr_lut_3(
// CHECK-SAME:      #kernel.lut<outer = 16, plane = 400, per_channel = false>
