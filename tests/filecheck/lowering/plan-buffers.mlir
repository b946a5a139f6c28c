// RUN: xrelay-opt %s -p plan-buffers | filecheck %s

// Three 256-byte temporaries need two slots: %c takes %a's bytes once %a is dead, never
// %b's, which the view %v keeps alive up to the call of @g. Deallocations go away.
// CHECK: "memref.global"() <{sym_name = "xr_arena_main", type = memref<512xi8>, initial_value
// CHECK: func.func @main
// CHECK-NEXT: %[[ARENA:.+]] = memref.get_global @xr_arena_main : memref<512xi8>
// CHECK-NEXT: %[[A:.+]] = arith.constant 0 : index
// CHECK-NEXT: memref.view %[[ARENA]][%[[A]]][] : memref<512xi8> to memref<4x16xf32>
// CHECK: %[[B:.+]] = arith.constant 256 : index
// CHECK-NEXT: memref.view %[[ARENA]][%[[B]]][]
// CHECK: %[[C:.+]] = arith.constant 0 : index
// CHECK-NEXT: memref.view %[[ARENA]][%[[C]]][]
// CHECK-NOT: memref.dealloc
// CHECK: func.return
func.func private @f(memref<4x16xf32>, memref<4x16xf32>) -> ()
func.func private @g(memref<4x16xf32>, memref<64xf32>, memref<4x16xf32>) -> ()
func.func @main(%x: memref<4x16xf32>, %out: memref<4x16xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<4x16xf32>
  func.call @f(%x, %a) : (memref<4x16xf32>, memref<4x16xf32>) -> ()
  %b = memref.alloc() {alignment = 64 : i64} : memref<4x16xf32>
  func.call @f(%a, %b) : (memref<4x16xf32>, memref<4x16xf32>) -> ()
  %c = memref.alloc() {alignment = 64 : i64} : memref<4x16xf32>
  %v = memref.reinterpret_cast %b to offset: [0], sizes: [64], strides: [1] : memref<4x16xf32> to memref<64xf32>
  func.call @g(%x, %v, %c) : (memref<4x16xf32>, memref<64xf32>, memref<4x16xf32>) -> ()
  func.call @f(%c, %out) : (memref<4x16xf32>, memref<4x16xf32>) -> ()
  memref.dealloc %a : memref<4x16xf32>
  memref.dealloc %b : memref<4x16xf32>
  memref.dealloc %c : memref<4x16xf32>
  func.return
}
