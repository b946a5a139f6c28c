"""The examples of the hardening issue that are not malformed ONNX files (those are in
tests/frontends/onnx/test_validation.py; out-of-range indices in
tests/lowering/test_index_checks.py): run-time values that are not arrays, other byte
orders, accuracy of long sums, NaN in ArgMax/ArgMin, misspelled attributes in textual IR."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
import xrelay
from onnx import TensorProto, helper


def _model(node, inputs, output_type=TensorProto.FLOAT):
    graph = helper.make_graph(
        [node], "m", inputs, [helper.make_tensor_value_info("y", output_type, None)]
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.fixture(scope="module")
def relu():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    return xrelay.build(*xrelay.from_onnx(_model(helper.make_node("Relu", ["x"], ["y"]), [x])))


def test_a_ragged_list_is_an_error_naming_the_input(relu):
    with pytest.raises(xrelay.Error, match="input 'x' is not an array"):
        relu.run(x=[[1.0, 2.0, 3.0], [1.0, 2.0]])


def test_a_big_endian_array_is_read_by_value(relu):
    x = np.array([[1, -2, 3], [-4, 5, -6]], dtype=">f4")
    np.testing.assert_array_equal(relu.run(x=x)[0], np.maximum(x.astype(np.float32), 0))


def test_a_long_sum_is_as_accurate_as_onnxruntime():
    x = (1000 + np.random.default_rng(0).standard_normal(10**6)).astype(np.float32)
    node = helper.make_node("ReduceSum", ["x"], ["y"], keepdims=0)
    model = _model(node, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [10**6])])
    exact = x.astype(np.float64).sum()
    ours = float(xrelay.build(*xrelay.from_onnx(model)).run(x=x)[0])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    theirs = float(session.run(None, {"x": x})[0])
    # sequential f32 accumulation was 0.9 % off here
    assert abs(ours - exact) <= max(abs(theirs - exact), abs(exact) * 2**-24)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("last", [0, 1])
def test_nan_in_arg_reductions_follows_the_onnx_reference(op, last):
    x = np.array(
        [[1, np.nan, 3, np.nan], [np.nan, 2, 1, 0], [5, 2, 7, 1], [4, 4, np.nan, 4]], np.float32
    )
    node = helper.make_node(op, ["x"], ["y"], axis=1, keepdims=0, select_last_index=last)
    model = _model(node, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])],
                   TensorProto.INT64)  # fmt: skip
    find = np.argmax if op == "ArgMax" else np.argmin
    # the ONNX reference: numpy's argmax (the first NaN), on the flipped axis for the last
    expected = 3 - find(np.flip(x, 1), axis=1) if last else find(x, axis=1)
    mod, params = xrelay.from_onnx(model)
    np.testing.assert_array_equal(xrelay.build(mod, params).run(x=x)[0], expected)
    np.testing.assert_array_equal(xrelay.create_executor("debug", mod, params).run(x=x)[0], expected)


def test_a_misspelled_attribute_in_textual_ir_is_an_error():
    module = xrelay.parse_module(
        "func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
        "  %y = relay.nn.softmax %x {axsi = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
        "  func.return %y : tensor<2x3xf32>\n}\n"
    )
    with pytest.raises(xrelay.Error, match=r"<string>:2:3: .*has no attribute 'axsi'"):
        xrelay.verify_module(module)
