"""Relay's PyTorch flow: torch.jit.trace, relay.frontend.from_pytorch with input_infos, then
relay.build and GraphModule, against torch; custom_convert_map takes xrelay converters
and refuses Relay's (inputs, input_types) ones."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from xrelay import relay
from xrelay.dialects import relay as relay_ops
from xrelay.relay import graph_executor

from . import models

torch = pytest.importorskip("torch")
nn = torch.nn

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit.trace


class SmallNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 4 * 4, 5)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        y = torch.nn.functional.max_pool2d(y, 2)
        return self.fc(torch.flatten(y, 1))


def test_traced_model_through_build_and_graph_module():
    torch.manual_seed(0)
    model = SmallNet().eval()
    with torch.no_grad():  # running statistics that are not the identity
        model.bn.running_mean.uniform_(-0.5, 0.5)
        model.bn.running_var.uniform_(0.5, 1.5)
    x = torch.randn(1, 3, 8, 8)
    scripted = torch.jit.trace(model, x).eval()
    input_infos = [("input0", (1, 3, 8, 8))]
    mod, params = relay.frontend.from_pytorch(scripted, input_infos)
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    m = graph_executor.GraphModule(lib["default"](relay.cpu(0)))
    m.set_input("input0", relay.nd.array(x.numpy()))
    m.run()
    with torch.no_grad():
        want = model(x).numpy()
    models.assert_close(m.get_output(0).numpy(), want)


class Flip(nn.Module):
    def forward(self, x):
        return torch.flip(x, [1]) * 2


def test_custom_convert_map_takes_xrelay_converters():
    def flip_last(c):  # reverse the last axis: a take of constant indices
        n = c.shape(0)[-1]
        indices = c.constant(np.arange(n - 1, -1, -1, dtype=np.int64))
        return c.emit(relay_ops.TakeOp(c.tensor(0), indices, axis=c.rank(0) - 1))

    x = torch.randn(2, 5)
    traced = torch.jit.trace(Flip(), x)
    mod, params = relay.frontend.from_pytorch(traced, [("x", (2, 5))], {"aten::flip": flip_last})
    got = relay.create_executor("debug", mod, params=params).evaluate()(x.numpy())
    np.testing.assert_array_equal(got.numpy(), Flip()(x).numpy())

    def tvm_style(inputs, input_types):
        return inputs[0]

    with pytest.raises(xrelay.Error, match=r"custom_convert_map\['aten::flip'\].*input_types"):
        relay.frontend.from_pytorch(traced, [("x", (2, 5))], {"aten::flip": tvm_style})
