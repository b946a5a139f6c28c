"""`qnn.requantize {rounding = "tflite" | "tflite_single"}` through qnn-legalize and the
JIT, and through the reference executor, against scalar transcriptions of TFLite's
QuantizeMultiplier and MultiplyByQuantizedMultiplier (gemmlowp's double rounding, and the
TFLITE_SINGLE_ROUNDING variant), bit for bit: per-channel f64 scales with multipliers
below and above 1, ties, and inputs on which the two roundings disagree."""

from __future__ import annotations

import math

import numpy as np
import pytest
import xrelay

SCALES = [3.0517578125e-05, 0.0021, 0.5, 1.0, 3.7, 0.25]  # exact halves give ties
IN_ZP, OUT_ZP = 3, -5


def quantize_multiplier(real: float) -> tuple[int, int]:
    """tensorflow/lite/kernels/internal/quantization_util.cc: QuantizeMultiplier."""
    if real == 0.0:
        return 0, 0
    q, shift = math.frexp(real)
    q_fixed = int(math.copysign(math.floor(abs(q * (1 << 31)) + 0.5), q))  # std::round
    if q_fixed == 1 << 31:
        q_fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return q_fixed, shift


def single_rounding(x: int, multiplier: int, shift: int) -> int:
    """MultiplyByQuantizedMultiplier with TFLITE_SINGLE_ROUNDING: one rounding, half up."""
    total_shift = 31 - shift
    return (x * multiplier + (1 << (total_shift - 1))) >> total_shift


def double_rounding(x: int, multiplier: int, shift: int) -> int:
    """MultiplyByQuantizedMultiplier without it: gemmlowp's SaturatingRoundingDoublingHighMul
    of x << left_shift, then RoundingDivideByPOT by right_shift."""
    left, right = max(shift, 0), max(-shift, 0)
    product = (x << left) * multiplier
    nudge = (1 << 30) if product >= 0 else 1 - (1 << 30)
    total = product + nudge
    high = total >> 31 if total >= 0 else -((-total) >> 31)  # C++ division: toward zero
    mask = (1 << right) - 1
    threshold = (mask >> 1) + (1 if high < 0 else 0)
    return (high >> right) + (1 if (high & mask) > threshold else 0)


def expected(acc: np.ndarray, out_scale: float, rounding) -> np.ndarray:
    out = np.empty(acc.shape, np.int64)
    for idx in np.ndindex(acc.shape):
        m, s = quantize_multiplier(float(np.float64(SCALES[idx[1]]) / np.float64(out_scale)))
        value = rounding(int(acc[idx]) - IN_ZP, m, s) + OUT_ZP
        out[idx] = min(127, max(-128, value))
    return out.astype(np.int8)


def module(rounding: str, out_scale: float, rows: int) -> str:
    scales = ", ".join(repr(s) for s in SCALES)
    t = f"tensor<{rows}x6xi32>"
    return f"""func.func @main(%acc: {t}) -> tensor<{rows}x6xi8> {{
  %s = relay.constant dense<[{scales}]> : tensor<6xf64>
  %z = relay.constant dense<{IN_ZP}> : tensor<i32>
  %os = relay.constant dense<{out_scale}> : tensor<f32>
  %oz = relay.constant dense<{OUT_ZP}> : tensor<i32>
  %y = qnn.requantize %acc, %s, %z, %os, %oz {{axis = 1 : i64, out_dtype = i8, rounding = "{rounding}"}} : ({t}, tensor<6xf64>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<{rows}x6xi8>
  func.return %y : tensor<{rows}x6xi8>
}}"""


@pytest.mark.parametrize("out_scale", [0.5, 0.0123])
def test_tflite_roundings_are_bit_exact(out_scale):
    rng = np.random.default_rng(0)
    acc = rng.integers(-3000, 3000, (256, 6)).astype(np.int32)
    acc[0] = [IN_ZP + 1, IN_ZP - 1, IN_ZP + 3, IN_ZP - 3, IN_ZP + 5, IN_ZP - 7]  # ties
    out_scale = float(np.float32(out_scale))
    wants = {}
    for rounding, fn in (("tflite", double_rounding), ("tflite_single", single_rounding)):
        want = wants[rounding] = expected(acc, out_scale, fn)
        mod = xrelay.parse_module(module(rounding, out_scale, acc.shape[0]))
        np.testing.assert_array_equal(xrelay.create_executor("debug", mod).run(acc)[0], want)
        np.testing.assert_array_equal(xrelay.build(mod).run(acc)[0], want)
        assert len(np.unique(want)) > 4
    # the inputs tell the two roundings apart (negative ties and double-rounding cases)
    assert np.any(wants["tflite"] != wants["tflite_single"])


def test_tflite_requantize_needs_constant_scales():
    text = """func.func @main(%acc: tensor<4xi32>, %s: tensor<f32>) -> tensor<4xi8> {
  %z = relay.constant dense<0> : tensor<i32>
  %y = qnn.requantize %acc, %s, %z, %s, %z {out_dtype = i8, rounding = "tflite"} : (tensor<4xi32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<4xi8>
  func.return %y : tensor<4xi8>
}"""
    with pytest.raises(xrelay.Error, match="rounding 'tflite' needs constant scales"):
        xrelay.build(xrelay.parse_module(text))
