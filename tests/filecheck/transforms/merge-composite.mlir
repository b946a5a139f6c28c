// RUN: xrelay-opt %s -p "merge-composite{table=example}" --split-input-file | filecheck %s

// pad -> conv2d(const) -> bias_add(const) -> relu is outlined whole; the weight and bias
// are copied into the composite, whose only argument is the data.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[R:.+]] = func.call @composite_conv2d_bias_relu_0(%x) : (tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    func.return %[[R]]
// CHECK:       func.func private @composite_conv2d_bias_relu_0(%[[A:.+]]: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> attributes {Composite = "conv2d_bias_relu"}
// CHECK-DAG:     %[[W:.+]] = relay.constant {{.+}} : tensor<2x1x3x3xf32>
// CHECK-DAG:     %[[B:.+]] = relay.constant {{.+}} : tensor<2xf32>
// CHECK:         %[[P:.+]] = relay.nn.pad %[[A]]
// CHECK-NEXT:    %[[C:.+]] = relay.nn.conv2d %[[P]], %[[W]]
// CHECK-NEXT:    %[[BA:.+]] = relay.nn.bias_add %[[C]], %[[B]]
// CHECK-NEXT:    %[[Y:.+]] = relay.nn.relu %[[BA]]
// CHECK-NEXT:    func.return %[[Y]]
func.func @main(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = relay.constant dense<1.0> : tensor<2x1x3x3xf32>
  %b = relay.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %p = relay.nn.pad %x {pad_width = array<i64: 0, 0, 0, 0, 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x6x6xf32>
  %c = relay.nn.conv2d %p, %w : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  %ba = relay.nn.bias_add %c, %b : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %r = relay.nn.relu %ba : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %r : tensor<1x2x4x4xf32>
}

// -----

// no_fuse: the bias_add has a second user, so conv+bias+relu cannot be outlined whole; the
// lower-priority conv2d_bias entry has the bias_add as its root, which may have any users,
// so conv+bias becomes a composite and the relu stays in main.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[CB:.+]] = func.call @composite_conv2d_bias_0(%x)
// CHECK-NEXT:    %[[R:.+]] = relay.nn.relu %[[CB]]
// CHECK-NEXT:    func.return %[[R]], %[[CB]]
// CHECK-NOT:     Composite = "conv2d_bias_relu"
func.func @main(%x: tensor<1x1x4x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %w = relay.constant dense<1.0> : tensor<2x1x3x3xf32>
  %b = relay.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %c = relay.nn.conv2d %x, %w : (tensor<1x1x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x2x2xf32>
  %ba = relay.nn.bias_add %c, %b : (tensor<1x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %r = relay.nn.relu %ba : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %r, %ba : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----

// no_fuse: a run-time weight matches no entry; everything stays in main.
// CHECK-LABEL: func.func @main
// CHECK-NOT:     func.call
// CHECK:         relay.nn.conv2d %x, %w
// CHECK-NOT:     Composite
func.func @main(%x: tensor<1x1x4x4xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<1x2x2x2xf32> {
  %b = relay.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %c = relay.nn.conv2d %x, %w : (tensor<1x1x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x2x2xf32>
  %ba = relay.nn.bias_add %c, %b : (tensor<1x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %r = relay.nn.relu %ba : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %r : tensor<1x2x2x2xf32>
}

// -----

// no_fuse: an attribute mismatch (reflect padding) keeps the pad out of the composite.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[P:.+]] = relay.nn.pad %x {{.+}}pad_mode = "reflect"
// CHECK-NEXT:    func.call @composite_conv2d_bias_relu_0(%[[P]])
func.func @main(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = relay.constant dense<1.0> : tensor<2x1x3x3xf32>
  %b = relay.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %p = relay.nn.pad %x {pad_width = array<i64: 0, 0, 0, 0, 1, 1, 1, 1>, pad_mode = "reflect"} : (tensor<1x1x4x4xf32>) -> tensor<1x1x6x6xf32>
  %c = relay.nn.conv2d %p, %w : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  %ba = relay.nn.bias_add %c, %b : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %r = relay.nn.relu %ba : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %r : tensor<1x2x4x4xf32>
}
