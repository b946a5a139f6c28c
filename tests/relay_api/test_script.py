"""A Relay script, as TVM's tutorials write it, run on xrelay: ONNX import with a shape
dict, a PassContext, create_executor("graph").evaluate()(x, **params); then relay.build,
GraphModule (set_input / run / get_output) and export_library. A small CNN with seeded
weights, against onnxruntime."""

from __future__ import annotations

import ctypes
import shutil

import numpy as np
import pytest
from xrelay import relay
from xrelay.relay import graph_executor

from . import models

pytest.importorskip("onnxruntime")


@pytest.fixture(scope="module")
def cnn():
    model = models.cnn()
    x = np.random.default_rng(10).standard_normal((1, 3, 16, 16)).astype(np.float32)
    return model, x, models.onnxruntime_outputs(model, {"input": x})


@pytest.fixture(scope="module")
def factory(cnn):
    model, x, _ = cnn
    mod, params = relay.frontend.from_onnx(model, {"input": x.shape})
    with relay.transform.PassContext(opt_level=3):
        return relay.build(mod, target="llvm", params=params)


def test_create_executor_graph_evaluate(cnn):
    model, x, (logits, probabilities) = cnn
    shape_dict = {"input": x.shape}
    mod, params = relay.frontend.from_onnx(model, shape_dict)
    with relay.transform.PassContext(opt_level=3):
        executor = relay.build_module.create_executor(
            "graph", mod, relay.cpu(0), "llvm", params
        ).evaluate()
    out = executor(relay.nd.array(x.astype("float32")), **params)
    assert isinstance(out, list) and len(out) == 2
    models.assert_close(out[0].numpy(), logits)
    models.assert_close(out[1].asnumpy(), probabilities)


@pytest.mark.parametrize("kind", ["debug", "graph", "vm", "aot"])
def test_params_given_only_to_the_call(cnn, kind):
    """TVM's tutorial form: create_executor(kind, mod, dev, target) with no params, then
    evaluate()(x, **params): the first call compiles with them (it raised 'missing
    parameters'); new values of a parameter compile again, so they are what runs."""
    model, x, (logits, probabilities) = cnn
    mod, params = relay.frontend.from_onnx(model, {"input": x.shape})
    with relay.transform.PassContext(opt_level=3):
        run = relay.build_module.create_executor(kind, mod, relay.cpu(0), "llvm").evaluate()
    out = run(relay.nd.array(x), **params)
    models.assert_close(out[0].numpy(), logits)
    models.assert_close(out[1].numpy(), probabilities)
    again = run(x, **params)  # the same weights: no new build, the same results
    np.testing.assert_array_equal(again[0].numpy(), out[0].numpy())
    name, weight = next((n, w) for n, w in params.items() if np.asarray(w).ndim == 4)
    changed = {**params, name: np.asarray(weight) * 0}
    zeroed = run(x, **changed)
    assert not np.allclose(zeroed[0].numpy(), out[0].numpy())


def test_graph_module_set_input_run_get_output(cnn, factory):
    _, x, (logits, probabilities) = cnn
    dev = relay.cpu(0)
    m = graph_executor.GraphModule(factory["default"](dev))
    m.set_input("input", relay.nd.array(x))
    m.set_input(**factory.get_params())
    m.run()
    assert m.get_num_outputs() == 2 and m.get_num_inputs() == 1
    models.assert_close(m.get_output(0).numpy(), logits)
    models.assert_close(m.get_output(1).numpy(), probabilities)
    np.testing.assert_array_equal(m.get_input("input").numpy(), x)
    np.testing.assert_array_equal(m.get_input(0).numpy(), x)

    # by index, then a new input through run(**inputs); get_output into a given array
    m.set_input(0, np.zeros_like(x))
    m.run(input=-x)
    out = relay.nd.empty((1, 10), "float32", dev)
    assert m.get_output(0, out) is out
    (want, _) = models.onnxruntime_outputs(cnn[0], {"input": -x})
    models.assert_close(out.numpy(), want)


def test_factory_parts(factory):
    params = factory.get_params()
    assert set(params) == {"c1.w", "c1.b", "bn.g", "bn.b", "bn.m", "bn.v", "c2.w", "c2.b",
                           "fc.w", "fc.b"}  # fmt: skip
    assert params["c1.w"].shape == (8, 3, 3, 3) and params["c1.w"].dtype == "float32"
    assert hasattr(factory.get_lib(), "run")


@pytest.mark.skipif(
    shutil.which("cc") is None or shutil.which("objcopy") is None,
    reason="export_library needs a C compiler and objcopy",
)
def test_export_library_runs_from_c(cnn, factory, tmp_path):
    _, x, (logits, probabilities) = cnn
    header = factory.export_library(str(tmp_path / "cnn.so"))
    assert "xr_cnn_run" in header.read_text()
    so = ctypes.CDLL(str(tmp_path / "cnn.so"))
    outputs = [np.empty((1, 10), np.float32) for _ in range(2)]
    inputs = (ctypes.c_void_p * 1)(x.ctypes.data)
    buffers = (ctypes.c_void_p * 2)(*[o.ctypes.data for o in outputs])
    assert so.xr_cnn_run(inputs, buffers) == 0
    models.assert_close(outputs[0], logits)
    models.assert_close(outputs[1], probabilities)
