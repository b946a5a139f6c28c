"""`xrelay compile` and `xrelay run OUT.xrl` in new processes, and the compile cache across
processes: the same outputs as the in-process build, and one-line errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import xrelay

EXAMPLE = Path(xrelay.__file__).parent / "examples" / "cnn.onnx"


def cli(*argv: str, cache: str = "off") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "xrelay.tools.cli", *argv],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "XRELAY_CACHE_DIR": cache},
    )


def test_compile_then_run_the_artifact_in_a_new_process(tmp_path):
    art = tmp_path / "cnn.xrl"
    done = cli("compile", str(EXAMPLE), "-o", str(art))
    assert done.returncode == 0, done.stderr
    assert art.is_file()
    module, params = xrelay.from_onnx(str(EXAMPLE))
    lib = xrelay.build(module, params, cache=False)
    (arg,) = lib.signature.inputs
    x = np.random.default_rng(0).standard_normal(arg.shape).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    name, want = arg.name, lib.run(**{arg.name: x})
    done = cli(
        "run", str(art), "--input", f"{name}={tmp_path / 'x.npy'}",
        "--output", str(tmp_path / "out.npz"), "--repeat", "3",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "loaded in" in done.stdout and "steady state" in done.stdout
    out = np.load(tmp_path / "out.npz")
    assert list(out) == ["probabilities"]  # the ONNX output names travel in the artifact
    np.testing.assert_array_equal(out["probabilities"], want[0])


def test_a_dynamic_batch_model_compiles_to_one_artifact_for_every_batch(tmp_path):
    """The example CNN with its batch made dynamic: `xrelay compile` saves one build, and
    `xrelay run` of it takes any batch (the same answers as the in-process build)."""
    import onnx

    model = onnx.load(str(EXAMPLE))
    graph_inputs = {i.name for i in model.graph.initializer}
    (value,) = [v for v in model.graph.input if v.name not in graph_inputs]
    value.type.tensor_type.shape.dim[0].dim_param = "N"
    for out in model.graph.output:
        out.type.tensor_type.shape.dim[0].dim_param = "N"
    path = tmp_path / "cnn_dyn.onnx"
    onnx.save(model, str(path))
    art = tmp_path / "cnn_dyn.xrl"
    done = cli("compile", str(path), "-o", str(art))
    assert done.returncode == 0, done.stderr
    lib = xrelay.build(*xrelay.from_onnx(str(path)), cache=False)
    assert lib.native is not None, lib.refused
    chw = [d.dim_value for d in value.type.tensor_type.shape.dim[1:]]
    for n in (1, 3):
        x = np.random.default_rng(n).standard_normal((n, *chw)).astype(np.float32)
        np.save(tmp_path / "x.npy", x)
        done = cli(
            "run", str(art), "--input", f"{value.name}={tmp_path / 'x.npy'}",
            "--output", str(tmp_path / "out.npz"),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        got = np.load(tmp_path / "out.npz")
        np.testing.assert_array_equal(got[list(got)[0]], lib.run(**{value.name: x})[0])


def test_second_run_hits_the_cache(tmp_path):
    cache = str(tmp_path / "cache")
    first = cli("run", str(EXAMPLE), cache=cache)
    assert first.returncode == 0 and "compiled in" in first.stdout, first.stderr
    second = cli("run", str(EXAMPLE), cache=cache)
    assert second.returncode == 0 and "loaded from the cache" in second.stdout, second.stderr
    assert first.stdout.splitlines()[1:] == second.stdout.splitlines()[1:]


def test_artifact_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.xrl"
    bad.write_bytes(b"XRELAYAR" + b"\0" * 10)
    for argv, message in (
        (("run", str(bad)), "not an xrelay artifact"),
        (("run", str(tmp_path / "none.xrl")), "cannot read"),
        (("compile", str(EXAMPLE), "-o", str(tmp_path / "no" / "x.xrl")), "does not exist"),
        (("compile", str(EXAMPLE), "-o", str(bad), "--target-cpu", "z80"), "not supported"),
    ):
        done = cli(*argv)
        assert done.returncode == 1
        assert done.stderr.startswith("xrelay: error:") and message in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def test_a_wrong_input_is_refused_before_compiling(tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((1, 3, 31, 32), np.float32))
    done = subprocess.run(
        [sys.executable, "-m", "xrelay.tools.cli", "run", str(EXAMPLE), "--input",
         f"image={tmp_path / 'x.npy'}"],
        check=False, capture_output=True, text=True,
        env={**os.environ, "XRELAY_CACHE_DIR": "off", "XRELAY_TIME_PASSES": "1"},
    )  # fmt: skip
    assert done.returncode == 1
    assert "input 'image' expects float32[1, 3, 32, 32], got float32[1, 3, 31, 32]" in done.stderr
    assert "relay-to-linalg" not in done.stderr  # no stage ran
