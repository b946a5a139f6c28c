"""bind_params_by_name + fold-constants on an imported model: weights become constants,
weight-only subgraphs fold, and the compiled model still computes the same numbers."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from xdsl.context import Context
from xrelay.dialects import relay
from xrelay.transforms.fold_constants import FoldConstants


def _model():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3),
        torch.nn.BatchNorm2d(4),
        torch.nn.ReLU(),
        torch.nn.Flatten(),
        torch.nn.Linear(4 * 6 * 6, 5),
    ).eval()
    x = torch.randn(1, 3, 8, 8)
    module, params = xrelay.from_exported_program(torch.export.export(model, (x,)))
    return module, params, x.numpy(), model(x).detach().numpy()


def test_bound_and_folded_model_matches() -> None:
    module, params, x, want = _model()
    transposes = sum(isinstance(op, relay.TransposeOp) for op in module.walk())
    assert transposes == 1  # the linear weight's transpose, computed at run time
    xrelay.bind_params_by_name(module, params)
    FoldConstants().apply(Context(), module)
    xrelay.verify_module(module)
    assert not any(isinstance(op, relay.TransposeOp) for op in module.walk())
    assert [a.name_hint for a in module.body.block.ops.first.args] == ["input"]
    (got,) = xrelay.build(module).run(x)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_bind_params_errors() -> None:
    module, _, _, _ = _model()
    with pytest.raises(xrelay.Error, match="'nope' is not an argument of @main"):
        xrelay.bind_params_by_name(module, {"nope": np.zeros(1)})
    with pytest.raises(
        xrelay.Error, match="'0.weight' is tensor<4x3x3x3xf32> but the array is float64"
    ):
        xrelay.bind_params_by_name(module, {"0.weight": np.zeros((4, 3, 3, 3))})


def test_simplify_inference_then_fold_matches() -> None:
    from xrelay.transforms.simplify_inference import SimplifyInference

    module, params, x, want = _model()
    xrelay.bind_params_by_name(module, params)
    SimplifyInference().apply(Context(), module)
    FoldConstants().apply(Context(), module)
    xrelay.verify_module(module)
    names = [op.name for op in module.walk()]
    assert "relay.nn.batch_norm" not in names
    conv = next(op for op in module.walk() if isinstance(op, relay.Conv2DOp))
    assert isinstance(conv.weight.owner, relay.ConstantOp)
    assert [type(u.operation) for u in conv.result.uses] == [relay.BiasAddOp]
    (got,) = xrelay.build(module).run(x)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
