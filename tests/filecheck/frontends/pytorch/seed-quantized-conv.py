# RUN: python %s | filecheck %s
# The quantization seed, PyTorch side: an eager-mode quantized conv traced to TorchScript
# imports as qnn.quantize of the float weight, a bias_add of the qnn.quantize'd float bias,
# a requantize to i32, a clip and a cast to ui8. After qnn-fold-quantize-constants and
# qnn-remove-clip-after-requantize it is int8 weight, int32 bias and a requantize straight
# to ui8 (TFLite's form; tests/filecheck/transforms/qnn-canonicalize.mlir holds both).
import warnings

import numpy as np
import torch
from torch.ao.quantization import DeQuantStub, QuantStub, convert, get_default_qconfig, prepare
from xdsl.context import Context

import xrelay
from xrelay.transforms.qnn_canonicalize import (
    QnnFoldQuantizeConstants,
    QnnRemoveClipAfterRequantize,
)

warnings.simplefilter("ignore")
torch.backends.quantized.engine = "fbgemm"
torch.manual_seed(0)
model = torch.nn.Sequential(QuantStub(), torch.nn.Conv2d(2, 4, 3), DeQuantStub()).eval()
model.qconfig = get_default_qconfig("fbgemm")
prepare(model, inplace=True)
model(torch.randn(1, 2, 6, 6))
convert(model, inplace=True)
x = torch.randn(1, 2, 6, 6)
traced = torch.jit.trace(model, x)
module, params = xrelay.from_pytorch(traced, [("x", (1, 2, 6, 6))])
print(module)

# CHECK:      %[[WF:.+]] = relay.constant {{.+}} : tensor<4x2x3x3xf32>
# CHECK:      %[[WQ:.+]] = qnn.quantize %[[WF]], %{{.+}}, %{{.+}} {axis = 0 : i64, out_dtype = i8}
# CHECK:      %[[C:.+]] = qnn.conv2d %{{.+}}, %[[WQ]], {{.+}} -> tensor<1x4x4x4xi32>
# CHECK:      %[[BQ:.+]] = qnn.quantize %{{.+}}, %{{.+}}, %{{.+}} {axis = 0 : i64, out_dtype = i32} : (tensor<4xf32>, tensor<4xf32>, tensor<4xi32>) -> tensor<4xi32>
# CHECK:      %[[B:.+]] = relay.nn.bias_add %[[C]], %[[BQ]]
# CHECK:      %[[R:.+]] = qnn.requantize %[[B]], {{.+}} {axis = 1 : i64, out_dtype = i32}
# CHECK-NEXT: %[[CL:.+]] = relay.clip %[[R]] {a_min = 0.000000e+00 : f64, a_max = 2.550000e+02 : f64}
# CHECK-NEXT: relay.cast %[[CL]] {dtype = ui8}

QnnFoldQuantizeConstants().apply(Context(), module)
QnnRemoveClipAfterRequantize().apply(Context(), module)
print("// canonical")
print(module)
# CHECK-LABEL: // canonical
# CHECK-NOT:   qnn.quantize {{.+}}tensor<4x2x3x3xf32>
# CHECK:       %[[W:.+]] = relay.constant {{.+}} : tensor<4x2x3x3xi8>
# CHECK:       %[[C2:.+]] = qnn.conv2d %{{.+}}, %[[W]]
# CHECK:       %[[B2:.+]] = relay.constant dense<{{.+}}> : tensor<4xi32>
# CHECK:       %[[A2:.+]] = relay.nn.bias_add %[[C2]], %[[B2]]
# CHECK:       qnn.requantize %[[A2]], {{.+}} {axis = 1 : i64, out_dtype = ui8}
# CHECK-NOT:   relay.clip

(got,) = xrelay.build(module, params=params).run(x.numpy())
want = model(x).numpy()
print("within one output step:", bool(np.max(np.abs(got - want)) <= model[1].scale * 1.0001))
# CHECK: within one output step: True
