// RUN: xrelay-opt %s -p tile-transposes | filecheck %s

#in = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// [1, 49, 2048] bytes read as [1, 2048, 49]: the untiled copy reads 2,048 bytes apart. The
// channel loop becomes 32 tiles, and 64 lanes go innermost, on views of both operands;
// the result is viewed back.
// CHECK-LABEL: func.func @bytes
// CHECK:         %[[X:.+]] = tensor.reshape %x(%{{.+}}) : (tensor<1x49x2048xi8>, tensor<4xi64>) -> tensor<1x49x32x64xi8>
// CHECK:         %[[O:.+]] = tensor.reshape %{{.+}}(%{{.+}}) : (tensor<1x2048x49xi8>, tensor<4xi64>) -> tensor<1x32x64x49xi8>
// CHECK:         %[[G:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<1x49x32x64xi8>) outs(%[[O]] : tensor<1x32x64x49xi8>)
// CHECK:         %[[Y:.+]] = tensor.reshape %[[G]](%{{.+}}) : (tensor<1x32x64x49xi8>, tensor<3xi64>) -> tensor<1x2048x49xi8>
// CHECK:         func.return %[[Y]]
func.func @bytes(%x: tensor<1x49x2048xi8>) -> tensor<1x2048x49xi8> {
  %e = tensor.empty() : tensor<1x2048x49xi8>
  %0 = linalg.generic {indexing_maps = [#in, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<1x49x2048xi8>) outs(%e : tensor<1x2048x49xi8>) {
  ^bb0(%a: i8, %o: i8):
    linalg.yield %a : i8
  } -> tensor<1x2048x49xi8>
  func.return %0 : tensor<1x2048x49xi8>
}

// f32 rows of 1,024 bytes: tiles of 16 lanes (one cache line).
// CHECK-LABEL: func.func @floats
// CHECK:         linalg.generic {{.+}} ins(%{{.+}} : tensor<1x10x16x16xf32>) outs(%{{.+}} : tensor<1x16x16x10xf32>)
func.func @floats(%x: tensor<1x10x256xf32>) -> tensor<1x256x10xf32> {
  %e = tensor.empty() : tensor<1x256x10xf32>
  %0 = linalg.generic {indexing_maps = [#in, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<1x10x256xf32>) outs(%e : tensor<1x256x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<1x256x10xf32>
  func.return %0 : tensor<1x256x10xf32>
}

// Left as they are: rows of 512 bytes (they fit L1's sets; tiles would be slower), a
// copy that computes (not a plain copy), one that reads its rows in order, and a scalar's
// copy (it has no axis to tile: it once raised an IndexError).
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     tensor.reshape
// CHECK:         func.return
func.func @kept(%x: tensor<1x49x512xi8>, %f: tensor<1x10x256xf32>, %s: tensor<i32>) -> (tensor<1x512x49xi8>, tensor<1x256x10xf32>, tensor<1x10x256xf32>, tensor<i32>) {
  %e = tensor.empty() : tensor<1x512x49xi8>
  %0 = linalg.generic {indexing_maps = [#in, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<1x49x512xi8>) outs(%e : tensor<1x512x49xi8>) {
  ^bb0(%a: i8, %o: i8):
    linalg.yield %a : i8
  } -> tensor<1x512x49xi8>
  %e1 = tensor.empty() : tensor<1x256x10xf32>
  %1 = linalg.generic {indexing_maps = [#in, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%f : tensor<1x10x256xf32>) outs(%e1 : tensor<1x256x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x256x10xf32>
  %e2 = tensor.empty() : tensor<1x10x256xf32>
  %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%f : tensor<1x10x256xf32>) outs(%e2 : tensor<1x10x256xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<1x10x256xf32>
  %e3 = tensor.empty() : tensor<i32>
  %3 = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%s : tensor<i32>) outs(%e3 : tensor<i32>) {
  ^bb0(%a: i32, %o: i32):
    linalg.yield %a : i32
  } -> tensor<i32>
  func.return %0, %1, %2, %3 : tensor<1x512x49xi8>, tensor<1x256x10xf32>, tensor<1x10x256xf32>, tensor<i32>
}
