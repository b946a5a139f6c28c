"""Narrow ONNX types (bfloat16, float8, float4, int4/int2) through the JIT: every cast
against ml_dtypes (ONNX's reference), on random bit patterns and the special values."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import xrelay
from onnx import TensorProto, helper, numpy_helper
from xrelay.frontends.onnx.narrow import FORMATS, format_values

FLOATS = [
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float4_e2m1fn",
    "bfloat16",
]


def cast_model(src: int, dst: int, n: int, saturate: int | None = None):
    attrs = {} if saturate is None else {"saturate": saturate}
    node = helper.make_node("Cast", ["x"], ["y"], to=dst, **attrs)
    graph = helper.make_graph(
        [node],
        "cast",
        [helper.make_tensor_value_info("x", src, [n])],
        [helper.make_tensor_value_info("y", dst, [n])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])


def run(model, x):
    return xrelay.build(*xrelay.from_onnx(model)).run(x)[0]


def samples() -> np.ndarray:
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    normal = (rng.standard_normal(20000) * rng.choice([1e-6, 1e-3, 1, 100, 1e4], 20000)).astype(
        np.float32
    )
    special = np.array(
        [
            0,
            -0.0,
            np.inf,
            -np.inf,
            np.nan,
            448,
            464,
            470,
            480,
            240,
            248,
            57344,
            61440,
            6,
            5,
            7,
            0.25,
            2**-10,
        ],
        np.float32,
    )
    return np.concatenate([bits, normal, special])


def same_values(got: np.ndarray, want: np.ndarray) -> bool:
    g, w = got.astype(np.float32), want.astype(np.float32)
    return bool(np.all((g == w) | (np.isnan(g) & np.isnan(w))))


@pytest.mark.parametrize("name", FORMATS)
def test_format_tables_match_ml_dtypes(name):
    fmt = FORMATS[name]
    if name == "bfloat16":
        pytest.skip("bfloat16 decodes by a shift, not a table")
    codes = np.arange(1 << fmt.width).astype(np.uint8).view(getattr(ml_dtypes, name))
    assert np.array_equal(format_values(fmt), codes.astype(np.float32), equal_nan=True)


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("src", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("saturate", [1, 0])
def test_encode_rounds_like_ml_dtypes(name, src, saturate):
    dtype = np.dtype(getattr(ml_dtypes, name))
    x = samples().astype(src)
    model = cast_model(
        helper.np_dtype_to_tensor_dtype(np.dtype(src)),
        helper.np_dtype_to_tensor_dtype(dtype),
        x.size,
        saturate,
    )
    got = run(model, x)
    assert got.dtype == dtype
    want = (
        numpy_helper.saturate_cast(x, dtype)
        if saturate and name.startswith("float8")
        else x.astype(dtype)
    )
    assert same_values(got, want)


@pytest.mark.parametrize("name", FLOATS)
def test_decode_every_code(name):
    dtype = np.dtype(getattr(ml_dtypes, name))
    storage = np.uint16 if name == "bfloat16" else np.uint8
    codes = np.arange(1 << FORMATS[name].width).astype(storage).view(dtype)
    got = run(
        cast_model(helper.np_dtype_to_tensor_dtype(dtype), TensorProto.FLOAT, codes.size), codes
    )
    assert np.array_equal(got, codes.astype(np.float32), equal_nan=True)


@pytest.mark.parametrize("name", ["int4", "uint4", "int2", "uint2"])
def test_small_integers_wrap_like_ml_dtypes(name):
    dtype = np.dtype(getattr(ml_dtypes, name))
    x = np.arange(-40, 40).astype(np.float32)
    got = run(cast_model(TensorProto.FLOAT, helper.np_dtype_to_tensor_dtype(dtype), x.size), x)
    assert got.dtype == dtype and np.array_equal(
        got.astype(np.int8), x.astype(dtype).astype(np.int8)
    )
    back = run(cast_model(helper.np_dtype_to_tensor_dtype(dtype), TensorProto.FLOAT, x.size), got)
    assert np.array_equal(back, got.astype(np.float32))


def test_bfloat16_op_computes_in_f32_and_rounds_back():
    node = helper.make_node("Mul", ["x", "x"], ["y"])
    graph = helper.make_graph(
        [node],
        "mul",
        [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [64])],
        [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [64])],
    )
    x = np.random.default_rng(1).standard_normal(64).astype(ml_dtypes.bfloat16)
    got = run(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)]), x)
    want = (x.astype(np.float32) ** 2).astype(ml_dtypes.bfloat16)
    assert got.dtype == want.dtype and same_values(got, want)


def test_arithmetic_on_float8_is_refused_naming_the_node():
    node = helper.make_node("Add", ["x", "x"], ["y"], name="add8")
    graph = helper.make_graph(
        [node],
        "add",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT8E4M3FN, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT8E4M3FN, [4])],
    )
    with pytest.raises(xrelay.Error, match=r"'add8' \(Add\): unsupported float8_e4m3fn input"):
        xrelay.from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)]))


def test_a_narrow_input_of_the_wrong_dtype_is_named():
    lib = xrelay.build(*xrelay.from_onnx(cast_model(TensorProto.FLOAT8E5M2, TensorProto.FLOAT, 3)))
    with pytest.raises(xrelay.Error, match="input 'x' expects float8_e5m2"):
        lib.run(np.zeros(3, np.uint8))
