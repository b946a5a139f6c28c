"""The runtime's f32 max pool (lowering/kernels/pool.py, chosen by select-kernels): the
linalg lowering's results, NaN and infinities included, on geometries that stress the row
buffer (padding on every side and wider than the window's reach, ceil mode's extra
windows, dilation, strides 1, 2 and 3, windows of one row or column, planes narrower than
a vector), a batch, and planes split over 1-3 threads; against the reference; which pools
it takes."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from xrelay.dialects import relay
from xrelay.lowering import select_kernels
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


def build(case, kernel: bool, values=None):
    x, pool, strides, padding, dilation, ceil = case

    def body(v):
        return [
            relay.MaxPool2DOp(
                v, pool_size=pool, strides=strides, padding=padding, dilation=dilation,
                ceil_mode=ceil,
            )
        ]  # fmt: skip

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


def test_other_pools_keep_the_lowering():
    """NHWC, 8-bit values and average pools stay linalg."""
    nhwc = module(
        [(1, 6, 6, 4)], 1, lambda v: [relay.MaxPool2DOp(v, pool_size=(2, 2), layout="NHWC")]
    )
    avg = module([(1, 4, 6, 6)], 1, lambda v: [relay.AvgPool2DOp(v, pool_size=(2, 2))])
    for mod in (nhwc, avg):
        work = mod.clone()
        lower(work, stop_after="select-kernels")
        assert not any(KERNEL_ATTR in op.attributes for op in work.ops)
