// RUN: xrelay-opt %s -p "winograd-convs{vector-width=8},select-kernels,prepack-weights{vector-width=8}" --split-input-file | filecheck %s

// A 3x3 convolution with 64 input channels on 32x32 (64 tiles of 4x4): its weight becomes
// a parameter of 36 transformed matrices, packed as A of one GEMM over the 36 terms whose
// B reads TW = 8 of the 9 tiles in each row (a 1x1 window over [8, 9]); batch norm and
// relu fold into the output transform, which reads the vectors that select-kernels' chain
// computes; the GEMM declaration of the dense after it does not clash with it.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    %[[U:[^:]+]]: tensor<36x32x64xf32> {xrelay.name = "w.winograd4", xrelay.param, xrelay.winograd = "w"}
// CHECK-SAME:    %[[P:[^:]+]]: tensor<{{[0-9]+}}xf32> {xrelay.name = "w.winograd4.packed{{[0-9]+}}", xrelay.param, xrelay.pack = #kernel.pack<source = "w.winograd4", operand = "a", rows = 32, k = 64, groups = 36, panel = 6>}
// CHECK:         %[[V:.+]] = func.call @[[IN:xr_wino_[0-9]+]](%x) : (tensor<1x64x32x32xf32>) -> tensor<36x1x64x8x9xf32>
// CHECK:         %[[M:.+]] = func.call @[[G:xr_gemm_[0-9]+]](%[[P]], %[[V]]) : ({{.*}}, tensor<36x1x64x8x9xf32>) -> tensor<36x1x32x8x8xf32>
// CHECK:         func.call @[[OUT:xr_wino_[0-9]+]](%[[M]], %{{.+}}, %{{.+}}) : (tensor<36x1x32x8x8xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x32x32x32xf32>
// CHECK-NOT:     relay.nn.conv2d
// CHECK:         func.call @xr_gemm_{{[0-9]+}}
// (the transforms: select-kernels' runtime calls, lowering/kernels/winograd.py)
// CHECK-DAG:   func.func private @[[IN]]({{.*}}#kernel.winograd<planes = 64, channels = 64, h = 32, w = 32, th = 8, tw = 8, top = 1, left = 1>
// CHECK-DAG:   func.func private @[[OUT]]({{.*}}#kernel.winograd<output = true, planes = 32, channels = 32, h = 32, w = 32, th = 8, tw = 8, scale = true, shift = true, relu = true>
// CHECK:       func.func private @[[G]]
// CHECK-SAME:    #kernel.gemm<m = 32, n = 64, k = 64, rsa = 64, csa = 1, rsb = 64, csb = 1, ldc = 64, batch = {{\[}}[36, {{[0-9]+}}, 4608, 2048, 0]], per_row = true, a_packed = true, mpad = 36, window = {{\[}}[8, 9], [1, 1], [1, 1], [1, 1], [0, 0], [8, 8]], winograd = true>
func.func @main(%x: tensor<1x64x32x32xf32> {xrelay.name = "x"}, %w: tensor<32x64x3x3xf32> {xrelay.name = "w", xrelay.param}, %g: tensor<32xf32> {xrelay.name = "g", xrelay.param}, %b: tensor<32xf32> {xrelay.name = "b", xrelay.param}, %mu: tensor<32xf32> {xrelay.name = "mu", xrelay.param}, %var: tensor<32xf32> {xrelay.name = "var", xrelay.param}, %d: tensor<16x32768xf32> {xrelay.name = "d", xrelay.param}) -> tensor<1x16xf32> {
  %c = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x64x32x32xf32>, tensor<32x64x3x3xf32>) -> tensor<1x32x32x32xf32>
  %n = relay.nn.batch_norm %c, %g, %b, %mu, %var : (tensor<1x32x32x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x32x32x32xf32>
  %r = relay.nn.relu %n : (tensor<1x32x32x32xf32>) -> tensor<1x32x32x32xf32>
  %f = relay.reshape %r {newshape = array<i64: 1, 32768>} : (tensor<1x32x32x32xf32>) -> tensor<1x32768xf32>
  %y = relay.nn.dense %f, %d : (tensor<1x32768xf32>, tensor<16x32768xf32>) -> tensor<1x16xf32>
  func.return %y : tensor<1x16xf32>
}

// -----

// Kept direct: a stride of 2, too few input channels, and a weight that is not a parameter.
// CHECK-LABEL: func.func @main
// CHECK-NOT:     relay.nn.winograd_input
// CHECK-COUNT-3: func.call @xr_gemm_
// CHECK-NOT:     relay.nn.winograd_input
func.func @main(%x: tensor<1x64x32x32xf32> {xrelay.name = "x"}, %w: tensor<32x64x3x3xf32> {xrelay.name = "w", xrelay.param}, %s: tensor<1x8x32x32xf32> {xrelay.name = "s"}, %w2: tensor<32x8x3x3xf32> {xrelay.name = "w2", xrelay.param}, %w3: tensor<32x64x3x3xf32> {xrelay.name = "w3"}) -> (tensor<1x32x15x15xf32>, tensor<1x32x30x30xf32>, tensor<1x32x30x30xf32>) {
  %a = relay.nn.conv2d %x, %w {strides = array<i64: 2, 2>} : (tensor<1x64x32x32xf32>, tensor<32x64x3x3xf32>) -> tensor<1x32x15x15xf32>
  %b = relay.nn.conv2d %s, %w2 : (tensor<1x8x32x32xf32>, tensor<32x8x3x3xf32>) -> tensor<1x32x30x30xf32>
  %c = relay.nn.conv2d %x, %w3 : (tensor<1x64x32x32xf32>, tensor<32x64x3x3xf32>) -> tensor<1x32x30x30xf32>
  func.return %a, %b, %c : tensor<1x32x15x15xf32>, tensor<1x32x30x30xf32>, tensor<1x32x30x30xf32>
}
