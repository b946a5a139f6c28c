// RUN: %roundtrip | filecheck %s
// RUN: %generic-roundtrip | filecheck %s

// Convolutions: 1-d, 2-d (strided, padded, dilated, grouped, NHWC), 3-d, transposed.
// CHECK-LABEL: func.func @convolutions
func.func @convolutions(%x1: tensor<2x3x10xf32>, %w1: tensor<4x3x3xf32>, %x: tensor<1x4x9x9xf32>, %w: tensor<8x4x3x3xf32>, %wg: tensor<8x2x3x3xf32>, %xh: tensor<1x9x9x4xf32>, %wh: tensor<3x3x4x8xf32>, %x3: tensor<1x2x4x5x6xf32>, %w3: tensor<3x2x2x2x2xf32>, %wt: tensor<4x2x3x3xf32>, %b8: tensor<8xf32>) {
  // CHECK: relay.nn.conv1d %{{.*}}, %{{.*}} : (tensor<2x3x10xf32>, tensor<4x3x3xf32>) -> tensor<2x4x8xf32>
  %c1 = relay.nn.conv1d %x1, %w1 : (tensor<2x3x10xf32>, tensor<4x3x3xf32>) -> tensor<2x4x8xf32>
  // CHECK: relay.nn.conv2d_bias %{{.*}}, %{{.*}}, %{{.*}} {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x9x9xf32>
  %cb = relay.nn.conv2d_bias %x, %w, %b8 {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x9x9xf32>
  // CHECK: relay.nn.conv2d %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x5x5xf32>
  %c2 = relay.nn.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x5x5xf32>
  // CHECK: relay.nn.conv2d %{{.*}}, %{{.*}} {dilation = array<i64: 2, 2>, groups = 2 : i64} : (tensor<1x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x5x5xf32>
  %cg = relay.nn.conv2d %x, %wg {dilation = array<i64: 2, 2>, groups = 2 : i64} : (tensor<1x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x5x5xf32>
  // CHECK: relay.nn.conv2d %{{.*}}, %{{.*}} {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x9x9x4xf32>, tensor<3x3x4x8xf32>) -> tensor<1x7x7x8xf32>
  %ch = relay.nn.conv2d %xh, %wh {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x9x9x4xf32>, tensor<3x3x4x8xf32>) -> tensor<1x7x7x8xf32>
  // CHECK: relay.nn.conv3d %{{.*}}, %{{.*}} : (tensor<1x2x4x5x6xf32>, tensor<3x2x2x2x2xf32>) -> tensor<1x3x3x4x5xf32>
  %c3 = relay.nn.conv3d %x3, %w3 : (tensor<1x2x4x5x6xf32>, tensor<3x2x2x2x2xf32>) -> tensor<1x3x3x4x5xf32>
  // CHECK: relay.nn.conv2d_transpose %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>} : (tensor<1x4x9x9xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x18x18xf32>
  %ct = relay.nn.conv2d_transpose %x, %wt {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>} : (tensor<1x4x9x9xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x18x18xf32>
  func.return
}

// Dense, matmul (with transposes) and batch_matmul (batch 1 broadcasts).
// CHECK-LABEL: func.func @products
func.func @products(%a: tensor<8x16xf32>, %w: tensor<4x16xf32>, %b3: tensor<2x8x16xf32>, %c3: tensor<1x16x4xf32>, %at: tensor<16x8xf32>) {
  // CHECK: relay.nn.dense %{{.*}}, %{{.*}} : (tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<8x4xf32>
  %d = relay.nn.dense %a, %w : (tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<8x4xf32>
  // CHECK: relay.nn.dense %{{.*}}, %{{.*}} : (tensor<2x8x16xf32>, tensor<4x16xf32>) -> tensor<2x8x4xf32>
  %d3 = relay.nn.dense %b3, %w : (tensor<2x8x16xf32>, tensor<4x16xf32>) -> tensor<2x8x4xf32>
  // CHECK: relay.nn.matmul %{{.*}}, %{{.*}} {transpose_b = true} : (tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<8x4xf32>
  %m = relay.nn.matmul %a, %w {transpose_b = true} : (tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<8x4xf32>
  // CHECK: relay.nn.matmul %{{.*}}, %{{.*}} {transpose_a = true} : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %mt = relay.nn.matmul %at, %at {transpose_a = true} : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  // CHECK: relay.nn.batch_matmul %{{.*}}, %{{.*}} : (tensor<2x8x16xf32>, tensor<1x16x4xf32>) -> tensor<2x8x4xf32>
  %bm = relay.nn.batch_matmul %b3, %c3 : (tensor<2x8x16xf32>, tensor<1x16x4xf32>) -> tensor<2x8x4xf32>
  func.return
}

// Bias, batch norm, layer norm, lrn keep the data type.
// CHECK-LABEL: func.func @normalization
func.func @normalization(%x: tensor<1x4x2x2xf32>, %v: tensor<4xf32>, %s: tensor<2x8xf32>, %g: tensor<8xf32>, %g2: tensor<2x2xf32>) {
  // CHECK: relay.nn.bias_add %{{.*}}, %{{.*}} : (tensor<1x4x2x2xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
  %b = relay.nn.bias_add %x, %v : (tensor<1x4x2x2xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
  // CHECK: relay.nn.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f64} : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
  %bn = relay.nn.batch_norm %x, %v, %v, %v, %v {epsilon = 1.0e-03 : f64} : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
  // CHECK: relay.nn.layer_norm %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %ln = relay.nn.layer_norm %s, %g, %g : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  // CHECK: relay.nn.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = 2 : i64} : (tensor<1x4x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<1x4x2x2xf32>
  %ln2 = relay.nn.layer_norm %x, %g2, %g2 {axis = 2 : i64} : (tensor<1x4x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<1x4x2x2xf32>
  // CHECK: relay.nn.lrn %{{.*}} {size = 3 : i64} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %lrn = relay.nn.lrn %x {size = 3 : i64} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  func.return
}

// Pooling: 1-d, 2-d and 3-d windows with strides, padding and ceil mode; global pools.
// CHECK-LABEL: func.func @pooling
func.func @pooling(%x: tensor<1x4x8x8xf32>, %y: tensor<1x4x7x7xf32>, %z: tensor<1x4x8xf32>, %v: tensor<1x2x4x4x4xf32>) {
  // CHECK: relay.nn.max_pool2d %{{.*}} {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  %mp = relay.nn.max_pool2d %x {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  // CHECK: relay.nn.max_pool2d %{{.*}} {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, ceil_mode = true} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  %mpc = relay.nn.max_pool2d %x {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, ceil_mode = true} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  // CHECK: relay.nn.avg_pool2d %{{.*}} {pool_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = true} : (tensor<1x4x7x7xf32>) -> tensor<1x4x7x7xf32>
  %ap = relay.nn.avg_pool2d %y {pool_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = true} : (tensor<1x4x7x7xf32>) -> tensor<1x4x7x7xf32>
  // CHECK: relay.nn.max_pool1d %{{.*}} {pool_size = array<i64: 3>, strides = array<i64: 2>} : (tensor<1x4x8xf32>) -> tensor<1x4x3xf32>
  %mp1 = relay.nn.max_pool1d %z {pool_size = array<i64: 3>, strides = array<i64: 2>} : (tensor<1x4x8xf32>) -> tensor<1x4x3xf32>
  // CHECK: relay.nn.avg_pool1d %{{.*}} {pool_size = array<i64: 2>} : (tensor<1x4x8xf32>) -> tensor<1x4x7xf32>
  %ap1 = relay.nn.avg_pool1d %z {pool_size = array<i64: 2>} : (tensor<1x4x8xf32>) -> tensor<1x4x7xf32>
  // CHECK: relay.nn.max_pool3d %{{.*}} {pool_size = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>} : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x2x2x2xf32>
  %mp3 = relay.nn.max_pool3d %v {pool_size = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>} : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x2x2x2xf32>
  // CHECK: relay.nn.avg_pool3d %{{.*}} {pool_size = array<i64: 3, 3, 3>, padding = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x4x4x4xf32>
  %ap3 = relay.nn.avg_pool3d %v {pool_size = array<i64: 3, 3, 3>, padding = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x4x4x4xf32>
  // CHECK: relay.nn.global_avg_pool2d %{{.*}} : (tensor<1x4x7x7xf32>) -> tensor<1x4x1x1xf32>
  %ga = relay.nn.global_avg_pool2d %y : (tensor<1x4x7x7xf32>) -> tensor<1x4x1x1xf32>
  // CHECK: relay.nn.global_max_pool2d %{{.*}} : (tensor<1x4x7x7xf32>) -> tensor<1x4x1x1xf32>
  %gm = relay.nn.global_max_pool2d %y : (tensor<1x4x7x7xf32>) -> tensor<1x4x1x1xf32>
  func.return
}

// Softmax, log_softmax, pad, dropout.
// CHECK-LABEL: func.func @misc
func.func @misc(%x: tensor<2x10xf32>) {
  // CHECK: relay.nn.softmax %{{.*}} : (tensor<2x10xf32>) -> tensor<2x10xf32>
  %sm = relay.nn.softmax %x : (tensor<2x10xf32>) -> tensor<2x10xf32>
  // CHECK: relay.nn.log_softmax %{{.*}} {axis = 0 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
  %lsm = relay.nn.log_softmax %x {axis = 0 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
  // CHECK: relay.nn.pad %{{.*}} {pad_width = array<i64: 0, 1, 2, 3>} : (tensor<2x10xf32>) -> tensor<3x15xf32>
  %p = relay.nn.pad %x {pad_width = array<i64: 0, 1, 2, 3>} : (tensor<2x10xf32>) -> tensor<3x15xf32>
  // CHECK: relay.nn.pad %{{.*}} {pad_width = array<i64: 0, 0, 1, -2>, pad_mode = "reflect"} : (tensor<2x10xf32>) -> tensor<2x9xf32>
  %pr = relay.nn.pad %x {pad_width = array<i64: 0, 0, 1, -2>, pad_mode = "reflect"} : (tensor<2x10xf32>) -> tensor<2x9xf32>
  // CHECK: relay.nn.dropout %{{.*}} : (tensor<2x10xf32>) -> tensor<2x10xf32>
  %d = relay.nn.dropout %x : (tensor<2x10xf32>) -> tensor<2x10xf32>
  func.return
}

// Winograd transforms (made by winograd-convs): the input's tiles with one more per row;
// the output with an epilogue (a shift vector and relu) and a crop to 7x7.
// CHECK-LABEL: func.func @winograd
func.func @winograd(%x: tensor<1x8x8x8xf32>, %m: tensor<16x2x16x4x4xf32>, %b: tensor<16xf32>) {
  // CHECK: relay.nn.winograd_input %{{.*}} {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x8xf32>) -> tensor<36x1x8x2x3xf32>
  %v = relay.nn.winograd_input %x {tile = 4 : i64, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x8xf32>) -> tensor<36x1x8x2x3xf32>
  // CHECK: relay.nn.winograd_output %{{.*}}, %{{.*}} {tile = 2 : i64, size = array<i64: 7, 7>, shift = true, relu = true} : (tensor<16x2x16x4x4xf32>, tensor<16xf32>) -> tensor<2x16x7x7xf32>
  %y = relay.nn.winograd_output %m, %b {tile = 2 : i64, size = array<i64: 7, 7>, shift = true, relu = true} : (tensor<16x2x16x4x4xf32>, tensor<16xf32>) -> tensor<2x16x7x7xf32>
  func.return
}
