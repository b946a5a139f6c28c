// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=plan-buffers}" | filecheck %s

// Concatenation in place: every input of a concatenation along an axis with only size-1
// axes before it is a contiguous run of the result's bytes, so it is placed there and its
// producer writes straight into its slice; the copies go, nested ones too (DenseNet).
// exp and tanh write c1's halves (offsets 0 and 420 = 3 * 5 * 7 * 4 bytes, unaligned),
// c1 is the first half of c2, sigmoid (reading c1) writes c2's second half at 840; the
// two concatenation kernels are gone and only the sum reads c2 (viewed as [1, 12, 35]:
// collapse-loops merges its two inner loops).
// CHECK-LABEL: func.func @main
// CHECK:       %[[A:.+]] = arith.constant 0 : index
// CHECK-NEXT:  memref.view %{{.+}}[%[[A]]][] : memref<1920xi8> to memref<1x3x5x7xf32>
// CHECK:       func.call @k0(
// CHECK:       %[[B:.+]] = arith.constant 420 : index
// CHECK-NEXT:  memref.view %{{.+}}[%[[B]]][] : memref<1920xi8> to memref<1x3x5x7xf32>
// CHECK:       func.call @k1(
// CHECK:       %[[C1:.+]] = arith.constant 0 : index
// CHECK-NEXT:  memref.view %{{.+}}[%[[C1]]][] : memref<1920xi8> to memref<1x6x5x7xf32>
// CHECK:       %[[S:.+]] = arith.constant 840 : index
// CHECK-NEXT:  memref.view %{{.+}}[%[[S]]][] : memref<1920xi8> to memref<1x6x5x7xf32>
// CHECK:       func.call @k3(
// CHECK:       %[[C2:.+]] = arith.constant 0 : index
// CHECK-NEXT:  %[[V2:.+]] = memref.view %{{.+}}[%[[C2]]][] : memref<1920xi8> to memref<1x12x5x7xf32>
// CHECK-NOT:   func.call @k2(
// CHECK-NOT:   func.call @k4(
// CHECK:       %[[R2:.+]] = memref.reinterpret_cast %[[V2]] {{.+}} to memref<1x12x35xf32>
// CHECK:       func.call @k6(%[[R2]],
// CHECK-NOT:   func.func private @k2(
// CHECK-NOT:   func.func private @k4(
func.func @main(%x: tensor<1x3x5x7xf32>) -> tensor<1x5x7xf32> {
  %a = relay.exp %x : (tensor<1x3x5x7xf32>) -> tensor<1x3x5x7xf32>
  %b = relay.tanh %x : (tensor<1x3x5x7xf32>) -> tensor<1x3x5x7xf32>
  %c1 = relay.concatenate %a, %b {axis = 1 : i64} : (tensor<1x3x5x7xf32>, tensor<1x3x5x7xf32>) -> tensor<1x6x5x7xf32>
  %s = relay.sigmoid %c1 : (tensor<1x6x5x7xf32>) -> tensor<1x6x5x7xf32>
  %c2 = relay.concatenate %c1, %s {axis = 1 : i64} : (tensor<1x6x5x7xf32>, tensor<1x6x5x7xf32>) -> tensor<1x12x5x7xf32>
  %y = relay.sum %c2 {axis = array<i64: 1>} : (tensor<1x12x5x7xf32>) -> tensor<1x5x7xf32>
  func.return %y : tensor<1x5x7xf32>
}
