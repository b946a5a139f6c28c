"""Keras models (random seeded weights, converted with tf.lite.TFLiteConverter) through
`from_tflite` and the JIT against LiteRT's reference kernels (BUILTIN_REF): float,
dynamic-range and float16-weight models within a relative tolerance of the output's
magnitude, full-integer models bit for bit."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

pytest.importorskip("tensorflow")
pytest.importorskip("ai_edge_litert")
pytest.importorskip("tflite")

import xrelay
from ai_edge_litert.interpreter import Interpreter, OpResolverType

from .models import MODELS, convert, random_inputs, randomize, run_litert

SLOW = {"mobilenet_v2"}
# LiteRT's reference kernels lack int8 TILE (version 3), which tensor_ops converts to
INTEGER_MODELS = ["cnn", "transformer", "mobilenet_v2"]
# Dynamic-range models quantize their activations on every call; xrelay reproduces that
# quantization and differs only in the order of float additions (about 1e-7 measured).
# Dequantizing the weights and computing in float instead misses by 6e-4 to 3e-3, so the
# 1e-4 bound tells the two apart.
RTOL = {"float": 1e-4, "dynamic": 1e-4, "float16": 1e-4}


@cache
def flatbuffer(name: str, mode: str) -> bytes:
    return convert(randomize(MODELS[name]()), mode)


def cases(names):
    return [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in names]


def run_both(fb: bytes) -> tuple[list[np.ndarray], list[np.ndarray]]:
    feeds = random_inputs(fb)
    mod, params = xrelay.from_tflite(fb)
    got = xrelay.build(mod, params).run(**feeds)
    return got, run_litert(fb, feeds)


def assert_close(got: list[np.ndarray], want: list[np.ndarray], rtol: float) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        assert np.abs(w).max() > 0
        assert np.abs(g - w).max() <= rtol * np.abs(w).max()


@pytest.mark.parametrize("name", cases(MODELS))
def test_float_model_matches_litert(name):
    assert_close(*run_both(flatbuffer(name, "float")), RTOL["float"])


@pytest.mark.parametrize("mode", ["dynamic", "float16"])
@pytest.mark.parametrize("name", cases(INTEGER_MODELS))
def test_weight_quantized_model_matches_litert(name, mode):
    fb = flatbuffer(name, mode)
    from xrelay.frontends.tflite.model import read_model

    model = read_model(fb, name)
    weight_type = "INT8" if mode == "dynamic" else "FLOAT16"
    assert any(t.type_name == weight_type and t.data is not None for t in model.tensors)
    assert_close(*run_both(fb), RTOL[mode])


@pytest.mark.parametrize("name", cases(INTEGER_MODELS))
def test_int8_model_is_bit_exact(name):
    got, want = run_both(flatbuffer(name, "int8"))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype == np.int8
        assert len(np.unique(w)) > 4  # more than saturation
        np.testing.assert_array_equal(g, w)


def test_uint8_io_is_bit_exact():
    """uint8 inputs and outputs: QUANTIZE between uint8 and int8 at both edges."""
    got, want = run_both(flatbuffer("cnn", "uint8"))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype == np.uint8
        assert len(np.unique(w)) > 4
        np.testing.assert_array_equal(g, w)


def test_dynamic_batch_stays_symbolic():
    """Without `shape=`, a Keras model's dynamic batch imports as the symbol `batch`: built
    once, the small CNN (SHAPE -> PACK feeds its transposed convolution and its Flatten's
    RESHAPE) runs every batch as LiteRT does with the input resized."""
    fb = flatbuffer("cnn", "float")
    mod, params = xrelay.from_tflite(fb)
    assert '#relay.dims<"batch">' in str(mod.body.block.ops.first.function_type)
    lib = xrelay.build(mod, params)
    for batch in (1, 3, 5):
        interp = Interpreter(
            model_content=fb, experimental_op_resolver_type=OpResolverType.BUILTIN_REF
        )
        (detail,) = interp.get_input_details()
        shape = (batch, *detail["shape"][1:])
        interp.resize_tensor_input(detail["index"], shape)
        interp.allocate_tensors()
        x = np.random.default_rng(batch).standard_normal(shape).astype(np.float32)
        interp.set_tensor(detail["index"], x)
        interp.invoke()
        want = [interp.get_tensor(d["index"]) for d in interp.get_output_details()]
        got = lib.run(x)
        assert [g.shape[0] for g in got] == [batch, batch]
        assert_close(got, want, RTOL["float"])


def test_dynamic_batch_pinned_with_shape():
    """A Keras model's batch is dynamic (shape_signature -1); `shape=` pins it, and the
    shape arithmetic the converter emitted for it (SHAPE, GATHER, REDUCE_PROD, PACK)
    folds, so a Dense layer on a 3-d input reshapes to [3 * 8, 16], not the [1, 1] the
    file stores."""
    fb = flatbuffer("transformer", "float")
    interp = Interpreter(model_content=fb, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    (detail,) = interp.get_input_details()
    interp.resize_tensor_input(detail["index"], (3, 8, 16))
    interp.allocate_tensors()
    x = np.random.default_rng(0).standard_normal((3, 8, 16)).astype(np.float32)
    interp.set_tensor(detail["index"], x)
    interp.invoke()
    want = interp.get_tensor(interp.get_output_details()[0]["index"])
    mod, params = xrelay.from_tflite(fb, shape={detail["name"]: (3, 8, 16)})
    got = xrelay.build(mod, params).run(x)[0]
    assert got.shape == (3, 8, 16)
    assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max()


def test_names_and_layout(tmp_path):
    """Inputs keep their tensor names; weights are parameters named after their tensors;
    a chain of convolutions transposes only at its edges."""
    path = tmp_path / "cnn.tflite"
    path.write_bytes(flatbuffer("cnn", "float"))
    mod, params = xrelay.from_tflite(str(path))
    text = str(mod)
    (name,) = random_inputs(path.read_bytes())
    assert f'xrelay.name = "{name}"' in text
    assert any(name.endswith(":oihw") for name in params)
    assert all(a.ndim >= 1 for a in params.values())
    # conv, depthwise conv, 1x1 conv, the residual add and the max pool: one transpose in
    before = text.split("relay.nn.max_pool2d")[0]
    assert before.count("relay.transpose") == 1
    assert before.count("relay.nn.conv2d") == 3
