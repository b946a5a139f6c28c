// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=select-kernels}" | filecheck %s

// A reshape of a product's result that splits its last axis (the heads' [1, 4, 2, 3])
// moves the channels: the epilogue stops before it and the add stays (against
// select-kernels-reshaped-epilogue.mlir, whose reshape keeps the last axis).
// CHECK-LABEL: func.func @main
// CHECK:         %[[P:.+]] = func.call @xr_gemm_0(%{{.+}}, %{{.+}}) : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
// CHECK-NEXT:    %[[S:.+]] = relay.reshape %[[P]]
// CHECK-NEXT:    relay.add %[[S]]
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>, %b: tensor<3xf32>) -> tensor<1x4x2x3xf32> {
  %y = relay.nn.matmul %x, %w : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %y1 = relay.reshape %y {newshape = array<i64: 1, 4, 2, 3>} : (tensor<4x6xf32>) -> tensor<1x4x2x3xf32>
  %y2 = relay.add %y1, %b : (tensor<1x4x2x3xf32>, tensor<3xf32>) -> tensor<1x4x2x3xf32>
  func.return %y2 : tensor<1x4x2x3xf32>
}
