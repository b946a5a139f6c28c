"""Malformed ONNX models and inputs found by the fuzzing tier and issue 20: each is an
xrelay.Error naming the initializer, input, attribute or op, never an untyped exception,
an abort or a silent answer."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import xrelay
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def model(nodes, inputs, outputs, inits=()) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(*i) for i in inputs],
        [helper.make_tensor_value_info(*o) for o in outputs],
        list(inits),
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def reshape_with(target: onnx.TensorProto) -> onnx.ModelProto:
    return model(
        [helper.make_node("Reshape", ["x", "s"], ["y"])],
        [("x", F, [2, 3])],
        [("y", F, None)],
        [target],
    )


def test_initializer_with_an_unknown_data_type():
    t = numpy_helper.from_array(np.array([3, 2], np.int64), "s")
    t.data_type = 999
    with pytest.raises(xrelay.Error, match="initializer 's' has an unknown data type 999"):
        xrelay.from_onnx(reshape_with(t))


def test_initializer_shorter_than_its_dims():
    t = numpy_helper.from_array(np.array([3, 2], np.int64), "s")
    t.raw_data = t.raw_data[:8]
    with pytest.raises(xrelay.Error, match=r"initializer 's' does not hold the \[2\] values"):
        xrelay.from_onnx(reshape_with(t))


def test_initializer_with_negative_dims():
    t = numpy_helper.from_array(np.array([3, 2], np.int64), "s")
    t.dims[0] = -2
    with pytest.raises(xrelay.Error, match="initializer 's' has negative dimensions"):
        xrelay.from_onnx(reshape_with(t))


def test_input_element_types():
    m = model([helper.make_node("Relu", ["x"], ["y"])], [("x", F, [2])], [("y", F, [2])])
    m.graph.input[0].type.tensor_type.elem_type = 999
    with pytest.raises(xrelay.Error, match="input 'x' has an unknown element type 999"):
        xrelay.from_onnx(m)


@pytest.mark.parametrize("value", [None, 42, b"bytes"])
def test_not_a_model(value):
    with pytest.raises(xrelay.Error, match="expects an onnx.ModelProto or a path"):
        xrelay.from_onnx(value)


def test_empty_file_and_no_graph(tmp_path):
    (tmp_path / "empty.onnx").write_bytes(b"")
    with pytest.raises(xrelay.Error, match="has no graph"):
        xrelay.from_onnx(str(tmp_path / "empty.onnx"))
    with pytest.raises(xrelay.Error, match="has no graph"):
        xrelay.from_onnx(onnx.ModelProto())


def test_flag_attributes_are_0_or_1():
    m = model(
        [helper.make_node("ArgMax", ["x"], ["y"], axis=1, keepdims=-(2**40))],
        [("x", F, [2, 5])],
        [("y", TensorProto.INT64, None)],
    )
    with pytest.raises(
        xrelay.Error, match=r"'ArgMax_0' \(ArgMax\): attribute 'keepdims' must be 0 or 1"
    ):
        xrelay.from_onnx(m)


def test_a_tensor_over_the_size_limit_is_refused_before_compiling():
    m = model(
        [helper.make_node("Relu", ["x"], ["y"])], [("x", F, [2**20, 2**20])], [("y", F, None)]
    )
    module, params = xrelay.from_onnx(m)
    with pytest.raises(xrelay.Error, match="input 'x' of @main is a .* GiB, over the limit"):
        xrelay.build(module, params)
