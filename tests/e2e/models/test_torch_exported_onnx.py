"""Models exported from PyTorch to ONNX: import, reference numbers vs onnxruntime, and the
printed IR re-parses with xrelay-opt."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import xrelay

pytest.importorskip("torch")
pytest.importorskip("onnxscript")
ort = pytest.importorskip("onnxruntime")


def onnxruntime_outputs(path, inputs):
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, inputs)


def test_small_cnn_imports_runs_and_reparses(tmp_path):
    from .exports import small_cnn

    path, inputs = small_cnn(tmp_path / "cnn.onnx")
    module, params = xrelay.from_onnx(str(path))
    ops = {op.name for op in module.walk()}
    assert {"relay.nn.conv2d", "relay.nn.relu", "relay.nn.max_pool2d", "relay.nn.softmax"} <= ops
    (got,) = xrelay.create_executor("debug", module, params).run(**inputs)
    (want,) = onnxruntime_outputs(path, inputs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    printed = tmp_path / "cnn.mlir"
    printed.write_text(str(module))
    again = subprocess.run(
        [sys.executable, "-m", "xrelay.tools.opt", str(printed)],
        check=False,
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == str(module).strip()


def test_small_bert_matches_onnxruntime(tmp_path):
    pytest.importorskip("transformers")
    from .exports import small_bert

    path, inputs = small_bert(tmp_path / "bert.onnx")
    module, params = xrelay.from_onnx(str(path))
    got = xrelay.create_executor("debug", module, params).run(**inputs)
    want = onnxruntime_outputs(path, inputs)
    assert len(got) == len(want) == 2
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_small_bert_jit_matches_onnxruntime(tmp_path):
    pytest.importorskip("transformers")
    from .exports import small_bert

    path, inputs = small_bert(tmp_path / "bert.onnx")
    module, params = xrelay.from_onnx(str(path))
    got = xrelay.build(module, params).run(**inputs)
    want = onnxruntime_outputs(path, inputs)
    assert len(got) == len(want) == 2
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


def test_small_cnn_jit_matches_onnxruntime(tmp_path):
    from .exports import small_cnn

    path, inputs = small_cnn(tmp_path / "cnn.onnx")
    module, params = xrelay.from_onnx(str(path))
    (got,) = xrelay.build(module, params).run(**inputs)
    (want,) = onnxruntime_outputs(path, inputs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
