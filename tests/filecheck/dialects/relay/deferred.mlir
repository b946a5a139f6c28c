// RUN: xrelay-opt %s | xrelay-opt | filecheck %s

// A node whose shape input is a graph input is kept whole until a run gives that input's
// value; its result dimensions are fresh symbols. It round-trips as text.
func.func @main(%x: tensor<2x3x4xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32, #relay.dims<"y_0", "y_1">> {
  %0 = relay.deferred %x, %s {source = "onnx", op_type = "Reshape", payload = "CA46HgoSCgF4CgFzEgF5IgdSZXNoYXBlEghkZWZlcnJlZEIECgAQEQ==", value_operands = array<i64: 1>} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32, #relay.dims<"y_0", "y_1">>
  func.return %0 : tensor<?x?xf32, #relay.dims<"y_0", "y_1">>
}
// CHECK:      %0 = relay.deferred %x, %s {source = "onnx", op_type = "Reshape", payload = "{{[A-Za-z0-9+/=]+}}", value_operands = array<i64: 1>}
// CHECK-SAME:   : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32, #relay.dims<"y_0", "y_1">>

// A symbol against a size broadcasts to the size (the symbol must be 1 or 4 when it has a
// value; specialization checks it).
func.func @add(%a: tensor<?x?xf32, #relay.dims<"y_0", "y_1">>, %b: tensor<4xf32>) -> tensor<?x4xf32, #relay.dims<"y_0">> {
  %0 = relay.add %a, %b : (tensor<?x?xf32, #relay.dims<"y_0", "y_1">>, tensor<4xf32>) -> tensor<?x4xf32, #relay.dims<"y_0">>
  func.return %0 : tensor<?x4xf32, #relay.dims<"y_0">>
}
// CHECK: relay.add %{{.*}} : (tensor<?x?xf32, #relay.dims<"y_0", "y_1">>, tensor<4xf32>) -> tensor<?x4xf32, #relay.dims<"y_0">>
