"""The Relay script of test_script.py on ResNet-50 (the onnx package's `light` model with
seeded weights) and BERT-base (transformers config, random weights, exported with
torch.onnx), against onnxruntime: create_executor("graph") with the weights passed per
call, relay.build + GraphModule, and export_library called from C. Slow tier: nothing is
downloaded."""

from __future__ import annotations

import ctypes
import os
import shutil

import numpy as np
import onnx
import pytest
from xrelay import relay
from xrelay.relay import graph_executor

from . import models

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::FutureWarning")]
pytest.importorskip("onnxruntime")


def resnet50(tmp_path) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    from ..e2e.onnx_backend.data_cases import collect, with_real_weights

    (case,) = [c for c in collect("light") if c.name == "light_resnet50"]
    model = with_real_weights(onnx.load(str(case.model_path)))
    x = np.random.default_rng(40).standard_normal((1, 3, 224, 224)).astype(np.float32)
    inits = {t.name for t in model.graph.initializer}
    (name,) = [v.name for v in model.graph.input if v.name not in inits]
    return model, {name: x}


def bert_base(tmp_path) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    torch.manual_seed(0)
    model = transformers.BertModel(transformers.BertConfig()).eval()
    ids = np.random.default_rng(41).integers(0, 30522, (1, 128)).astype(np.int64)
    path = tmp_path / "bert.onnx"
    torch.onnx.export(
        model, (torch.from_numpy(ids),), str(path), dynamo=True, input_names=["input_ids"]
    )
    return onnx.load(str(path)), {"input_ids": ids}


@pytest.mark.parametrize("make", [resnet50, bert_base], ids=lambda f: f.__name__)
def test_relay_script(tmp_path, make):
    model, inputs = make(tmp_path)
    want = models.onnxruntime_outputs(model, inputs)
    shape_dict = {name: value.shape for name, value in inputs.items()}
    dtype_dict = {name: str(value.dtype) for name, value in inputs.items()}
    mod, params = relay.frontend.from_onnx(model, shape_dict, dtype_dict)

    with relay.transform.PassContext(opt_level=3):  # the tutorial's form: params per call
        executor = relay.build_module.create_executor("graph", mod, relay.cpu(0), "llvm").evaluate()
    out = executor(*[relay.nd.array(v) for v in inputs.values()], **params)
    out = out if isinstance(out, list) else [out]
    for got, expected in zip(out, want):
        models.assert_close(got.numpy(), expected, rtol=1e-3, atol=1e-4)

    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    m = graph_executor.GraphModule(lib["default"](relay.cpu(0)))
    for name, value in inputs.items():
        m.set_input(name, relay.nd.array(value))
    m.set_input(**params)
    m.run()
    assert m.get_num_outputs() == len(want)
    for i, expected in enumerate(want):
        models.assert_close(m.get_output(i).numpy(), expected, rtol=1e-3, atol=1e-4)

    if shutil.which("cc") is None or shutil.which("objcopy") is None:
        return  # export_library needs a C compiler and objcopy (test_script.py says so)
    header = lib.export_library(str(tmp_path / "model.so"))
    assert "xr_model_run" in header.read_text()
    so = ctypes.CDLL(str(tmp_path / "model.so"))
    arrays = [np.ascontiguousarray(v) for v in inputs.values()]
    outputs = [np.empty_like(expected) for expected in want]
    feeds = (ctypes.c_void_p * len(arrays))(*[a.ctypes.data for a in arrays])
    buffers = (ctypes.c_void_p * len(outputs))(*[o.ctypes.data for o in outputs])
    assert so.xr_model_run(feeds, buffers) == 0
    for got, expected in zip(outputs, want):
        models.assert_close(got, expected, rtol=1e-3, atol=1e-4)


SUITE = ["light_squeezenet", "light_shufflenet", "light_inception_v1", "light_resnet50"]


def _dynamic_batch(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with the batch axis of its data input and outputs made a `batch` symbol."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    inits = {t.name for t in model.graph.initializer}
    for value in [*model.graph.input, *model.graph.output]:
        dims = value.type.tensor_type.shape.dim
        if value.name not in inits and len(dims):
            dims[0].dim_param = "batch"
    return model


@pytest.mark.parametrize("name", SUITE)
def test_the_four_kinds_agree_on_the_model_suite(name):
    """debug, graph, vm and aot on the static model agree with each other and with
    onnxruntime; where the model allows another batch size (SqueezeNet: its reshapes do not
    pin the batch to 1), vm also runs its dynamic-batch form at batch 1 and 2."""
    from ..e2e.onnx_backend.data_cases import collect, with_real_weights

    (case,) = [c for c in collect("light") if c.name == name]
    model = with_real_weights(onnx.load(str(case.model_path)))
    inits = {t.name for t in model.graph.initializer}
    (data,) = [v for v in model.graph.input if v.name not in inits]
    shape = [d.dim_value for d in data.type.tensor_type.shape.dim]
    rng = np.random.default_rng(42)
    x = rng.standard_normal(shape).astype(np.float32)
    want = models.onnxruntime_outputs(model, {data.name: x})
    mod, params = relay.frontend.from_onnx(model)
    outs = {}
    for kind in ["debug", "graph", "vm", "aot"]:
        run = relay.create_executor(kind, mod, relay.cpu(0), "llvm", params).evaluate()
        got = run(relay.nd.array(x), **params)
        outs[kind] = [g.numpy() for g in (got if isinstance(got, list) else [got])]
    for kind, got in outs.items():
        assert len(got) == len(want), kind
        for g, ref, expected in zip(got, outs["debug"], want):
            models.assert_close(g, ref, rtol=1e-3, atol=1e-4)
            models.assert_close(g, expected, rtol=1e-3, atol=1e-4)
    if name != "light_squeezenet":
        return
    dynamic = _dynamic_batch(model)
    dmod, dparams = relay.frontend.from_onnx(dynamic)
    vm = relay.create_executor("vm", dmod, relay.cpu(0), "llvm", dparams).evaluate()
    for batch in (1, 2):
        xs = rng.standard_normal([batch, *shape[1:]]).astype(np.float32)
        want = models.onnxruntime_outputs(dynamic, {data.name: xs})
        got = vm(relay.nd.array(xs))
        for g, expected in zip(got if isinstance(got, list) else [got], want):
            models.assert_close(g.numpy(), expected, rtol=1e-3, atol=1e-4)
