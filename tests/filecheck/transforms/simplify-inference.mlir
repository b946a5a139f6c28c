// RUN: xrelay-opt %s -p simplify-inference --split-input-file | filecheck %s
// RUN: xrelay-opt %s -p simplify-inference,fold-constants --split-input-file | filecheck %s --check-prefix=FOLD

// A batch norm after a conv with a constant weight folds into the conv: a scaled weight
// and a bias; after fold-constants only conv2d + bias_add on constants remain.
// CHECK-LABEL: func.func @bn_into_conv
// CHECK-NOT:     relay.nn.batch_norm
// CHECK:         %[[W:.+]] = relay.multiply %{{.+}}, %{{.+}} : (tensor<2x1x1x1xf32>, tensor<2x1x1x1xf32>)
// CHECK:         %[[C:.+]] = relay.nn.conv2d %x, %[[W]]
// CHECK:         relay.nn.bias_add %[[C]], %{{.+}} : (tensor<1x2x3x3xf32>, tensor<2xf32>)
// FOLD-LABEL:  func.func @bn_into_conv
// FOLD-DAG:      %[[W:.+]] = relay.constant dense<{{\[\[\[\[}}2.000000e+00]]], {{\[\[\[}}1.500000e+00]]]]> : tensor<2x1x1x1xf32>
// FOLD-DAG:      %[[B:.+]] = relay.constant dense<[1.000000e+00, -1.000000e+00]> : tensor<2xf32>
// FOLD:          %[[C:.+]] = relay.nn.conv2d %x, %[[W]]
// FOLD-NEXT:     %[[Y:.+]] = relay.nn.bias_add %[[C]], %[[B]]
// FOLD-NEXT:     func.return %[[Y]]
func.func @bn_into_conv(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = relay.constant dense<[[[[1.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %g = relay.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %b = relay.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %m = relay.constant dense<[0.0, 0.0]> : tensor<2xf32>
  %v = relay.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %c = relay.nn.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = relay.nn.batch_norm %c, %g, %b, %m, %v {epsilon = 0.0 : f64} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// -----

// A conv whose result has another user keeps its weight: the batch norm becomes scale/shift.
// CHECK-LABEL: func.func @no_fuse_conv_with_two_users
// CHECK:         %[[C:.+]] = relay.nn.conv2d %x, %w
// CHECK:         %[[S:.+]] = relay.multiply %[[C]], %{{.+}} : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>)
// CHECK:         relay.add %[[S]], %{{.+}} : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>)
// CHECK-NOT:     relay.nn.batch_norm
func.func @no_fuse_conv_with_two_users(%x: tensor<1x1x3x3xf32>, %g: tensor<2xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %w = relay.constant dense<[[[[1.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %c = relay.nn.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = relay.nn.batch_norm %c, %g, %g, %g, %g : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %y, %c : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}

// -----

// A conv with a run-time weight is not folded into either.
// CHECK-LABEL: func.func @no_fuse_non_constant_weight
// CHECK:         relay.nn.conv2d %x, %w :
// CHECK:         relay.multiply
// CHECK-NOT:     relay.nn.batch_norm
func.func @no_fuse_non_constant_weight(%x: tensor<1x1x3x3xf32>, %w: tensor<2x1x1x1xf32>, %g: tensor<2xf32>) -> tensor<1x2x3x3xf32> {
  %c = relay.nn.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = relay.nn.batch_norm %c, %g, %g, %g, %g : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// -----

// Dropout disappears.
// CHECK-LABEL: func.func @dropout
// CHECK-NEXT:    func.return %x
func.func @dropout(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = relay.nn.dropout %x {rate = 0.5 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
