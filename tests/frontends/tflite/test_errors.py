"""`from_tflite`'s errors: malformed files, unsupported operators (all listed at once),
bad arguments, and the optional `tflite` package."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("tensorflow")
pytest.importorskip("tflite")

import tensorflow as tf
import xrelay

from .models import MODELS, convert, randomize


@pytest.fixture(scope="module")
def cnn() -> bytes:
    return convert(randomize(MODELS["cnn"]()))


@pytest.fixture(scope="module")
def unsupported() -> bytes:
    @tf.function(input_signature=[tf.TensorSpec((4, 6), tf.float32)])
    def f(x):
        y = tf.math.cumsum(x, axis=1)
        values, _ = tf.math.top_k(y, k=2)
        return tf.math.cumsum(values, axis=0) + 1.0

    converter = tf.lite.TFLiteConverter.from_concrete_functions([f.get_concrete_function()], f)
    return converter.convert()


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9, 0.999])
def test_truncated_file_is_an_error(cnn, fraction):
    with pytest.raises(
        xrelay.Error, match=r"malformed TFLite flatbuffer \(truncated\?\): reading "
    ):
        xrelay.from_tflite(cnn[: int(len(cnn) * fraction)])


def test_garbage_is_an_error(cnn):
    rng = np.random.default_rng(0)
    garbage = cnn[:8] + rng.integers(0, 256, 512, dtype=np.uint8).tobytes()
    with pytest.raises(xrelay.Error):
        xrelay.from_tflite(garbage)
    with pytest.raises(xrelay.Error, match="not a TFLite flatbuffer"):
        xrelay.from_tflite(b"not a model at all")


def test_unsupported_operators_are_listed_at_once(unsupported):
    with pytest.raises(xrelay.UnsupportedOpsError) as info:
        xrelay.from_tflite(unsupported)
    message = str(info.value)
    assert message.startswith("3 unsupported TFLite operators: CUMSUM x2, TOPK_V2 x1;")
    assert "#0 CUMSUM (output 'Cumsum')" in message  # operator index, builtin and tensor
    assert "#1 TOPK_V2 (output 'TopKV2')" in message


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "xrelay.tools.cli", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_cli_run_and_inspect(cnn, tmp_path):
    path = tmp_path / "cnn.tflite"
    path.write_bytes(cnn)
    shown = cli("inspect", str(path))
    assert shown.returncode == 0, shown.stderr
    assert (
        "serving_default_keras_tensor" in shown.stdout
        and "float32[batch, 16, 16, 3]" in shown.stdout  # Keras' dynamic batch
    )
    assert "relay.nn.conv2d" in shown.stdout
    ran = cli("run", str(path))
    assert ran.returncode == 0, ran.stderr
    assert "shape [1, 10] float32" in ran.stdout


@pytest.mark.parametrize("case", ["truncated", "unsupported"])
def test_cli_errors_are_one_line(cnn, unsupported, tmp_path, case):
    """No traceback: one line naming the operator index and tensor (or, for a truncated
    file, what was being read)."""
    path = tmp_path / "model.tflite"
    path.write_bytes(cnn[: len(cnn) // 2] if case == "truncated" else unsupported)
    for verb in ("run", "inspect"):
        result = cli(verb, str(path))
        assert result.returncode != 0
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("xrelay: error: "), result.stderr
        want = "(truncated?): reading " if case == "truncated" else "#0 CUMSUM (output 'Cumsum')"
        assert want in lines[0]


def test_arguments(cnn, tmp_path):
    with pytest.raises(xrelay.Error, match="no TFLite model at"):
        xrelay.from_tflite(str(tmp_path / "missing.tflite"))
    with pytest.raises(xrelay.Error, match="shape= names unknown input 'nope'"):
        xrelay.from_tflite(cnn, shape={"nope": (1, 2)})
    with pytest.raises(xrelay.Error, match="expects bytes or a path"):
        xrelay.from_tflite(42)


def test_tflite_package_is_optional(monkeypatch, cnn):
    monkeypatch.setitem(sys.modules, "tflite", None)  # import tflite raises ImportError
    with pytest.raises(xrelay.Error, match=r"pip install xrelay\[tflite\]"):
        xrelay.from_tflite(cnn)
    code = "import sys, xrelay; assert 'tflite' not in sys.modules, 'imported eagerly'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_an_axis_out_of_range_is_an_error_not_another_axis():
    """A concatenation's axis patched from 1 to 7 in the file: it was taken modulo the rank
    (axis 1, an answer) where the file is malformed. The same check (`Operator.axis`)
    covers squeeze, the reducers, gather, pack and unpack."""
    import struct

    import tflite

    @tf.function(input_signature=[tf.TensorSpec((2, 3), tf.float32)])
    def f(x):
        return tf.concat([x, x + 1.0], axis=1)

    converter = tf.lite.TFLiteConverter.from_concrete_functions([f.get_concrete_function()], f)
    data = bytearray(converter.convert())
    model = tflite.Model.GetRootAsModel(data, 0)
    graph = model.Subgraphs(0)
    patched = 0
    for i in range(graph.OperatorsLength()):
        op = graph.Operators(i)
        if (
            model.OperatorCodes(op.OpcodeIndex()).BuiltinCode()
            == tflite.BuiltinOperator.CONCATENATION
        ):
            table = op.BuiltinOptions()
            options = tflite.ConcatenationOptions()
            options.Init(table.Bytes, table.Pos)
            assert options.Axis() == 1
            struct.pack_into("<i", data, options._tab.Pos + options._tab.Offset(4), 7)
            patched += 1
    assert patched == 1
    with pytest.raises(
        xrelay.Error, match=r"\(CONCATENATION, .*\): axis 7 is out of range for rank 2"
    ):
        xrelay.build(*xrelay.from_tflite(bytes(data)))
