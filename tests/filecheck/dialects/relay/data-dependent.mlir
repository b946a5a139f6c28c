// RUN: xrelay-opt %s | xrelay-opt | filecheck %s

// Ops whose result sizes the data decides name that size's symbol; ops after them infer
// their shapes from it.
func.func @main(%x: tensor<3x4xf32>, %v: tensor<6xf32>, %boxes: tensor<1x6x4xf32>, %scores: tensor<1x2x6xf32>, %k: tensor<i64>, %iou: tensor<f32>, %s: tensor<f32>, %lo: tensor<i64>, %hi: tensor<i64>) -> tensor<?xf32, #relay.dims<"u">> {
  %i = relay.nonzero %x {size = "nz"} : (tensor<3x4xf32>) -> tensor<2x?xi64, #relay.dims<"nz">>
  %u:4 = relay.unique %v {size = "u", sorted = 0 : i64} : (tensor<6xf32>) -> (tensor<?xf32, #relay.dims<"u">>, tensor<?xi64, #relay.dims<"u">>, tensor<6xi64>, tensor<?xi64, #relay.dims<"u">>)
  %w:4 = relay.unique %x {size = "w", axis = 1 : i64} : (tensor<3x4xf32>) -> (tensor<3x?xf32, #relay.dims<"w">>, tensor<?xi64, #relay.dims<"w">>, tensor<4xi64>, tensor<?xi64, #relay.dims<"w">>)
  %n = relay.non_max_suppression %boxes, %scores, %k, %iou, %s {size = "sel", center_point_box = 1 : i64} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<?x3xi64, #relay.dims<"sel">>
  %j = relay.slice_indices %x, %lo, %hi {size = "len", axis = 1 : i64, step = 2 : i64} : (tensor<3x4xf32>, tensor<i64>, tensor<i64>) -> tensor<?xi64, #relay.dims<"len">>
  %tv, %ti = relay.topk %x, %k {size = "kk", axis = 1 : i64, largest = 0 : i64} : (tensor<3x4xf32>, tensor<i64>) -> (tensor<3x?xf32, #relay.dims<"kk">>, tensor<3x?xi64, #relay.dims<"kk">>)
  %m = relay.match_dims %tv, %x {pairs = array<i64: 1, 1>} : (tensor<3x?xf32, #relay.dims<"kk">>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %d = relay.add %u#0, %u#0 : (tensor<?xf32, #relay.dims<"u">>, tensor<?xf32, #relay.dims<"u">>) -> tensor<?xf32, #relay.dims<"u">>
  func.return %d : tensor<?xf32, #relay.dims<"u">>
}

// CHECK: relay.nonzero %x {size = "nz"} : (tensor<3x4xf32>) -> tensor<2x?xi64, #relay.dims<"nz">>
// CHECK: relay.unique %v {size = "u", sorted = 0 : i64} : (tensor<6xf32>) -> (tensor<?xf32, #relay.dims<"u">>, tensor<?xi64, #relay.dims<"u">>, tensor<6xi64>, tensor<?xi64, #relay.dims<"u">>)
// CHECK: relay.unique %x {size = "w", axis = 1 : i64}
// CHECK: relay.non_max_suppression %boxes, %scores, %k, %iou, %s {size = "sel", center_point_box = 1 : i64}
// CHECK: relay.slice_indices %x, %lo, %hi {size = "len", axis = 1 : i64, step = 2 : i64}
// CHECK: relay.topk %x, %k {size = "kk", axis = 1 : i64, largest = 0 : i64}
// CHECK: relay.match_dims %tv, %x {pairs = array<i64: 1, 1>}
// CHECK: relay.add {{.*}} -> tensor<?xf32, #relay.dims<"u">>
