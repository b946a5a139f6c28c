// RUN: xrelay-opt %s -p bufferize | filecheck %s

// Tensors become memrefs: tensor.empty -> memref.alloc (freed before return), the generic writes its outs buffer, the result is copied into a trailing out-parameter, constants become globals.
// CHECK: "memref.global"() <{sym_name = "__constant_0", type = memref<3xf32>, initial_value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>, sym_visibility = "private", constant
// CHECK-LABEL: func.func @f
// CHECK-SAME: (%a: memref<2x3xf32>, %[[OUT:.+]]: memref<2x3xf32> {xrelay.output = 0 : i64})
// CHECK-DAG: %[[C:.+]] = memref.get_global @__constant_0 : memref<3xf32>
// CHECK-DAG: %[[BUF:.+]] = memref.alloc() {alignment = 64 : i64} : memref<2x3xf32>
// CHECK: linalg.generic {{.*}} ins(%a, %[[C]] : memref<2x3xf32>, memref<3xf32>) outs(%[[BUF]] : memref<2x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[BUF]] : memref<2x3xf32>) outs(%[[OUT]] : memref<2x3xf32>)
// CHECK: memref.dealloc %[[BUF]]
// CHECK-NEXT: func.return
// CHECK-NOT: tensor
func.func @f(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %c : tensor<2x3xf32>, tensor<3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
