"""Issue 24's case: `xrelay compile` then `xrelay run OUT.xrl` in a new process gives the
outputs of the in-process build, for ResNet-50 (the onnx package's, seeded weights),
BERT-base (transformers config, random weights) and an onnxruntime-quantized (QDQ) CNN.
Slow tier. Also prints load+first-run time against compile time (measured, not asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import onnx
import pytest
import xrelay

pytestmark = pytest.mark.slow


def cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "xrelay.tools.cli", *argv],
        check=False, capture_output=True, text=True,
        env={**os.environ, "XRELAY_CACHE_DIR": "off"},
    )  # fmt: skip


def resnet50(tmp_path):
    from ..e2e.onnx_backend.data_cases import collect, light_inputs, with_real_weights

    (case,) = [c for c in collect("light") if c.name == "light_resnet50"]
    model = with_real_weights(onnx.load(str(case.model_path)))
    path = tmp_path / "resnet50.onnx"
    onnx.save(model, str(path))
    names = [
        v.name for v in model.graph.input if v.name not in {t.name for t in model.graph.initializer}
    ]
    return path, dict(zip(names, light_inputs(model)))


def bert_base(tmp_path):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    torch.manual_seed(0)
    model = transformers.BertModel(transformers.BertConfig()).eval()
    ids = np.random.default_rng(0).integers(0, 30522, (1, 128)).astype(np.int64)
    path = tmp_path / "bert.onnx"
    torch.onnx.export(
        model, (torch.from_numpy(ids),), str(path), dynamo=True, input_names=["input_ids"]
    )
    return path, {"input_ids": ids}


def quantized_cnn(tmp_path):
    pytest.importorskip("onnxruntime")
    from ..e2e.quantized import onnx_models
    from ..e2e.quantized.test_onnx_quantized import feeds, quantize

    path = onnx_models.cnn(tmp_path / "cnn.onnx")
    qpath = quantize(path, {}, "qdq", tmp_path / "cnn_qdq.onnx")
    return qpath, feeds(path, {}, seed=100)


@pytest.mark.parametrize("make", [resnet50, bert_base, quantized_cnn], ids=lambda f: f.__name__)
def test_compile_then_run_in_a_new_process(tmp_path, make):
    path, inputs = make(tmp_path)
    start = time.perf_counter()
    module, params = xrelay.from_onnx(str(path))
    want = xrelay.build(module, params, cache=False).run(**inputs)
    compile_s = time.perf_counter() - start
    art = tmp_path / "model.xrl"
    done = cli("compile", str(path), "-o", str(art))
    assert done.returncode == 0, done.stderr
    files = {name: tmp_path / f"input{i}.npy" for i, name in enumerate(inputs)}
    args = []
    for name, x in inputs.items():
        np.save(files[name], x)
        args += ["--input", f"{name}={files[name]}"]
    done = cli("run", str(art), *args, "--output", str(tmp_path / "out.npz"))
    assert done.returncode == 0, done.stderr
    got = np.load(tmp_path / "out.npz")
    for g, w in zip([got[k] for k in got.files], want):
        np.testing.assert_array_equal(g, w)
    # load and first run in a fresh process, against the in-process import + compile
    paths = {name: str(f) for name, f in files.items()}
    code = (
        "import time, numpy as np, xrelay; t = time.perf_counter(); "
        f"lib = xrelay.load({str(art)!r}); "
        f"lib.run(**{{k: np.load(v) for k, v in {paths!r}.items()}}); "
        "print(time.perf_counter() - t)"
    )
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    load_s = float(done.stdout.strip())
    print(
        f"{path.name}: compile {compile_s:.2f} s, load + first run {load_s:.3f} s "
        f"({100 * load_s / compile_s:.1f} %)"
    )
