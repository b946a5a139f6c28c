// RUN: xrelay-opt %s -p to-llvm --split-input-file | filecheck %s

// Memrefs are bare pointers: a 2-d load is a GEP by the row-major linear index; alloc/dealloc call malloc/free; cf branches become llvm branches with block arguments; functions keep external linkage (the default, not printed).
// CHECK-LABEL: llvm.func @f(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) {
// CHECK: llvm.call @malloc
// CHECK: llvm.br ^{{.*}}(
// CHECK: llvm.mul %{{.*}}, %{{.*}} : i64
// CHECK: llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: llvm.load
// CHECK: llvm.fadd
// CHECK: llvm.store
// CHECK: llvm.call @free
// CHECK: llvm.return
// CHECK-DAG: llvm.func @malloc(i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @free(!llvm.ptr)
func.func @f(%a: memref<2x3xf32>, %out: memref<2x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %tmp = memref.alloc() : memref<2xf32>
  cf.br ^loop(%c0 : index)
^loop(%i: index):
  %more = arith.cmpi slt, %i, %c2 : index
  cf.cond_br %more, ^body, ^done
^body:
  %x = memref.load %a[%i, %c1] : memref<2x3xf32>
  %y = arith.addf %x, %x : f32
  memref.store %y, %out[%i, %c1] : memref<2x3xf32>
  %next = arith.addi %i, %c1 : index
  cf.br ^loop(%next : index)
^done:
  memref.dealloc %tmp : memref<2xf32>
  func.return
}

// -----

// Math without an LLVM instruction or intrinsic calls the libm function its unary row names
// (f32 and f64 variants) and declares it.
// CHECK-LABEL: llvm.func @libm(
// CHECK: llvm.call @tanf(%{{.*}}) : (f32) -> f32
// CHECK: llvm.call @log1p(%{{.*}}) : (f64) -> f64
// CHECK-DAG: llvm.func @tanf(f32) -> f32
// CHECK-DAG: llvm.func @log1p(f64) -> f64
func.func @libm(%x: f32, %y: f64) {
  %a = math.tan %x : f32
  %b = math.log1p %y : f64
  func.return
}
