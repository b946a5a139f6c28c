"""The onnx package's model suites through from_onnx + xrelay.build (the JIT), compared
with the shipped expected outputs (rtol 1e-3, atol 1e-5). The `light` CNNs are also run
with real-looking weights against onnxruntime. Expected failures: XFAIL, strict."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import xrelay
from conformance import compare
from data_cases import DataCase, collect, light_inputs, with_real_weights

# case name -> reason
XFAIL: dict[str, str] = {}


def params_for(suites: list[str], marks=()) -> list:
    return [
        pytest.param(
            case,
            id=f"{case.suite}/{case.name}",
            marks=[*marks, *([pytest.mark.xfail(reason=XFAIL[case.name], strict=True)] if case.name in XFAIL else [])],
        )
        for suite in suites
        for case in collect(suite)
    ]


@pytest.mark.parametrize("case", params_for(["pytorch-converted", "pytorch-operator"]))
def test_jit_matches_expected(case: DataCase):
    module, params = xrelay.from_onnx(onnx.load(str(case.model_path)))
    lib = xrelay.build(module, params)
    for inputs, expected in case.data_sets():
        outputs = lib.run(*inputs)
        compare(outputs, expected, rtol=1e-3, atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("case", params_for(["light"]))
def test_light_jit_matches_expected_and_onnxruntime(case: DataCase):
    ort = pytest.importorskip("onnxruntime")
    (inputs, expected), = case.data_sets()
    model = onnx.load(str(case.model_path))
    module, params = xrelay.from_onnx(model)
    (got,) = xrelay.build(module, params).run(*inputs)
    np.testing.assert_allclose(got, expected[0], rtol=1e-3, atol=1e-5)
    real = with_real_weights(model)
    module, params = xrelay.from_onnx(real)
    outputs = xrelay.build(module, params).run(*light_inputs(real))
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(real.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    for g, e in zip(outputs, session.run(None, dict(zip(names, light_inputs(real))))):
        np.testing.assert_allclose(g, e, rtol=1e-3, atol=1e-4 * max(float(np.abs(e).max()), 1.0))
