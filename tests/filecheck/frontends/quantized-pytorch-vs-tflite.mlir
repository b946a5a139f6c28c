// RUN: xrelay-opt %s -p canonicalize,qnn-fold-quantize-constants,qnn-remove-clip-after-requantize,qnn-dense-bias-as-add | filecheck %s --check-prefixes=CHECK,PT
// RUN: xrelay-opt %s -p canonicalize,qnn-fold-quantize-constants,qnn-remove-clip-after-requantize,qnn-dense-bias-as-add | filecheck %s --check-prefixes=CHECK,TFL

// Issue 22's seed comparison: one network (conv 3x3 + relu, global average pool, dense;
// 2 -> 3 channels, 5x5 input, 2 outputs) quantized by PyTorch (eager post-training static
// quantization, fbgemm qconfig, torch.jit.trace -> from_pytorch) and by TFLite (Keras,
// full-integer int8 with float I/O, random representative data -> from_tflite), as the
// frontends import it (tests/frontends/tflite/test_pytorch_vs_tflite.py rebuilds both from
// scratch). After canonicalization both are: quantize the input, qnn.conv2d with integer
// weights, the folded i32 bias, one requantize straight to the 8-bit type (the fused relu's
// clip is gone: it is that type's whole range), the pool, qnn.dense with integer weights,
// the i32 bias as relay.add, one requantize to the 8-bit type, dequantize. CHECK lines are
// shared; PT and TFL lines are the differences that remain:
// - the 8-bit type: ui8 (fbgemm's quint8) versus i8, and requantize's rounding (TFLite's
//   fixed point, f64 multipliers);
// - TFL transposes the quantized input from NHWC to NCHW for qnn.conv2d;
// - the pool: PyTorch's qnn.global_avg_pool2d + reshape versus TFLite's integer MEAN
//   kernel (sum, fixed-point multiplier, rounding shift) in relay i32/i64 ops, which
//   computes different roundings, so no canonicalization can merge them;
// - TFL's weights are parameters (function arguments), PyTorch's folded constants.

// PT-LABEL:  func.func @from_pytorch
// TFL-LABEL: func.func @from_tflite
// CHECK:       %[[Q:.+]] = qnn.quantize %{{[^,]+}}, {{.+}} {out_dtype = [[T:u?i8]]}
// PT-NOT:      relay.transpose
// TFL:         %[[XT:.+]] = relay.transpose %[[Q]] {axes = array<i64: 0, 3, 1, 2>}
// PT:          %[[C:.+]] = qnn.conv2d %[[Q]], %{{[^,]+}}, {{.+}} : (tensor<1x2x5x5x[[T]]>, tensor<3x2x3x3xi8>,{{.+}} -> tensor<1x3x3x3xi32>
// TFL:         %[[C:.+]] = qnn.conv2d %[[XT]], %{{[^,]+}}, {{.+}} : (tensor<1x2x5x5x[[T]]>, tensor<3x2x3x3xi8>,{{.+}} -> tensor<1x3x3x3xi32>
// CHECK:       %[[B:.+]] = relay.constant dense<{{.+}}> : tensor<3xi32>
// CHECK-NEXT:  %[[CB:.+]] = relay.nn.bias_add %[[C]], %[[B]]
// CHECK:       %[[R:.+]] = qnn.requantize %[[CB]], {{.+}}out_dtype = [[T]]{{.+}} -> tensor<1x3x3x3x[[T]]>
// CHECK-NOT:   relay.clip
// PT:          %[[P:.+]] = qnn.global_avg_pool2d %[[R]],
// PT-NEXT:     %[[V:.+]] = relay.reshape %[[P]] {{.+}} -> tensor<1x3xui8>
// TFL:         %[[WIDE:.+]] = relay.cast %[[R]] {dtype = i32}
// TFL:         relay.sum
// TFL:         relay.right_shift
// TFL:         %[[V:.+]] = relay.cast %{{.+}} {dtype = i8} : (tensor<1x3xi64>) -> tensor<1x3xi8>
// CHECK-NOT:   qnn.global_avg_pool2d
// CHECK:       %[[D:.+]] = qnn.dense %[[V]], %{{[^,]+}}, {{.+}} : (tensor<1x3x[[T]]>, tensor<2x3xi8>,{{.+}} -> tensor<1x2xi32>
// CHECK-NEXT:  %[[B2:.+]] = relay.constant dense<{{.+}}> : tensor<2xi32>
// CHECK-NEXT:  %[[DB:.+]] = relay.add %[[D]], %[[B2]]
// CHECK:       %[[R2:.+]] = qnn.requantize %[[DB]], {{.+}}out_dtype = [[T]]{{.+}} -> tensor<1x2x[[T]]>
// CHECK-NOT:   relay.clip
// CHECK:       %[[Y:.+]] = qnn.dequantize %[[R2]],
// CHECK-NEXT:  func.return %[[Y]]
// PT-LABEL:  func.func @from_tflite

func.func @from_pytorch(%x: tensor<1x2x5x5xf32> {xrelay.name = "x"}) -> tensor<1x2xf32> {
  %0 = relay.constant dense<0.0539817177> : tensor<f32>
  %1 = relay.constant dense<51> : tensor<i32>
  %2 = qnn.quantize %x, %0, %1 {out_dtype = ui8} : (tensor<1x2x5x5xf32>, tensor<f32>, tensor<i32>) -> tensor<1x2x5x5xui8>
  %3 = relay.constant dense<[[[[-0.00176610029, 0.127159223, -0.194271028], [-0.173077822, -0.0900711119, 0.0635796115], [-0.00529830065, 0.187206626, -0.0211932026]], [[0.061813511, -0.0706440136, -0.0459186062], [-0.226060838, -0.155416831, -0.097135514], [0.0088305017, 0.093603313, 0.141288027]]], [[[-0.159285948, -0.102150768, 0.084837079], [0.195644692, -0.0484783314, 0.176599637], [-0.0380901173, 0.0242391657, 0.212958381]], [[-0.218152493, -0.148897722, -0.0588665456], [-0.0917625576, 0.204301536, -0.152360469], [-0.109076247, -0.164480045, -0.221615225]]], [[[-0.137834951, 0.20215793, 0.10475456], [0.113943562, 0.0128645953, -0.121294752], [0.0404315852, -0.220535919, -0.170915335]], [[-0.121294752, 0.148861751, 0.137834951], [-0.10475456, -0.00918899663, 0.150699541], [0.233400509, 0.0937277675, 0.0312425885]]]]> : tensor<3x2x3x3xf32>
  %4 = relay.constant dense<[0.00176610029, 0.00173136895, 0.00183779933]> : tensor<3xf32>
  %5 = relay.constant dense<0> : tensor<3xi32>
  %6 = qnn.quantize %3, %4, %5 {axis = 0 : i64, out_dtype = i8} : (tensor<3x2x3x3xf32>, tensor<3xf32>, tensor<3xi32>) -> tensor<3x2x3x3xi8>
  %7 = relay.constant dense<0.0539817177> : tensor<f32>
  %8 = relay.constant dense<51> : tensor<i32>
  %9 = relay.constant dense<0> : tensor<3xi32>
  %10 = relay.constant dense<[0.00176610029, 0.00173136895, 0.00183779933]> : tensor<3xf32>
  %11 = qnn.conv2d %2, %6, %8, %9, %7, %10 : (tensor<1x2x5x5xui8>, tensor<3x2x3x3xi8>, tensor<i32>, tensor<3xi32>, tensor<f32>, tensor<3xf32>) -> tensor<1x3x3x3xi32>
  %12 = relay.constant dense<[0.158035144, -0.138782039, 0.0439217091]> : tensor<3xf32>
  %13 = relay.constant dense<[9.53371273e-05, 9.34622731e-05, 9.92075657e-05]> : tensor<3xf32>
  %14 = relay.constant dense<0> : tensor<3xi32>
  %15 = qnn.quantize %12, %13, %14 {axis = 0 : i64, out_dtype = i32} : (tensor<3xf32>, tensor<3xf32>, tensor<3xi32>) -> tensor<3xi32>
  %16 = relay.nn.bias_add %11, %15 : (tensor<1x3x3x3xi32>, tensor<3xi32>) -> tensor<1x3x3x3xi32>
  %17 = relay.constant dense<[9.53371273e-05, 9.34622731e-05, 9.92075657e-05]> : tensor<3xf32>
  %18 = relay.constant dense<0> : tensor<i32>
  %19 = relay.constant dense<0.0125270011> : tensor<f32>
  %20 = relay.constant dense<0> : tensor<i32>
  %21 = qnn.requantize %16, %17, %18, %19, %20 {axis = 1 : i64, out_dtype = i32} : (tensor<1x3x3x3xi32>, tensor<3xf32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x3x3x3xi32>
  %22 = relay.clip %21 {a_min = 0.000000e+00 : f64, a_max = 2.550000e+02 : f64} : (tensor<1x3x3x3xi32>) -> tensor<1x3x3x3xi32>
  %23 = relay.cast %22 {dtype = ui8} : (tensor<1x3x3x3xi32>) -> tensor<1x3x3x3xui8>
  %24 = relay.constant dense<0.0125270011> : tensor<f32>
  %25 = relay.constant dense<0> : tensor<i32>
  %26 = qnn.global_avg_pool2d %23, %24, %25, %24, %25 : (tensor<1x3x3x3xui8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x3x1x1xui8>
  %27 = relay.reshape %26 {newshape = array<i64: 1, 3>} : (tensor<1x3x1x1xui8>) -> tensor<1x3xui8>
  %28 = relay.constant dense<[[-0.449378222, -0.400227487, -0.298415214], [0.260184348, 0.233361214, -0.343336046]]> : tensor<2x3xf32>
  %29 = relay.constant dense<[0.00351076736, 0.00268231286]> : tensor<2xf32>
  %30 = relay.constant dense<0> : tensor<2xi32>
  %31 = qnn.quantize %28, %29, %30 {axis = 0 : i64, out_dtype = i8} : (tensor<2x3xf32>, tensor<2xf32>, tensor<2xi32>) -> tensor<2x3xi8>
  %32 = relay.constant dense<0.0125270011> : tensor<f32>
  %33 = relay.constant dense<0> : tensor<i32>
  %34 = relay.constant dense<0> : tensor<2xi32>
  %35 = relay.constant dense<[0.00351076736, 0.00268231286]> : tensor<2xf32>
  %36 = qnn.dense %27, %31, %33, %34, %32, %35 : (tensor<1x3xui8>, tensor<2x3xi8>, tensor<i32>, tensor<2xi32>, tensor<f32>, tensor<2xf32>) -> tensor<1x2xi32>
  %37 = relay.constant dense<[0.174421608, 0.316949129]> : tensor<2xf32>
  %38 = relay.constant dense<[4.39793876e-05, 3.36013363e-05]> : tensor<2xf32>
  %39 = relay.constant dense<0> : tensor<2xi32>
  %40 = qnn.quantize %37, %38, %39 {axis = 0 : i64, out_dtype = i32} : (tensor<2xf32>, tensor<2xf32>, tensor<2xi32>) -> tensor<2xi32>
  %41 = relay.nn.bias_add %36, %40 {axis = -1 : i64} : (tensor<1x2xi32>, tensor<2xi32>) -> tensor<1x2xi32>
  %42 = relay.constant dense<[4.39793876e-05, 3.36013363e-05]> : tensor<2xf32>
  %43 = relay.constant dense<0> : tensor<i32>
  %44 = relay.constant dense<0.00532704033> : tensor<f32>
  %45 = relay.constant dense<45> : tensor<i32>
  %46 = qnn.requantize %41, %42, %43, %44, %45 {out_dtype = i32} : (tensor<1x2xi32>, tensor<2xf32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x2xi32>
  %47 = relay.clip %46 {a_min = 0.000000e+00 : f64, a_max = 2.550000e+02 : f64} : (tensor<1x2xi32>) -> tensor<1x2xi32>
  %48 = relay.cast %47 {dtype = ui8} : (tensor<1x2xi32>) -> tensor<1x2xui8>
  %49 = relay.constant dense<0.00532704033> : tensor<f32>
  %50 = relay.constant dense<45> : tensor<i32>
  %51 = qnn.dequantize %48, %49, %50 : (tensor<1x2xui8>, tensor<f32>, tensor<i32>) -> tensor<1x2xf32>
  func.return %51 : tensor<1x2xf32>
}

func.func @from_tflite(%serving_default_keras_tensor: tensor<1x5x5x2xf32> {xrelay.name = "serving_default_keras_tensor:0"}, %functional_1_conv2d_1_convolution_oihw: tensor<3x2x3x3xi8> {xrelay.name = "functional_1/conv2d_1/convolution:oihw", xrelay.param}, %functional_1_dense_1_MatMul: tensor<2x3xi8> {xrelay.name = "functional_1/dense_1/MatMul", xrelay.param}) -> tensor<1x2xf32> {
  %0 = relay.constant dense<0.0227895211> : tensor<f32>
  %1 = relay.constant dense<-9> : tensor<i32>
  %2 = qnn.quantize %serving_default_keras_tensor, %0, %1 {out_dtype = i8} : (tensor<1x5x5x2xf32>, tensor<f32>, tensor<i32>) -> tensor<1x5x5x2xi8>
  %3 = relay.constant dense<0.0227895211> : tensor<f32>
  %4 = relay.constant dense<-9> : tensor<i32>
  %5 = relay.constant dense<[0.00915366504, 0.00574023882, 0.00771755259]> : tensor<3xf32>
  %6 = relay.constant dense<0> : tensor<3xi32>
  %7 = relay.transpose %2 {axes = array<i64: 0, 3, 1, 2>} : (tensor<1x5x5x2xi8>) -> tensor<1x2x5x5xi8>
  %8 = relay.constant dense<0> : tensor<i32>
  %9 = qnn.conv2d %7, %functional_1_conv2d_1_convolution_oihw, %4, %8, %3, %5 : (tensor<1x2x5x5xi8>, tensor<3x2x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<3xf32>) -> tensor<1x3x3x3xi32>
  %10 = relay.constant dense<[-3088, 1510, 1222]> : tensor<3xi32>
  %11 = relay.nn.bias_add %9, %10 : (tensor<1x3x3x3xi32>, tensor<3xi32>) -> tensor<1x3x3x3xi32>
  %12 = relay.constant dense<[0.00020860764304135408, 0.00013081729393673702, 0.00017587932803110086]> : tensor<3xf64>
  %13 = relay.constant dense<0> : tensor<i32>
  %14 = relay.constant dense<0.0164843183> : tensor<f32>
  %15 = relay.constant dense<-128> : tensor<i32>
  %16 = qnn.requantize %11, %12, %13, %14, %15 {axis = 1 : i64, out_dtype = i32, rounding = "tflite"} : (tensor<1x3x3x3xi32>, tensor<3xf64>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x3x3x3xi32>
  %17 = relay.clip %16 {a_min = -1.280000e+02 : f64, a_max = 1.270000e+02 : f64} : (tensor<1x3x3x3xi32>) -> tensor<1x3x3x3xi32>
  %18 = relay.cast %17 {dtype = i8} : (tensor<1x3x3x3xi32>) -> tensor<1x3x3x3xi8>
  %19 = relay.cast %18 {dtype = i32} : (tensor<1x3x3x3xi8>) -> tensor<1x3x3x3xi32>
  %20 = relay.constant dense<-128> : tensor<i32>
  %21 = relay.subtract %19, %20 : (tensor<1x3x3x3xi32>, tensor<i32>) -> tensor<1x3x3x3xi32>
  %22 = relay.sum %21 {axis = array<i64: 2, 3>} : (tensor<1x3x3x3xi32>) -> tensor<1x3xi32>
  %23 = relay.cast %22 {dtype = i64} : (tensor<1x3xi32>) -> tensor<1x3xi64>
  %24 = relay.constant dense<1475314780> : tensor<i64>
  %25 = relay.multiply %23, %24 : (tensor<1x3xi64>, tensor<i64>) -> tensor<1x3xi64>
  %26 = relay.constant dense<0> : tensor<i64>
  %27 = relay.greater_equal %25, %26 : (tensor<1x3xi64>, tensor<i64>) -> tensor<1x3xi1>
  %28 = relay.constant dense<1073741824> : tensor<i64>
  %29 = relay.constant dense<-1073741823> : tensor<i64>
  %30 = relay.where %27, %28, %29 : (tensor<1x3xi1>, tensor<i64>, tensor<i64>) -> tensor<1x3xi64>
  %31 = relay.add %25, %30 : (tensor<1x3xi64>, tensor<1x3xi64>) -> tensor<1x3xi64>
  %32 = relay.less %31, %26 : (tensor<1x3xi64>, tensor<i64>) -> tensor<1x3xi1>
  %33 = relay.constant dense<2147483647> : tensor<i64>
  %34 = relay.where %32, %33, %26 : (tensor<1x3xi1>, tensor<i64>, tensor<i64>) -> tensor<1x3xi64>
  %35 = relay.add %31, %34 : (tensor<1x3xi64>, tensor<1x3xi64>) -> tensor<1x3xi64>
  %36 = relay.constant dense<31> : tensor<i64>
  %37 = relay.right_shift %35, %36 : (tensor<1x3xi64>, tensor<i64>) -> tensor<1x3xi64>
  %38 = relay.less %37, %26 : (tensor<1x3xi64>, tensor<i64>) -> tensor<1x3xi1>
  %39 = relay.cast %38 {dtype = i64} : (tensor<1x3xi1>) -> tensor<1x3xi64>
  %40 = relay.constant dense<0> : tensor<i64>
  %41 = relay.add %40, %39 : (tensor<i64>, tensor<1x3xi64>) -> tensor<1x3xi64>
  %42 = relay.constant dense<1> : tensor<i64>
  %43 = relay.bitwise_and %37, %42 : (tensor<1x3xi64>, tensor<i64>) -> tensor<1x3xi64>
  %44 = relay.greater %43, %41 : (tensor<1x3xi64>, tensor<1x3xi64>) -> tensor<1x3xi1>
  %45 = relay.cast %44 {dtype = i64} : (tensor<1x3xi1>) -> tensor<1x3xi64>
  %46 = relay.constant dense<1> : tensor<i64>
  %47 = relay.right_shift %37, %46 : (tensor<1x3xi64>, tensor<i64>) -> tensor<1x3xi64>
  %48 = relay.add %47, %45 : (tensor<1x3xi64>, tensor<1x3xi64>) -> tensor<1x3xi64>
  %49 = relay.constant dense<-128> : tensor<i64>
  %50 = relay.add %48, %49 : (tensor<1x3xi64>, tensor<i64>) -> tensor<1x3xi64>
  %51 = relay.clip %50 {a_min = -1.280000e+02 : f64, a_max = 1.270000e+02 : f64} : (tensor<1x3xi64>) -> tensor<1x3xi64>
  %52 = relay.cast %51 {dtype = i8} : (tensor<1x3xi64>) -> tensor<1x3xi8>
  %53 = relay.constant dense<0.00533216586> : tensor<f32>
  %54 = relay.constant dense<-128> : tensor<i32>
  %55 = relay.constant dense<[0.00460551959, 0.006847905]> : tensor<2xf32>
  %56 = relay.constant dense<0> : tensor<2xi32>
  %57 = relay.constant dense<0> : tensor<i32>
  %58 = qnn.dense %52, %functional_1_dense_1_MatMul, %54, %57, %53, %55 : (tensor<1x3xi8>, tensor<2x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<2xf32>) -> tensor<1x2xi32>
  %59 = relay.constant dense<[-10097, 4505]> : tensor<2xi32>
  %60 = relay.add %58, %59 : (tensor<1x2xi32>, tensor<2xi32>) -> tensor<1x2xi32>
  %61 = relay.constant dense<[2.4557394315856147e-05, 3.6514165250352108e-05]> : tensor<2xf64>
  %62 = relay.constant dense<0> : tensor<i32>
  %63 = relay.constant dense<0.00541712809> : tensor<f32>
  %64 = relay.constant dense<10> : tensor<i32>
  %65 = qnn.requantize %60, %61, %62, %63, %64 {out_dtype = i32, rounding = "tflite_single"} : (tensor<1x2xi32>, tensor<2xf64>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x2xi32>
  %66 = relay.clip %65 {a_min = -1.280000e+02 : f64, a_max = 1.270000e+02 : f64} : (tensor<1x2xi32>) -> tensor<1x2xi32>
  %67 = relay.cast %66 {dtype = i8} : (tensor<1x2xi32>) -> tensor<1x2xi8>
  %68 = relay.constant dense<0.00541712809> : tensor<f32>
  %69 = relay.constant dense<10> : tensor<i32>
  %70 = qnn.dequantize %67, %68, %69 : (tensor<1x2xi8>, tensor<f32>, tensor<i32>) -> tensor<1x2xf32>
  func.return %70 : tensor<1x2xf32>
}
