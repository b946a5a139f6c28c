// RUN: xrelay-opt %s -p "lower-to-llvm{start-after=relay-to-linalg stop-after=fuse-elementwise}" | filecheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#red = affine_map<(d0, d1) -> (d0)>

// A chain add(broadcast row) -> roundeven -> fptosi becomes one generic: the producer's
// broadcast map stays on its input, its body feeds the consumer's, its init is gone.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %[[E:.+]] = tensor.empty() : tensor<4x8xi8>
// CHECK-NEXT:    %[[G:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%[[E]] : tensor<4x8xi8>)
// CHECK:           arith.addf
// CHECK-NEXT:      math.roundeven
// CHECK-NEXT:      arith.fptosi
// CHECK-NEXT:      linalg.yield
// CHECK:         func.return %[[G]]
func.func @chain(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xi8> {
  %e0 = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = math.roundeven %x : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xi8>
  %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<4x8xf32>) outs(%e2 : tensor<4x8xi8>) {
  ^bb0(%x: f32, %o: i8):
    %c = arith.fptosi %x : f32 to i8
    linalg.yield %c : i8
  } -> tensor<4x8xi8>
  func.return %2 : tensor<4x8xi8>
}

// Left apart: a producer with two users, a consumer reading through a transpose, and a
// reduction consumer.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @kept(%a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  %1 = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4x4xf32>
  %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = math.absf %x : f32
    linalg.yield %m : f32
  } -> tensor<4x4xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %3 = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]} ins(%2 : tensor<4x4xf32>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  func.return %0, %1, %3 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>
}

// An integer sum absorbs its elementwise producer (a quantized pool: the bytes widened
// and their zero point subtracted in the sum's own loop, no i32 copy of the data); the
// float sum in @kept above keeps its producer apart.
// CHECK-LABEL: func.func @int_sum
// CHECK-NEXT:    %[[G:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<4x8xi8>) outs(%init : tensor<4xi32>)
// CHECK:           arith.extui
// CHECK:           arith.subi
// CHECK-NEXT:      arith.addi
// CHECK-NEXT:      linalg.yield
// CHECK:         func.return %[[G]]
func.func @int_sum(%a: tensor<4x8xi8>, %init: tensor<4xi32>) -> tensor<4xi32> {
  %e = tensor.empty() : tensor<4x8xi32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x8xi8>) outs(%e : tensor<4x8xi32>) {
  ^bb0(%x: i8, %o: i32):
    %w = arith.extui %x : i8 to i32
    %c = arith.constant 3 : i32
    %d = arith.subi %w, %c : i32
    linalg.yield %d : i32
  } -> tensor<4x8xi32>
  %1 = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]} ins(%0 : tensor<4x8xi32>) outs(%init : tensor<4xi32>) {
  ^bb0(%x: i32, %o: i32):
    %s = arith.addi %x, %o : i32
    linalg.yield %s : i32
  } -> tensor<4xi32>
  func.return %1 : tensor<4xi32>
}
