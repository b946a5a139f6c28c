"""The runtime kernels' relu (and its absence) is llvm.maximum(x, floor) in two
instructions (lowering/kernels/irtext.py, `floor`): x86's max, then + 0.0 for relu (a -0
becomes +0) or + -0.0 without (the identity, -0 kept; a product's sums start at +0, so
no -0 reaches these epilogues). The kernels' outputs against the
linalg lowering's (llvm.maximum), zeros' signs and infinities bit for bit, on sums that come out -0.0, NaN, +-inf and
ordinary: the GEMM's micro-kernel and edge tiles (dense), the pixel-major transposed store
(a 1x1 convolution on 7 x 7), the narrow convolution's epilogue (depthwise), and the
packing's prologue (batch_norm -> relu before a convolution)."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from xrelay.dialects import relay

from .test_kernels import F, module


def _same(got: np.ndarray, want: np.ndarray) -> None:
    """NaN where NaN; zeros (their signs) and infinities bit for bit; the other values
    within rounding (the kernels sum in another order than the lowering)."""
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    exact = (want == 0) | np.isinf(want)
    np.testing.assert_array_equal(got[exact].view(np.uint32), want[exact].view(np.uint32))
    rest = ~exact & ~np.isnan(want)
    scale = np.abs(want[rest]).max()
    np.testing.assert_allclose(got[rest], want[rest], rtol=1e-5, atol=1e-5 * scale)


def _both(mod, params, *inputs):
    got = xrelay.build(mod, dict(params), cache=False).run(*inputs)[0]
    want = xrelay.build(mod, dict(params), cache=False, kernels=False).run(*inputs)[0]
    return got, want


def _special_weight(rows: int, k: int) -> np.ndarray:
    """Rows whose products with a negative input sum to -0.0 (zeros), a NaN, +inf, -inf,
    and ordinary values of either sign."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((rows, k)).astype(F)
    w[0::6] = 0.0  # (-x) * 0 = -0: a sum of -0.0
    w[1::6, 3] = np.nan
    w[2::6, 5] = -np.inf  # times a negative input: +inf
    w[3::6, 7] = np.inf
    return w


@pytest.mark.parametrize("relu", [True, False])
@pytest.mark.parametrize("batch", [8, 5])  # whole tiles; an edge tile
def test_dense_epilogue(relu, batch):
    k, n = 40, 70
    x = -np.abs(np.random.default_rng(1).standard_normal((batch, k))).astype(F) - 0.5
    w = _special_weight(n, k)
    bias = np.where(np.arange(n) % 6 == 0, np.float32(-0.0), np.float32(0.25)).astype(F)

    def body(xv, wv, bv):
        ops = [relay.DenseOp(xv, wv)]
        ops.append(relay.BiasAddOp(ops[-1].results[0], bv, axis=1))
        if relu:
            ops.append(relay.ReluOp(ops[-1].results[0]))
        return ops

    mod = module([(batch, k), (n, k), (n,)], 1, body)
    got, want = _both(mod, {"x1": w, "x2": bias}, x)
    assert np.isnan(want).any() and np.isinf(want).any()
    _same(got, want)


@pytest.mark.parametrize("relu", [True, False])
def test_pixel_major_and_narrow_epilogues(relu):
    c, k = 256, 64  # 1x1 on 7 x 7 with K = 256: pixel-major (16-float vectors)
    x = -np.abs(np.random.default_rng(2).standard_normal((1, c, 7, 7))).astype(F) - 0.5
    w = _special_weight(k, c).reshape(k, c, 1, 1)
    dw = np.random.default_rng(3).standard_normal((k, 1, 3, 3)).astype(F)
    dw[::4] = 0.0

    def body(xv, wv, dv):
        ops = [relay.Conv2DOp(xv, wv)]
        if relu:
            ops.append(relay.ReluOp(ops[-1].results[0]))
        ops.append(relay.Conv2DOp(ops[-1].results[0], dv, padding=[1, 1, 1, 1], groups=k))
        if relu:
            ops.append(relay.ReluOp(ops[-1].results[0]))
        return ops

    mod = module([(1, c, 7, 7), (k, c, 1, 1), (k, 1, 3, 3)], 1, body)
    got, want = _both(mod, {"x1": w, "x2": dw}, x)
    _same(got, want)
