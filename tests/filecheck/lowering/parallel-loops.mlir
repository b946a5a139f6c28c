// RUN: xrelay-opt %s -p outline-kernels,convert-linalg-to-loops,parallel-loops | filecheck %s

// A kernel with 64x32x32 independent iterations is split on its first loop longer than one
// (channels): the body runs a [lo, hi) range of it, the old name becomes a declaration the
// runtime defines (lowering/kernels/parallel.py), and the call site does not change.
// CHECK: func.func private @k0(memref<1x64x32x32xf32>, memref<64xf32>, memref<1x64x32x32xf32>) -> () attributes {xrelay.parallel = 64 : i64}
// CHECK-NEXT: func.func @k0_body(%[[LO:.+]]: index, %[[HI:.+]]: index, %{{.*}}: memref<1x64x32x32xf32>
// CHECK: scf.for %{{.*}} = %[[ZERO:.+]] to %{{.*}} step
// CHECK-NEXT: scf.for %{{.*}} = %[[LO]] to %[[HI]] step
// CHECK-NEXT: scf.for %{{.*}} = %[[ZERO]] to
// A kernel of four iterations stays serial and private.
// CHECK: func.func private @k1(%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>) {
// CHECK-NEXT: arith.constant 4 : index
// CHECK: func.func @main
// CHECK-NEXT: func.call @k0(%a, %b, %out)
// CHECK-NEXT: func.call @k1(%s, %so)
func.func @main(%a: memref<1x64x32x32xf32>, %b: memref<64xf32>, %out: memref<1x64x32x32xf32>, %s: memref<4xf32>, %so: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a, %b : memref<1x64x32x32xf32>, memref<64xf32>) outs(%out : memref<1x64x32x32xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%s : memref<4xf32>) outs(%so : memref<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.addf %x, %x : f32
    linalg.yield %r : f32
  }
  func.return
}
