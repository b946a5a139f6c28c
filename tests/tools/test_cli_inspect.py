"""`xrelay inspect` (ONNX, .pt2, textual IR, artifacts; --dot) and .pt2 programs wherever
ONNX files go; files that are no model are one-line errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xrelay

EXAMPLE = Path(xrelay.__file__).parent / "examples" / "cnn.onnx"


def cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "xrelay.tools.cli", *argv],
        check=False, capture_output=True, text=True,
        env={**os.environ, "XRELAY_CACHE_DIR": "off"},
    )  # fmt: skip


def test_inspect_onnx_lists_inputs_parameters_and_flops(tmp_path):
    done = cli("inspect", str(EXAMPLE), "--dot", str(tmp_path / "g.dot"))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("inputs:\n  image: float32[1, 3, 32, 32]")
    assert "parameters: 6" in out and "results:" in out
    assert "relay.nn.conv2d" in out and "GFLOP" in out
    dot = (tmp_path / "g.dot").read_text()
    assert dot.startswith("digraph model {") and "relay.nn.conv2d" in dot and "->" in dot


def test_inspect_artifact(tmp_path):
    art = tmp_path / "cnn.xrl"
    assert cli("compile", str(EXAMPLE), "-o", str(art)).returncode == 0
    done = cli("inspect", str(art))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("artifact for ") and "folded into prepacked copies" in done.stdout


def test_pt2_programs_run_and_inspect(tmp_path):
    torch = pytest.importorskip("torch")

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(4, 3)

        def forward(self, x):
            return torch.relu(self.fc(x))

    torch.manual_seed(0)
    x = torch.randn(2, 4)
    path = tmp_path / "net.pt2"
    torch.export.save(torch.export.export(Net().eval(), (x,)), str(path))
    done = cli("inspect", str(path))
    assert done.returncode == 0, done.stderr
    assert "inputs:\n  x: float32[2, 4]" in done.stdout
    np.save(tmp_path / "x.npy", x.numpy())
    done = cli(
        "run", str(path), "--input", f"x={tmp_path / 'x.npy'}", "--output", str(tmp_path / "o.npz")
    )
    assert done.returncode == 0, done.stderr
    want = Net().eval()
    torch.manual_seed(0)
    want = torch.export.load(str(path)).module()(x).detach().numpy()
    np.testing.assert_allclose(np.load(tmp_path / "o.npz")["output_0"], want, rtol=1e-5)


def test_files_that_are_no_model_are_one_line_errors(tmp_path):
    import zipfile

    np.save(tmp_path / "a.npy", np.zeros(3))
    (tmp_path / "bad.pt2").write_bytes(b"not a zip")
    with zipfile.ZipFile(tmp_path / "zip.pt2", "w") as archive:  # a zip, but no program:
        archive.writestr("archive/data.pkl", b"garbage")  # torch logged a traceback first
    for path, message in (
        (tmp_path / "a.npy", "not a model xrelay reads"),
        (tmp_path / "bad.pt2", "not a saved torch.export program"),
        (tmp_path / "zip.pt2", "not a saved torch.export program (RuntimeError)"),
        (tmp_path / "none.onnx", "no such file"),
    ):
        done = cli("inspect", str(path))
        assert done.returncode == 1 and message in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
