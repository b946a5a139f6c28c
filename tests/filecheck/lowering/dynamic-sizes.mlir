// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=select-kernels}" | filecheck %s --check-prefix=GEMM
// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=relay-to-linalg}" | filecheck %s --check-prefix=LINALG
// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=bufferize}" | filecheck %s --check-prefix=BUF
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

// Buffers are allocated with run-time sizes (plan-buffers leaves them to the allocator);
// a reshape is a view with dynamic sizes.
// BUF:      func.func @main(%x: memref<?x?x8xf32>, %w: memref<16x8xf32>, %{{.+}}: memref<?x16xf32> {xrelay.output = 0 : i64})
// BUF:      memref.dim %x
// BUF:      memref.alloc(%{{.+}}, %{{.+}}) {alignment = 64 : i64} : memref<?x?x8xf32>
// BUF:      memref.reinterpret_cast %{{.+}} to offset: [0], sizes: [%{{.+}}, 8], strides: [8, 1] : memref<?x?x8xf32> to memref<?x8xf32>
// BUF:      memref.alloc(%{{.+}}) {alignment = 64 : i64} : memref<?x16xf32>

// In LLVM a dynamic memref is a pointer followed by its dynamic sizes: main takes x, its
// two sizes, w, the result and its size; the GEMM wrapper gets M as an i64.
// LLVM: define void @main(ptr %{{.+}}, i64 %{{.+}}, i64 %{{.+}}, ptr %{{.+}}, ptr %{{.+}}, i64 %{{.+}})
// LLVM: call ptr @malloc(i64
// LLVM: call void @xr_gemm_0(ptr %{{.+}}, i64 %{{.+}}, ptr %{{.+}}, i64 %{{.+}}, ptr %{{.+}}, i64 %{{.+}})
func.func @main(%x: tensor<?x?x8xf32, #relay.dims<"batch", "seq">>, %w: tensor<16x8xf32>) -> tensor<?x16xf32, #relay.dims<"batch*seq">> {
  %0 = relay.exp %x : (tensor<?x?x8xf32, #relay.dims<"batch", "seq">>) -> tensor<?x?x8xf32, #relay.dims<"batch", "seq">>
  %1 = relay.reshape %0 {newshape = array<i64: -1, 8>} : (tensor<?x?x8xf32, #relay.dims<"batch", "seq">>) -> tensor<?x8xf32, #relay.dims<"batch*seq">>
  %2 = relay.nn.dense %1, %w : (tensor<?x8xf32, #relay.dims<"batch*seq">>, tensor<16x8xf32>) -> tensor<?x16xf32, #relay.dims<"batch*seq">>
  func.return %2 : tensor<?x16xf32, #relay.dims<"batch*seq">>
}
