// RUN: xrelay-opt %s -p relay-to-linalg --split-input-file | filecheck %s

// Broadcasting add: one linalg.generic into a fresh tensor.empty; the rank-1 operand is read through a map of the trailing dim.
// CHECK-LABEL: func.func @add_broadcast
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x3xf32>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<2x3xf32>, tensor<3xf32>) outs(%[[E]] : tensor<2x3xf32>)
// CHECK: arith.addf
// CHECK-NOT: relay.
func.func @add_broadcast(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = relay.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// A size-1 dimension that broadcasts is read at index 0.
// CHECK-LABEL: func.func @mul_size_one
// CHECK: affine_map<(d0, d1) -> (0, d1)>
func.func @mul_size_one(%a: tensor<4x3xf32>, %b: tensor<1x3xf32>) -> tensor<4x3xf32> {
  %0 = relay.multiply %a, %b : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

// A 2-d matmul accumulates into a zero-filled tensor with loops m, k, n: the innermost loop
// runs over n, unit-stride in b and the output, so LLVM can vectorize it.
// CHECK-LABEL: func.func @matmul
// CHECK: %[[Z:.+]] = linalg.fill
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%[[Z]] : tensor<4x5xf32>)
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>) -> tensor<4x5xf32> {
  %0 = relay.nn.matmul %a, %b : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  func.return %0 : tensor<4x5xf32>
}

// -----

// A padded conv: the padding's border is written by four generics (rows above and below,
// then the columns left and right of the input's rows; one that starts at 0 without
// filling its axis runs it backwards), then the input is copied into the interior (unit
// stride on both sides: the output map is offset by the padding): each element is written
// once. Group views as tensor.reshape, then one generic with strided affine maps; loops
// n, g, o, then the reductions over channels and kernel, then the output rows and columns
// innermost.
// CHECK-LABEL: func.func @conv_padded
// CHECK: %[[E:.+]] = tensor.empty() : tensor<1x3x10x10xf32>
// CHECK-NOT: linalg.fill
// CHECK: affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 * -1), d3)>{{.*}} ins({{.*}} : tensor<1x3x1x10xf32>) outs(%[[E]] : tensor<1x3x10x10xf32>)
// CHECK: affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 + 9), d3)>{{.*}} ins({{.*}} : tensor<1x3x1x10xf32>)
// CHECK: affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 + 1), (d3 * -1))>{{.*}} ins({{.*}} : tensor<1x3x8x1xf32>)
// CHECK: %[[F:.+]] = linalg.generic {{.*}} affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 + 1), (d3 + 9))>{{.*}} ins({{.*}} : tensor<1x3x8x1xf32>)
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 + 1), (d3 + 1))>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x3x8x8xf32>) outs(%[[F]] : tensor<1x3x10x10xf32>)
// CHECK: tensor.reshape {{.*}} -> tensor<1x1x3x10x10xf32>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d3, ((d6 * 2) + d4), ((d7 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d6, d7)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
// CHECK: tensor.reshape {{.*}} -> tensor<1x4x4x4xf32>
func.func @conv_padded(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %0 = relay.nn.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  func.return %0 : tensor<1x4x4x4xf32>
}

// -----

// A convolution with few products per output (depthwise: 1 channel x 3x3) is one generic
// with only parallel iterators whose body reads all nine products; no accumulator is filled
// (nor the padding, whose border its own generics write).
// CHECK-LABEL: func.func @conv_depthwise
// CHECK-NOT: linalg.fill
// CHECK: ins(%x : tensor<1x4x8x8xf32>) outs({{.*}} : tensor<1x4x10x10xf32>)
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
// CHECK-COUNT-9: arith.mulf
// CHECK-NOT: arith.mulf
// CHECK: tensor.reshape {{.*}} -> tensor<1x4x8x8xf32>
func.func @conv_depthwise(%x: tensor<1x4x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %0 = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, groups = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return %0 : tensor<1x4x8x8xf32>
}

// -----

// A depthwise convolution with stride 2 along rows reads its columns from two halves of the
// padded input (padded to an even width: 7 + 1 + 1 + 1 more): one loop over each plane as
// a row of 90 values writes the even and the odd ones (unit-stride writes; the reads pair
// up), and the window's columns 0 and 2 read the even half at j and j + 1, column 1 the
// odd half at j, all at unit stride in the output column j.
// CHECK-LABEL: func.func @conv_depthwise_stride2
// CHECK: ins(%x : tensor<1x4x7x7xf32>) outs({{.*}} : tensor<1x4x9x10xf32>)
// CHECK: %[[FLAT:.+]] = tensor.reshape {{.*}} -> tensor<1x4x1x90xf32>
// CHECK: %[[E:.+]], %[[O:.+]] = linalg.generic {{.*}} outs({{.*}} : tensor<1x4x1x45xf32>, tensor<1x4x1x45xf32>)
// CHECK-COUNT-2: tensor.extract %[[FLAT]]
// CHECK: %[[EVEN:.+]] = tensor.reshape %[[E]]({{.*}} -> tensor<1x4x1x9x5xf32>
// CHECK: %[[ODD:.+]] = tensor.reshape %[[O]]({{.*}} -> tensor<1x4x1x9x5xf32>
// CHECK: linalg.generic {{.*}} outs({{.*}} : tensor<1x4x1x4x4xf32>)
// CHECK: tensor.extract %[[EVEN]]
// CHECK: arith.mulf
// CHECK: tensor.extract %[[ODD]]
// CHECK: arith.mulf
// CHECK: tensor.extract %[[EVEN]]
// CHECK-COUNT-7: arith.mulf
// CHECK-NOT: arith.mulf
func.func @conv_depthwise_stride2(%x: tensor<1x4x7x7xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %0 = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, groups = 4 : i64} : (tensor<1x4x7x7xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32>
  func.return %0 : tensor<1x4x4x4xf32>
}

// -----

// A 3x3 max pool as two passes (a window is a box), the input never copied into a padded
// buffer: the maximum of three rows of the input for each column, into rows one column
// wider on each side (those columns are -inf); a row tap outside the input reads a
// clamped row and selects -inf (whole rows: the loop along a row stays affine); then the
// maximum of three of those along each output row.
// CHECK-LABEL: func.func @max_pool_window
// CHECK: (d0, d1, d2, (d3 * -1))>{{.*}} outs({{.*}} : tensor<1x2x6x8xf32>)
// CHECK: arith.constant 0xff800000 : f32
// CHECK: (d0, d1, d2, (d3 + 7))>{{.*}} outs({{.*}} : tensor<1x2x6x8xf32>)
// CHECK: %[[ROWS:.+]] = linalg.generic {{.*}} affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, (d3 + 1))>{{.*}} ins({{.*}} : tensor<1x2x6x6xf32>) outs({{.*}} : tensor<1x2x6x8xf32>)
// CHECK: tensor.extract %x
// CHECK: arith.select
// CHECK: tensor.extract %x
// CHECK-NEXT: arith.maximumf
// CHECK: tensor.extract %x
// CHECK: arith.select
// CHECK-NEXT: arith.maximumf
// CHECK-NOT: arith.maximumf
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs({{.*}} : tensor<1x2x6x6xf32>)
// CHECK-COUNT-3: tensor.extract %[[ROWS]]
// CHECK-NOT: linalg.generic
func.func @max_pool_window(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32> {
  %0 = relay.nn.max_pool2d %x {pool_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

// LRN with a small window is one generic: the squares of the window's channels summed in
// its body, and beta = 0.75 as two square roots (no scalar powf call per element).
// CHECK-LABEL: func.func @lrn_window
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-COUNT-2: math.sqrt
// CHECK-NOT: math.powf
// CHECK-NOT: linalg.generic
func.func @lrn_window(%x: tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> {
  %0 = relay.nn.lrn %x {size = 3 : i64} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  func.return %0 : tensor<1x4x2x2xf32>
}

// -----

// Reductions fill an accumulator with the identity and reduce over the axis.
// CHECK-LABEL: func.func @sum
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK: linalg.fill
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: arith.addf
func.func @sum(%x: tensor<2x5xf32>) -> tensor<2xf32> {
  %0 = relay.sum %x {axis = array<i64: 1>} : (tensor<2x5xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

// Softmax: max-reduce, exp of the shifted input, sum-reduce, divide.
// CHECK-LABEL: func.func @softmax
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
func.func @softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = relay.nn.softmax %x : (tensor<2x5xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}

// -----

// Reshapes are views: tensor.reshape with a constant shape, no copy loop.
// CHECK-LABEL: func.func @reshape
// CHECK: %[[S:.+]] = arith.constant dense<[3, 2]> : tensor<2xi64>
// CHECK-NEXT: tensor.reshape %x(%[[S]]) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>
// CHECK-NOT: linalg.generic
func.func @reshape(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = relay.reshape %x {newshape = array<i64: 3, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

// Integer division never traps: the divisor is replaced where it is 0 or -1.
// CHECK-LABEL: func.func @int_divide
// CHECK: arith.cmpi eq
// CHECK: arith.select
// CHECK: arith.divsi
func.func @int_divide(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = relay.divide %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

// A float's bits as an integer (narrow-type casts, ONNX BitCast): arith.bitcast per element.
// CHECK-LABEL: func.func @reinterpret
// CHECK: linalg.generic
// CHECK: arith.bitcast %{{.*}} : f32 to i32
func.func @reinterpret(%x: tensor<4xf32>) -> tensor<4xi32> {
  %0 = relay.reinterpret %x {dtype = i32} : (tensor<4xf32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

// A unary op applies the math op of its row in relay.UNARY_TABLE to each element; f16 is
// computed in f32 (libm has no half-precision functions).
// CHECK-LABEL: func.func @unary_row
// CHECK: linalg.generic
// CHECK: math.tan %{{.*}} : f32
// CHECK: linalg.generic
// CHECK: %[[WIDE:.+]] = arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT: %[[Y:.+]] = math.log1p %[[WIDE]] : f32
// CHECK-NEXT: arith.truncf %[[Y]] : f32 to f16
func.func @unary_row(%x: tensor<4xf32>, %h: tensor<4xf16>) -> (tensor<4xf32>, tensor<4xf16>) {
  %0 = relay.tan %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.log1p %h : (tensor<4xf16>) -> tensor<4xf16>
  func.return %0, %1 : tensor<4xf32>, tensor<4xf16>
}

// -----

// A constant relay.nn.pad (an 8-bit convolution's, by its zero point): four border slabs
// of the fill (rows before and after, then the columns beside the input's rows), then the
// input copied in at offset (1, 1): no select per element.
// CHECK-LABEL: func.func @pad_u8
// CHECK-COUNT-4: arith.constant 7 : i8
// CHECK:       %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 + 1), (d3 + 1))>]
// CHECK-NOT:   arith.select
// CHECK:       func.return %y : tensor<1x2x5x5xi8>
func.func @pad_u8(%x: tensor<1x2x3x3xui8>) -> tensor<1x2x5x5xui8> {
  %y = relay.nn.pad %x {pad_width = array<i64: 0, 0, 0, 0, 1, 1, 1, 1>, pad_value = 7.000000e+00 : f64} : (tensor<1x2x3x3xui8>) -> tensor<1x2x5x5xui8>
  func.return %y : tensor<1x2x5x5xui8>
}

// -----

// A clip with a floor of 0 read only by a cast to 8 or 16 bits (a quantization's clamp)
// takes maxnum: NaN and -0 become +0, which the cast reads as 0 anyway, in one vmaxps.
// CHECK-LABEL: func.func @clip_into_u8
// CHECK: arith.maxnumf
// CHECK-NOT: arith.maximumf
// CHECK: arith.minimumf
func.func @clip_into_u8(%x: tensor<16xf32>) -> tensor<16xui8> {
  %0 = relay.clip %x {a_min = 0.0 : f64, a_max = 255.0 : f64} : (tensor<16xf32>) -> tensor<16xf32>
  %1 = relay.cast %0 {dtype = ui8} : (tensor<16xf32>) -> tensor<16xui8>
  func.return %1 : tensor<16xui8>
}

// -----

// Elsewhere the clip keeps maximum (NaN stays NaN; a cast to i32 would give INT_MIN for it).
// CHECK-LABEL: func.func @clip_into_i32
// CHECK: arith.maximumf
// CHECK-NOT: arith.maxnumf
func.func @clip_into_i32(%x: tensor<16xf32>) -> tensor<16xi32> {
  %0 = relay.clip %x {a_min = 0.0 : f64, a_max = 255.0 : f64} : (tensor<16xf32>) -> tensor<16xf32>
  %1 = relay.cast %0 {dtype = i32} : (tensor<16xf32>) -> tensor<16xi32>
  func.return %1 : tensor<16xi32>
}
