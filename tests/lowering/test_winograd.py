"""Winograd convolutions (lowering/winograd_convs.py, dialects/winograd.py): the
transforms against the reference, whole convolutions against the direct result within a
stated error bound (tiles 2 and 4, cropped outputs, a batch, every epilogue the chain can
fold, threads), which convolutions are rewritten, and the batched GEMM's split over
threads (lowering/kernels/wrappers.py)."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from xrelay.dialects import relay, winograd
from xrelay.dialects.kernel import GemmSpec
from xrelay.lowering import winograd_convs
from xrelay.lowering.context import BuildContext
from xrelay.lowering.jit import vector_width
from xrelay.lowering.kernels.wrappers import batch_split

from .jit_check import check_jit
from .test_kernels import module, specs_after_selection

# K over several blocks of the f32 GEMM (conftest.small_k_blocks)
pytestmark = pytest.mark.usefixtures("small_k_blocks")

F = "float32"

# (N, C, H, W), padding: tiles that fit exactly, cropped outputs, asymmetric and no padding
TRANSFORMS = [
    ((1, 3, 8, 8), (1, 1, 1, 1)),
    ((2, 4, 7, 9), (0, 0, 0, 0)),
    ((1, 2, 5, 6), (1, 0, 2, 1)),
    ((1, 1, 3, 3), (2, 2, 2, 2)),
]


@pytest.mark.parametrize("tile", winograd.TILES)
@pytest.mark.parametrize("case", TRANSFORMS, ids=lambda c: "x".join(map(str, c[0])))
def test_transforms_match_the_reference(tile, case):
    """(The extra tile of each row is scratch the product skips: not compared.)"""
    shape, pad = case
    mod = module([shape], 1, lambda x: [relay.WinogradInputOp(x, tile=tile, padding=list(pad))])
    x = np.random.default_rng(0).standard_normal(shape).astype(F)
    got = xrelay.build(mod, {}, cache=False).run(x)[0]
    want = xrelay.create_executor("debug", mod, params={}).run(x)[0]
    np.testing.assert_allclose(got[..., :-1], want[..., :-1], rtol=1e-5, atol=1e-6)
    n, _, h, w = shape
    oh, ow = h + pad[0] + pad[2] - 2, w + pad[1] + pad[3] - 2
    prods = ((tile + 2) ** 2, n, 5, -(-oh // tile), -(-ow // tile))
    check_jit(
        [(prods, F), ((5,), F), ((n, 5, oh, ow), F)],
        lambda p, s, r: relay.WinogradOutputOp(
            p, s, r, tile=tile, size=[oh, ow], scale=True, residual=True, relu=True
        ),
    )


def direct(x: np.ndarray, w: np.ndarray, pad) -> np.ndarray:
    top, left, bottom, right = pad
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (top, bottom), (left, right)))
    oh, ow = xp.shape[2] - 2, xp.shape[3] - 2
    y = np.zeros((x.shape[0], w.shape[0], oh, ow))
    for i in range(3):
        for j in range(3):
            y += np.einsum("nchw,kc->nkhw", xp[:, :, i : i + oh, j : j + ow], w[:, :, i, j])
    return y


def conv_module(x_shape, k, pad, epilogue):
    """conv2d (weight a parameter), then the epilogue ops named in `epilogue`."""
    n, c, h, w = x_shape
    oh, ow = h + pad[0] + pad[2] - 2, w + pad[1] + pad[3] - 2

    def body(x, r, wv, g, b, mu, var):
        make = {
            "bn": lambda y: relay.BatchNormOp(y, g, b, mu, var),
            "bias": lambda y: relay.BiasAddOp(y, b),
            "residual": lambda y: relay.AddOp(y, r),
            "relu": relay.ReluOp,
        }
        ops = [relay.Conv2DOp(x, wv, padding=list(pad))]
        for kind in epilogue:
            ops.append(make[kind](ops[-1].results[0]))
        return ops

    shapes = [x_shape, (n, k, oh, ow), (k, c, 3, 3), (k,), (k,), (k,), (k,)]
    return module(shapes, 2, body), (n, k, oh, ow)


def run_both(x_shape, k, pad, epilogue=(), tile=4, seed=0):
    """(winograd output, direct output, the reference in f64, the GEMM specs, the scale of
    the rounding: the largest sum of absolute products)."""
    mod, out_shape = conv_module(x_shape, k, pad, epilogue)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(x_shape).astype(F)
    res = rng.standard_normal(out_shape).astype(F)
    w = (rng.standard_normal((k, x_shape[1], 3, 3)) / np.sqrt(9 * x_shape[1])).astype(F)
    g, b, mu = (rng.standard_normal(k).astype(F) for _ in range(3))
    var = (rng.random(k) + 0.5).astype(F)
    params = {"x2": w, "x3": g, "x4": b, "x5": mu, "x6": var}
    want = direct(x, w, pad)
    for kind in epilogue:
        if kind == "bn":
            want = (want - mu[:, None, None]) * (g / np.sqrt(var + 1e-5))[:, None, None]
            want += b[:, None, None]
        elif kind == "bias":
            want += b[:, None, None]
        elif kind == "residual":
            want += res
        else:
            want = np.maximum(want, 0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(winograd_convs, "MIN_TILES", 1)
        only = {2: 10**9, 4: 10**9, tile: 1}
        mp.setattr(winograd_convs, "MIN_INPUT_CHANNELS", {8: only, 16: only})
        mp.setattr(winograd_convs, "MIN_OUTPUT_CHANNELS", {8: 1, 16: 1})
        mp.setattr(winograd_convs, "THIN_MIN_TILES", 0)
        got = xrelay.build(mod, dict(params), cache=False).run(x, res)[0]
        specs = [s for s in specs_after_selection(mod) if isinstance(s, GemmSpec)]
    plain = xrelay.build(mod, dict(params), cache=False, kernels=False).run(x, res)[0]
    return got, plain, want, specs, direct(np.abs(x), np.abs(w), pad).max()


# error bounds relative to the largest sum of absolute products (what rounding scales
# with): F(4x4, 3x3) in f32 loses a few bits to its larger transform coefficients
BOUND = {2: 3e-7, 4: 5e-6}  # measured: 5-8e-8 and 0.8-1.1e-6


@pytest.mark.parametrize("tile", winograd.TILES)
@pytest.mark.parametrize(
    "case",
    [
        ((1, 16, 16, 16), 24, (1, 1, 1, 1)),  # tiles that fit
        ((2, 20, 9, 10), 16, (1, 1, 1, 1)),  # a batch, cropped rows and columns
        ((1, 16, 11, 7), 17, (0, 1, 2, 1)),  # asymmetric padding, odd channels
        ((1, 300, 12, 12), 16, (1, 1, 1, 1)),  # C over one KC block of the GEMM
    ],
    ids=lambda c: "x".join(map(str, c[0])) if isinstance(c, tuple) else None,
)
def test_convolution_within_the_error_bound(tile, case):
    x_shape, k, pad = case
    got, plain, want, specs, scale = run_both(x_shape, k, pad, tile=tile)
    assert np.abs(plain - want).max() / scale < 1e-6
    assert np.abs(got - want).max() / scale < BOUND[tile]
    (spec,) = specs
    assert spec.batch[0][0] == (tile + 2) ** 2 and spec.m == k
    assert spec.a_packed  # the transformed weights, packed at build time


@pytest.mark.skipif(vector_width() != 16, reason="pixel-major products need 16-float vectors")
@pytest.mark.parametrize("tile", winograd.TILES)
@pytest.mark.parametrize(
    "case",
    [
        ((1, 256, 7, 7), 64, (1, 1, 1, 1)),  # 4 or 16 tiles: under MIN_TILES
        ((2, 300, 6, 6), 40, (1, 1, 1, 1)),  # a batch, C over one KC block, K no panel multiple
    ],
    ids=lambda c: "x".join(map(str, c[0])) if isinstance(c, tuple) else None,
)
def test_few_tiles_run_pixel_major_within_the_error_bound(tile, case):
    """Products of few tiles per image (and C of 256 or more) run pixel-major, one term
    after another: the weights packed in 32-row panels per term."""
    x_shape, k, pad = case
    got, _, want, specs, scale = run_both(x_shape, k, pad, tile=tile)
    assert np.abs(got - want).max() / scale < BOUND[tile]
    (spec,) = specs
    assert spec.pixel_major and spec.a_packed and spec.batch[0][0] == (tile + 2) ** 2


@pytest.mark.parametrize(
    "epilogue",
    [("bn", "relu"), ("bias", "residual", "relu"), ("bn", "residual"), ("relu",), ("bias",)],
)
@pytest.mark.parametrize("cropped", [False, True])
def test_the_epilogue_folds_into_the_output_transform(epilogue, cropped):
    x_shape = (1, 16, 9, 10) if cropped else (1, 16, 8, 12)
    got, _, want, _, scale = run_both(x_shape, 16, (1, 1, 1, 1), epilogue)
    assert np.abs(got - want).max() / scale < BOUND[4]
    mod, _ = conv_module(x_shape, 16, (1, 1, 1, 1), epilogue)
    work = mod.clone()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(winograd_convs, "MIN_TILES", 1)
        mp.setattr(winograd_convs, "MIN_INPUT_CHANNELS", {8: {2: 1, 4: 1}, 16: {2: 1, 4: 1}})
        mp.setattr(winograd_convs, "MIN_OUTPUT_CHANNELS", {8: 1, 16: 1})
        mp.setattr(winograd_convs, "THIN_MIN_TILES", 0)
        xrelay.lowering.pipeline.lower(work, stop_after="winograd-convs")
    # what is left on whole outputs is the output transform (the vectors' ops remain)
    (last,) = [
        op
        for op in work.walk()
        if op.name.startswith("relay.") and op.results and len(op.results[0].type.get_shape()) == 4
    ]
    assert isinstance(last, relay.WinogradOutputOp)


@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_the_terms_split_over_threads(monkeypatch, threads):
    """36 terms x 2 images: threads take whole products (BATCH_SPLIT_MIN), 1-3 of them."""
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    got, _, want, (spec,), scale = run_both((2, 32, 12, 12), 40, (1, 1, 1, 1), ("bias", "relu"))
    assert batch_split(spec, True)
    assert np.abs(got - want).max() / scale < BOUND[4]


@pytest.mark.parametrize(
    "x_shape, w_shape, kwargs, tile",
    [
        ((1, 64, 32, 32), (32, 64, 3, 3), {}, 4),  # 64 tiles of 4
        ((1, 128, 14, 14), (64, 128, 3, 3), {"padding": [1, 1, 1, 1]}, 2),  # 16 of 4, 49 of 2
        ((1, 64, 14, 14), (64, 64, 3, 3), {"padding": [1, 1, 1, 1]}, 2),
        ((1, 48, 14, 14), (64, 48, 3, 3), {"padding": [1, 1, 1, 1]}, None),  # C < 64 for 2
        ((1, 16, 56, 56), (64, 16, 3, 3), {}, 4),  # 16 channels at 8 floats...
        ((1, 8, 56, 56), (64, 8, 3, 3), {}, None),  # too few input channels
        ((1, 128, 7, 7), (128, 128, 3, 3), {"padding": [1, 1, 1, 1]}, None),  # too few tiles
        ((1, 64, 32, 32), (8, 64, 3, 3), {}, None),  # too few output channels
        ((1, 64, 32, 32), (32, 64, 3, 3), {"strides": [2, 2]}, None),
        ((1, 64, 32, 32), (32, 64, 3, 3), {"dilation": [2, 2]}, None),
        ((1, 64, 32, 32), (32, 32, 3, 3), {"groups": 2}, None),
        ((1, 64, 32, 32), (32, 64, 5, 5), {}, None),
    ],
)
def test_which_convolutions_are_rewritten(x_shape, w_shape, kwargs, tile):
    mod = module([x_shape, w_shape], 1, lambda x, w: [relay.Conv2DOp(x, w, **kwargs)])
    (conv,) = [op for op in mod.walk() if isinstance(op, relay.Conv2DOp)]
    assert winograd_convs.choose_tile(conv) == tile
    assert winograd_convs.choose_tile(conv, 8) == tile


@pytest.mark.parametrize(
    "channels, tile8, tile16",
    [(16, 4, None), (24, 4, None), (32, 4, 4), (64, 4, 4), (256, 4, 4)],
)
def test_sixteen_float_products_need_more_channels(channels, tile8, tile16):
    """16-float GEMMs run the direct product fast enough that few channels do not repay
    the transforms (SqueezeNet's 16-channel expands)."""
    shapes = [(1, channels, 56, 56), (64, channels, 3, 3)]
    mod = module(shapes, 1, lambda x, w: [relay.Conv2DOp(x, w)])
    (conv,) = [op for op in mod.walk() if isinstance(op, relay.Conv2DOp)]
    assert winograd_convs.choose_tile(conv, 8) == tile8
    assert winograd_convs.choose_tile(conv, 16) == tile16


def test_sixteen_float_products_need_more_output_channels():
    """Few outputs share the input transform too little with 16-float products: 16 stay
    direct, DenseNet-121's 128 -> 32 convolutions are Winograd's."""
    for k, tile16 in ((16, None), (32, 4)):
        shapes = [(1, 128, 56, 56), (k, 128, 3, 3)]
        mod = module(shapes, 1, lambda x, w: [relay.Conv2DOp(x, w)])
        (conv,) = [op for op in mod.walk() if isinstance(op, relay.Conv2DOp)]
        assert winograd_convs.choose_tile(conv, 8) == 4
        assert winograd_convs.choose_tile(conv, 16) == tile16


def test_one_panel_of_outputs_needs_many_tiles_at_sixteen_floats():
    """32 output channels (one pixel-major panel) on 28 x 28 (49 tiles of 4) run
    pixel-major with 16-float products; on 56 x 56 (196 tiles) Winograd stays. 8-float
    products keep Winograd on both."""
    for hw, tile16 in ((28, None), (56, 4)):
        shapes = [(1, 128, hw, hw), (32, 128, 3, 3)]
        mod = module(shapes, 1, lambda x, w: [relay.Conv2DOp(x, w, padding=[1, 1, 1, 1])])
        (conv,) = [op for op in mod.walk() if isinstance(op, relay.Conv2DOp)]
        assert winograd_convs.choose_tile(conv, 8) == 4
        assert winograd_convs.choose_tile(conv, 16) == tile16


@pytest.mark.parametrize(
    "hw, channels, tile16",
    [
        (7, 512, 2),  # 16 tiles in 16 terms (2 MR-row tiles): fewer rows than 4 tiles in 36
        (14, 256, 4),  # 16 tiles in 36 terms against 49 (56 rows) in 16
        (7, 128, 2),
        (7, 16, None),  # too few input channels for either tile (and too few tiles)
    ],
)
def test_few_tiles_are_enough_when_the_product_runs_pixel_major(hw, channels, tile16):
    """ResNet-50's last 3 x 3 convolutions: 8-float products stay direct on 7 x 7 (too few
    tiles) and take F(2x2) on 14 x 14."""
    shapes = [(1, channels, hw, hw), (channels, channels, 3, 3)]
    mod = module(shapes, 1, lambda x, w: [relay.Conv2DOp(x, w, padding=[1, 1, 1, 1])])
    (conv,) = [op for op in mod.walk() if isinstance(op, relay.Conv2DOp)]
    assert winograd_convs.choose_tile(conv, 8) == (2 if hw == 14 else None)
    assert winograd_convs.choose_tile(conv, 16) == tile16


def test_the_pass_reads_its_vector_width():
    mod = module([(1, 16, 56, 56), (64, 16, 3, 3)], 1, lambda x, w: [relay.Conv2DOp(x, w)])
    for width, direct in ((8, False), (16, True)):
        work = mod.clone()
        ctx = BuildContext(params={"x1": np.zeros((64, 16, 3, 3), F)})
        xrelay.lowering.pipeline.lower(
            work, stop_after="winograd-convs", ctx=ctx,
            options={"winograd-convs": {"vector_width": width}},
        )  # fmt: skip
        assert any(isinstance(op, relay.Conv2DOp) for op in work.walk()) == direct
    with pytest.raises(xrelay.Error, match="winograd-convs: no vector width 4"):
        xrelay.lowering.pipeline.lower(
            mod.clone(),
            stop_after="winograd-convs",
            options={"winograd-convs": {"vector_width": 4}},
        )


def test_a_weight_that_is_not_a_parameter_stays_direct():
    mod = module([(1, 64, 32, 32), (32, 64, 3, 3)], 2, lambda x, w: [relay.Conv2DOp(x, w)])
    work = mod.clone()
    xrelay.lowering.pipeline.lower(work, stop_after="winograd-convs")
    assert any(isinstance(op, relay.Conv2DOp) for op in work.walk())


@pytest.mark.parametrize("chunk", [1 << 14, 7, 1])  # one step; 2 output channels; 1
def test_transformed_weights_match_the_definition(monkeypatch, chunk):
    monkeypatch.setattr(winograd, "TRANSFORM_CHUNK", chunk)
    rng = np.random.default_rng(0)
    w = rng.standard_normal((5, 3, 3, 3)).astype(F)
    for m in winograd.TILES:
        g = winograd.filter_transform(m)
        want = np.einsum("xi,kcij,yj->xykc", g, w.astype(np.float64), g).reshape(-1, 5, 3)
        np.testing.assert_allclose(winograd.transform_weight(w, m), want, rtol=1e-6, atol=1e-7)


def test_transforming_a_large_weight_holds_little_besides_the_result():
    """A 512 x 512 weight (ResNet-50's last stage): the whole weight's f64 intermediates
    were about 6x the f32 result and the peak of ResNet-50's build (362 -> 255 MB)."""
    import tracemalloc

    w = np.ones((512, 512, 3, 3), F)
    tracemalloc.start()
    try:
        u = winograd.transform_weight(w, 2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * u.nbytes, f"{peak / 2**20:.1f} MB for a {u.nbytes / 2**20:.1f} MB result"
