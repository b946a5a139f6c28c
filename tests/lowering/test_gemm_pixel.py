"""Pixel-major f32 convolutions (lowering/kernels/gemm_pixel.py, chosen by prepack-weights
for few output pixels with AVX-512): bit for bit the packed path's values and within
rounding of the reference, on windows read in place (padding on every side or only
bottom-right, stride 2, dilation, K over several blocks, channels that are not a multiple
of the 32-wide panel), pointwise products packed per K block, a batch, the epilogues
(bias and relu, batch_norm, a residual), a prologue (batch_norm and relu before a 1x1
convolution), channels or pixels split over 1-3 threads, last tiles of 1-7 pixels; which
convolutions it takes."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from xrelay.dialects import relay
from xrelay.lowering import winograd_convs
from xrelay.lowering.jit import vector_width
from xrelay.lowering.kernels import gemm_pixel

from .jit_check import random_inputs
from .test_kernels import F, module, specs_after_selection

pytestmark = [
    pytest.mark.usefixtures("small_k_blocks"),  # K over several blocks (conftest)
    pytest.mark.skipif(
        vector_width() != 16, reason="pixel-major products need 16-float vectors (AVX-512)"
    ),
]


@pytest.fixture(autouse=True)
def _no_winograd(monkeypatch):
    """The direct convolutions only: Winograd's tile choice (`_few_tiles`) follows what
    pixel-major takes, so the packed-path runs below would compare two algorithms."""
    monkeypatch.setattr(winograd_convs, "choose_tile", lambda conv, vector_width=8: None)


CASES = [
    # data, weight, strides, padding (top, left, bottom, right), dilation
    ((1, 40, 7, 7), (48, 40, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),  # K 360: two blocks
    ((1, 24, 14, 14), (64, 24, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1)),  # stride 2
    ((1, 16, 9, 9), (32, 16, 3, 3), (1, 1), (2, 2, 2, 2), (2, 2)),  # dilation
    ((1, 8, 10, 8), (40, 8, 5, 3), (1, 1), (0, 1, 2, 0), (1, 1)),  # uneven padding
    ((1, 12, 9, 8), (33, 12, 2, 2), (1, 1), (0, 0, 1, 1), (1, 1)),  # bottom-right only
    ((2, 300, 7, 7), (40, 300, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1)),  # pointwise, batch 2
    ((1, 256, 13, 13), (70, 256, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1)),  # pointwise, 169 px
    ((1, 16, 4, 4), (96, 16, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),  # more panels than tiles
    ((1, 16, 27, 27), (40, 16, 5, 5), (1, 1), (2, 2, 2, 2), (1, 1)),  # 5x5: 729 pixels
    ((2, 16, 28, 28), (32, 16, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),  # one panel, batch 2
]


def conv(case, x, w):
    return relay.Conv2DOp(x, w, strides=case[2], padding=case[3], dilation=case[4])


def run(mod, params, inputs, pixel_major: bool):
    with pytest.MonkeyPatch.context() as mp:
        if not pixel_major:
            mp.setattr(gemm_pixel, "MAX_PIXELS", 0)
        return xrelay.build(mod, params, cache=False).run(*inputs)[0]


def compare(mod, shapes, seed=0):
    """Parameters from the second argument on; the packed path's values exactly, the
    reference's within rounding."""
    arrays = random_inputs([(s, F) for s in shapes], seed)
    inputs = arrays[:1]
    params = {f"x{i}": a for i, a in enumerate(arrays) if i >= 1}
    got = run(mod, params, inputs, True)
    np.testing.assert_array_equal(got, run(mod, params, inputs, False))
    want = xrelay.create_executor("debug", mod, params=params).run(*inputs)[0]
    atol = 1e-5 * max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=atol)


def pixel_major_specs(mod):
    return [s for s in specs_after_selection(mod) if getattr(s, "pixel_major", False)]


@pytest.mark.parametrize("threads", ["1", "2", "3"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[0] + c[1][:1])))
def test_pixel_major_gives_the_packed_path_s_values(case, threads, monkeypatch):
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    mod = module([case[0], case[1]], 1, lambda x, w: [conv(case, x, w)])
    compare(mod, [case[0], case[1]])
    (spec,) = pixel_major_specs(mod)
    assert spec.a_packed and spec.mpad % 32 == 0 and spec.mpad >= spec.m


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("pointwise", [False, True], ids=["window", "pointwise"])
@pytest.mark.parametrize("hw", [(6, 7), (5, 7), (6, 6), (5, 9), (2, 19), (3, 13)])
def test_last_tile_of_each_height(hw, pointwise, threads, monkeypatch):
    """A last tile of 2-7 pixels runs as tiles of 4, 2 and 1 rows (gemm_pixel.TAIL_ROWS):
    42, 35, 36, 45, 38 and 39 pixels, on one thread and split over two."""
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    c = 256 if pointwise else 16
    k = 1 if pointwise else 3
    case = ((1, c, *hw), (40, c, k, k), (1, 1), (k // 2,) * 4, (1, 1))
    mod = module([case[0], case[1]], 1, lambda x, w: [conv(case, x, w)])
    compare(mod, [case[0], case[1]], seed=3)
    (spec,) = pixel_major_specs(mod)
    assert spec.n % 8 == hw[0] * hw[1] % 8 != 0


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("case", [CASES[0], CASES[5]], ids=["window", "pointwise"])
def test_epilogues(case, threads, monkeypatch):
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    o = case[1][0]
    out = (case[0][0], o, 7, 7)

    def body(x, w, r, b, g, s, m, v):
        c = conv(case, x, w)
        a = relay.BiasAddOp(c, b, axis=1)
        bn = relay.BatchNormOp(a, g, s, m, relay.AbsOp(v), epsilon=1e-3)
        add = relay.AddOp(bn, r)
        return [c, a, bn.operands[4].owner, bn, add, relay.ReluOp(add)]

    shapes = [case[0], case[1], out, (o,), (o,), (o,), (o,), (o,)]
    mod = module(shapes, 1, body)
    compare(mod, shapes, seed=2)
    (spec,) = pixel_major_specs(mod)
    assert spec.shift and spec.residual and spec.relu


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("case", [CASES[0], CASES[8]], ids=["7x7", "5x5"])
def test_bias_and_relu(case, threads, monkeypatch):
    """The usual epilogue (per-channel shift, relu: the transposed store's short path)."""
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)

    def body(x, w, b):
        c = conv(case, x, w)
        a = relay.BiasAddOp(c, b, axis=1)
        return [c, a, relay.ReluOp(a)]

    shapes = [case[0], case[1], (case[1][0],)]
    mod = module(shapes, 1, body)
    compare(mod, shapes, seed=5)
    (spec,) = pixel_major_specs(mod)
    assert spec.shift and spec.relu and not spec.residual


@pytest.mark.parametrize("threads", ["1", "2"])
def test_prologue(threads, monkeypatch):
    """batch_norm and relu before a 1x1 convolution (DenseNet's): B through the prologue
    as the pixel panels are packed."""
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    xs, ws = (1, 256, 7, 7), (64, 256, 1, 1)

    def body(x, g, s, m, v, w):
        bn = relay.BatchNormOp(x, g, s, m, relay.AbsOp(v), epsilon=1e-3)
        r = relay.ReluOp(bn)
        return [bn.operands[4].owner, bn, r, relay.Conv2DOp(r, w)]

    shapes = [xs, (256,), (256,), (256,), (256,), ws]
    mod = module(shapes, 1, body)
    compare(mod, shapes, seed=4)
    (spec,) = pixel_major_specs(mod)
    assert spec.prologue


def test_which_convolutions():
    """Few pixels and at least a panel of channels, a window wider than 3 x 3, or a
    window with one panel of channels (32: the packed path's im2col panels would serve 4
    row tiles); not a 3 x 3 one of 64 channels on 784 pixels (28 x 28: the 32-wide panels
    waste 2 %), 16 channels, a strided 1x1 convolution, a 1x1 one with K under
    MIN_POINTWISE_K or a grouped one."""
    for xs, ws, pad in [
        ((1, 8, 7, 7), (32, 8, 3, 3), 1),
        ((1, 8, 28, 28), (32, 8, 5, 5), 2),
        ((1, 256, 13, 13), (192, 256, 1, 1), 0),
        ((1, 8, 28, 28), (32, 8, 3, 3), 1),
    ]:
        taken = module([xs, ws], 1, lambda x, w, p=pad: [relay.Conv2DOp(x, w, padding=(p,) * 4)])
        assert pixel_major_specs(taken), (xs, ws)
    for xs, ws, kw in [
        ((1, 8, 28, 28), (64, 8, 3, 3), {"padding": (1, 1, 1, 1)}),
        ((1, 8, 7, 7), (16, 8, 3, 3), {"padding": (1, 1, 1, 1)}),
        ((1, 8, 14, 14), (64, 8, 1, 1), {"strides": (2, 2)}),
        ((1, 128, 13, 13), (192, 128, 1, 1), {}),
        ((1, 16, 7, 7), (64, 8, 3, 3), {"padding": (1, 1, 1, 1), "groups": 2}),
    ]:
        mod = module([xs, ws], 1, lambda x, w, kw=kw: [relay.Conv2DOp(x, w, **kw)])
        assert not pixel_major_specs(mod), (xs, ws, kw)
        assert specs_after_selection(mod)


@pytest.mark.parametrize("threads", ["1", "2", "3"])
@pytest.mark.parametrize("case", [CASES[5], CASES[6]], ids=["batch-2", "169-pixels"])
def test_pointwise_pixels_read_in_place(case, threads, monkeypatch):
    """A pixel-major pointwise product without a prologue carries a 1x1 window: each tile's
    pixels are broadcast from the input (select_kernels._pointwise_window), the same bits
    as with its pixels packed into panels per K block."""
    from xrelay.lowering import select_kernels

    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    mod = module([case[0], case[1]], 1, lambda x, w: [conv(case, x, w)])
    (spec,) = pixel_major_specs(mod)
    assert spec.window and spec.window[1] == (1, 1) and not spec.direct
    arrays = random_inputs([(s, F) for s in (case[0], case[1])], 7)
    params = {"x1": arrays[1]}
    in_place = xrelay.build(mod, dict(params), cache=False).run(arrays[0])[0]
    monkeypatch.setattr(select_kernels, "POINTWISE_PIXELS_IN_PLACE", False)
    (packed_spec,) = pixel_major_specs(mod)
    assert not packed_spec.window
    packed = xrelay.build(mod, dict(params), cache=False).run(arrays[0])[0]
    assert np.array_equal(in_place, packed)
