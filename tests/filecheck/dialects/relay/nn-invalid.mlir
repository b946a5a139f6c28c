// RUN: xrelay-opt %s --split-input-file --verify-diagnostics | filecheck %s

// One malformed op per case; each gives one diagnostic line naming its location and op.

// relay.nn.conv1d: weight channels do not match the data.
func.func @f(%x: tensor<1x3x10xf32>, %w: tensor<4x2x3xf32>) {
  %0 = relay.nn.conv1d %x, %w : (tensor<1x3x10xf32>, tensor<4x2x3xf32>) -> tensor<1x4x8xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.conv1d' op channels do not match: data tensor<1x3x10xf32> (3 channels), weight tensor<4x2x3xf32> (2 per group), groups 1

// -----

// relay.nn.conv2d: data of the wrong rank.
func.func @f(%x: tensor<4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  %0 = relay.nn.conv2d %x, %w : (tensor<4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<4x6x6xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.conv2d' op expects data of rank 4, got tensor<4x8x8xf32>

// -----

// relay.nn.conv2d_bias: a bias that is not one value per output channel.
func.func @f(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>, %b: tensor<3xf32>) {
  %0 = relay.nn.conv2d_bias %x, %w, %b : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.conv2d_bias' op bias tensor<3xf32> must be a vector of the size of axis 1 of tensor<1x4x6x6xf32>

// -----

// relay.nn.conv2d: strides with three values.
func.func @f(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  %0 = relay.nn.conv2d %x, %w {strides = array<i64: 1, 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.conv2d' op attribute strides needs 2 values, got [1, 1, 1]

// -----

// relay.nn.conv2d: a layout that is not a permutation of NCHW.
func.func @f(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  %0 = relay.nn.conv2d %x, %w {data_layout = "NCHX"} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.conv2d' op data_layout 'NCHX' is not a permutation of 'NCHW'

// -----

// relay.nn.conv2d: a kernel larger than the padded input.
func.func @f(%x: tensor<1x4x2x2xf32>, %w: tensor<4x4x3x3xf32>) {
  %0 = relay.nn.conv2d %x, %w : (tensor<1x4x2x2xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x1x1xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.conv2d' op window of extent 3 does not fit input of size 2 with padding [0, 0]

// -----

// relay.nn.conv3d: a wrong result shape.
func.func @f(%x: tensor<1x2x4x4x4xf32>, %w: tensor<3x2x2x2x2xf32>) {
  %0 = relay.nn.conv3d %x, %w : (tensor<1x2x4x4x4xf32>, tensor<3x2x2x2x2xf32>) -> tensor<1x3x4x4x4xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.conv3d' op result type tensor<1x3x4x4x4xf32> does not match the inferred tensor<1x3x3x3x3xf32>

// -----

// relay.nn.conv2d_transpose: weight input channels do not match the data.
func.func @f(%x: tensor<1x4x3x3xf32>, %w: tensor<3x2x3x3xf32>) {
  %0 = relay.nn.conv2d_transpose %x, %w : (tensor<1x4x3x3xf32>, tensor<3x2x3x3xf32>) -> tensor<1x2x5x5xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.conv2d_transpose' op channels do not match: data tensor<1x4x3x3xf32> (4 channels), weight tensor<3x2x3x3xf32> (3 input channels), groups 1

// -----

// relay.nn.dense: reduction sizes differ.
func.func @f(%x: tensor<8x16xf32>, %w: tensor<4x15xf32>) {
  %0 = relay.nn.dense %x, %w : (tensor<8x16xf32>, tensor<4x15xf32>) -> tensor<8x4xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.dense' op reduction sizes differ: data tensor<8x16xf32>, weight tensor<4x15xf32>

// -----

// relay.nn.matmul: rank-3 operands.
func.func @f(%x: tensor<2x8x16xf32>) {
  %0 = relay.nn.matmul %x, %x : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x8xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.matmul' op expects lhs of rank 2, got tensor<2x8x16xf32>

// -----

// relay.nn.batch_matmul: batch sizes that do not broadcast.
func.func @f(%a: tensor<2x8x16xf32>, %b: tensor<3x16x4xf32>) {
  %0 = relay.nn.batch_matmul %a, %b : (tensor<2x8x16xf32>, tensor<3x16x4xf32>) -> tensor<3x8x4xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.batch_matmul' op shapes do not match: tensor<2x8x16xf32> and tensor<3x16x4xf32>

// -----

// relay.nn.bias_add: bias not sized like the axis.
func.func @f(%x: tensor<1x4x8x8xf32>, %b: tensor<3xf32>) {
  %0 = relay.nn.bias_add %x, %b : (tensor<1x4x8x8xf32>, tensor<3xf32>) -> tensor<1x4x8x8xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.bias_add' op bias tensor<3xf32> must be a vector of the size of axis 1 of tensor<1x4x8x8xf32>

// -----

// relay.nn.batch_norm: a moving variance of the wrong size.
func.func @f(%x: tensor<1x4x8x8xf32>, %v: tensor<4xf32>, %bad: tensor<5xf32>) {
  %0 = relay.nn.batch_norm %x, %v, %v, %v, %bad : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<5xf32>) -> tensor<1x4x8x8xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.batch_norm' op moving_var tensor<5xf32> must be a vector of the size of axis 1 of tensor<1x4x8x8xf32>

// -----

// relay.nn.layer_norm: gamma not shaped like the normalized axes.
func.func @f(%x: tensor<2x8xf32>, %g: tensor<4xf32>) {
  %0 = relay.nn.layer_norm %x, %g, %g : (tensor<2x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x8xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.layer_norm' op gamma tensor<4xf32> must have the trailing shape [8] of tensor<2x8xf32>

// -----

// relay.nn.lrn: a non-positive size.
func.func @f(%x: tensor<1x4x8x8xf32>) {
  %0 = relay.nn.lrn %x {size = 0 : i64} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.lrn' op size must be positive, got 0

// -----

// relay.nn.max_pool2d: the required pool_size is missing.
func.func @f(%x: tensor<1x4x8x8xf32>) {
  %0 = relay.nn.max_pool2d %x : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.max_pool2d' op property 'pool_size' expected

// -----

// relay.nn.avg_pool2d: a wrong result shape.
func.func @f(%x: tensor<1x4x8x8xf32>) {
  %0 = relay.nn.avg_pool2d %x {pool_size = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.avg_pool2d' op result type tensor<1x4x8x8xf32> does not match the inferred tensor<1x4x7x7xf32>

// -----

// relay.nn.global_avg_pool2d: rank-3 data.
func.func @f(%x: tensor<4x8x8xf32>) {
  %0 = relay.nn.global_avg_pool2d %x : (tensor<4x8x8xf32>) -> tensor<4x1x1xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.global_avg_pool2d' op expects data of rank 4, got tensor<4x8x8xf32>

// -----

// relay.nn.global_max_pool2d: a wrong result shape.
func.func @f(%x: tensor<1x4x8x8xf32>) {
  %0 = relay.nn.global_max_pool2d %x : (tensor<1x4x8x8xf32>) -> tensor<1x4xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.global_max_pool2d' op result type tensor<1x4xf32> does not match the inferred tensor<1x4x1x1xf32>

// -----

// relay.nn.softmax: an axis out of range.
func.func @f(%x: tensor<2x10xf32>) {
  %0 = relay.nn.softmax %x {axis = 2 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.softmax' op axis 2 is out of range for rank 2

// -----

// relay.nn.log_softmax: integer data.
func.func @f(%x: tensor<2x10xi32>) {
  %0 = relay.nn.log_softmax %x : (tensor<2x10xi32>) -> tensor<2x10xi32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.log_softmax' op expects a floating-point tensor, got tensor<2x10xi32>

// -----

// relay.nn.pad: pad_width of the wrong length.
func.func @f(%x: tensor<2x10xf32>) {
  %0 = relay.nn.pad %x {pad_width = array<i64: 1, 1>} : (tensor<2x10xf32>) -> tensor<4x10xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.pad' op attribute pad_width needs 4 values, got [1, 1]

// -----

// relay.nn.pad: an unknown mode.
func.func @f(%x: tensor<2x10xf32>) {
  %0 = relay.nn.pad %x {pad_width = array<i64: 0, 0, 1, 1>, pad_mode = "wrap"} : (tensor<2x10xf32>) -> tensor<2x12xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.pad' op pad_mode 'wrap' is not one of ('constant', 'edge', 'reflect')

// -----

// relay.nn.dropout: a rate of 1.
func.func @f(%x: tensor<2x10xf32>) {
  %0 = relay.nn.dropout %x {rate = 1.0 : f64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.dropout' op rate 1.0 is not in [0, 1)

// -----

// relay.nn.max_pool1d: pool_size with two values.
func.func @f(%x: tensor<1x4x8xf32>) {
  %0 = relay.nn.max_pool1d %x {pool_size = array<i64: 2, 2>} : (tensor<1x4x8xf32>) -> tensor<1x4x7xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.max_pool1d' op attribute pool_size needs 1 values, got [2, 2]

// -----

// relay.nn.avg_pool1d: rank-4 data.
func.func @f(%x: tensor<1x4x8x8xf32>) {
  %0 = relay.nn.avg_pool1d %x {pool_size = array<i64: 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x7x8xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.avg_pool1d' op expects data of rank 3, got tensor<1x4x8x8xf32>

// -----

// relay.nn.max_pool3d: a window larger than the input.
func.func @f(%x: tensor<1x2x2x4x4xf32>) {
  %0 = relay.nn.max_pool3d %x {pool_size = array<i64: 3, 3, 3>} : (tensor<1x2x2x4x4xf32>) -> tensor<1x2x1x2x2xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.max_pool3d' op window of extent 3 does not fit input of size 2 with padding [0, 0]

// -----

// relay.nn.avg_pool3d: a wrong result shape.
func.func @f(%x: tensor<1x2x4x4x4xf32>) {
  %0 = relay.nn.avg_pool3d %x {pool_size = array<i64: 2, 2, 2>} : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x4x4x4xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.avg_pool3d' op result type tensor<1x2x4x4x4xf32> does not match the inferred tensor<1x2x3x3x3xf32>

// -----

// A misspelled property (no dialect prefix) is an error, not silently ignored.
func.func @f(%x: tensor<2x3xf32>) {
  %0 = relay.nn.softmax %x {axsi = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.softmax' op has no attribute 'axsi' (its attributes: axis)

// -----

// relay.nn.winograd_input: a tile with no matrices.
func.func @f(%x: tensor<1x8x8x8xf32>) {
  %0 = relay.nn.winograd_input %x {tile = 3 : i64} : (tensor<1x8x8x8xf32>) -> tensor<25x1x8x2x3xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.winograd_input' op tile 3 is not one of [2, 4]

// -----

// relay.nn.winograd_output: an epilogue operand its flags do not name.
func.func @f(%m: tensor<36x1x16x2x2xf32>, %b: tensor<16xf32>) {
  %0 = relay.nn.winograd_output %m, %b {size = array<i64: 8, 8>} : (tensor<36x1x16x2x2xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.winograd_output' op takes 0 epilogue operands (none), got 1

// -----

// relay.nn.winograd_output: products that are not the tiles of the size.
func.func @f(%m: tensor<36x1x16x2x2xf32>) {
  %0 = relay.nn.winograd_output %m {size = array<i64: 9, 8>} : (tensor<36x1x16x2x2xf32>) -> tensor<1x16x9x8xf32>
  func.return
}
// CHECK: nn-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.winograd_output' op data tensor<36x1x16x2x2xf32> is not [36, N, K, 3, 2] (tile 4, size [9, 8])
