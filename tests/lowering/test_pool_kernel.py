"""The runtime's f32 max and average pools (lowering/kernels/pool.py, chosen by
select-kernels): the linalg lowering's results, NaN and infinities included, on geometries that stress the row
buffer (padding on every side and wider than the window's reach, ceil mode's extra
windows, dilation, strides 1, 2 and 3, windows of one row or column, planes narrower than
a vector), a batch, and planes split over 1-3 threads; against the reference; average
pools with and without count_include_pad (the same bits as the lowering where it sums a
window's rows first, else within rounding); which pools it takes."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from xrelay.dialects import relay
from xrelay.lowering import select_kernels
from xrelay.lowering.jit import missing_features, resolve_target
from xrelay.lowering.pipeline import lower
from xrelay.lowering.select_kernels import KERNEL_ATTR

from .test_kernels import F, module

CASES = [
    # input, pool, strides, padding (top, left, bottom, right), dilation, ceil mode
    ((1, 4, 9, 9), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), False),  # Inception's
    ((1, 3, 12, 13), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), False),  # ResNet's
    ((1, 5, 11, 11), (3, 3), (2, 2), (0, 0, 0, 0), (1, 1), True),  # SqueezeNet's, ceil
    ((2, 3, 40, 37), (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), False),  # rows over 2 vectors
    ((1, 2, 10, 9), (3, 2), (3, 3), (2, 0, 1, 1), (1, 1), True),  # stride 3: one by one
    ((1, 2, 11, 12), (3, 3), (1, 2), (2, 1, 0, 2), (2, 2), False),  # dilation, mixed strides
    ((1, 3, 7, 5), (1, 4), (1, 1), (0, 3, 0, 3), (1, 1), False),  # one row; wide padding
    ((1, 2, 6, 3), (5, 1), (2, 1), (2, 0, 2, 0), (1, 1), False),  # one column, narrow
]


def build(case, kernel: bool, kind: str = "max"):
    x, pool, strides, padding, dilation, ceil = case

    def body(v):
        attrs = {
            "pool_size": pool, "strides": strides, "padding": padding, "dilation": dilation,
            "ceil_mode": ceil,
        }  # fmt: skip
        if kind == "max":
            return [relay.MaxPool2DOp(v, **attrs)]
        return [relay.AvgPool2DOp(v, count_include_pad=kind == "avg-pad", **attrs)]

    mod = module([x], 1, body)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(select_kernels, "POOLS", kernel)
        lib = xrelay.build(mod, {}, cache=False)
    return mod, lib


def inputs(shape, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape).astype(F)
    flat = x.reshape(-1)
    flat[::17] = np.nan
    flat[5::23] = np.inf
    flat[7::29] = -np.inf
    flat[3::31] = -0.0
    return x


@pytest.mark.parametrize("threads", ["1", "2", "3"])
@pytest.mark.parametrize(
    "case", CASES, ids=lambda c: f"{c[0][2]}x{c[0][3]}-k{c[1][0]}{c[1][1]}-s{c[2][1]}"
)
def test_the_kernel_gives_the_lowering_s_values(case, threads, monkeypatch):
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    x = inputs(case[0])
    mod, lib = build(case, True)
    (got,) = lib.run(x)
    _, plain = build(case, False)
    (want,) = plain.run(x)
    np.testing.assert_array_equal(got, want)  # (NaN where NaN)
    finite = np.nan_to_num(x, nan=-5.0)
    ref = xrelay.create_executor("debug", mod, params={}).run(finite)[0]
    np.testing.assert_array_equal(lib.run(finite)[0], ref)
    work = mod.clone()
    lower(work, stop_after="select-kernels")
    assert "relay.nn.max_pool2d" not in str(work)
    assert any(KERNEL_ATTR in op.attributes for op in work.ops)


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("kind", ["avg", "avg-pad"])
@pytest.mark.parametrize(
    "case", CASES, ids=lambda c: f"{c[0][2]}x{c[0][3]}-k{c[1][0]}{c[1][1]}-s{c[2][1]}"
)
def test_average_pools(case, kind, threads, monkeypatch):
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    mod, lib = build(case, True, kind)
    _, plain = build(case, False, kind)
    x = inputs(case[0])
    if min(case[1]) > 1:  # the lowering sums the window's rows first too
        np.testing.assert_array_equal(lib.run(x)[0], plain.run(x)[0])  # (NaN where NaN)
    finite = np.random.default_rng(1).standard_normal(case[0]).astype(F)
    got = lib.run(finite)[0]
    np.testing.assert_allclose(got, plain.run(finite)[0], rtol=1e-6, atol=1e-6)
    ref = xrelay.create_executor("debug", mod, params={}).run(finite)[0]
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-6)
    work = mod.clone()
    lower(work, stop_after="select-kernels")
    assert "relay.nn.avg_pool2d" not in str(work)
    assert any(KERNEL_ATTR in op.attributes for op in work.ops)


def test_other_pools_keep_the_lowering():
    """NHWC pools and 1-D pools stay linalg."""
    nhwc = module(
        [(1, 6, 6, 4)], 1, lambda v: [relay.AvgPool2DOp(v, pool_size=(2, 2), layout="NHWC")]
    )
    one_d = module([(1, 4, 6)], 1, lambda v: [relay.AvgPool1DOp(v, pool_size=(2,))])
    for mod in (nhwc, one_d):
        work = mod.clone()
        lower(work, stop_after="select-kernels")
        assert not any(KERNEL_ATTR in op.attributes for op in work.ops)


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_eight_float_vectors(kind):
    """On an AVX2 target (8-float vectors): the lowering's values."""
    target = "x86-64-v3"
    if missing_features(resolve_target(target)):
        pytest.skip(f"this CPU lacks {target}'s features")
    case = CASES[3]
    mod, _ = build(case, True, kind)
    x = np.random.default_rng(4).standard_normal(case[0]).astype(F)
    got = xrelay.build(mod, {}, target_cpu=target, cache=False).run(x)[0]
    _, plain = build(case, False, kind)
    np.testing.assert_array_equal(got, plain.run(x)[0])


@pytest.mark.parametrize("threads", ["1", "2"])
def test_planes_with_and_without_nans_and_signed_zeros(threads, monkeypatch):
    """With 16-float vectors a plane without NaNs takes its maxima with vrangeps, one with
    a NaN (or +inf beside -inf) is redone with llvm.maximum: in one call, planes of each
    kind give the lowering's bits, -0 below +0 (max(-0, +0) is +0) and NaN wherever a
    window holds one."""
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    case = ((1, 4, 13, 13), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), False)
    rng = np.random.default_rng(7)
    x = rng.choice(np.array([0.0, -0.0, -1.0, 1.0], F), size=case[0])
    x[0, 1, 6, 6] = np.nan  # planes 1 and 3 hold a NaN, 0 and 2 none
    x[0, 0, 2, 2], x[0, 0, 9, 4] = np.inf, -np.inf  # (their sum is NaN: the plane is redone)
    x[0, 3, 0, 12] = np.nan
    x[0, 2] = rng.choice(np.array([0.0, -0.0], F), size=(13, 13))  # only zeros: signs decide
    _, lib = build(case, True)
    _, plain = build(case, False)
    got, want = lib.run(x)[0], plain.run(x)[0]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(got[0, 1]).any() and not np.isnan(got[0, 0]).any()
    assert np.isinf(got[0, 0]).any()
    same = np.where(np.isnan(want), 0, want)
    np.testing.assert_array_equal(
        np.where(np.isnan(got), 0, got).view(np.uint32), same.view(np.uint32)
    )
    assert (np.signbit(got[0, 2]) == np.signbit(want[0, 2])).all() and not np.signbit(
        got[0, 2]
    ).all()


def test_sixteen_float_vectors_need_avx512dq():
    from xrelay.lowering.jit import vector_width

    assert vector_width({"features": ["avx2", "fma", "avx512f"]}) == 8
    assert vector_width({"features": ["avx2", "fma", "avx512f", "avx512dq"]}) == 16
    assert vector_width({"features": ["avx2", "fma"]}) == 8
