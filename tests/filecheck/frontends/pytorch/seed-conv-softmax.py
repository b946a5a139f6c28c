# RUN: python %s | filecheck %s
# The seed check: a traced Conv2d(3, 6, 7, bias=False) + Softmax(dim=1) imports to relay whose
# @main takes input0 first, then the weight as a parameter; the JIT result equals torch.
import numpy as np
import torch
import xrelay

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Conv2d(3, 6, 7, bias=False), torch.nn.Softmax(dim=1)).eval()
x = torch.randn(1, 3, 10, 10)
traced = torch.jit.trace(model, x)
module, params = xrelay.from_pytorch(traced, [("input0", (1, 3, 10, 10))])
print(module)

# CHECK: func.func @main(%input0: tensor<1x3x10x10xf32> {xrelay.name = "input0"}, %[[W:.+]]: tensor<6x3x7x7xf32> {xrelay.name = "0.weight", xrelay.param}) -> tensor<1x6x4x4xf32>
# CHECK: %[[C:.+]] = relay.nn.conv2d %input0, %[[W]] : (tensor<1x3x10x10xf32>, tensor<6x3x7x7xf32>) -> tensor<1x6x4x4xf32>
# CHECK: %[[S:.+]] = relay.nn.softmax %[[C]] {axis = 1 : i64}
# CHECK: func.return %[[S]]

(got,) = xrelay.build(module, params=params).run(input0=x.numpy())
want = model(x).detach().numpy()
print("max abs error below 1e-5:", bool(np.max(np.abs(got - want)) < 1e-5))
# CHECK: max abs error below 1e-5: True
