"""from_onnx: the API contract, import-time folding, params, locations and errors."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import xrelay
from onnx import TensorProto, helper, numpy_helper
from xrelay.dialects import relay
from xrelay.frontends.onnx import register_converter
from xrelay.ir import parse_module, verify_module
from xrelay.signature import FunctionSignature, main_function


def make_model(nodes, inputs, outputs, initializers=(), opset=13) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def vi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def mlp() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    rng = np.random.default_rng(0)
    w = rng.standard_normal((8, 4)).astype(np.float32)
    bias = rng.standard_normal(4).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"], name="fc"),
        helper.make_node("Add", ["h", "b"], ["hb"], name="bias"),
        helper.make_node("Relu", ["hb"], ["y"], name="act"),
    ]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "b")]
    return make_model(nodes, [vi("x", [2, 8])], [vi("y", [2, 4])], inits), {"w": w, "b": bias}


def test_params_inputs_and_numbers():
    model, weights = mlp()
    module, params = xrelay.from_onnx(model)
    sig = FunctionSignature.of(main_function(module))
    assert [(a.name, a.is_param) for a in sig.args] == [("x", False), ("w", True), ("b", True)]
    assert set(params) == {"w", "b"}
    x = np.random.default_rng(1).standard_normal((2, 8)).astype(np.float32)
    (y,) = xrelay.create_executor("debug", module, params).run(x=x)
    np.testing.assert_allclose(y, np.maximum(x @ weights["w"] + weights["b"], 0), rtol=1e-6)


def test_freeze_params_embeds_constants():
    model, _ = mlp()
    module, params = xrelay.from_onnx(model, freeze_params=True)
    assert params == {}
    assert len(main_function(module).args) == 1
    assert any(isinstance(op, relay.ConstantOp) for op in module.walk())


def test_printed_module_reparses_and_locations_name_nodes():
    model, _ = mlp()
    module, _ = xrelay.from_onnx(model)
    text = str(module)
    again = parse_module(text)
    verify_module(again)
    assert str(again) == text
    names = {op.location.desc.data for op in module.walk() if op.name.startswith("relay.")}
    assert {"fc", "bias", "act"} <= names


def test_shape_arithmetic_is_folded_at_import():
    # y = Reshape(x, Concat(Shape(x)[0:1], [-1])): all the shape math folds away
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus_one"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
    ]
    inits = [
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        numpy_helper.from_array(np.array([0], np.int64), "axes"),
        numpy_helper.from_array(np.array([-1], np.int64), "minus_one"),
    ]
    model = make_model(nodes, [vi("x", [2, 3, 4])], [vi("y", [2, 12])], inits)
    module, params = xrelay.from_onnx(model)
    ops = [op.name for op in main_function(module).body.block.ops]
    assert ops == ["relay.reshape", "func.return"]
    assert params == {}


def test_unsupported_ops_reported_all_at_once():
    nodes = [
        helper.make_node("GridSample", ["x", "g"], ["y"]),
        helper.make_node("GridSample", ["y", "g"], ["z"]),
        helper.make_node("OptionalHasElement", ["z"], ["k"]),
        helper.make_node("Relu", ["k"], ["out"]),
    ]
    model = make_model(nodes, [vi("x", [1, 2, 3])], [vi("out", None)])
    with pytest.raises(xrelay.UnsupportedOpsError) as err:
        xrelay.from_onnx(model)
    assert (
        str(err.value) == "3 unsupported ONNX operators (opset 13): GridSample x2, OptionalHasElement x1"
    )


def test_shape_override_and_unknown_input():
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    model = make_model(nodes, [vi("x", ["batch", 3])], [vi("y", ["batch", 3])])
    module, _ = xrelay.from_onnx(model)  # a dynamic dimension is a symbol
    assert [str(d) for d in FunctionSignature.of(main_function(module)).args[0].shape] == [
        "batch",
        "3",
    ]
    unranked = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)], [])
    with pytest.raises(xrelay.Error, match=r"input 'x' has an unknown rank; pass shape="):
        xrelay.from_onnx(unranked)
    module, _ = xrelay.from_onnx(model, shape={"x": (5, 3)})
    assert FunctionSignature.of(main_function(module)).args[0].shape == (5, 3)
    with pytest.raises(xrelay.Error, match=r"unknown input 'y'; the inputs are \['x'\]"):
        xrelay.from_onnx(model, shape={"y": (1,)})


def test_dangling_input_names_the_node():
    nodes = [helper.make_node("Add", ["x", "ghost"], ["y"], name="adder")]
    model = make_model(nodes, [vi("x", [3])], [vi("y", [3])])
    with pytest.raises(
        xrelay.Error, match=r"ONNX node 'adder' \(Add\): input 'ghost' is not defined"
    ):
        xrelay.from_onnx(model)


def test_corrupt_and_missing_files(tmp_path):
    model, _ = mlp()
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString()[:40])
    with pytest.raises(xrelay.Error, match="cannot load ONNX model"):
        xrelay.from_onnx(str(path))
    with pytest.raises(xrelay.Error, match="no ONNX model at"):
        xrelay.from_onnx(str(tmp_path / "missing.onnx"))


def test_shape_error_names_the_node():
    nodes = [helper.make_node("Add", ["x", "z"], ["y"], name="bad_add")]
    model = make_model(nodes, [vi("x", [2, 3]), vi("z", [4])], [vi("y", None)])
    with pytest.raises(
        xrelay.Error, match=r"ONNX node 'bad_add' \(Add\): 'relay.add' operand shapes"
    ):
        xrelay.from_onnx(model)


def test_runtime_value_where_a_constant_is_needed():
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"], name="r")]
    model = make_model(nodes, [vi("x", [6]), vi("shape", [2], TensorProto.INT64)], [vi("y", None)])
    with pytest.raises(
        xrelay.Error, match=r"ONNX node 'r' \(Reshape\): unsupported input 1 .* must be a constant"
    ):
        xrelay.from_onnx(model)


def test_wrong_input_at_run_time_is_an_error():
    model, _ = mlp()
    module, params = xrelay.from_onnx(model)
    ex = xrelay.create_executor("debug", module, params)
    with pytest.raises(
        xrelay.Error, match=r"input 'x' expects float32\[2, 8\], got float64\[2, 8\]"
    ):
        ex.run(x=np.zeros((2, 8)))
    with pytest.raises(xrelay.Error, match=r"unknown input 'q'"):
        ex.run(q=np.zeros((2, 8), np.float32))
    with pytest.raises(xrelay.Error, match=r"missing input 'x'"):
        ex.run()


def test_custom_converter_from_outside():
    @register_converter("MySelu", since=1, domain="my.domain")
    def my_selu(b):
        return b.emit(relay.TanhOp(b.input(0)))

    node = helper.make_node("MySelu", ["x"], ["y"], domain="my.domain")
    graph = helper.make_graph([node], "g", [vi("x", [3])], [vi("y", [3])])
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("my.domain", 1)]
    )
    module, params = xrelay.from_onnx(model)
    x = np.array([-1.0, 0.0, 2.0], np.float32)
    (y,) = xrelay.create_executor("debug", module, params).run(x)
    np.testing.assert_allclose(y, np.tanh(x), rtol=1e-6)


def test_dispatch_picks_highest_since_not_above_opset():
    from xrelay.frontends.onnx import lookup
    from xrelay.frontends.onnx.registry import onnx_op

    def v1(b):
        return None

    def v5(b):
        return None

    onnx_op("VersionedProbe", since=1)(v1)
    onnx_op("VersionedProbe", since=5)(v5)
    assert lookup("VersionedProbe", 4) is v1
    assert lookup("VersionedProbe", 5) is v5
    assert lookup("VersionedProbe", 17) is v5
    assert lookup("VersionedProbe", 0) is None


def test_external_data_model_loads_from_its_path(tmp_path):
    model, weights = mlp()
    path = tmp_path / "mlp.onnx"
    onnx.save_model(
        model,
        str(path),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="mlp.data",
        size_threshold=0,
    )
    assert (tmp_path / "mlp.data").is_file()
    _module, params = xrelay.from_onnx(str(path))
    np.testing.assert_array_equal(params["w"], weights["w"])


def _external_model(tmp_path, graph_nodes_and_inits):
    nodes, inits, out_shape = graph_nodes_and_inits
    graph = helper.make_graph(
        nodes, "g", [vi("x", [2, 3])], [vi("y", out_shape)], initializer=inits
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "m.onnx"
    onnx.save_model(model, str(path), save_as_external_data=True, location="m.data",
                    size_threshold=0)  # fmt: skip
    return path


def test_external_initializers_are_read_one_by_one_and_checked(tmp_path):
    """A file's external weights are read straight into their arrays (not through the
    proto: BERT-base's import peaked at 943 MB, 526 after) and still checked."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    b = np.arange(4, dtype=np.int64)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"]),
        helper.make_node("Cast", ["b"], ["bf"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["m", "bf"], ["y"]),
    ]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]
    path = _external_model(tmp_path, (nodes, inits, [2, 4]))
    module, params = xrelay.from_onnx(path)
    np.testing.assert_array_equal(params["w"], w)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    got = xrelay.build(module, params, cache=False).run(x=x)[0]
    np.testing.assert_allclose(got, x @ w + b, rtol=1e-6)
    # a data file cut short: an Error naming the initializer, not a reshape failure
    data = tmp_path / "m.data"
    data.write_bytes(data.read_bytes()[:20])
    with pytest.raises(xrelay.Error, match="initializer 'w'"):
        xrelay.from_onnx(path)
    # a location outside the model's folder is refused
    model = onnx.load(str(path), load_external_data=False)
    for t in model.graph.initializer:
        for e in t.external_data:
            if e.key == "location":
                e.value = "../elsewhere.data"
    onnx.save_model(model, str(path))
    with pytest.raises(xrelay.Error, match="outside the model's folder"):
        xrelay.from_onnx(path)


def test_dtype_per_input_and_opset_override():
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", 0, [3])], [vi("y", None)]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    module, _ = xrelay.from_onnx(model, dtype={"x": "float64"})
    assert FunctionSignature.of(main_function(module)).args[0].dtype == np.float64
    module, _ = xrelay.from_onnx(model, dtype="float16")
    assert FunctionSignature.of(main_function(module)).args[0].dtype == np.float16
    # Softmax's axis semantics follow the opset: at 11 the input is coerced to 2-d
    nodes = [helper.make_node("Softmax", ["x"], ["y"], axis=1)]
    model = make_model(nodes, [vi("x", [2, 3, 4])], [vi("y", None)], opset=13)
    ops13 = [op.name for op in xrelay.from_onnx(model)[0].walk() if op.name.startswith("relay.")]
    ops11 = [
        op.name
        for op in xrelay.from_onnx(model, opset=11)[0].walk()
        if op.name.startswith("relay.")
    ]
    assert ops13 == ["relay.nn.softmax"]
    assert ops11 == ["relay.reshape", "relay.nn.softmax", "relay.reshape"]
