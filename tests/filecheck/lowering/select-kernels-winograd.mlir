// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=select-kernels}" | filecheck %s
// RUN: xrelay-opt %s -p "lower-to-llvm{stop-after=emit-runtime}" | filecheck %s --check-prefix=RT

// f32 Winograd transforms become calls of runtime transform declarations whose
// #kernel.winograd holds the geometry (planes = N * C; the output's size, its epilogue's
// flags and the channel count its vectors are indexed by). The runtime holds one function
// per declaration, split over planes, and its wrapper (an output transform's epilogue
// operands after the products, null where absent).
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[V:.+]] = func.call @xr_wino_0(%x) : (tensor<1x8x8x8xf32>) -> tensor<36x1x8x2x3xf32>
// CHECK-NEXT:    %[[Y:.+]] = func.call @xr_wino_1(%m, %b) : (tensor<36x1x16x2x2xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
// CHECK-NEXT:    func.return %[[V]], %[[Y]]
// CHECK:       func.func private @xr_wino_0(tensor<1x8x8x8xf32>) -> tensor<36x1x8x2x3xf32>
// CHECK-SAME:    xrelay.kernel = #kernel.winograd<planes = 8, channels = 8, h = 8, w = 8, th = 2, tw = 2, top = 1, left = 1>
// CHECK:       func.func private @xr_wino_1(tensor<36x1x16x2x2xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
// CHECK-SAME:    xrelay.kernel = #kernel.winograd<output = true, planes = 16, channels = 16, h = 8, w = 8, th = 2, tw = 2, shift = true, relu = true>
// RT:          xrelay.runtime = "
// RT-SAME:       define internal void @xr_wino_0.wino_part(ptr %x, ptr %v, i64 %planes, i64 %p0, i64 %p1)
// RT-SAME:       define dso_local void @xr_wino_0(ptr %x, ptr %v)
// RT-SAME:       define internal void @xr_wino_1.wino_part(ptr %mm, ptr %sc, ptr %sh, ptr %res, ptr %y, i64 %planes, i64 %p0, i64 %p1)
// RT-SAME:       define dso_local void @xr_wino_1(ptr %mm, ptr %sh, ptr %y)
// RT-SAME:       call void @xr_wino_1.wino(ptr %mm, ptr null, ptr %sh, ptr null, ptr %y, i64 16)
func.func @main(%x: tensor<1x8x8x8xf32>, %m: tensor<36x1x16x2x2xf32>, %b: tensor<16xf32>) -> (tensor<36x1x8x2x3xf32>, tensor<1x16x8x8xf32>) {
  %v = relay.nn.winograd_input %x {tile = 4 : i64, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x8xf32>) -> tensor<36x1x8x2x3xf32>
  %y = relay.nn.winograd_output %m, %b {tile = 4 : i64, size = array<i64: 8, 8>, shift = true, relu = true} : (tensor<36x1x16x2x2xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
  func.return %v, %y : tensor<36x1x8x2x3xf32>, tensor<1x16x8x8xf32>
}
