// RUN: xrelay-opt %s -p "annotate-target{targets=numpy}" | filecheck %s --check-prefix=ANNOTATE
// RUN: xrelay-opt %s -p "annotate-target{targets=numpy},merge-compiler-regions" | filecheck %s --check-prefix=REGIONS
// RUN: xrelay-opt %s -p "annotate-target{targets=numpy},merge-compiler-regions,partition-graph" | filecheck %s

// The numpy target supports f32 elementwise ops and softmax, not conv2d. exp -> relu and
// the add form one region; the add after the conv cannot join it (the conv sits between),
// so it starts a second region with the softmax.
// ANNOTATE:      relay.exp %x {xrelay.target = "numpy"}
// ANNOTATE:      relay.nn.conv2d %{{.+}}, %w : (
// REGIONS:       relay.exp %x {xrelay.target = "numpy", xrelay.region = 0 : i64}
// REGIONS:       relay.nn.relu %{{.+}} {xrelay.target = "numpy", xrelay.region = 0 : i64}
// REGIONS:       relay.nn.conv2d %[[R:.+]], %w :
// REGIONS:       relay.add %{{.+}}, %{{.+}} {xrelay.target = "numpy", xrelay.region = 1 : i64}

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[A:.+]] = func.call @numpy_main_0(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %[[C:.+]] = relay.nn.conv2d %[[A]], %w
// CHECK-NEXT:    %[[B:.+]] = func.call @numpy_main_1(%[[C]], %[[A]])
// CHECK-NEXT:    func.return %[[B]]
// CHECK:       func.func @numpy_main_0(%{{.+}}: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> attributes {Compiler = "numpy", global_symbol = "numpy_main_0"}
// CHECK-NEXT:    relay.exp
// CHECK-NEXT:    relay.nn.relu
// CHECK-NEXT:    func.return
// CHECK:       func.func @numpy_main_1({{.+}}) -> tensor<1x2x4x4xf32> attributes {Compiler = "numpy", global_symbol = "numpy_main_1"}
// CHECK-NEXT:    relay.add
// CHECK-NEXT:    relay.nn.softmax
// CHECK-NOT:   xrelay.target
func.func @main(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %e = relay.exp %x : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %r = relay.nn.relu %e : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %c = relay.nn.conv2d %r, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %a = relay.add %c, %r : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = relay.nn.softmax %a {axis = 1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %s : tensor<1x2x4x4xf32>
}
