"""The runtime's Winograd transforms (lowering/kernels/winograd.py, chosen by
select-kernels): the same values as the linalg lowering (the same sums in the same order,
zero coefficients skipped), on tiles 2 and 4, rows of tiles narrower than a vector and
wider than one (two vectors), crops, padding on every side and wider than the window,
a batch, every epilogue, and planes split over 1-3 threads; which ops they take."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from xdsl.dialects.builtin import f64
from xrelay.dialects import relay, winograd
from xrelay.dialects.kernel import WinogradSpec
from xrelay.lowering import select_kernels
from xrelay.lowering.jit import missing_features, resolve_target

from .test_kernels import F, module, specs_after_selection

INPUTS = [
    # (N, C, H, W), padding (top, left, bottom, right)
    ((1, 3, 8, 8), (1, 1, 1, 1)),
    ((2, 4, 7, 9), (0, 0, 0, 0)),
    ((1, 2, 5, 70), (1, 3, 2, 1)),  # 18 tiles of 4 (+ 1) a row: two vectors
    ((1, 5, 30, 33), (2, 2, 2, 2)),
    ((1, 1, 3, 3), (2, 2, 2, 2)),
]


def build(mod, kernel: bool):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(select_kernels, "TRANSFORMS", kernel)
        return xrelay.build(mod, {}, cache=False)


def transforms(mod) -> list[WinogradSpec]:
    return [s for s in specs_after_selection(mod) if isinstance(s, WinogradSpec)]


@pytest.mark.parametrize("threads", ["1", "3"])
@pytest.mark.parametrize("tile", winograd.TILES)
@pytest.mark.parametrize("case", INPUTS, ids=lambda c: "x".join(map(str, c[0])))
def test_input_transform(case, tile, threads, monkeypatch):
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    shape, pad = case
    mod = module([shape], 1, lambda x: [relay.WinogradInputOp(x, tile=tile, padding=list(pad))])
    x = np.random.default_rng(0).standard_normal(shape).astype(F)
    got = build(mod, True).run(x)[0]
    # the extra tile of each row is scratch the product skips
    np.testing.assert_array_equal(got[..., :-1], build(mod, False).run(x)[0][..., :-1])
    (spec,) = transforms(mod)
    assert not spec.output and spec.m == tile and spec.planes == shape[0] * shape[1]


OUTPUTS = [
    # N, K, (OH, OW), epilogue flags (scale, shift, residual, relu)
    (1, 5, (8, 8), (True, False, True, True)),
    (2, 3, (7, 9), (False, True, False, False)),  # cropped
    (1, 4, (5, 70), (True, True, True, False)),  # two vectors of tiles
    (1, 6, (30, 33), (False, False, False, True)),
    (1, 2, (1, 1), (False, False, False, False)),
]


@pytest.mark.parametrize("threads", ["1", "2", "3"])
@pytest.mark.parametrize("tile", winograd.TILES)
@pytest.mark.parametrize("case", OUTPUTS, ids=lambda c: f"{c[2][0]}x{c[2][1]}")
def test_output_transform(case, tile, threads, monkeypatch):
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    n, k, (oh, ow), (scale, shift, residual, relu) = case
    prods = ((tile + 2) ** 2, n, k, -(-oh // tile), -(-ow // tile))
    shapes = [prods] + [(k,)] * (scale + shift) + ([(n, k, oh, ow)] if residual else [])

    def body(p, *rest):
        flags = {"scale": scale, "shift": shift, "residual": residual, "relu": relu}
        return [relay.WinogradOutputOp(p, *rest, tile=tile, size=[oh, ow], **flags)]

    mod = module(shapes, len(shapes), body)
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s).astype(F) for s in shapes]
    got = build(mod, True).run(*args)[0]
    np.testing.assert_array_equal(got, build(mod, False).run(*args)[0])
    want = xrelay.create_executor("debug", mod, params={}).run(*args)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    (spec,) = transforms(mod)
    assert spec.output and (spec.scale, spec.shift, spec.residual, spec.relu) == case[3]


def test_transforms_of_other_types_stay_linalg():
    mod = module(
        [(1, 2, 6, 6)],
        1,
        lambda x: [
            c := relay.CastOp(x, dtype=f64),
            relay.WinogradInputOp(c, tile=2, padding=[1, 1, 1, 1]),
        ],
    )
    assert transforms(mod) == []


@pytest.mark.parametrize("tile", winograd.TILES)
def test_eight_float_vectors(tile):
    """Both transforms on an AVX2 target (8-float vectors), against the reference."""
    target = "x86-64-v3"
    if missing_features(resolve_target(target)):
        pytest.skip(f"this CPU lacks {target}'s features")
    shape, pad = INPUTS[2]
    mod = module([shape], 1, lambda x: [relay.WinogradInputOp(x, tile=tile, padding=list(pad))])
    x = np.random.default_rng(0).standard_normal(shape).astype(F)
    got = xrelay.build(mod, {}, target_cpu=target, cache=False).run(x)[0]
    want = xrelay.create_executor("debug", mod, params={}).run(x)[0]
    np.testing.assert_allclose(got[..., :-1], want[..., :-1], rtol=1e-5, atol=1e-5)
    n, k, (oh, ow), _ = OUTPUTS[2]
    prods = ((tile + 2) ** 2, n, k, -(-oh // tile), -(-ow // tile))
    shapes = [prods, (k,), (n, k, oh, ow)]
    mod = module(
        shapes,
        3,
        lambda p, s, r: [
            relay.WinogradOutputOp(p, s, r, tile=tile, size=[oh, ow], shift=True, residual=True)
        ],
    )
    args = [np.random.default_rng(2).standard_normal(s).astype(F) for s in shapes]
    got = xrelay.build(mod, {}, target_cpu=target, cache=False).run(*args)[0]
    want = xrelay.create_executor("debug", mod, params={}).run(*args)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
