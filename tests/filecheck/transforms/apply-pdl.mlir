// RUN: xrelay-opt %s -p apply-pdl | filecheck %s

// A declarative rewrite written in PDL in the same file: conv2d (with explicit strides and
// padding, copied over) followed by bias_add becomes the fused relay.nn.conv2d_bias.
pdl.pattern @fuse_conv_bias : benefit(1) {
  %x = pdl.operand
  %w = pdl.operand
  %b = pdl.operand
  %t = pdl.type
  %strides = pdl.attribute
  %padding = pdl.attribute
  %conv = pdl.operation "relay.nn.conv2d" (%x, %w : !pdl.value, !pdl.value) {"strides" = %strides, "padding" = %padding} -> (%t : !pdl.type)
  %c = pdl.result 0 of %conv
  %add = pdl.operation "relay.nn.bias_add" (%c, %b : !pdl.value, !pdl.value) -> (%t : !pdl.type)
  pdl.rewrite %add {
    %fused = pdl.operation "relay.nn.conv2d_bias" (%x, %w, %b : !pdl.value, !pdl.value, !pdl.value) {"strides" = %strides, "padding" = %padding} -> (%t : !pdl.type)
    pdl.replace %add with %fused
  }
}

// CHECK-LABEL: func.func @fuse
// CHECK-NEXT:    %[[Y:.+]] = relay.nn.conv2d_bias %{{.+}}, %{{.+}}, %{{.+}} {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
// CHECK-NEXT:    func.return %[[Y]]
func.func @fuse(%x: tensor<1x2x8x8xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %c = relay.nn.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x4x4xf32>
  %y = relay.nn.bias_add %c, %b : (tensor<1x4x4x4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}

// no_fuse: a bias_add whose input is not a conv2d (a relu sits between) is left alone.
// CHECK-LABEL: func.func @no_fuse_relu_between
// CHECK-NEXT:    relay.nn.conv2d
// CHECK-NEXT:    relay.nn.relu
// CHECK-NEXT:    relay.nn.bias_add
func.func @no_fuse_relu_between(%x: tensor<1x2x8x8xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  %c = relay.nn.conv2d %x, %w : (tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = relay.nn.relu %c : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %y = relay.nn.bias_add %r, %b : (tensor<1x4x6x6xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  func.return %y : tensor<1x4x6x6xf32>
}
