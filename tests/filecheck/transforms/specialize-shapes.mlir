// RUN: xrelay-opt %s -p 'specialize-shapes{dims="batch=2,seq=3"}' | filecheck %s
// RUN: not xrelay-opt %s -p 'specialize-shapes{dims="batch=2"}' 2>&1 | filecheck %s --check-prefix=UNBOUND

// Every type gets the binding's values; a reshape target's dims become its ints.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%x: tensor<2x3x8xf32>) -> tensor<2x6x4xf32>
// CHECK: relay.reshape %x {newshape = array<i64: 6, 8>} : (tensor<2x3x8xf32>) -> tensor<6x8xf32>
// CHECK: relay.broadcast_to {{.*}} {shape = array<i64: 6, 4>} : (tensor<4xf32>) -> tensor<6x4xf32>
// CHECK: relay.reshape {{.*}} {newshape = array<i64: 2, 3, 4>} : (tensor<6x4xf32>) -> tensor<2x3x4xf32>
// CHECK: relay.concatenate {{.*}} -> tensor<2x6x4xf32>
// CHECK-NOT: relay.dims

// A symbol the binding does not give is an error naming the op.
// UNBOUND: 'func.func': dimension seq uses unbound symbols ['seq']

func.func @main(%x: tensor<?x?x8xf32, #relay.dims<"batch", "seq">>) -> tensor<?x?x4xf32, #relay.dims<"batch", "2*seq">> {
  %r = relay.reshape %x {newshape = array<i64: -2, 8>, dims = #relay.dims<"batch*seq">} : (tensor<?x?x8xf32, #relay.dims<"batch", "seq">>) -> tensor<?x8xf32, #relay.dims<"batch*seq">>
  %v = relay.constant dense<1.0> : tensor<4xf32>
  %e = relay.broadcast_to %v {shape = array<i64: -2, 4>, dims = #relay.dims<"batch*seq">} : (tensor<4xf32>) -> tensor<?x4xf32, #relay.dims<"batch*seq">>
  %b = relay.reshape %e {newshape = array<i64: -2, -2, 4>, dims = #relay.dims<"batch", "seq">} : (tensor<?x4xf32, #relay.dims<"batch*seq">>) -> tensor<?x?x4xf32, #relay.dims<"batch", "seq">>
  %c = relay.concatenate %b, %b {axis = 1 : i64} : (tensor<?x?x4xf32, #relay.dims<"batch", "seq">>, tensor<?x?x4xf32, #relay.dims<"batch", "seq">>) -> tensor<?x?x4xf32, #relay.dims<"batch", "2*seq">>
  func.return %c : tensor<?x?x4xf32, #relay.dims<"batch", "2*seq">>
}
