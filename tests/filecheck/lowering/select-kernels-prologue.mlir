// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=select-kernels}" --split-input-file | filecheck %s

// DenseNet's layer: batch_norm and relu read only by a 1x1 convolution become the GEMM's
// B prologue. The call reads the batch_norm's input %x and two vectors after the epilogue's
// (g = gamma * rsqrt(var + eps), h = beta - mean * g); the GEMM packs max(x * g + h, 0).
// CHECK-LABEL: func.func @main
// CHECK:         relay.rsqrt
// CHECK-NOT:     relay.nn.relu
// CHECK:         func.call @xr_gemm_0(%w, %x, %{{.+}}, %{{.+}}) : (tensor<8x6x1x1xf32>, tensor<1x6x5x5xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x8x5x5xf32>
// CHECK-NOT:     relay.nn.batch_norm
// CHECK:       func.func private @xr_gemm_0
// CHECK-SAME:    xrelay.kernel = #kernel.gemm<m = 8, n = 25, k = 6, rsa = 6, csa = 1, rsb = 25, csb = 1, ldc = 25, per_row = true, prologue = true>
func.func @main(%x: tensor<1x6x5x5xf32>, %w: tensor<8x6x1x1xf32>, %g: tensor<6xf32>, %be: tensor<6xf32>, %m: tensor<6xf32>, %v: tensor<6xf32>) -> tensor<1x8x5x5xf32> {
  %y = relay.nn.batch_norm %x, %g, %be, %m, %v : (tensor<1x6x5x5xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x6x5x5xf32>
  %r = relay.nn.relu %y : (tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32>
  %c = relay.nn.conv2d %r, %w : (tensor<1x6x5x5xf32>, tensor<8x6x1x1xf32>) -> tensor<1x8x5x5xf32>
  func.return %c : tensor<1x8x5x5xf32>
}

// -----

// A relu read by something else as well stays, and so does the batch_norm before it.
// CHECK-LABEL: func.func @main
// CHECK:         relay.nn.batch_norm
// CHECK:         relay.nn.relu
// CHECK:         func.call @xr_gemm_0
// CHECK-NOT:     prologue
func.func @main(%x: tensor<1x6x5x5xf32>, %w: tensor<6x6x1x1xf32>, %g: tensor<6xf32>, %be: tensor<6xf32>, %m: tensor<6xf32>, %v: tensor<6xf32>) -> tensor<1x6x5x5xf32> {
  %y = relay.nn.batch_norm %x, %g, %be, %m, %v : (tensor<1x6x5x5xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x6x5x5xf32>
  %r = relay.nn.relu %y : (tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32>
  %c = relay.nn.conv2d %r, %w : (tensor<1x6x5x5xf32>, tensor<6x6x1x1xf32>) -> tensor<1x6x5x5xf32>
  %s = relay.add %c, %r : (tensor<1x6x5x5xf32>, tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32>
  func.return %s : tensor<1x6x5x5xf32>
}

// -----

// Caffe's batch_norm then scale (a multiply and an add by [C, 1, 1] vectors): the three
// compose into one prologue (the vectors' ops stay: g * s, h * s + b).
// CHECK-LABEL: func.func @main
// CHECK:         func.call @xr_gemm_0(%w, %x, %{{.+}}, %{{.+}}) : (tensor<8x6x1x1xf32>, tensor<1x6x5x5xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x8x5x5xf32>
// CHECK-NOT:     tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32>
// CHECK:       func.func private @xr_gemm_0
// CHECK-SAME:    prologue = true
func.func @main(%x: tensor<1x6x5x5xf32>, %w: tensor<8x6x1x1xf32>, %g: tensor<6xf32>, %be: tensor<6xf32>, %m: tensor<6xf32>, %v: tensor<6xf32>, %s: tensor<6x1x1xf32>, %b: tensor<6x1x1xf32>) -> tensor<1x8x5x5xf32> {
  %y = relay.nn.batch_norm %x, %g, %be, %m, %v : (tensor<1x6x5x5xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x6x5x5xf32>
  %z = relay.multiply %y, %s : (tensor<1x6x5x5xf32>, tensor<6x1x1xf32>) -> tensor<1x6x5x5xf32>
  %a = relay.add %z, %b : (tensor<1x6x5x5xf32>, tensor<6x1x1xf32>) -> tensor<1x6x5x5xf32>
  %r = relay.nn.relu %a : (tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32>
  %c = relay.nn.conv2d %r, %w : (tensor<1x6x5x5xf32>, tensor<8x6x1x1xf32>) -> tensor<1x8x5x5xf32>
  func.return %c : tensor<1x8x5x5xf32>
}
