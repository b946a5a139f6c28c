// RUN: xrelay-opt %s | xrelay-opt | filecheck %s

// Run-time sequences: built, edited and read at positions known only at run time; an
// element taken out gets fresh symbols for the sizes the element type leaves open.
func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>, %i: tensor<i64>, %s0: !relay.seq<tensor<*xf32>>) -> (tensor<?xf32, #relay.dims<"at">>, tensor<i64>, !relay.seq<tensor<?xf32>>) {
  %s = relay.seq_construct %a, %b : (tensor<2xf32>, tensor<3xf32>) -> !relay.seq<tensor<?xf32>>
  %s2 = relay.seq_insert %s, %a, %i : (!relay.seq<tensor<?xf32>>, tensor<2xf32>, tensor<i64>) -> !relay.seq<tensor<?xf32>>
  %s3 = relay.seq_erase %s2 : (!relay.seq<tensor<?xf32>>) -> !relay.seq<tensor<?xf32>>
  %x = relay.seq_at %s3, %i : (!relay.seq<tensor<?xf32>>, tensor<i64>) -> tensor<?xf32, #relay.dims<"at">>
  %n = relay.seq_length %s0 : (!relay.seq<tensor<*xf32>>) -> tensor<i64>
  %c = relay.concat_from_sequence %s3 {axis = 0 : i64, new_axis = 0 : i64} : (!relay.seq<tensor<?xf32>>) -> tensor<?xf32, #relay.dims<"cat">>
  %t = relay.split_to_sequence %c {axis = 0 : i64, keepdims = 1 : i64} : (tensor<?xf32, #relay.dims<"cat">>) -> !relay.seq<tensor<?xf32>>
  func.return %x, %n, %t : tensor<?xf32, #relay.dims<"at">>, tensor<i64>, !relay.seq<tensor<?xf32>>
}

// CHECK:      func.func @main({{.*}}%s0: !relay.seq<tensor<*xf32>>)
// CHECK:      relay.seq_construct %a, %b : (tensor<2xf32>, tensor<3xf32>) -> !relay.seq<tensor<?xf32>>
// CHECK-NEXT: relay.seq_insert %s, %a, %i
// CHECK-NEXT: relay.seq_erase %s2 : (!relay.seq<tensor<?xf32>>) -> !relay.seq<tensor<?xf32>>
// CHECK-NEXT: relay.seq_at %s3, %i : (!relay.seq<tensor<?xf32>>, tensor<i64>) -> tensor<?xf32, #relay.dims<"at">>
// CHECK-NEXT: relay.seq_length %s0 : (!relay.seq<tensor<*xf32>>) -> tensor<i64>
// CHECK-NEXT: relay.concat_from_sequence %s3 {axis = 0 : i64, new_axis = 0 : i64}
// CHECK-NEXT: relay.split_to_sequence %c {axis = 0 : i64, keepdims = 1 : i64}
