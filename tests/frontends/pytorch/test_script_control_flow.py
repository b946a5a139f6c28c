"""Scripted modules whose control flow is decided at run time: prim::If on a condition
computed from tensors becomes relay.if, prim::Loop with a run-time trip count or condition
becomes relay.loop. Each module is compared with torch eager on inputs that take both
branches and 0, 1 and several iterations, through `xrelay.build` and the debug executor."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import xrelay
from torch import nn

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _check(module: nn.Module, infos: list, cases: list[tuple[torch.Tensor, ...]]) -> tuple:
    """Import the scripted `module`, then compare the built library and the debug executor
    with eager on every case; returns (mod, lib)."""
    mod, params = xrelay.from_pytorch(torch.jit.script(module), infos)
    lib = xrelay.build(mod, params)
    debug = xrelay.create_executor("debug", mod, params)
    names = [name for name, _ in infos]
    for inputs in cases:
        want = module(*inputs)
        want = list(want) if isinstance(want, tuple) else [want]
        feeds = {n: t.numpy() for n, t in zip(names, inputs)}
        for run in (lib.run, debug.run):
            got = run(**feeds)
            assert len(got) == len(want)
            for g, w in zip(got, want):
                w = w.detach().numpy() if isinstance(w, torch.Tensor) else np.asarray(w)
                assert g.shape == w.shape
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    return mod, lib


class Branches(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            y = torch.relu(x) * 2
        else:
            y = x - 1
        return y


def test_if_on_a_run_time_condition_takes_either_branch():
    mod, _ = _check(Branches(), [("x", (3, 4))], [(torch.rand(3, 4),), (-torch.rand(3, 4),)])
    assert "relay.if" in str(mod)


class Shapes(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if bool((x > 0).any()):
            y = x[:2] + 1
        else:
            y = x[1:] * 3
        return y


def test_branches_of_different_shapes_give_a_fresh_dimension():
    x = torch.randn(5, 2)
    mod, _ = _check(Shapes(), [("x", (5, 2))], [(x.abs(),), (-x.abs(),)])
    # the rows are 2 or 4: a symbol of the if's own; the columns agree
    assert 'tensor<?x2xf32, #relay.dims<"if1_r0_0">>' in str(mod)


class Repeat(nn.Module):
    def forward(self, x: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        acc = torch.zeros(3)
        for i in range(int(k)):
            acc = acc * 0.5 + x * i
        return acc


def test_for_loop_over_a_run_time_count():
    x = torch.randn(3)
    cases = [(x, torch.tensor(k)) for k in (0, 1, 5)]
    mod, _ = _check(Repeat(), [("x", (3,)), ("k", ((), "int64"))], cases)
    assert "relay.loop" in str(mod)


class Doubling(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, int]:
        steps = 0
        while bool(x.abs().sum() < 100.0):
            x = x * 2
            steps += 1
        return x, steps


def test_while_loop_on_a_data_dependent_condition_carries_a_python_int():
    """0, 1 and 5 iterations; the step count (a Python int) is carried as a 0-d tensor."""
    cases = [
        (torch.tensor([60.0, -50.0]),),
        (torch.tensor([30.0, 40.0]),),
        (torch.tensor([3.0, 1.0]),),
    ]
    assert [Doubling()(*c)[1] for c in cases] == [0, 1, 5]
    _check(Doubling(), [("x", (2,))], cases)


class Grow(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        while bool(x.sum() < 50.0):
            x = torch.cat([x, x + 1])
        return x


def test_loop_carried_value_that_grows():
    """The carried tensor's length changes every iteration: a symbol the body binds afresh."""
    cases = [(torch.tensor([60.0]),), (torch.tensor([1.0, 2.0]),), (torch.tensor([0.1]),)]
    mod, _ = _check(Grow(), [("x", (None,))], cases)
    assert "relay.deferred" not in str(mod)


class Accumulate(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        acc = torch.zeros(x.shape[1])
        for i in range(x.shape[0]):
            acc = acc + x[i] * i
        if x.sum() > 0:
            acc = acc * 2
        else:
            acc = acc - 1
        return acc


def test_loop_over_a_dynamic_dimension_and_a_run_time_if_compile_once():
    """`range(x.shape[0])` of a dynamic input is a run-time trip count: one import and one
    build serve every size (no per-size conversion), both branches, 0, 1 and 5 rows."""
    cases = [(torch.rand(n, 4) * s,) for n in (1, 5) for s in (1.0, -1.0)]
    cases += [(torch.zeros(0, 4),), (torch.rand(3, 4) - 0.4,)]
    mod, lib = _check(Accumulate(), [("x", (None, 4))], cases)
    text = str(mod)
    assert "relay.deferred" not in text and "relay.loop" in text and "relay.if" in text
    compiled = lib.compiles
    for n in (2, 7):
        x = torch.randn(n, 4)
        np.testing.assert_allclose(lib.run(x=x.numpy())[0], Accumulate()(x).numpy(), atol=1e-5)
    assert lib.compiles == compiled  # new sizes compiled nothing


class Linear(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x)
        for _ in range(x.shape[0]):
            y = y + 1
        if y.sum() > 0:
            y = y * 2
        return y


def _linear_cases() -> tuple[nn.Module, list]:
    torch.manual_seed(0)
    return Linear().eval(), [(torch.randn(n, 4) * 10 * s,) for n in (1, 3) for s in (1, -1)]


def test_dynamic_input_an_op_needs_static_sizes_for_converts_per_size():
    """nn.Linear reads static sizes, so the module is converted for each input size (a
    relay.deferred node); each conversion still holds relay.if."""
    net, cases = _linear_cases()
    mod, params = xrelay.from_pytorch(torch.jit.script(net), [("x", (None, 4))])
    assert "relay.deferred" in str(mod)
    lib = xrelay.build(mod, params)
    for (x,) in cases:
        (got,) = lib.run(x=x.numpy())
        np.testing.assert_allclose(got, net(x).detach().numpy(), rtol=1e-5, atol=1e-4)


def test_debug_executor_on_a_per_size_conversion_with_an_if():
    """Regression: a relay.deferred node that expands into relay.if was evaluated without
    the control-flow walk ("no reference implementation for 'relay.if'")."""
    net, cases = _linear_cases()
    mod, params = xrelay.from_pytorch(torch.jit.script(net), [("x", (None, 4))])
    debug = xrelay.create_executor("debug", mod, params)
    for (x,) in cases:
        (got,) = debug.run(x=x.numpy())
        np.testing.assert_allclose(got, net(x).detach().numpy(), rtol=1e-5, atol=1e-4)


class Ranks(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            y = x
        else:
            y = x[0]
        return y


def test_branches_of_different_ranks_are_an_error_naming_the_op():
    with pytest.raises(
        xrelay.Error, match=r"'prim::If' \(#1\): output 0 is tensor<2x3xf32> .*rank"
    ):
        xrelay.from_pytorch(torch.jit.script(Ranks()), [("x", (2, 3))])


class InPlace(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        if x.sum() > 0:
            y.add_(1)
        return y


def test_in_place_update_of_an_outer_value_in_a_branch_is_an_error():
    with pytest.raises(xrelay.Error, match=r"'aten::add_' \(#1\): unsupported in-place update"):
        xrelay.from_pytorch(torch.jit.script(InPlace()), [("x", (2, 3))])


class Masked(nn.Module):
    def forward(self, x: torch.Tensor):
        return x[x > 0] * 2, torch.nonzero(x), torch.masked_select(x, x < -0.5).sum()


def test_masked_selection_gives_a_data_dependent_size():
    """x[mask], nonzero and masked_select with a mask computed at run time: relay.nonzero,
    one build, results of the size the data selects (none, some, all)."""
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(0))
    mod, _ = _check(Masked(), [("x", (3, 4))], [(x,), (-torch.ones(3, 4),), (torch.ones(3, 4),)])
    assert "relay.nonzero" in str(mod)


def test_a_data_dependent_size_through_torch_export_is_a_clear_error():
    ep = torch.export.export(Masked(), (torch.randn(3, 4),))
    with pytest.raises(xrelay.Error, match="dynamic"):
        xrelay.from_exported_program(ep)
