// RUN: xrelay-opt %s --split-input-file -p "lower-to-llvm{stop-after=select-kernels}" | filecheck %s
// RUN: xrelay-opt %s --split-input-file -p "lower-to-llvm{stop-after=emit-runtime}" | filecheck %s --check-prefix=RT

// An f32 layer norm over its trailing axes (2 x 3 rows of 4 * 5 values) becomes a call
// of a runtime row kernel declaration whose #kernel.rows holds the rows, the row's length
// and epsilon; the runtime holds xr_layer_norm (its rows split over the thread pool) and
// a wrapper passing the shape and epsilon (1e-3 rounded to f32).
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[A:.+]] = func.call @xr_rows_0(%x, %g, %b) : (tensor<2x3x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<2x3x4x5xf32>
// CHECK:       func.func private @xr_rows_0(tensor<2x3x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<2x3x4x5xf32>
// CHECK-SAME:    xrelay.kernel = #kernel.rows<kind = "layer_norm", rows = 6, n = 20, epsilon = "0.001">
// RT:          xrelay.runtime = "
// RT-SAME:       define internal void @xr_layer_norm_part(
// RT-SAME:       call float @llvm.vector.reduce.fadd.v{{8|16}}f32(
// RT-SAME:       call float @llvm.sqrt.f32(
// RT-SAME:       @xr_rows_0.eps = internal constant float 0x3F50624DE0000000
// RT-SAME:       call void @xr_layer_norm(ptr %x, ptr %g, ptr %b, ptr %y, i64 6, i64 20, ptr @xr_rows_0.eps)
func.func @main(%x: tensor<2x3x4x5xf32>, %g: tensor<4x5xf32>, %b: tensor<4x5xf32>) -> tensor<2x3x4x5xf32> {
  %y = relay.nn.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-3 : f64} : (tensor<2x3x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<2x3x4x5xf32>
  func.return %y : tensor<2x3x4x5xf32>
}

// -----

// A softmax and a log-softmax along the last axis each get a declaration; one along
// another axis (not contiguous rows) stays on the linalg lowering. The runtime holds both
// kernels: the row's maximum (NaN wins), exp(x - max) by expand-math's polynomial
// (roundeven), their sum; then a division, or a subtraction of the sum's log.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[A:.+]] = func.call @xr_rows_0(%x) : (tensor<4x10xf32>) -> tensor<4x10xf32>
// CHECK-NEXT:    %[[B:.+]] = func.call @xr_rows_1(%x) : (tensor<4x10xf32>) -> tensor<4x10xf32>
// CHECK-NEXT:    %[[C:.+]] = relay.nn.softmax %x {axis = 0 : i64}
// CHECK:       func.func private @xr_rows_0(tensor<4x10xf32>) -> tensor<4x10xf32>
// CHECK-SAME:    xrelay.kernel = #kernel.rows<rows = 4, n = 10>
// CHECK:       func.func private @xr_rows_1(tensor<4x10xf32>) -> tensor<4x10xf32>
// CHECK-SAME:    xrelay.kernel = #kernel.rows<kind = "log_softmax", rows = 4, n = 10>
// RT:          xrelay.runtime = "
// RT-SAME:       define internal void @xr_softmax_part(
// RT-SAME:       call float @llvm.vector.reduce.fmaximum.v{{8|16}}f32(
// RT-SAME:       call <{{8|16}} x float> @llvm.roundeven.v{{8|16}}f32(
// RT-SAME:       fdiv <{{8|16}} x float>
// RT-SAME:       define internal void @xr_log_softmax_part(
// RT-SAME:       call float @llvm.log.f32(
// RT-SAME:       call void @xr_softmax(ptr %x, ptr %y, i64 4, i64 10)
// RT-SAME:       call void @xr_log_softmax(ptr %x, ptr %y, i64 4, i64 10)
func.func @main(%x: tensor<4x10xf32>) -> (tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10xf32>) {
  %a = relay.nn.softmax %x {axis = -1 : i64} : (tensor<4x10xf32>) -> tensor<4x10xf32>
  %b = relay.nn.log_softmax %x {axis = 1 : i64} : (tensor<4x10xf32>) -> tensor<4x10xf32>
  %c = relay.nn.softmax %x {axis = 0 : i64} : (tensor<4x10xf32>) -> tensor<4x10xf32>
  func.return %a, %b, %c : tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10xf32>
}

// -----

// NCHW global average and max pools: each of the N * C planes a row of H * W values; the
// runtime holds xr_row_mean (vector partial sums, then / n) and xr_row_max.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[A:.+]] = func.call @xr_rows_0(%x) : (tensor<2x3x5x7xf32>) -> tensor<2x3x1x1xf32>
// CHECK-NEXT:    %[[B:.+]] = func.call @xr_rows_1(%x) : (tensor<2x3x5x7xf32>) -> tensor<2x3x1x1xf32>
// CHECK:       func.func private @xr_rows_0(
// CHECK-SAME:    xrelay.kernel = #kernel.rows<kind = "mean", rows = 6, n = 35>
// CHECK:       func.func private @xr_rows_1(
// CHECK-SAME:    xrelay.kernel = #kernel.rows<kind = "max", rows = 6, n = 35>
// RT:          xrelay.runtime = "
// RT-SAME:       define internal void @xr_row_mean_part(
// RT-SAME:       define internal void @xr_row_max_part(
// RT-SAME:       call void @xr_row_mean(ptr %x, ptr %y, i64 6, i64 35)
// RT-SAME:       call void @xr_row_max(ptr %x, ptr %y, i64 6, i64 35)
func.func @main(%x: tensor<2x3x5x7xf32>) -> (tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>) {
  %a = relay.nn.global_avg_pool2d %x : (tensor<2x3x5x7xf32>) -> tensor<2x3x1x1xf32>
  %b = relay.nn.global_max_pool2d %x : (tensor<2x3x5x7xf32>) -> tensor<2x3x1x1xf32>
  func.return %a, %b : tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>
}

// -----

// Dynamic quantization's range: the maximum and the minimum of a whole 8 x 96 tensor are
// first those of each row of its last axis (a row kernel whose rows the threads split),
// then those of the 8 rows' results (a relay op of 8 values, on the linalg lowering); a
// minimum over the trailing axes with keepdims is one row kernel call.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[M:.+]] = func.call @xr_rows_0(%x) : (tensor<8x96xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.+}} = relay.max %[[M]] : (tensor<8xf32>) -> tensor<f32>
// CHECK-NEXT:    %[[N:.+]] = func.call @xr_rows_1(%x) : (tensor<8x96xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.+}} = relay.min %[[N]] : (tensor<8xf32>) -> tensor<f32>
// CHECK-NEXT:    %{{.+}} = func.call @xr_rows_2(%y) : (tensor<2x3x4xf32>) -> tensor<2x1x1xf32>
// CHECK:       func.func private @xr_rows_0(
// CHECK-SAME:    #kernel.rows<kind = "max", rows = 8, n = 96>
// CHECK:       func.func private @xr_rows_1(
// CHECK-SAME:    #kernel.rows<kind = "min", rows = 8, n = 96>
// CHECK:       func.func private @xr_rows_2(
// CHECK-SAME:    #kernel.rows<kind = "min", rows = 2, n = 12>
// RT:          xrelay.runtime = "
// RT-SAME:       define internal void @xr_row_max_part(
// RT-SAME:       call float @llvm.vector.reduce.fmaximum.v{{8|16}}f32(
// RT-SAME:       define internal void @xr_row_min_part(
// RT-SAME:       call float @llvm.vector.reduce.fminimum.v{{8|16}}f32(
func.func @main(%x: tensor<8x96xf32>, %y: tensor<2x3x4xf32>) -> (tensor<f32>, tensor<f32>, tensor<2x1x1xf32>) {
  %a = relay.max %x : (tensor<8x96xf32>) -> tensor<f32>
  %b = relay.min %x : (tensor<8x96xf32>) -> tensor<f32>
  %c = relay.min %y {axis = array<i64: 1, 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x1xf32>
  func.return %a, %b, %c : tensor<f32>, tensor<f32>, tensor<2x1x1xf32>
}
