// A small CNN block in the relay dialect: conv -> bias -> relu -> pool -> dense -> softmax.
// Try: xrelay-opt examples/conv_block.mlir --print-op-generic
func.func @main(%data: tensor<1x3x32x32xf32>, %conv_w: tensor<8x3x3x3xf32>, %conv_b: tensor<8xf32>, %fc_w: tensor<10x2048xf32>) -> tensor<1x10xf32> {
  %conv = relay.nn.conv2d %data, %conv_w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x32x32xf32>
  %bias = relay.nn.bias_add %conv, %conv_b : (tensor<1x8x32x32xf32>, tensor<8xf32>) -> tensor<1x8x32x32xf32>
  %relu = relay.nn.relu %bias : (tensor<1x8x32x32xf32>) -> tensor<1x8x32x32xf32>
  %pool = relay.nn.max_pool2d %relu {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x8x32x32xf32>) -> tensor<1x8x16x16xf32>
  %flat = relay.nn.batch_flatten %pool : (tensor<1x8x16x16xf32>) -> tensor<1x2048xf32>
  %fc = relay.nn.dense %flat, %fc_w : (tensor<1x2048xf32>, tensor<10x2048xf32>) -> tensor<1x10xf32>
  %prob = relay.nn.softmax %fc : (tensor<1x10xf32>) -> tensor<1x10xf32>
  func.return %prob : tensor<1x10xf32>
}
