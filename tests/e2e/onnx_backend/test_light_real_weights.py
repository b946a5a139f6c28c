"""The `light` CNNs with real-looking weights, reference executor vs onnxruntime.

The shipped `light` weights are constant fills, so their expected outputs are nearly
uniform softmaxes; with random weights and the logits exposed, a wrong conv, pool or norm
shows up.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import xrelay

from .data_cases import collect, light_inputs, with_real_weights

ort = pytest.importorskip("onnxruntime")


@pytest.mark.parametrize("case", collect("light"), ids=lambda c: c.name)
def test_reference_matches_onnxruntime(case):
    model = with_real_weights(onnx.load(str(case.model_path)))
    inputs = light_inputs(model)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    expected = session.run(None, dict(zip(names, inputs)))
    module, params = xrelay.from_onnx(model)
    got = xrelay.create_executor("debug", module, params).run(*inputs)
    assert len(got) == len(expected) >= 1
    for g, e in zip(got, expected):
        scale = float(np.abs(e).max())
        np.testing.assert_allclose(g, e, rtol=1e-3, atol=1e-4 * max(scale, 1.0))
