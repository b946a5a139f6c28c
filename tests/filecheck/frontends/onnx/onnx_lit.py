"""Helpers for the ONNX import lit scripts: build a one-graph model and print its import."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import xrelay

F32 = TensorProto.FLOAT
I64 = TensorProto.INT64


def vi(name, shape, elem=F32):
    return helper.make_tensor_value_info(name, elem, shape)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def show(case, nodes, inputs, outputs, initializers=(), opset=13, **kwargs):
    """Print `// case: <case>` and the imported module."""
    graph = helper.make_graph(nodes, case, inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    module, _ = xrelay.from_onnx(model, **kwargs)
    print(f"// case: {case}")
    print(module)
