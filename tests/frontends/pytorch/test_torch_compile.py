"""`torch.compile(model, backend="xrelay")` (dynamo.py): the PyTorch model
suite against torch eager, graphs split around an op xrelay does not convert, the per-signature
cache, inference-only use, options, the backend's registration and bench/torch_compile.py
(slow tier)."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import xrelay
from torch import nn
from xrelay import dynamo
from xrelay.lowering import jit

from .torch_zoo import ZOO, torch_outputs

pytestmark = [
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]

SUITE = ["bert", "gpt2", "vit", "resnet50", "mobilenet_v2", "convnext"]


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def stats() -> dict[str, int]:
    return dict(dynamo.STATS)


def delta(before: dict[str, int], key: str) -> int:
    return dynamo.STATS[key] - before.get(key, 0)


def assert_close(got: list[torch.Tensor], want: list[torch.Tensor], rtol: float) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        w = w.numpy()
        scale = float(np.max(np.abs(w))) if w.size else 1.0
        assert scale > 1e-3, "the reference output is near zero: the comparison proves little"
        np.testing.assert_allclose(g.numpy(), w, rtol=rtol, atol=rtol * scale)


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=[pytest.mark.slow] if ZOO[n].slow else []) for n in SUITE],
)
def test_suite_matches_eager(name: str) -> None:
    entry = ZOO[name]
    model, inputs = entry.build()
    want = torch_outputs(model, inputs)
    before = stats()
    compiled = torch.compile(model, backend="xrelay")
    got = torch_outputs(compiled, inputs)
    assert_close(got, want, entry.rtol)
    # compiled by xrelay, not run in eager torch behind our back
    assert delta(before, "builds") >= 1
    assert delta(before, "eager") == 0
    assert delta(before, "regions") == 0


# --- an op xrelay does not convert ---------------------------------------------------------

MYSTERY_CALLS = []


@torch.library.custom_op("xrelay_test::mystery", mutates_args=())
def mystery(x: torch.Tensor) -> torch.Tensor:
    """An op without an xrelay converter: reverses the last axis and doubles."""
    MYSTERY_CALLS.append(tuple(x.shape))
    return x.flip(-1) * 2


@mystery.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


class WithMystery(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(8, 16)
        self.b = nn.Linear(16, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(mystery(self.a(x).tanh())).softmax(-1)


def test_unsupported_op_runs_split(caplog: pytest.LogCaptureFixture) -> None:
    torch.manual_seed(0)
    model = WithMystery().eval()
    x = torch.randn(3, 8)
    with torch.no_grad():
        want = model(x)
    before = stats()
    MYSTERY_CALLS.clear()
    with caplog.at_level(logging.WARNING, logger=dynamo.__name__), torch.no_grad():
        got = torch.compile(model, backend="xrelay")(x)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    assert MYSTERY_CALLS == [(3, 16)]  # the unsupported op ran in eager torch, once
    assert delta(before, "regions") == 2  # linear+tanh before it, linear+softmax after
    assert delta(before, "eager") == 0
    assert "xrelay_test::mystery" in caplog.text and "split" in caplog.text


def test_unsupported_op_without_split_runs_eager(caplog: pytest.LogCaptureFixture) -> None:
    torch.manual_seed(0)
    model = WithMystery().eval()
    x = torch.randn(2, 8)
    with torch.no_grad():
        want = model(x)
    before = stats()
    with caplog.at_level(logging.WARNING, logger=dynamo.__name__), torch.no_grad():
        got = torch.compile(model, backend="xrelay", options={"split": False})(x)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    assert delta(before, "eager") == 1 and delta(before, "builds") == 0
    assert "eager torch" in caplog.text and "xrelay_test::mystery" in caplog.text


def test_unsupported_op_without_fallback_is_an_error() -> None:
    model = WithMystery().eval()
    compiled = torch.compile(model, backend="xrelay", options={"fallback": False, "split": False})
    with pytest.raises(xrelay.UnsupportedOpsError, match="xrelay_test::mystery"), torch.no_grad():
        compiled(torch.randn(2, 8))


# --- caching -------------------------------------------------------------------------------


def test_same_shapes_do_not_recompile() -> None:
    torch.manual_seed(0)
    model = ZOO["mlp"].build()[0]
    compiled = torch.compile(model, backend="xrelay")
    before = stats()
    with torch.no_grad():
        a = torch.randn(4, 32)
        compiled(a)
        after_first = stats()
        b = torch.randn(4, 32)
        got = compiled(b)
        assert stats() == after_first  # no backend call, no build
        np.testing.assert_allclose(got.numpy(), model(b).numpy(), rtol=1e-5, atol=1e-6)
        compiled(torch.randn(6, 32))  # a new shape compiles once more
        compiled(torch.randn(6, 32))
    assert delta(before, "builds") == 2
    assert delta(before, "eager") == 0


def test_weight_update_in_place_recompiles() -> None:
    torch.manual_seed(0)
    model = ZOO["mlp"].build()[0]
    compiled = torch.compile(model, backend="xrelay")
    x = torch.randn(4, 32)
    with torch.no_grad():
        compiled(x)
        model.layers[0].weight.mul_(-1.5)  # the compiled copy would now be stale
        got = compiled(x)
        np.testing.assert_allclose(got.numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)


def test_signature_cache_is_bounded() -> None:
    graph = dynamo.xrelay_backend(
        torch.fx.symbolic_trace(lambda x: x * 2 + 1), [torch.zeros(1)], {"max_signatures": 2}
    )
    before = stats()
    for n in (1, 2, 3, 1):
        x = torch.arange(n, dtype=torch.float32)
        torch.testing.assert_close(graph(x), x * 2 + 1)
    assert len(graph.entries) == 2
    assert delta(before, "builds") == 4  # shape 1 was dropped, then compiled again


# --- inference only, options, registration -------------------------------------------------


def test_gradients_required_is_an_error() -> None:
    """Inference only: a call under grad mode whose parameters (or inputs) require grad raises,
    naming the way out; the same compiled model runs under torch.no_grad()."""
    torch.manual_seed(0)
    model = ZOO["mlp"].build()[0]
    x = torch.randn(4, 32)
    compiled = torch.compile(model, backend="xrelay")
    before = stats()
    with pytest.raises(xrelay.Error, match=r"inference only.*torch\.no_grad\(\).*inference_mode"):
        compiled(x)  # the parameters require grad
    assert delta(before, "eager") == 0 and delta(before, "builds") == 0
    with torch.no_grad():
        np.testing.assert_allclose(compiled(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)
    model.requires_grad_(False)
    with pytest.raises(xrelay.Error, match="grad_fallback"):
        compiled(x.requires_grad_())  # an input requires grad


def test_gradients_with_grad_fallback_run_eager(caplog: pytest.LogCaptureFixture) -> None:
    torch.manual_seed(0)
    model = ZOO["mlp"].build()[0]
    x = torch.randn(4, 32)
    compiled = torch.compile(model, backend="xrelay", options={"grad_fallback": True})
    before = stats()
    with caplog.at_level(logging.WARNING, logger=dynamo.__name__):
        y = compiled(x)
    assert y.requires_grad
    y.sum().backward()  # autograd saw the real ops
    assert model.layers[0].weight.grad is not None
    assert "inference only" in caplog.text and "grad_fallback" in caplog.text
    assert delta(before, "eager") == 1 and delta(before, "builds") == 0
    with torch.no_grad():  # calls without gradients are still compiled
        np.testing.assert_allclose(compiled(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)
    assert delta(before, "builds") == 1


def test_inference_mode() -> None:
    torch.manual_seed(0)
    model = ZOO["attention"].build()[0]
    x = torch.randn(2, 8, 32)
    before = stats()
    with torch.inference_mode():
        got = torch.compile(model, backend="xrelay")(x)
        np.testing.assert_allclose(got.numpy(), model(x).numpy(), rtol=1e-5, atol=1e-5)
    assert delta(before, "builds") == 1 and delta(before, "eager") == 0


def test_unknown_option_is_an_error() -> None:
    compiled = torch.compile(ZOO["mlp"].build()[0], backend="xrelay", options={"thread": 2})
    with pytest.raises(Exception, match="unknown option"), torch.no_grad():
        compiled(torch.randn(4, 32))


@pytest.mark.parametrize("threads", [1, 2])
def test_threads_option(threads: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """`threads` is the count each compiled library loads with (it overrides
    XRELAY_NUM_THREADS, which is restored after the build); results equal eager torch."""
    loaded: list[int] = []
    read = jit.num_threads

    def recording() -> int:
        loaded.append(read())
        return loaded[-1]

    monkeypatch.setattr(jit, "num_threads", recording)
    monkeypatch.setenv("XRELAY_NUM_THREADS", "5")
    torch.manual_seed(0)
    model = ZOO["mlp"].build()[0]
    x = torch.randn(4, 32)
    compiled = torch.compile(model, backend="xrelay", options={"threads": threads})
    with torch.no_grad():
        np.testing.assert_allclose(compiled(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)
        compiled(x)
    assert loaded == [threads], "the MLP's library loads the runtime GEMM's thread count once"
    assert os.environ["XRELAY_NUM_THREADS"] == "5"


@pytest.mark.parametrize("bad", [0, -2, 1.5, "2", True])
def test_threads_option_must_be_a_positive_int(bad: object) -> None:
    with pytest.raises(xrelay.Error, match=r"threads must be a positive int"):
        dynamo.Options.of({"threads": bad})
    compiled = torch.compile(ZOO["mlp"].build()[0], backend="xrelay", options={"threads": bad})
    with pytest.raises(Exception, match=r"threads must be a positive int") as info, torch.no_grad():
        compiled(torch.randn(4, 32))
    # torch wraps what a backend raises at compile time (BackendCompilerFailed)
    assert isinstance(getattr(info.value, "inner_exception", info.value), xrelay.Error)


def test_build_options_are_passed() -> None:
    model = ZOO["mlp"].build()[0]
    x = torch.randn(4, 32)
    compiled = torch.compile(model, backend="xrelay", options={"kernels": False, "cache": False})
    with torch.no_grad():
        np.testing.assert_allclose(compiled(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)


def test_backend_registered_without_importing_xrelay(tmp_path) -> None:
    """Through the `torch_dynamo_backends` entry point of the installed package (run outside
    the repository, as a user would)."""
    code = (
        "import sys, torch\n"
        "from torch._dynamo import list_backends\n"
        "assert 'xrelay' in list_backends(), list_backends()\n"
        "assert 'xrelay' not in sys.modules\n"
        "m = torch.nn.Linear(3, 2).eval()\n"
        "x = torch.randn(2, 3)\n"
        "with torch.no_grad():\n"
        "    y = torch.compile(m, backend='xrelay')(x)\n"
        "    torch.testing.assert_close(y, m(x))\n"
        "from xrelay.dynamo import STATS\n"
        "assert STATS['builds'] == 1, STATS\n"
        "print('ok')\n"
    )
    env = dict(os.environ, XRELAY_CACHE_DIR="off")
    out = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok")


@pytest.mark.slow
def test_bench_script_smoke(tmp_path: Path) -> None:
    """bench/torch_compile.py end to end on its tiny configs, one timed run each (inductor
    compiles both models too: tens of seconds with a warm inductor cache, minutes without, so
    the slow tier): both models, all three systems, xrelay compiled (no eager fallback) and
    matching eager torch."""
    script = Path(__file__).parents[3] / "bench" / "torch_compile.py"
    rows_path = tmp_path / "rows.json"
    args = ["--smoke", "--runs", "1", "--seconds", "0", "--settle", "0", "--json", str(rows_path)]
    out = subprocess.run(
        [sys.executable, str(script), *args],
        check=False,
        capture_output=True,
        text=True,
        env=dict(os.environ, XRELAY_CACHE_DIR="off"),
        timeout=900,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    rows = json.loads(rows_path.read_text())
    assert [r["model"] for r in rows] == ["bert_base", "resnet50"]
    for row in rows:
        assert not [k for k in row if k.endswith(("failed", "note"))], row
        for system in ("eager", "xrelay", "inductor"):
            assert row[f"{system} ms"] > 0, (system, row)
        assert row["xrelay error"] < 1e-4, row
    assert "xr/eager" in out.stdout and "bert_base" in out.stdout
