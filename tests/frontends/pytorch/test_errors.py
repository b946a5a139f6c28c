"""PyTorch frontend options and errors: missing ops, input_infos, capture inputs, dynamic
dimensions, custom converters, parameter naming and scopes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import xrelay
from torch import nn
from xdsl.dialects.builtin import NameLoc
from xrelay.dialects import relay

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")


class Unsupported(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.logcumsumexp(x, 1) + torch.logcumsumexp(x, 0)
        return torch.cummax(y, dim=1).values + torch.kthvalue(x, 2, dim=1, keepdim=True).values


class Small(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x)).reshape(2, 3)


def traced(model: nn.Module, *inputs: torch.Tensor) -> torch.jit.ScriptModule:
    return torch.jit.trace(model.eval(), inputs)


def test_missing_ops_are_listed_once_with_counts_exported() -> None:
    ep = torch.export.export(Unsupported(), (torch.randn(2, 3),))
    with pytest.raises(xrelay.UnsupportedOpsError) as info:
        xrelay.from_exported_program(ep)
    message = str(info.value)
    assert "aten::logcumsumexp x2" in message and "aten::cummax x1" in message
    assert "aten::kthvalue x1" in message


def test_missing_ops_are_listed_once_with_counts_torchscript() -> None:
    ts = traced(Unsupported(), torch.randn(2, 3))
    with pytest.raises(xrelay.UnsupportedOpsError) as info:
        xrelay.from_pytorch(ts, [("x", (2, 3))])
    message = str(info.value)
    assert "aten::logcumsumexp x2" in message and "aten::cummax x1" in message
    assert "aten::kthvalue x1" in message


def test_custom_convert_map_supplies_a_missing_op() -> None:
    class Flip(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.flip(x, [1]) * 2

    def flip_last(c):  # reverse the last axis with a take of constant indices
        n = c.shape(0)[-1]
        indices = c.constant(np.arange(n - 1, -1, -1, dtype=np.int64))
        return c.emit(relay.TakeOp(c.tensor(0), indices, axis=c.rank(0) - 1))

    x = torch.randn(2, 5)
    module, params = xrelay.from_pytorch(
        traced(Flip(), x), [("x", (2, 5))], custom_convert_map={"aten::flip": flip_last}
    )
    (got,) = xrelay.build(module, params=params).run(x=x.numpy())
    np.testing.assert_array_equal(got, Flip()(x).numpy())


@pytest.mark.parametrize(
    ("infos", "message"),
    [
        ([("x", (2, 4)), ("y", (2, 4))], "input_infos gives 2 input(s) but the graph takes 1"),
        ([("x", (2, 4, 1))], "input_infos gives rank 3"),
        (
            [("x", ((2, 4), "int64"))],
            "input_infos gives torch.int64 but the graph was captured with torch.float32",
        ),
        ([("x", (2, -4))], "shape must be a list of non-negative ints"),
        ([("x",)], "input_infos[0] must be (name, shape)"),
        ([("x", ((2, 4), "complex64"))], "unsupported dtype"),
    ],
)
def test_wrong_input_infos(infos, message) -> None:
    ts = traced(Small(), torch.randn(2, 4))
    with pytest.raises(xrelay.Error) as info:
        xrelay.from_pytorch(ts, infos)
    assert message in str(info.value)


def test_input_shape_that_does_not_fit_the_graph_names_the_op() -> None:
    ts = traced(Small(), torch.randn(2, 4))
    with pytest.raises(xrelay.Error) as info:
        xrelay.from_pytorch(ts, [("x", (3, 4))])  # the traced reshape wants 6 elements
    assert "aten::reshape" in str(info.value) and "does not fit 9 elements" in str(info.value)


def test_capture_inputs_must_be_captured_programs() -> None:
    with pytest.raises(xrelay.Error, match="expects a TorchScript module"):
        xrelay.from_pytorch(Small(), [("x", (2, 4))])
    ep = torch.export.export(Small(), (torch.randn(2, 4),))
    with pytest.raises(xrelay.Error, match="use from_exported_program"):
        xrelay.from_pytorch(ep, [("x", (2, 4))])
    with pytest.raises(xrelay.Error, match="expects a torch.export.ExportedProgram"):
        xrelay.from_exported_program(Small())


def test_non_tensor_graph_input_is_rejected() -> None:
    class Pair(nn.Module):
        def forward(self, xy: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
            return xy[0] + xy[1]

    ts = torch.jit.script(Pair())
    with pytest.raises(xrelay.Error, match="only tensor inputs are supported"):
        xrelay.from_pytorch(ts, [("xy", (2,))])


def test_size_outside_a_dims_range_is_rejected_by_name() -> None:
    batch = torch.export.Dim("batch", min=2, max=64)
    ep = torch.export.export(
        nn.Linear(4, 3), (torch.randn(4, 4),), dynamic_shapes={"input": {0: batch}}
    )
    lib = xrelay.build(*xrelay.from_exported_program(ep))
    assert lib.run(input=np.ones((5, 4), np.float32))[0].shape == (5, 3)
    for size in (1, 65):
        with pytest.raises(xrelay.Error) as info:
            lib.run(input=np.ones((size, 4), np.float32))
        message = str(info.value)
        assert "input 'input' axis 0" in message and "[2, 64]" in message and "'batch'" in message


def test_random_ops_are_rejected() -> None:
    class Noisy(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + torch.rand(x.shape)

    with pytest.raises(xrelay.Error, match="random ops are not supported"):
        xrelay.from_exported_program(torch.export.export(Noisy(), (torch.randn(2, 2),)))


def test_a_run_time_mask_selects_rows_of_data_dependent_count() -> None:
    """x[mask] with a mask computed at run time is relay.nonzero (it was refused before):
    one build, as many rows as each mask selects."""

    class Masked(nn.Module):
        def forward(self, x: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
            return x[i > 0]

    x = torch.randn(4, 2)
    ts = traced(Masked(), x, torch.tensor([1, -1, 1, 1]))
    lib = xrelay.build(*xrelay.from_pytorch(ts, [("x", (4, 2)), ("i", ((4,), "int64"))]))
    for mask in ([1, -1, 1, 1], [-1, -1, -1, -1], [1, 1, 1, 1], [-1, 2, -1, -1]):
        i = torch.tensor(mask)
        (got,) = lib.run(x=x.numpy(), i=i.numpy())
        np.testing.assert_array_equal(got, x[i > 0].numpy())


def test_params_are_named_by_state_dict_key_and_optionally_parser_friendly() -> None:
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2)).eval()
    x = torch.randn(1, 4)
    _, params = xrelay.from_pytorch(traced(model, x), [("x", (1, 4))])
    assert list(params) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    _, friendly = xrelay.from_pytorch(
        traced(model, x), [("x", (1, 4))], use_parser_friendly_name=True
    )
    assert list(friendly) == ["0_weight", "0_bias", "2_weight", "2_bias"]
    _, exported = xrelay.from_exported_program(torch.export.export(model, (x,)))
    assert list(exported) == list(params)


def test_frozen_params_embed_constants() -> None:
    model, x = Small().eval(), torch.randn(2, 4)
    module, params = xrelay.from_exported_program(
        torch.export.export(model, (x,)), keep_params_as_inputs=False
    )
    assert params == {}
    (got,) = xrelay.build(module).run(x=x.numpy())
    np.testing.assert_allclose(got, model(x).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_preserve_pytorch_scopes_locates_ops_by_module_path() -> None:
    class Outer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.block = nn.Sequential(nn.Linear(4, 4), nn.Tanh())

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.block(x)

    x = torch.randn(1, 4)
    module, _ = xrelay.from_pytorch(
        traced(Outer(), x), [("x", (1, 4))], preserve_pytorch_scopes=True
    )
    names = {op.location.desc.data for op in module.walk() if isinstance(op.location, NameLoc)}
    assert "block.0/aten::linear_1" in names and "block.1/aten::tanh_1" in names
    module, _ = xrelay.from_pytorch(traced(Outer(), x), [("x", (1, 4))])
    names = {op.location.desc.data for op in module.walk() if isinstance(op.location, NameLoc)}
    assert "aten::linear_1" in names


def test_inplace_update_of_a_view_is_refused() -> None:
    class ViewInplace(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = x * 1
            y[0].add_(1)
            return y

    ts = traced(ViewInplace(), torch.randn(2, 3))
    with pytest.raises(xrelay.Error, match="in-place update of a view"):
        xrelay.from_pytorch(ts, [("x", (2, 3))])


def test_wrong_run_time_input_is_an_error() -> None:
    model, x = Small().eval(), torch.randn(2, 4)
    module, params = xrelay.from_exported_program(torch.export.export(model, (x,)))
    lib = xrelay.build(module, params=params)
    with pytest.raises(
        xrelay.Error, match=r"input 'x' expects float32\[2, 4\], got float32\[3, 4\]"
    ):
        lib.run(x=np.zeros((3, 4), np.float32))


class _CumsumAlong(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, self.dim)


def test_a_dimension_out_of_range_in_a_scripted_function_is_an_error() -> None:
    """A scripted function imports code torch never ran: cumsum's dim 5 on a rank-2 input
    was taken modulo the rank (dim 1, an answer) where torch raises."""
    script = torch.jit.script(_CumsumAlong(5))
    with pytest.raises(xrelay.Error, match=r"cumsum.*dimension 5 is out of range for rank 2"):
        xrelay.build(*xrelay.from_pytorch(script, [("x", (2, 3))]))
    ok = xrelay.build(*xrelay.from_pytorch(torch.jit.script(_CumsumAlong(-1)), [("x", (2, 3))]))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(ok.run(x)[0], np.cumsum(x, axis=1))
