"""Relay API use xrelay cannot honour raises an `xrelay.Error` naming the call (and what
to use instead), never an AttributeError from deep inside, and no argument is ignored."""

from __future__ import annotations

import llvmlite.binding as llvm
import numpy as np
import pytest
import xrelay
from xrelay import relay
from xrelay.relay import graph_executor, transform
from xrelay.relay.lower import target_cpu
from xrelay.relay.unsupported import UnsupportedAPIError

from . import models


@pytest.fixture(scope="module")
def mlp():
    return relay.frontend.from_onnx(models.mlp(batch=2))


@pytest.mark.parametrize(
    ("use", "message"),
    [
        (lambda: relay.var, r"relay\.var .*xrelay\.dialects\.relay"),
        (lambda: relay.vm, r"relay\.vm .*create_executor\('vm'"),
        (lambda: relay.testing, r"relay\.testing .*no model zoo"),
        (lambda: relay.cuda(0), r"relay\.cuda .*host CPU only"),
        (lambda: relay.nd.gpu(0), r"relay\.nd\.gpu .*host CPU only"),
        (lambda: relay.frontend.from_tensorflow, r"relay\.frontend\.from_tensorflow .*ONNX"),
        (lambda: relay.frontend.from_tflite, r"relay\.frontend\.from_tflite .*xrelay\.from_tflite"),
        (lambda: relay.transform.FuseOps(), r"relay\.transform\.FuseOps .*opt_level=0"),
        (lambda: relay.transform.ToMixedPrecision, r"relay\.transform\.ToMixedPrecision .*no"),
        (lambda: relay.build_module.BuildModule, r"relay\.build_module\.BuildModule"),
        (lambda: graph_executor.create, r"relay\.graph_executor\.create .*GraphModule"),
    ],
)
def test_names_outside_the_subset(use, message):
    with pytest.raises(UnsupportedAPIError, match=message) as info:
        use()
    assert isinstance(info.value, xrelay.Error)
    assert "docs/relay-migration.md" in str(info.value)


def test_hasattr_answers_false():
    assert not hasattr(relay, "var") and hasattr(relay, "build")
    assert not hasattr(relay.transform, "FuseOps") and hasattr(relay.transform, "FoldConstant")


def test_targets():
    host = llvm.get_host_cpu_name()
    assert target_cpu("llvm", "t") is None and target_cpu(f"llvm -mcpu={host}", "t") is None
    assert target_cpu("llvm -mcpu=x86-64-v3", "t") == "x86-64-v3"
    for target, message in [
        ("cuda", "target 'cuda' is not supported"),
        ("llvm -mcpu=cortex-a72", "-mcpu=cortex-a72 is not supported"),
        ("llvm -mattr=+avx2", "option '-mattr=\\+avx2'"),
        ("llvm -mtriple=aarch64-linux-gnu", "option '-mtriple=aarch64-linux-gnu'"),
        ({"kind": "llvm"}, "is not supported"),
    ]:
        with pytest.raises(xrelay.Error, match=f"relay.build: .*{message}"):
            target_cpu(target, "relay.build")


def test_build_arguments(mlp):
    mod, params = mlp
    with pytest.raises(xrelay.Error, match="relay.build: target 'cuda'"):
        relay.build(mod, target="cuda", params=params)
    with pytest.raises(xrelay.Error, match="third argument is target_host; pass params="):
        relay.build(mod, "llvm", params)
    with pytest.raises(xrelay.Error, match="relay.build: executor='aot' is not supported"):
        relay.build(mod, "llvm", executor="aot", params=params)
    with pytest.raises(xrelay.Error, match="relay.build: expected a module"):
        relay.build("model.onnx")


def test_executor_arguments(mlp):
    mod, params = mlp
    with pytest.raises(xrelay.Error, match="unknown kind 'interpreter'"):
        relay.create_executor("interpreter", mod)
    with pytest.raises(xrelay.Error, match=r"create_executor\('graph'\): device 'cuda'"):
        relay.create_executor("graph", mod, device="cuda")
    with pytest.raises(xrelay.Error, match=r"create_executor\('debug'\): mod is required"):
        relay.create_executor()
    with pytest.raises(xrelay.Error, match="binds is not supported"):
        relay.create_executor("debug", mod, params=params).evaluate(binds={"x": 1})


def test_frontend_arguments():
    model = models.mlp(batch=2)
    with pytest.raises(xrelay.Error, match="from_onnx: convert_config"):
        relay.frontend.from_onnx(model, convert_config={"use_nt_batch_matmul": True})
    with pytest.raises(xrelay.Error, match="from_onnx: export_node_renamed_model_path"):
        relay.frontend.from_onnx(model, export_node_renamed_model_path="/tmp/x.onnx")


def test_pass_arguments():
    with pytest.raises(xrelay.Error, match="AnnotateTarget: include_non_call_ops=False"):
        transform.AnnotateTarget("numpy", include_non_call_ops=False)
    with pytest.raises(xrelay.Error, match="PartitionGraph: bind_constants=False"):
        transform.PartitionGraph(bind_constants=False)
    with pytest.raises(xrelay.Error, match="PartitionGraph: mod_name 'mylib'"):
        transform.PartitionGraph(mod_name="mylib")
    with pytest.raises(xrelay.Error, match=r"MergeComposite: a pattern-table entry"):
        transform.MergeComposite([("name",)])
    with pytest.raises(xrelay.Error, match="Sequential: 3 is not a pass"):
        transform.Sequential([3])


def test_graph_module_misuse_and_a_changed_prepacked_weight():
    mod, params = relay.frontend.from_onnx(models.cnn())
    factory = relay.build(mod, params=params)
    with pytest.raises(UnsupportedAPIError, match="get_graph_json .*str\\(mod\\)"):
        factory.get_graph_json()
    with pytest.raises(xrelay.Error, match=r"lib\['default'\], not lib\['main'\]"):
        factory["main"]
    m = graph_executor.GraphModule(factory["default"](relay.cpu(0)))
    with pytest.raises(UnsupportedAPIError, match="GraphModule.benchmark .*xrelay bench"):
        m.benchmark(relay.cpu(0))
    with pytest.raises(xrelay.Error, match="get_output: no outputs yet"):
        m.get_output(0)
    with pytest.raises(xrelay.Error, match="set_input: unknown input 'image'"):
        m.set_input("image", np.zeros((1, 3, 16, 16), np.float32))
    with pytest.raises(xrelay.Error, match="set_input: input index 99 out of range"):
        m.set_input(99, np.zeros(1))
    with pytest.raises(xrelay.Error, match="missing input 'input'"):
        m.run()
    with pytest.raises(xrelay.Error, match="GraphModule: expected relay.build"):
        graph_executor.GraphModule(factory)
    # a weight relay.build replaced by its prepacked copy cannot change silently (given
    # again unchanged, as Relay scripts do, it is accepted)
    (name, *_) = sorted(factory.get_lib().unused_params)
    x = np.zeros((1, 3, 16, 16), np.float32)
    m.run(input=x, **params)
    with pytest.raises(xrelay.Error, match=f"parameter '{name}' was replaced by its prepacked"):
        m.run(input=x, **{name: params[name] * 2})
