// RUN: %roundtrip | filecheck %s
// RUN: %generic-roundtrip | filecheck %s

// Binary arithmetic broadcasts numpy-style and keeps the element type.
// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %i: tensor<4xi32>, %j: tensor<1xi32>) {
  // CHECK: relay.add %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %add = relay.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: relay.subtract %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %subtract = relay.subtract %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: relay.multiply %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %multiply = relay.multiply %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: relay.divide %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %divide = relay.divide %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: relay.power %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %power = relay.power %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: relay.maximum %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %maximum = relay.maximum %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: relay.minimum %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %minimum = relay.minimum %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: relay.floor_divide %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %floor_divide = relay.floor_divide %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: relay.floor_mod %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %floor_mod = relay.floor_mod %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: relay.mod %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %mod = relay.mod %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: relay.floor_mod %{{.*}}, %{{.*}} : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi32>
  %imod = relay.floor_mod %i, %j : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi32>
  // CHECK: relay.left_shift %{{.*}}, %{{.*}} : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi32>
  %shl = relay.left_shift %i, %j : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi32>
  // CHECK: relay.right_shift %{{.*}}, %{{.*}} : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi32>
  %shr = relay.right_shift %i, %j : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi32>
  // CHECK: relay.bitwise_and %{{.*}}, %{{.*}} : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi32>
  %band = relay.bitwise_and %i, %j : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi32>
  // CHECK: relay.bitwise_or %{{.*}}, %{{.*}} : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi32>
  %bor = relay.bitwise_or %i, %j : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi32>
  // CHECK: relay.bitwise_xor %{{.*}}, %{{.*}} : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi32>
  %bxor = relay.bitwise_xor %i, %j : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi32>
  // CHECK: relay.bitwise_not %{{.*}} : (tensor<4xi32>) -> tensor<4xi32>
  %bnot = relay.bitwise_not %i : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// Comparisons give i1; logical ops take and give i1.
// CHECK-LABEL: func.func @compare_logical
func.func @compare_logical(%a: tensor<2x1xf32>, %b: tensor<1x3xf32>, %p: tensor<2x3xi1>, %q: tensor<2x3xi1>) {
  // CHECK: relay.equal %{{.*}}, %{{.*}} : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xi1>
  %equal = relay.equal %a, %b : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xi1>
  // CHECK: relay.not_equal %{{.*}}, %{{.*}} : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xi1>
  %not_equal = relay.not_equal %a, %b : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xi1>
  // CHECK: relay.less %{{.*}}, %{{.*}} : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xi1>
  %less = relay.less %a, %b : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xi1>
  // CHECK: relay.less_equal %{{.*}}, %{{.*}} : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xi1>
  %less_equal = relay.less_equal %a, %b : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xi1>
  // CHECK: relay.greater %{{.*}}, %{{.*}} : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xi1>
  %greater = relay.greater %a, %b : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xi1>
  // CHECK: relay.greater_equal %{{.*}}, %{{.*}} : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xi1>
  %greater_equal = relay.greater_equal %a, %b : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xi1>
  // CHECK: relay.logical_and %{{.*}}, %{{.*}} : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %logical_and = relay.logical_and %p, %q : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK: relay.logical_or %{{.*}}, %{{.*}} : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %logical_or = relay.logical_or %p, %q : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK: relay.logical_xor %{{.*}}, %{{.*}} : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %logical_xor = relay.logical_xor %p, %q : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK: relay.isnan %{{.*}} : (tensor<2x1xf32>) -> tensor<2x1xi1>
  %nan = relay.isnan %a : (tensor<2x1xf32>) -> tensor<2x1xi1>
  // CHECK: relay.logical_not %{{.*}} : (tensor<2x3xi1>) -> tensor<2x3xi1>
  %not = relay.logical_not %p : (tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK: relay.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x3xi1>, tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %w = relay.where %p, %a, %b : (tensor<2x3xi1>, tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  func.return
}

// Unary math keeps the operand type.
// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<4x5xf32>, %h: tensor<3xf16>) {
  // CHECK: relay.negative %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %negative = relay.negative %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.abs %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %abs = relay.abs %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.sign %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %sign = relay.sign %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.exp %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %exp = relay.exp %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.log %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %log = relay.log %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.sqrt %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %sqrt = relay.sqrt %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.rsqrt %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %rsqrt = relay.rsqrt %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.reciprocal %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %reciprocal = relay.reciprocal %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.tanh %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %tanh = relay.tanh %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.sigmoid %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %sigmoid = relay.sigmoid %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.erf %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %erf = relay.erf %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.asin %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %asin = relay.asin %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.acos %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %acos = relay.acos %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.atan %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %atan = relay.atan %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.asinh %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %asinh = relay.asinh %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.acosh %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %acosh = relay.acosh %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.atanh %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %atanh = relay.atanh %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.floor %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %floor = relay.floor %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.ceil %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %ceil = relay.ceil %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.round %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %round = relay.round %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.sin %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %sin = relay.sin %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.cos %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %cos = relay.cos %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.tan %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %tan = relay.tan %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.log1p %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %log1p = relay.log1p %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.log2 %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %log2 = relay.log2 %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.log10 %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %log10 = relay.log10 %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.expm1 %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %expm1 = relay.expm1 %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.trunc %{{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %trunc = relay.trunc %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK: relay.exp %{{.*}} : (tensor<3xf16>) -> tensor<3xf16>
  %exp16 = relay.exp %h : (tensor<3xf16>) -> tensor<3xf16>
  func.return
}

// Activations, clip and cast; default attributes are left out of the custom form.
// CHECK-LABEL: func.func @activations
func.func @activations(%x: tensor<1x3x4x4xf32>, %alpha: tensor<3xf32>, %i: tensor<4xi64>) {
  // CHECK: relay.nn.relu %{{.*}} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %relu = relay.nn.relu %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  // CHECK: relay.nn.relu %{{.*}} : (tensor<4xi64>) -> tensor<4xi64>
  %irelu = relay.nn.relu %i : (tensor<4xi64>) -> tensor<4xi64>
  // CHECK: relay.nn.leaky_relu %{{.*}} {alpha = 1.000000e-01 : f64} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %leaky = relay.nn.leaky_relu %x {alpha = 0.1 : f64} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  // CHECK: relay.nn.leaky_relu %{{.*}} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %leaky_default = relay.nn.leaky_relu %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  // CHECK: relay.nn.prelu %{{.*}}, %{{.*}} : (tensor<1x3x4x4xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %prelu = relay.nn.prelu %x, %alpha : (tensor<1x3x4x4xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  // CHECK: relay.clip %{{.*}} {a_min = 0.000000e+00 : f64, a_max = 6.000000e+00 : f64} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %clip = relay.clip %x {a_min = 0.0 : f64, a_max = 6.0 : f64} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  // CHECK: relay.cast %{{.*}} {dtype = i32} : (tensor<4xi64>) -> tensor<4xi32>
  %cast = relay.cast %i {dtype = i32} : (tensor<4xi64>) -> tensor<4xi32>
  // CHECK: relay.reinterpret %{{.*}} {dtype = f64} : (tensor<4xi64>) -> tensor<4xf64>
  %bits = relay.reinterpret %i {dtype = f64} : (tensor<4xi64>) -> tensor<4xf64>
  // CHECK: relay.cast %{{.*}} {dtype = f16} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf16>
  %half = relay.cast %x {dtype = f16} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf16>
  func.return
}
