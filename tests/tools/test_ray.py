"""The Ray example: batch inference with Ray Data's `map_batches` on a local Ray instance,
two workers each loading the artifact (no compile there), matching the in-process run.
Skipped, saying so, where Ray is absent (`pip install 'xrelay[ray]'`; CI installs it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import xrelay

pytest.importorskip("ray", reason="Ray is not installed: pip install 'xrelay[ray]'")

EXAMPLES = Path(xrelay.__file__).parent / "examples"


def load_example():
    spec = importlib.util.spec_from_file_location("ray_batch", EXAMPLES / "ray_batch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ray_workers_load_the_artifact_and_match(tmp_path):
    example = load_example()
    module, params = xrelay.from_onnx(str(EXAMPLES / "cnn.onnx"))
    lib = xrelay.build(module, params, cache=False)
    (arg,) = lib.signature.inputs
    images = np.random.default_rng(0).standard_normal((24, *arg.shape[1:])).astype(np.float32)
    lib.save(tmp_path / "cnn.xrl")
    out = example.classify(tmp_path / "cnn.xrl", images, workers=2, batch_size=2)
    want = np.stack([lib.run(images[i : i + 1])[0][0] for i in range(len(images))])
    np.testing.assert_array_equal(out["probabilities"], want)
    assert not out["compiled"].any()
    assert len(np.unique(out["worker"])) == 2
