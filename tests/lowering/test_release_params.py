"""`build(..., release_params=True)`: the caller's params dict is taken over and each
original weight is dropped once its packed copy exists (BERT-base's build peaked at 911 MB
holding both, 586 with this), with the same results."""

from __future__ import annotations

from types import MappingProxyType

import numpy as np
import pytest
import xrelay
from onnx import TensorProto, helper, numpy_helper
from xrelay.lowering.context import BuildContext
from xrelay.lowering.pipeline import lower


def _model(shared: bool):
    """y = relu(x @ w1) @ w2 (+ w2's first row, when `shared`: w2 also read unpacked)."""
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((32, 48)).astype(np.float32)
    w2 = rng.standard_normal((48, 16)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"]),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("MatMul", ["r", "w2"], ["y" if not shared else "m"]),
    ]
    if shared:
        nodes += [
            helper.make_node("Gather", ["w2", "zero"], ["row"], axis=0),
            helper.make_node("Add", ["m", "row"], ["y"]),
        ]
    inits = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")]
    if shared:
        inits.append(numpy_helper.from_array(np.array(0, np.int64), "zero"))
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("shared", [False, True])
def test_released_build_matches_and_drops_packed_originals(shared):
    model = _model(shared)
    x = np.random.default_rng(1).standard_normal((8, 32)).astype(np.float32)
    want = xrelay.build(*xrelay.from_onnx(model), cache=False).run(x=x)[0]
    module, params = xrelay.from_onnx(model)
    lib = xrelay.build(module, params, cache=False, release_params=True)
    assert params == {}  # taken over
    np.testing.assert_array_equal(lib.run(x=x)[0], want)
    assert "w1" not in lib.params  # only its packed copy is read
    assert any(name.startswith("w1.packed") for name in lib.params)
    # a weight also read unpacked (the Gather) stays
    assert ("w2" in lib.params) == shared


def test_release_params_needs_the_dict_and_keeps_it_on_errors():
    module, params = xrelay.from_onnx(_model(False))
    with pytest.raises(xrelay.Error, match="release_params needs the params dict"):
        xrelay.build(module, MappingProxyType(params), cache=False, release_params=True)
    partial = {"w1": params["w1"]}
    with pytest.raises(xrelay.Error, match="missing parameters"):
        xrelay.build(module, partial, cache=False, release_params=True)
    assert list(partial) == ["w1"]  # nothing was taken
    # no parameters at all: nothing to take
    relu = xrelay.from_onnx(_relu_model())[0]
    assert (
        xrelay.build(relu, None, cache=False, release_params=True)
        .run(x=-np.ones(3, np.float32))[0]
        .max()
        == 0
    )


def _relu_model():
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("release", [False, True])
def test_prepack_drops_an_original_only_when_released_and_unread(release):
    module, params = xrelay.from_onnx(_model(True))
    ctx = BuildContext(params=dict(params), release=release)
    lower(module, stop_after="prepack-weights", ctx=ctx)
    assert any(name.startswith("w1.packed") for name in ctx.params)
    # a released weight keeps a stand-in of its shape and dtype that holds no memory
    assert ctx.params["w1"].shape == (32, 48)
    assert (ctx.params["w1"].strides == (0, 0)) == release
    assert ctx.params["w2"].strides != (0, 0)  # the Gather still reads it


def test_build_of_a_model_not_imported_is_an_error():
    # an ONNX model passed to build as it is (it raised AttributeError: regions)
    with pytest.raises(xrelay.Error, match="expected a relay module.*got ModelProto"):
        xrelay.build(_model(False))
