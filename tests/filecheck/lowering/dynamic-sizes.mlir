// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=select-kernels}" | filecheck %s --check-prefix=GEMM
// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=relay-to-linalg}" | filecheck %s --check-prefix=LINALG
// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=bufferize}" | filecheck %s --check-prefix=BUF
// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=plan-buffers}" | filecheck %s --check-prefix=PLAN
// RUN: xrelay-opt %s -p lower-to-llvm -t llvm | filecheck %s --check-prefix=LLVM

// One build for every batch and sequence length: the symbols are sizes of @main's input
// (tensor.dim), expressions are index arithmetic at the top of @main.

// The GEMM's M is batch*seq: a run-time size argument (m = -1: the first index argument).
// GEMM:      %[[B:.+]] = tensor.dim %x, %{{.+}} : tensor<?x?x8xf32, #relay.dims<"batch", "seq">>
// GEMM:      %[[S:.+]] = tensor.dim %x, %{{.+}}
// GEMM-NEXT: %[[BS:.+]] = arith.muli %[[B]], %[[S]] : index
// GEMM:      func.call @xr_gemm_0(%{{.+}}, %w, %[[BS]]) : (tensor<?x8xf32, #relay.dims<"batch*seq">>, tensor<16x8xf32>, index) -> tensor<?x16xf32, #relay.dims<"batch*seq">>
// GEMM:      #kernel.gemm<m = -1, n = 16, k = 8

// Fresh tensors take their dynamic sizes; a dynamic reshape its target as index values.
// LINALG:      %[[B:.+]] = tensor.dim %x
// LINALG:      %[[S:.+]] = tensor.dim %x
// LINALG:      tensor.empty(%[[B]], %[[S]]) : tensor<?x?x8xf32, #relay.dims<"batch", "seq">>
// LINALG:      %[[T:.+]] = tensor.from_elements %{{.+}}, %{{.+}} : tensor<2xindex>
// LINALG-NEXT: tensor.reshape %{{.+}}(%[[T]]) : (tensor<?x?x8xf32, #relay.dims<"batch", "seq">>, tensor<2xindex>) -> tensor<?x8xf32, #relay.dims<"batch*seq">>

// Buffers are allocated with run-time sizes, keeping their dimensions' expressions; a
// reshape is a view with dynamic sizes.
// BUF:      func.func @main(%x: memref<?x?x8xf32>, %w: memref<16x8xf32>, %{{.+}}: memref<?x16xf32> {xrelay.output = 0 : i64})
// BUF:      memref.dim %x
// BUF:      memref.alloc(%{{.+}}, %{{.+}}) {alignment = 64 : i64, xrelay.dims = #relay.dims<"batch", "seq">} : memref<?x?x8xf32>
// BUF:      memref.reinterpret_cast %{{.+}} to offset: [0], sizes: [%{{.+}}, 8], strides: [8, 1] : memref<?x?x8xf32> to memref<?x8xf32>
// BUF:      memref.alloc(%{{.+}}) {alignment = 64 : i64, xrelay.dims = #relay.dims<"batch*seq">} : memref<?x16xf32>

// plan-buffers places them in an arena main receives, at offsets it reads from a table
// the caller computes per run from the recorded sizes and spans ([dims..., bytes, first,
// last] per buffer).
// PLAN:      xrelay.dynamic_plan = {{\[}}["batch", "seq", "8", 4 : i64, {{[0-9]+}} : i64, {{[0-9]+}} : i64], ["batch*seq", "16", 4 : i64
// PLAN:      func.func @main(%x: memref<?x?x8xf32>, %w: memref<16x8xf32>, %{{.+}}: memref<?x16xf32> {xrelay.output = 0 : i64}, %[[A:.+]]: memref<?xi8> {xrelay.name = "xr_arena"}, %[[T:.+]]: memref<2xi64> {xrelay.name = "xr_offsets"})
// PLAN:      %[[O:.+]] = memref.load %[[T]][%{{.+}}] : memref<2xi64>
// PLAN-NEXT: %[[S:.+]] = arith.index_cast %[[O]] : i64 to index
// PLAN-NEXT: memref.view %[[A]][%[[S]]][%{{.+}}, %{{.+}}] : memref<?xi8> to memref<?x?x8xf32>
// PLAN-NOT:  memref.alloc
// PLAN-NOT:  memref.dealloc

// In LLVM a dynamic memref is a pointer followed by its dynamic sizes: main takes x, its
// two sizes, w, the result and its size, the arena and its size, the offset table; the
// GEMM wrapper gets M as an i64.
// LLVM: define void @main(ptr %{{.+}}, i64 %{{.+}}, i64 %{{.+}}, ptr %{{.+}}, ptr %{{.+}}, i64 %{{.+}}, ptr %{{.+}}, i64 %{{.+}}, ptr %{{.+}})
// LLVM-NOT: call ptr @malloc
// LLVM: call void @xr_gemm_0(ptr %{{.+}}, i64 %{{.+}}, ptr %{{.+}}, i64 %{{.+}}, ptr %{{.+}}, i64 %{{.+}})
func.func @main(%x: tensor<?x?x8xf32, #relay.dims<"batch", "seq">>, %w: tensor<16x8xf32>) -> tensor<?x16xf32, #relay.dims<"batch*seq">> {
  %0 = relay.exp %x : (tensor<?x?x8xf32, #relay.dims<"batch", "seq">>) -> tensor<?x?x8xf32, #relay.dims<"batch", "seq">>
  %1 = relay.reshape %0 {newshape = array<i64: -1, 8>} : (tensor<?x?x8xf32, #relay.dims<"batch", "seq">>) -> tensor<?x8xf32, #relay.dims<"batch*seq">>
  %2 = relay.nn.dense %1, %w : (tensor<?x8xf32, #relay.dims<"batch*seq">>, tensor<16x8xf32>) -> tensor<?x16xf32, #relay.dims<"batch*seq">>
  func.return %2 : tensor<?x16xf32, #relay.dims<"batch*seq">>
}
