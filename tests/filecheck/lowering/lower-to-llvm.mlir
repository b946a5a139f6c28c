// RUN: xrelay-opt %s -p lower-to-llvm -t llvm | filecheck %s
// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=outline-kernels}" | filecheck %s --check-prefix=KERNELS

// The whole pipeline to LLVM IR: main takes one pointer per input and per result, and calls one function per kernel (the add, then the copy into the result).
// The temporary is a slice of the arena (plan-buffers), defined in the same LLVM module (emit-runtime).
// CHECK: @xr_arena_main = dso_local global [64 x i8] zeroinitializer
// CHECK: define void @k0(ptr noalias %{{.*}}, ptr noalias %{{.*}}, ptr noalias %{{.*}})
// CHECK: fadd float
// CHECK: define void @k1(ptr noalias %{{.*}}, ptr noalias %{{.*}})
// CHECK: define void @main(ptr %[[A:.+]], ptr %[[B:.+]], ptr %[[OUT:.+]])
// CHECK: %[[BASE:.+]] = bitcast ptr @xr_arena_main to ptr
// CHECK-NEXT: %[[BUF:.+]] = getelementptr i8, ptr %[[BASE]], i64 0
// CHECK: call void @k0(ptr %[[A]], ptr %[[B]], ptr %[[BUF]])
// CHECK: call void @k1(ptr %[[BUF]], ptr %[[OUT]])
// CHECK-NOT: malloc

// Stopping after a stage prints that stage's IR.
// KERNELS: func.func private @k0
// KERNELS: func.func @main(%a: memref<2x3xf32>, %b: memref<3xf32>, %{{.*}}: memref<2x3xf32> {xrelay.output = 0 : i64})
// KERNELS: func.call @k0
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = relay.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
