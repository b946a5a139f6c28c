// RUN: xrelay-opt %s -p outline-kernels | filecheck %s

// Each linalg op moves into a private kernel that takes the buffers it touches; scalar constants are cloned in; the caller keeps a func.call.
// CHECK: func.func private @k0(%{{.*}}: memref<4xf32>)
// CHECK-NEXT: %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: linalg.fill ins(%[[Z]] : f32)
// CHECK: func.func private @k1(%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>)
// CHECK: linalg.generic
// CHECK-LABEL: func.func @main
// CHECK: func.call @k0(%[[BUF:.+]]) : (memref<4xf32>) -> ()
// CHECK: func.call @k1(%a, %[[BUF]]) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NOT: linalg.
func.func @main(%a: memref<4xf32>, %out: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %buf = memref.alloc() : memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%buf : memref<4xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : memref<4xf32>) outs(%buf : memref<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  }
  memref.dealloc %buf : memref<4xf32>
  func.return
}
