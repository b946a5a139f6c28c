// RUN: xrelay-opt %s -p fold-constants --split-input-file | filecheck %s
// RUN: xrelay-opt %s -p "fold-constants{max-elements=8}" --split-input-file | filecheck %s --check-prefix=SMALL

// A product of two constants folds; the constants it used are erased.
// CHECK-LABEL: func.func @scalar_chain
// CHECK-NEXT:    %[[C:.+]] = relay.constant dense<6.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[Y:.+]] = relay.add %x, %[[C]]
// CHECK-NEXT:    func.return %[[Y]]
func.func @scalar_chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = relay.constant dense<2.0> : tensor<f32>
  %b = relay.constant dense<3.0> : tensor<f32>
  %c = relay.multiply %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %y = relay.add %x, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// A weight-only chain (transpose then reshape) folds to one constant.
// CHECK-LABEL: func.func @weight_chain
// CHECK-NEXT:    %[[W:.+]] = relay.constant dense<[1.000000e+00, 3.000000e+00, 2.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-NEXT:    relay.multiply %x, %[[W]]
// CHECK-NOT:     relay.transpose
func.func @weight_chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = relay.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %t = relay.transpose %w {axes = array<i64: 1, 0>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %r = relay.reshape %t {newshape = array<i64: 4>} : (tensor<2x2xf32>) -> tensor<4xf32>
  %y = relay.multiply %x, %r : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// A large splat result stays compact: a 0-d constant broadcast to the shape. With
// max-elements=8 the 100-element result is not folded at all.
// CHECK-LABEL: func.func @splat_stays_compact
// CHECK-NEXT:    %[[S:.+]] = relay.constant dense<3.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[B:.+]] = relay.broadcast_to %[[S]] {shape = array<i64: 100>}
// CHECK-NEXT:    relay.add %x, %[[B]]
// SMALL-LABEL: func.func @splat_stays_compact
// SMALL:         relay.add %{{.+}}, %{{.+}} : (tensor<100xf32>, tensor<f32>) -> tensor<100xf32>
func.func @splat_stays_compact(%x: tensor<100xf32>) -> tensor<100xf32> {
  %s = relay.constant dense<1.0> : tensor<f32>
  %b = relay.broadcast_to %s {shape = array<i64: 100>} : (tensor<f32>) -> tensor<100xf32>
  %two = relay.constant dense<2.0> : tensor<f32>
  %c = relay.add %b, %two : (tensor<100xf32>, tensor<f32>) -> tensor<100xf32>
  %y = relay.add %x, %c : (tensor<100xf32>, tensor<100xf32>) -> tensor<100xf32>
  func.return %y : tensor<100xf32>
}

// -----

// An op with a run-time operand survives, and so does the constant it uses.
// CHECK-LABEL: func.func @no_fold_runtime_operand
// CHECK-NEXT:    %[[C:.+]] = relay.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    relay.multiply %x, %[[C]]
func.func @no_fold_runtime_operand(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = relay.constant dense<2.0> : tensor<f32>
  %y = relay.multiply %x, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
