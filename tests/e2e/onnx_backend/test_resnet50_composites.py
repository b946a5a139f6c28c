"""ResNet-50 from the onnx package through bind-params, simplify-inference, fold-constants
and merge-composite: every conv+bn+relu chain becomes one composite, and the compiled model
still matches onnxruntime (with real-looking weights)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import onnx
import pytest
import xrelay
from xdsl.context import Context
from xdsl.dialects import func
from xrelay.transforms.fold_constants import FoldConstants
from xrelay.transforms.merge_composite import get_pattern_table, merge_composite
from xrelay.transforms.simplify_inference import SimplifyInference

from .data_cases import collect, light_inputs, with_real_weights

ort = pytest.importorskip("onnxruntime")


def conv_bn_relu_chains(model: onnx.ModelProto) -> int:
    """Conv -> BatchNormalization -> Relu chains whose inner values have one user."""
    users = Counter(i for n in model.graph.node for i in n.input)
    producer = {o: n for n in model.graph.node for o in n.output}
    count = 0
    for relu in (n for n in model.graph.node if n.op_type == "Relu"):
        bn = producer.get(relu.input[0])
        if bn is None or bn.op_type != "BatchNormalization" or users[bn.output[0]] != 1:
            continue
        conv = producer.get(bn.input[0])
        count += conv is not None and conv.op_type == "Conv" and users[conv.output[0]] == 1
    return count


@pytest.mark.slow
def test_every_conv_bn_relu_becomes_a_composite_and_the_model_still_matches():
    (case,) = [c for c in collect("light") if c.name == "light_resnet50"]
    model = with_real_weights(onnx.load(str(case.model_path)))
    inputs = light_inputs(model)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    expected = session.run(None, dict(zip(names, inputs)))

    module, params = xrelay.from_onnx(model)
    xrelay.bind_params_by_name(module, params)
    SimplifyInference().apply(Context(), module)
    FoldConstants().apply(Context(), module)
    merge_composite(module, get_pattern_table("example"))
    xrelay.verify_module(module)

    composites = Counter(
        op.attributes["Composite"].data
        for op in module.body.block.ops
        if isinstance(op, func.FuncOp) and "Composite" in op.attributes
    )
    chains = conv_bn_relu_chains(model)
    assert chains > 30
    assert composites["conv2d_bias_relu"] == chains
    assert not any(op.name == "relay.nn.batch_norm" for op in module.walk())

    got = xrelay.build(module).run(*inputs)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-3, atol=1e-4 * max(float(np.abs(e).max()), 1.0))
