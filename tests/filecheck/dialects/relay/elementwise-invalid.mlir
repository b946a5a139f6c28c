// RUN: xrelay-opt %s --split-input-file --verify-diagnostics | filecheck %s

// One malformed op per case; each gives one diagnostic line naming its location and op.

// relay.add: shapes that do not broadcast.
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  %0 = relay.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.add' op operand shapes are not broadcastable: tensor<2x3xf32>, tensor<4xf32>

// -----

// relay.subtract: shapes that do not broadcast.
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  %0 = relay.subtract %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.subtract' op operand shapes are not broadcastable: tensor<2x3xf32>, tensor<4xf32>

// -----

// relay.multiply: shapes that do not broadcast.
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  %0 = relay.multiply %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.multiply' op operand shapes are not broadcastable: tensor<2x3xf32>, tensor<4xf32>

// -----

// relay.divide: shapes that do not broadcast.
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  %0 = relay.divide %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.divide' op operand shapes are not broadcastable: tensor<2x3xf32>, tensor<4xf32>

// -----

// relay.power: shapes that do not broadcast.
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  %0 = relay.power %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.power' op operand shapes are not broadcastable: tensor<2x3xf32>, tensor<4xf32>

// -----

// relay.maximum: shapes that do not broadcast.
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  %0 = relay.maximum %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.maximum' op operand shapes are not broadcastable: tensor<2x3xf32>, tensor<4xf32>

// -----

// relay.minimum: shapes that do not broadcast.
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  %0 = relay.minimum %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.minimum' op operand shapes are not broadcastable: tensor<2x3xf32>, tensor<4xf32>

// -----

// relay.floor_divide: shapes that do not broadcast.
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  %0 = relay.floor_divide %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.floor_divide' op operand shapes are not broadcastable: tensor<2x3xf32>, tensor<4xf32>

// -----

// relay.floor_mod: shapes that do not broadcast.
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  %0 = relay.floor_mod %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.floor_mod' op operand shapes are not broadcastable: tensor<2x3xf32>, tensor<4xf32>

// -----

// relay.mod: shapes that do not broadcast.
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  %0 = relay.mod %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.mod' op operand shapes are not broadcastable: tensor<2x3xf32>, tensor<4xf32>

// -----

// relay.equal: operands of different element types.
func.func @f(%a: tensor<3xf32>, %b: tensor<3xi32>) {
  %0 = relay.equal %a, %b : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xi1>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.equal' op operands differ in element type: tensor<3xf32>, tensor<3xi32>

// -----

// relay.not_equal: operands of different element types.
func.func @f(%a: tensor<3xf32>, %b: tensor<3xi32>) {
  %0 = relay.not_equal %a, %b : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xi1>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.not_equal' op operands differ in element type: tensor<3xf32>, tensor<3xi32>

// -----

// relay.less: operands of different element types.
func.func @f(%a: tensor<3xf32>, %b: tensor<3xi32>) {
  %0 = relay.less %a, %b : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xi1>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.less' op operands differ in element type: tensor<3xf32>, tensor<3xi32>

// -----

// relay.less_equal: operands of different element types.
func.func @f(%a: tensor<3xf32>, %b: tensor<3xi32>) {
  %0 = relay.less_equal %a, %b : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xi1>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.less_equal' op operands differ in element type: tensor<3xf32>, tensor<3xi32>

// -----

// relay.greater: operands of different element types.
func.func @f(%a: tensor<3xf32>, %b: tensor<3xi32>) {
  %0 = relay.greater %a, %b : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xi1>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.greater' op operands differ in element type: tensor<3xf32>, tensor<3xi32>

// -----

// relay.greater_equal: operands of different element types.
func.func @f(%a: tensor<3xf32>, %b: tensor<3xi32>) {
  %0 = relay.greater_equal %a, %b : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xi1>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.greater_equal' op operands differ in element type: tensor<3xf32>, tensor<3xi32>

// -----

// relay.logical_and: float operands.
func.func @f(%a: tensor<3xf32>) {
  %0 = relay.logical_and %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.logical_and' op expects i1 operands, got tensor<3xf32>

// -----

// relay.logical_or: float operands.
func.func @f(%a: tensor<3xf32>) {
  %0 = relay.logical_or %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.logical_or' op expects i1 operands, got tensor<3xf32>

// -----

// relay.logical_xor: float operands.
func.func @f(%a: tensor<3xf32>) {
  %0 = relay.logical_xor %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.logical_xor' op expects i1 operands, got tensor<3xf32>

// -----

// relay.logical_not: a float operand.
func.func @f(%a: tensor<3xf32>) {
  %0 = relay.logical_not %a : (tensor<3xf32>) -> tensor<3xf32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.logical_not' op expects an i1 operand, got tensor<3xf32>

// -----

// relay.where: a float condition.
func.func @f(%c: tensor<3xf32>, %a: tensor<3xf32>) {
  %0 = relay.where %c, %a, %a : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.where' op expects an i1 condition, got tensor<3xf32>

// -----

// relay.exp: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.exp %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.exp' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.log: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.log %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.log' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.sqrt: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.sqrt %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.sqrt' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.rsqrt: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.rsqrt %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.rsqrt' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.reciprocal: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.reciprocal %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.reciprocal' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.tanh: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.tanh %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.tanh' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.sigmoid: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.sigmoid %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.sigmoid' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.erf: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.erf %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.erf' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.asin: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.asin %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.asin' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.acos: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.acos %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.acos' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.atan: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.atan %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.atan' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.asinh: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.asinh %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.asinh' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.acosh: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.acosh %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.acosh' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.atanh: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.atanh %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.atanh' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.floor: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.floor %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.floor' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.ceil: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.ceil %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.ceil' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.round: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.round %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.round' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.sin: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.sin %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.sin' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.cos: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.cos %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.cos' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.tan: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.tan %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.tan' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.log1p: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.log1p %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.log1p' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.log2: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.log2 %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.log2' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.log10: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.log10 %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.log10' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.expm1: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.expm1 %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.expm1' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.trunc: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.trunc %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.trunc' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.negative: a result type that differs from the operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.negative %a : (tensor<3xi32>) -> tensor<4xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.negative' op result type tensor<4xi32> does not match the inferred tensor<3xi32>

// -----

// relay.abs: a result type that differs from the operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.abs %a : (tensor<3xi32>) -> tensor<4xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.abs' op result type tensor<4xi32> does not match the inferred tensor<3xi32>

// -----

// relay.sign: a result type that differs from the operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.sign %a : (tensor<3xi32>) -> tensor<4xi32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.sign' op result type tensor<4xi32> does not match the inferred tensor<3xi32>

// -----

// relay.nn.relu: a result of another element type.
func.func @f(%a: tensor<3xf32>) {
  %0 = relay.nn.relu %a : (tensor<3xf32>) -> tensor<3xf16>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.relu' op result type tensor<3xf16> does not match the inferred tensor<3xf32>

// -----

// relay.nn.leaky_relu: alpha of the wrong attribute kind.
func.func @f(%a: tensor<3xf32>) {
  %0 = relay.nn.leaky_relu %a {alpha = "big"} : (tensor<3xf32>) -> tensor<3xf32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: "big" should be of base attribute float

// -----

// relay.nn.prelu: alpha not sized like the channel axis.
func.func @f(%a: tensor<1x3x2x2xf32>, %s: tensor<4xf32>) {
  %0 = relay.nn.prelu %a, %s : (tensor<1x3x2x2xf32>, tensor<4xf32>) -> tensor<1x3x2x2xf32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.nn.prelu' op alpha tensor<4xf32> must be a vector of the size of axis 1 of tensor<1x3x2x2xf32>

// -----

// relay.clip: a_min above a_max.
func.func @f(%a: tensor<3xf32>) {
  %0 = relay.clip %a {a_min = 6.0 : f64, a_max = 0.0 : f64} : (tensor<3xf32>) -> tensor<3xf32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.clip' op has a_min 6.0 above a_max 0.0

// -----

// relay.cast: the result element type is not dtype.
func.func @f(%a: tensor<3xf32>) {
  %0 = relay.cast %a {dtype = i32} : (tensor<3xf32>) -> tensor<3xi64>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.cast' op result type tensor<3xi64> does not match the inferred tensor<3xi32>

// -----

// relay.isnan: an integer operand.
func.func @f(%a: tensor<3xi32>) {
  %0 = relay.isnan %a : (tensor<3xi32>) -> tensor<3xi1>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.isnan' op expects a floating-point tensor, got tensor<3xi32>

// -----

// relay.left_shift: float operands.
func.func @f(%a: tensor<3xf32>) {
  %0 = relay.left_shift %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.left_shift' op expects integer operands, got tensor<3xf32>

// -----

// relay.right_shift: bool operands.
func.func @f(%a: tensor<3xi1>) {
  %0 = relay.right_shift %a, %a : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.right_shift' op expects integer operands, got tensor<3xi1>

// -----

// relay.bitwise_and: operands that are not integers.
func.func @f(%a: tensor<3xf32>) {
  %0 = relay.bitwise_and %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.bitwise_and' op expects integer operands, got tensor<3xf32>

// -----

// relay.bitwise_or: operands that are not integers.
func.func @f(%a: tensor<3xi1>) {
  %0 = relay.bitwise_or %a, %a : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.bitwise_or' op expects integer operands, got tensor<3xi1>

// -----

// relay.bitwise_xor: operands that are not integers.
func.func @f(%a: tensor<3xf16>) {
  %0 = relay.bitwise_xor %a, %a : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.bitwise_xor' op expects integer operands, got tensor<3xf16>

// -----

// relay.bitwise_not: a float operand.
func.func @f(%a: tensor<3xf32>) {
  %0 = relay.bitwise_not %a : (tensor<3xf32>) -> tensor<3xf32>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.bitwise_not' op expects integer operands, got tensor<3xf32>

// -----

// relay.reinterpret: element types of different widths.
func.func @f(%a: tensor<3xf32>) {
  %0 = relay.reinterpret %a {dtype = i16} : (tensor<3xf32>) -> tensor<3xi16>
  func.return
}
// CHECK: elementwise-invalid.mlir:[[# @LINE - 3]]:3: error: 'relay.reinterpret' op needs element types of the same width (not i1), got tensor<3xf32> to i16
