// RUN: xrelay-opt %s -p collapse-loops | filecheck %s

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
#tr = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// A per-channel multiply on [1, 8, 7, 7]: the scale reads the channel loop alone (0 on
// its axes of size 1), so the two spatial loops become one of 49, on views of the
// operands; the result is viewed back as [1, 8, 7, 7].
// CHECK-LABEL: func.func @per_channel
// CHECK:         %[[X:.+]] = tensor.reshape %x(%{{.+}}) : (tensor<1x8x7x7xf32>, tensor<3xi64>) -> tensor<1x8x49xf32>
// CHECK:         %[[O:.+]] = tensor.reshape %{{.+}}(%{{.+}}) : (tensor<1x8x7x7xf32>, tensor<3xi64>) -> tensor<1x8x49xf32>
// CHECK:         %[[G:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, 0, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %s : tensor<1x8x49xf32>, tensor<8x1x1xf32>) outs(%[[O]] : tensor<1x8x49xf32>)
// CHECK:           arith.mulf
// CHECK:         %[[Y:.+]] = tensor.reshape %[[G]](%{{.+}}) : (tensor<1x8x49xf32>, tensor<4xi64>) -> tensor<1x8x7x7xf32>
// CHECK:         func.return %[[Y]]
func.func @per_channel(%x: tensor<1x8x7x7xf32>, %s: tensor<8x1x1xf32>) -> tensor<1x8x7x7xf32> {
  %e = tensor.empty() : tensor<1x8x7x7xf32>
  %0 = linalg.generic {indexing_maps = [#id4, #ch, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %s : tensor<1x8x7x7xf32>, tensor<8x1x1xf32>) outs(%e : tensor<1x8x7x7xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x8x7x7xf32>
  func.return %0 : tensor<1x8x7x7xf32>
}

// A transposed read keeps d1 and d2 apart; d0 and d1 are not adjacent in the transposed
// operand's order either (it reads d0, d2, d1): nothing merges, the op is unchanged.
// CHECK-LABEL: func.func @transposed
// CHECK-NOT:     tensor.reshape
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
func.func @transposed(%x: tensor<2x5x6xf32>) -> tensor<2x6x5xf32> {
  %e = tensor.empty() : tensor<2x6x5xf32>
  %0 = linalg.generic {indexing_maps = [#tr, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<2x5x6xf32>) outs(%e : tensor<2x6x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x6x5xf32>
  func.return %0 : tensor<2x6x5xf32>
}

// A sum over the 7 x 7 plane of [1, 8, 7, 7] (keepdims): the two reduced loops become
// one reduction of 49 and the channel loops one parallel loop of 8 (a reduced loop and a
// parallel one never merge); the accumulator's size-1 axes stay constant 0.
// CHECK-LABEL: func.func @plane_sum
// CHECK:         %[[X:.+]] = tensor.reshape %x(%{{.+}}) : (tensor<1x8x7x7xi32>, tensor<2xi64>) -> tensor<8x49xi32>
// CHECK:         %[[O:.+]] = tensor.reshape %{{.+}}(%{{.+}}) : (tensor<1x8x1x1xi32>, tensor<3xi64>) -> tensor<8x1x1xi32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<8x49xi32>) outs(%[[O]] : tensor<8x1x1xi32>)
#sum_out = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
func.func @plane_sum(%x: tensor<1x8x7x7xi32>, %init: tensor<1x8x1x1xi32>) -> tensor<1x8x1x1xi32> {
  %0 = linalg.generic {indexing_maps = [#id4, #sum_out], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x : tensor<1x8x7x7xi32>) outs(%init : tensor<1x8x1x1xi32>) {
  ^bb0(%a: i32, %o: i32):
    %s = arith.addi %a, %o : i32
    linalg.yield %s : i32
  } -> tensor<1x8x1x1xi32>
  func.return %0 : tensor<1x8x1x1xi32>
}
