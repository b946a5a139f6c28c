"""Every qnn op through qnn-legalize and the JIT against the reference executor's
independent numpy implementation (reference/qnn.py), bit for bit, on full-range integers
and per-tensor and per-channel parameters."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay

PARAMS = """
  %s = relay.constant dense<0.037> : tensor<f32>
  %s2 = relay.constant dense<0.0113> : tensor<f32>
  %sc = relay.constant dense<[0.011, 0.02, 0.0031, 0.05]> : tensor<4xf32>
  %z = relay.constant dense<117> : tensor<i32>
  %z2 = relay.constant dense<-9> : tensor<i32>
  %zc = relay.constant dense<[0, 3, -4, 1]> : tensor<4xi32>
"""

CASES = {
    "quantize": (
        [((2, 4, 3), "float32")],
        "qnn.quantize %a0, %sc, %zc {axis = 1 : i64, out_dtype = i8} : (tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xi32>) -> tensor<2x4x3xi8>",
    ),
    "quantize_ui8": (
        [((5, 4), "float32")],
        "qnn.quantize %a0, %s, %z {out_dtype = ui8} : (tensor<5x4xf32>, tensor<f32>, tensor<i32>) -> tensor<5x4xui8>",
    ),
    "dequantize": (
        [((2, 4), "uint8")],
        "qnn.dequantize %a0, %sc, %zc {axis = 1 : i64} : (tensor<2x4xui8>, tensor<4xf32>, tensor<4xi32>) -> tensor<2x4xf32>",
    ),
    "requantize": (
        [((3, 4), "int32")],
        "qnn.requantize %a0, %sc, %zc, %s2, %z {axis = 1 : i64, out_dtype = ui8} : (tensor<3x4xi32>, tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<i32>) -> tensor<3x4xui8>",
    ),
    "conv2d": (
        [((1, 3, 6, 6), "uint8"), ((4, 3, 3, 3), "int8")],
        "qnn.conv2d %a0, %a1, %z, %zc, %s, %sc {padding = array<i64: 1, 0, 1, 2>, strides = array<i64: 2, 1>} : (tensor<1x3x6x6xui8>, tensor<4x3x3x3xi8>, tensor<i32>, tensor<4xi32>, tensor<f32>, tensor<4xf32>) -> tensor<1x4x3x6xi32>",
    ),
    "dense": (
        [((3, 16), "int8"), ((4, 16), "int8")],
        "qnn.dense %a0, %a1, %z2, %zc, %s, %sc : (tensor<3x16xi8>, tensor<4x16xi8>, tensor<i32>, tensor<4xi32>, tensor<f32>, tensor<4xf32>) -> tensor<3x4xi32>",
    ),
    "batch_matmul": (
        [((2, 3, 8), "uint8"), ((1, 8, 5), "int8")],
        "qnn.batch_matmul %a0, %a1, %z, %z2, %s, %s2 : (tensor<2x3x8xui8>, tensor<1x8x5xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<2x3x5xi32>",
    ),
    "add": (
        [((2, 4), "uint8"), ((4,), "uint8")],
        "qnn.add %a0, %a1, %s, %z, %s2, %z, %s, %z {out_dtype = ui8} : (tensor<2x4xui8>, tensor<4xui8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<2x4xui8>",
    ),
    "mul": (
        [((2, 4), "int8"), ((2, 4), "int8")],
        "qnn.mul %a0, %a1, %s, %z2, %s2, %z2, %s2, %z2 {out_dtype = i8} : (tensor<2x4xi8>, tensor<2x4xi8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<2x4xi8>",
    ),
    "concatenate": (
        [((2, 3), "uint8"), ((2, 2), "uint8")],
        "qnn.concatenate %a0, %a1, %s, %s2, %z, %z, %s2, %z {axis = 1 : i64} : (tensor<2x3xui8>, tensor<2x2xui8>, tensor<f32>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<2x5xui8>",
    ),
    "global_avg_pool2d": (
        [((1, 4, 5, 5), "uint8")],
        "qnn.global_avg_pool2d %a0, %s, %z, %s2, %z : (tensor<1x4x5x5xui8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x4x1x1xui8>",
    ),
}


def _type(shape, dtype) -> str:
    elem = {"float32": "f32", "uint8": "ui8", "int8": "i8", "int32": "i32"}[dtype]
    return f"tensor<{'x'.join(map(str, shape))}x{elem}>"


def _inputs(specs, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for shape, dtype in specs:
        if dtype == "float32":
            out.append((rng.standard_normal(shape) * 3).astype(np.float32))
        elif dtype == "int32":  # accumulators around the output range
            out.append(rng.integers(-300, 300, shape).astype(np.int32))
        else:
            info = np.iinfo(dtype)
            out.append(rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype))
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_qnn_op_jit_matches_reference(name):
    specs, op = CASES[name]
    args = ", ".join(f"%a{i}: {_type(s, d)}" for i, (s, d) in enumerate(specs))
    result_type = op.rsplit("-> ", 1)[1]
    text = (
        f"func.func @main({args}) -> {result_type} {{{PARAMS}"
        f"  %y = {op}\n  func.return %y : {result_type}\n}}\n"
    )
    module = xrelay.parse_module(text)
    inputs = _inputs(specs)
    want = xrelay.create_executor("debug", module).run(*inputs)[0]
    got = xrelay.build(module).run(*inputs)[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(want)) > 2  # the case exercises more than saturation


def test_zero_scale_constant_is_a_build_error():
    text = """func.func @main(%x: tensor<4xf32>) -> tensor<4xi8> {
  %s = relay.constant dense<0.0> : tensor<f32>
  %z = relay.constant dense<0> : tensor<i32>
  %q = qnn.quantize %x, %s, %z {out_dtype = i8} : (tensor<4xf32>, tensor<f32>, tensor<i32>) -> tensor<4xi8>
  func.return %q : tensor<4xi8>
}"""
    with pytest.raises(xrelay.Error, match=r"'qnn.quantize' scale: quantization scale 0.0"):
        xrelay.build(xrelay.parse_module(text))


def test_quantize_to_u8_of_special_values():
    """The u8 clamp's floor is a maxnum (relay-to-linalg: a clip read only by a cast):
    NaN, -0 and -inf give 0 as before, in the vector loop and its remainder (19 values)."""
    text = """func.func @main(%x: tensor<19xf32>) -> tensor<19xui8> {
  %s = relay.constant dense<0.5> : tensor<f32>
  %z = relay.constant dense<0> : tensor<i32>
  %q = qnn.quantize %x, %s, %z {out_dtype = ui8} : (tensor<19xf32>, tensor<f32>, tensor<i32>) -> tensor<19xui8>
  func.return %q : tensor<19xui8>
}"""
    x = np.array(
        [np.nan, -0.0, 0.0, -np.inf, np.inf, -1e-30, 1e-30, 0.25, 0.75, -0.3]
        + [127.3, 200.0, -np.nan, 1.0, -5.0, np.nan, 0.5, -0.0, 3e38],
        np.float32,
    )
    want = np.array([0, 0, 0, 0, 255, 0, 0, 0, 2, 0, 255, 255, 0, 2, 0, 0, 1, 0, 255], np.uint8)
    got = xrelay.build(xrelay.parse_module(text)).run(x)[0]
    np.testing.assert_array_equal(got, want)
