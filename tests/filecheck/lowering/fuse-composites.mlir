// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=fuse-composites}" | filecheck %s

// A conv2d -> bias_add -> relu composite becomes one linalg.generic with only parallel
// iterators: it starts from the bias, sums over channels and the window in scf.for loops,
// applies the relu and yields each output element once. The composite is gone.
// CHECK-LABEL: func.func @main
// CHECK-NOT:     func.call
// CHECK:         %[[Y:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%{{.+}} : tensor<2xf32>) outs(%{{.+}} : tensor<1x2x2x2xf32>)
// CHECK-NEXT:    ^{{.+}}(%[[BIAS:.+]]: f32, %{{.+}}: f32):
// CHECK:           %[[SUM:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %[[BIAS]]) -> (f32)
// CHECK:             scf.for
// CHECK:               scf.for
// CHECK:                 tensor.extract
// CHECK:                 arith.mulf
// CHECK:                 arith.addf
// CHECK:           %[[R:.+]] = arith.maximumf %[[SUM]], %{{.+}} : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK:         func.return %[[Y]]
// CHECK-NOT:   relay.nn.conv2d
// CHECK-NOT:   Composite
func.func @main(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %r = func.call @composite_conv2d_bias_relu_0(%x) : (tensor<1x1x4x4xf32>) -> tensor<1x2x2x2xf32>
  func.return %r : tensor<1x2x2x2xf32>
}
func.func private @composite_conv2d_bias_relu_0(%a: tensor<1x1x4x4xf32>) -> tensor<1x2x2x2xf32> attributes {Composite = "conv2d_bias_relu"} {
  %w = relay.constant dense<1.0> : tensor<2x1x3x3xf32>
  %b = relay.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %c = relay.nn.conv2d %a, %w : (tensor<1x1x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x2x2xf32>
  %ba = relay.nn.bias_add %c, %b : (tensor<1x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %y = relay.nn.relu %ba : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %y : tensor<1x2x2x2xf32>
}
