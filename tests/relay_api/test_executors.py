"""create_executor's four kinds (debug: the reference executor; graph; vm; aot: through a
saved artifact) give the same outputs on a CNN, an MLP and an attention block, and match
onnxruntime; "vm" runs a dynamic batch at two sizes, which "graph" and "aot" refuse."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from xrelay import relay
from xrelay.relay.nd import NDArray

from . import models

pytest.importorskip("onnxruntime")

rng = np.random.default_rng(20)
KINDS = ["debug", "graph", "vm", "aot"]


def feeds(name: str) -> tuple:
    """(model, inputs) of the case, at static shapes."""
    if name == "cnn":
        return models.cnn(batch=2), {"input": rng.standard_normal((2, 3, 16, 16), np.float32)}
    if name == "mlp":
        return models.mlp(batch=3), {"x": rng.standard_normal((3, 16), np.float32)}
    mask = np.where(rng.random((2, 1, 6)) < 0.3, -1e4, 0).astype(np.float32)
    return models.attention(), {"x": rng.standard_normal((2, 6, 8), np.float32), "mask": mask}


@pytest.mark.parametrize("name", ["cnn", "mlp", "attention"])
def test_the_four_kinds_agree(name):
    model, inputs = feeds(name)
    want = models.onnxruntime_outputs(model, inputs)
    mod, params = relay.frontend.from_onnx(model)
    outs = {}
    for kind in KINDS:
        run = relay.create_executor(kind, mod, relay.cpu(0), "llvm", params).evaluate()
        # positional data inputs, parameters by name, as Relay scripts call it
        got = run(*[relay.nd.array(v) for v in inputs.values()], **params)
        outs[kind] = [got] if isinstance(got, NDArray) else got
        assert len(outs[kind]) == len(want)
    for kind in KINDS:
        for got, ref, expected in zip(outs[kind], outs["debug"], want):
            models.assert_close(got.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)
            models.assert_close(got.numpy(), expected)


def test_vm_runs_a_dynamic_batch_at_two_sizes():
    model = models.mlp(batch="batch")
    mod, params = relay.frontend.from_onnx(model)
    vm = relay.create_executor("vm", mod, target="llvm", params=params).evaluate()
    debug = relay.create_executor("debug", mod, params=params).evaluate()
    for batch in (1, 5):
        x = rng.standard_normal((batch, 16), np.float32)
        (want,) = models.onnxruntime_outputs(model, {"x": x})
        got = vm(x)
        assert got.shape == (batch, 4)
        models.assert_close(got.numpy(), want)
        models.assert_close(got.numpy(), debug(x=x).numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", ["graph", "aot"])
def test_static_kinds_refuse_dynamic_shapes(kind):
    mod, params = relay.frontend.from_onnx(models.mlp(batch="batch"))
    with pytest.raises(xrelay.Error, match=rf"create_executor\('{kind}'\).*dynamic.*'vm'"):
        relay.create_executor(kind, mod, params=params).evaluate()
    with pytest.raises(xrelay.Error, match=r"relay.build: the model has dynamic dimensions"):
        relay.build(mod, params=params)


def test_inputs_are_checked_and_changed_params_are_used():
    model, inputs = feeds("mlp")
    mod, params = relay.frontend.from_onnx(model)
    run = relay.create_executor("graph", mod, params=params).evaluate()
    with pytest.raises(xrelay.Error, match="input 'x' expects"):
        run(inputs["x"][:1, :8])
    # a parameter given with a new value is the one used (as the debug executor does)
    changed = {**params, "b2": params["b2"] + 1}
    want = relay.create_executor("debug", mod, params=changed).evaluate()(**inputs)
    models.assert_close(run(**inputs, b2=changed["b2"]).numpy(), want.numpy(), 1e-5, 1e-6)
