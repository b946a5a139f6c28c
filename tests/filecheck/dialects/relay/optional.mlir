// RUN: xrelay-opt %s | xrelay-opt | filecheck %s

// Run-time optionals of a tensor and of a sequence: built with or without a value, asked
// whether they hold one, and read.
func.func @main(%x: tensor<3xf32>, %o: !relay.opt<tensor<3xf32>>, %s: !relay.seq<tensor<?xf32>>) -> (tensor<i1>, tensor<3xf32>, !relay.opt<!relay.seq<tensor<?xf32>>>) {
  %some = relay.opt_construct %x : (tensor<3xf32>) -> !relay.opt<tensor<3xf32>>
  %none = relay.opt_construct : () -> !relay.opt<!relay.seq<tensor<?xf32>>>
  %h = relay.opt_has %o : (!relay.opt<tensor<3xf32>>) -> tensor<i1>
  %v = relay.opt_get %some : (!relay.opt<tensor<3xf32>>) -> tensor<3xf32>
  func.return %h, %v, %none : tensor<i1>, tensor<3xf32>, !relay.opt<!relay.seq<tensor<?xf32>>>
}

// CHECK:      relay.opt_construct %x : (tensor<3xf32>) -> !relay.opt<tensor<3xf32>>
// CHECK-NEXT: relay.opt_construct : () -> !relay.opt<!relay.seq<tensor<?xf32>>>
// CHECK-NEXT: relay.opt_has %o : (!relay.opt<tensor<3xf32>>) -> tensor<i1>
// CHECK-NEXT: relay.opt_get %some : (!relay.opt<tensor<3xf32>>) -> tensor<3xf32>
