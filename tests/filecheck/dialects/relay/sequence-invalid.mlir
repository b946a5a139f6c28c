// RUN: xrelay-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Elements share the element type and its static dimensions.
func.func @f(%a: tensor<2xf32>, %b: tensor<3xf32>) {
  %s = relay.seq_construct %a, %b : (tensor<2xf32>, tensor<3xf32>) -> !relay.seq<tensor<2xf32>>
  func.return
}
// CHECK: error: 'relay.seq_construct' op operand 1 is tensor<3xf32>, which is not a tensor<2xf32> element

// -----

// An inserted item must fit the result's element type.
func.func @f(%s: !relay.seq<tensor<?xf32>>, %x: tensor<2x2xf32>) {
  %t = relay.seq_insert %s, %x : (!relay.seq<tensor<?xf32>>, tensor<2x2xf32>) -> !relay.seq<tensor<?xf32>>
  func.return
}
// CHECK: error: 'relay.seq_insert' op item is tensor<2x2xf32>, which is not a tensor<?xf32> element

// -----

// Positions are i64.
func.func @f(%s: !relay.seq<tensor<?xf32>>, %i: tensor<f32>) {
  %t = relay.seq_erase %s, %i : (!relay.seq<tensor<?xf32>>, tensor<f32>) -> !relay.seq<tensor<?xf32>>
  func.return
}
// CHECK: error: 'relay.seq_erase' op position must be tensor<i64>, got tensor<f32>

// -----

// An element taken out keeps the element type's rank.
func.func @f(%s: !relay.seq<tensor<?xf32>>, %i: tensor<i64>) {
  %x = relay.seq_at %s, %i : (!relay.seq<tensor<?xf32>>, tensor<i64>) -> tensor<2x2xf32>
  func.return
}
// CHECK: error: 'relay.seq_at' op result is tensor<2x2xf32>, which is not a tensor<?xf32> element

// -----

// The length is a tensor<i64>.
func.func @f(%s: !relay.seq<tensor<?xf32>>) {
  %n = relay.seq_length %s : (!relay.seq<tensor<?xf32>>) -> tensor<i32>
  func.return
}
// CHECK: error: 'relay.seq_length' op result must be tensor<i64>

// -----

// Concatenation needs the elements' rank.
func.func @f(%s: !relay.seq<tensor<*xf32>>) {
  %c = relay.concat_from_sequence %s {axis = 0 : i64, new_axis = 0 : i64} : (!relay.seq<tensor<*xf32>>) -> tensor<?xf32, #relay.dims<"n">>
  func.return
}
// CHECK: error: 'relay.concat_from_sequence' op needs the elements' rank

// -----

// Split pieces keep the input's rank unless squeezed.
func.func @f(%x: tensor<4x2xf32>) {
  %s = relay.split_to_sequence %x {axis = 0 : i64, keepdims = 0 : i64} : (tensor<4x2xf32>) -> !relay.seq<tensor<?x2xf32>>
  func.return
}
// CHECK: error: 'relay.split_to_sequence' op elements must be rank-1 f32
