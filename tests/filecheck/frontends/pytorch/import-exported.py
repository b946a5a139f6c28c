# RUN: python %s | filecheck %s
# torch.export import: parameters are named by state_dict key, linear layers decompose to
# transpose + matmul + add, and values that do not depend on the input's contents (arange,
# shape arithmetic, an integer index buffer) fold into constants at import time.
import warnings

import torch
import xrelay

warnings.filterwarnings("ignore")


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)
        self.register_buffer("positions", torch.arange(3))

    def forward(self, x):
        y = self.fc(x.view(x.size(0), -1))
        return y + (self.positions * 2 + torch.arange(3)).float()


torch.manual_seed(0)
module, params = xrelay.from_exported_program(torch.export.export(Model(), (torch.randn(2, 2, 2),)))
print(module)
print("params:", list(params))

# CHECK: func.func @main(%x: tensor<2x2x2xf32> {xrelay.name = "x"}, %fc_weight: tensor<3x4xf32> {xrelay.name = "fc.weight", xrelay.param}, %fc_bias: tensor<3xf32> {xrelay.name = "fc.bias", xrelay.param}) -> tensor<2x3xf32>
# CHECK: %[[X:.+]] = relay.reshape %x {newshape = array<i64: 2, 4>}
# CHECK: %[[WT:.+]] = relay.transpose %fc_weight {axes = array<i64: 1, 0>}
# CHECK: %[[MM:.+]] = relay.nn.matmul %[[X]], %[[WT]]
# CHECK: %[[B:.+]] = relay.add %[[MM]], %fc_bias
# CHECK: %[[C:.+]] = relay.constant dense<[0.000000e+00, 3.000000e+00, 6.000000e+00]> : tensor<3xf32>
# CHECK: %[[Y:.+]] = relay.add %[[B]], %[[C]]
# CHECK: func.return %[[Y]]
# CHECK: params: ['fc.weight', 'fc.bias']
