"""TorchScript modules with dynamic dimensions (`input_infos` entries None, -1 or a name):
one import, one build, any sizes the module takes, matching torch eager; sizes that break
a shared symbol are errors naming the input and the axis."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import xrelay

pytestmark = pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning")


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 5, 3, padding=1)
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x, y):
        z = self.conv(x).mean((2, 3))
        return torch.relu(self.fc(y)).sum((1, 2)) + z.sum(1), z


def traced() -> tuple[torch.nn.Module, torch.jit.ScriptModule]:
    torch.manual_seed(0)
    net = Net().eval()
    return net, torch.jit.trace(net, (torch.randn(2, 3, 8, 8), torch.randn(2, 6, 8)))


def test_named_and_unnamed_dimensions_match_eager_at_several_sizes():
    net, ts = traced()
    mod, params = xrelay.from_pytorch(
        ts, [("x", ("batch", 3, None, -1)), ("y", ("batch", None, 8))]
    )
    text = str(mod)
    assert '#relay.dims<"batch", "x_2", "x_3">' in text and '#relay.dims<"batch", "y_1">' in text
    # results: the batch axis follows `batch`, the 5 channels are static
    assert 'tensor<?x5xf32, #relay.dims<"batch">>' in text
    lib = xrelay.build(mod, params)
    for b, h, s in [(1, 8, 3), (3, 5, 7), (2, 9, 1)]:
        x, y = torch.randn(b, 3, h, h + 2), torch.randn(b, s, 8)
        want = [t.detach().numpy() for t in net(x, y)]
        got = lib.run(x=x.numpy(), y=y.numpy())
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_a_shared_symbol_that_disagrees_names_input_and_axis():
    _, ts = traced()
    mod, params = xrelay.from_pytorch(ts, [("x", ("batch", 3, 8, 8)), ("y", ("batch", 6, 8))])
    lib = xrelay.build(mod, params)
    x, y = np.zeros((2, 3, 8, 8), np.float32), np.zeros((3, 6, 8), np.float32)
    with pytest.raises(xrelay.Error, match=r"input 'y' axis 0 .*'batch'"):
        lib.run(x=x, y=y)


def test_results_of_unknown_size():
    """Strided slices of dynamic axes: result dimensions no single symbol gives are `?`."""

    class Slices(torch.nn.Module):
        def forward(self, x):
            return x[:, ::2, ::3] * 2

    ts = torch.jit.trace(Slices(), (torch.randn(2, 8, 9),))
    mod, params = xrelay.from_pytorch(ts, [("x", (2, None, None))])
    assert "-> tensor<2x?x?xf32>" in str(mod)
    lib = xrelay.build(mod, params)
    for shape in [(2, 10, 7), (2, 3, 3)]:
        x = torch.randn(*shape)
        (got,) = lib.run(x=x.numpy())
        np.testing.assert_array_equal(got, Slices()(x).numpy())


@pytest.mark.parametrize("bad", [(-2, 3), (1.5, 3), (True, 3)])
def test_bad_dimensions_are_errors(bad):
    _, ts = traced()
    with pytest.raises(xrelay.Error, match="input 'x': shape must be"):
        xrelay.from_pytorch(ts, [("x", bad), ("y", (2, 6, 8))])


def test_debug_executor_runs_the_deferred_module():
    net, ts = traced()
    mod, params = xrelay.from_pytorch(ts, [("x", ("batch", 3, 8, 8)), ("y", ("batch", 6, 8))])
    x, y = torch.randn(3, 3, 8, 8), torch.randn(3, 6, 8)
    got = xrelay.create_executor("debug", mod, params).run(x=x.numpy(), y=y.numpy())
    for g, w in zip(got, net(x, y)):
        np.testing.assert_allclose(g, w.detach().numpy(), rtol=1e-5, atol=1e-5)
