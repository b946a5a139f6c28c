// RUN: xrelay-opt %s -p outline-kernels | filecheck %s

// Ops that are the same up to their operands (repeated layers) call one kernel; an op that
// differs in a constant gets its own.
// CHECK: func.func private @k0(%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>)
// CHECK: arith.constant 2.000000e+00 : f32
// CHECK: func.func private @k1(%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>)
// CHECK: arith.constant 3.000000e+00 : f32
// CHECK-NOT: func.func private
// CHECK-LABEL: func.func @main
// CHECK: arith.constant 3.000000e+00
// CHECK: func.call @k0(%a, %b)
// CHECK-NEXT: func.call @k0(%b, %c)
// CHECK-NEXT: func.call @k1(%c, %d)
func.func @main(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>, %d: memref<4xf32>) {
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.mulf %x, %two : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%b : memref<4xf32>) outs(%c : memref<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.mulf %x, %two : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%c : memref<4xf32>) outs(%d : memref<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.mulf %x, %three : f32
    linalg.yield %s : f32
  }
  func.return
}
