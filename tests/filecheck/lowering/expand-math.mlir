// RUN: xrelay-opt %s -p expand-math | filecheck %s

// f32 exp, erf and tanh become arith and math.fma (no libm call); f64 stays.
func.func @f(%x: f32, %d: f64) -> (f32, f32, f32, f64) {
  %e = math.exp %x : f32
  %r = math.erf %x : f32
  %t = math.tanh %x : f32
  %k = math.exp %d : f64
  func.return %e, %r, %t, %k : f32, f32, f32, f64
}

// CHECK-LABEL: func.func @f
// clamps to nonzero bounds are selects of ordered compares (x86 max and min), not
// maximumf / minimumf (six instructions each)
// CHECK-NOT:   arith.maximumf
// CHECK-NOT:   arith.minimumf
// CHECK-NOT:   math.exp {{.*}} : f32
// CHECK:       math.roundeven
// the polynomials' steps are fused multiply-adds (LLVM would not contract a mulf and an
// addf: no fast-math flags)
// CHECK:       math.fma {{.*}} : f32
// CHECK:       arith.bitcast {{.*}} : i32 to f32
// CHECK-NOT:   math.erf
// CHECK-NOT:   math.tanh
// CHECK:       math.fma {{.*}} : f32
// CHECK:       arith.divf
// CHECK:       math.exp %d : f64
