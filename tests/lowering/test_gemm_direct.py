"""f32 convolutions read straight from their input (lowering/kernels/gemm_direct.py): the
same products as the packed im2col path in the same order, so the results are the same
bits, on geometries that stress the virtual columns (rows shorter than a tile, several
runs per tile, asymmetric and large padding, dilation, non-square windows), stride 2 (the
input's phases), K over several blocks, row panels that end early, a batch, groups, an
epilogue with a residual, and products split over threads; which convolutions are read
directly."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from xrelay.dialects import relay
from xrelay.lowering import select_kernels
from xrelay.lowering.kernels import gemm_direct, gemm_pixel
from xrelay.lowering.kernels.gemm_direct import direct_pays

from .jit_check import random_inputs
from .test_kernels import F, module, specs_after_selection

# K over several blocks of the f32 GEMM (conftest.small_k_blocks)
pytestmark = pytest.mark.usefixtures("small_k_blocks")


@pytest.fixture(autouse=True)
def gemm_only(monkeypatch):
    """Convolutions with few input channels per group, or few pixels, stay GEMMs of pixel
    columns here (this module tests the GEMM's columns; the narrow convolution and the
    pixel-major product have their own tests: test_narrow_conv, test_gemm_pixel)."""
    monkeypatch.setattr(select_kernels, "NARROW", False)
    monkeypatch.setattr(gemm_pixel, "MAX_PIXELS", 0)


CASES = [
    # data, weight, padding (top, left, bottom, right), dilation, groups, stride
    ((1, 3, 5, 3), (8, 3, 3, 3), (1, 1, 1, 1), (1, 1), 1, 1),  # OW 3: many runs per tile
    ((2, 4, 9, 37), (6, 4, 3, 3), (1, 1, 1, 1), (1, 1), 1, 1),  # a batch, runs across tiles
    ((1, 40, 11, 13), (20, 40, 3, 3), (0, 2, 1, 0), (1, 1), 1, 1),  # K 360: 2 blocks; M 20
    ((1, 6, 14, 14), (8, 6, 3, 3), (2, 2, 2, 2), (2, 2), 1, 1),  # dilation
    ((1, 4, 6, 6), (5, 4, 3, 3), (4, 3, 0, 5), (1, 1), 1, 1),  # rows of padding only
    ((1, 8, 13, 13), (16, 4, 3, 3), (1, 1, 1, 1), (1, 1), 2, 1),  # groups
    ((1, 2, 10, 10), (4, 2, 1, 3), (0, 1, 0, 1), (1, 1), 1, 1),  # 1x3
    ((1, 5, 12, 9), (9, 5, 5, 5), (0, 0, 0, 0), (1, 1), 1, 1),  # no padding, 5x5
    ((1, 16, 7, 7), (160, 16, 3, 3), (1, 1, 1, 1), (1, 1), 1, 1),  # M over one block (144)
    ((1, 3, 23, 23), (16, 3, 3, 3), (0, 0, 0, 0), (1, 1), 1, 2),  # stride 2: 4 phases
    ((1, 3, 30, 29), (8, 3, 7, 7), (3, 3, 3, 3), (1, 1), 1, 2),  # 7x7 stem, odd width
    ((2, 6, 14, 14), (8, 6, 3, 3), (2, 1, 1, 2), (2, 2), 1, 2),  # stride and dilation
    ((1, 40, 9, 10), (12, 40, 3, 3), (1, 1, 1, 1), (1, 1), 1, 2),  # K 360, stride 2
    # output rows of a tile or more: tiles that cross a row go straight into C, split
    ((1, 16, 40, 40), (16, 16, 3, 3), (1, 1, 1, 1), (1, 1), 1, 1),  # tiles from the padding
    ((2, 8, 20, 45), (12, 8, 3, 3), (1, 1, 1, 1), (1, 1), 1, 1),  # a batch; M 12: 8 + 4
    ((1, 40, 9, 36), (16, 40, 3, 3), (1, 1, 1, 1), (1, 1), 1, 1),  # K 360: partial sums
    ((1, 3, 70, 70), (16, 3, 3, 3), (0, 0, 0, 0), (1, 1), 1, 2),  # stride 2, OW 34
    ((1, 4, 36, 36), (8, 4, 3, 3), (2, 2, 2, 2), (2, 2), 1, 1),  # dilation: a gap of 4
    ((1, 2, 33, 64), (8, 2, 5, 5), (2, 2, 2, 2), (1, 1), 1, 1),  # OW 64: whole tiles too
]


def conv_body(padding, dilation, groups, stride=1):
    """relu(conv + bias + residual): the epilogue of the product."""

    def body(x, r, w, b):
        c = relay.Conv2DOp(
            x, w, strides=(stride, stride), padding=padding, dilation=dilation, groups=groups
        )
        a = relay.BiasAddOp(c, b, axis=1)
        s = relay.AddOp(a, r)
        return [c, a, s, relay.ReluOp(s)]

    return body


def build_both(case, monkeypatch, target_cpu=None):
    """(direct result, packed result, reference, the direct build's specs)."""
    x, w, padding, dilation, groups, stride = case
    n, _, h, wd = x
    oh = (h + padding[0] + padding[2] - dilation[0] * (w[2] - 1) - 1) // stride + 1
    ow = (wd + padding[1] + padding[3] - dilation[1] * (w[3] - 1) - 1) // stride + 1
    shapes = [x, (n, w[0], oh, ow), w, (w[0],)]
    mod = module(shapes, 2, conv_body(padding, dilation, groups, stride))
    arrays = random_inputs([(s, F) for s in shapes], 0)
    params = {f"x{i}": a for i, a in enumerate(arrays) if i >= 2}
    want = xrelay.create_executor("debug", mod, params=params).run(*arrays[:2])[0]
    monkeypatch.setattr(gemm_direct, "MAX_EXTRA", 100.0)  # direct whatever it drops
    monkeypatch.setattr(gemm_direct, "MIN_K", 1)  # whatever its K
    monkeypatch.setattr(gemm_direct, "TILE", 1)  # and its rows
    direct = xrelay.build(mod, dict(params), cache=False, target_cpu=target_cpu).run(*arrays[:2])[0]
    specs = specs_after_selection(mod)
    monkeypatch.setattr(select_kernels, "DIRECT", False)
    packed = xrelay.build(mod, dict(params), cache=False, target_cpu=target_cpu).run(*arrays[:2])[0]
    return direct, packed, want, specs


@pytest.mark.parametrize(
    "case", CASES, ids=lambda c: f"{c[0][2]}x{c[0][3]}-{c[1][2]}x{c[1][3]}-s{c[5]}"
)
def test_direct_columns_are_the_packed_columns(case, monkeypatch):
    direct, packed, want, specs = build_both(case, monkeypatch)
    assert all(spec.direct for spec in specs)
    np.testing.assert_allclose(direct, want, rtol=1e-4, atol=1e-4)
    assert np.array_equal(direct, packed)


@pytest.mark.parametrize("case", CASES[-6:], ids=lambda c: f"{c[0][2]}x{c[0][3]}-s{c[5]}")
def test_direct_rows_of_a_tile_with_8_float_vectors(case, monkeypatch):
    """The same with AVX2's 16-column tiles (x86-64-v3), which any x86-64 host runs."""
    direct, packed, want, specs = build_both(case, monkeypatch, target_cpu="x86-64-v3")
    assert all(spec.direct for spec in specs)
    np.testing.assert_allclose(direct, want, rtol=1e-4, atol=1e-4)
    assert np.array_equal(direct, packed)


@pytest.mark.parametrize("threads", ["1", "2", "3"])
@pytest.mark.parametrize(
    "case",
    [
        ((1, 16, 30, 30), (8, 16, 3, 3), (1, 1, 1, 1), (1, 1), 1, 1),  # split along N
        ((1, 16, 6, 6), (96, 16, 3, 3), (1, 1, 1, 1), (1, 1), 1, 1),  # split along M
        ((1, 16, 61, 61), (8, 16, 3, 3), (1, 1, 1, 1), (1, 1), 1, 2),  # N, stride 2
        ((1, 16, 50, 50), (8, 16, 3, 3), (1, 1, 1, 1), (1, 1), 1, 1),  # N, split tiles
    ],
    ids=["columns", "rows", "columns-stride-2", "columns-split-tiles"],
)
def test_direct_columns_split_over_threads(monkeypatch, threads, case):
    """Each thread makes the band of its own output rows (columns split) or of all of
    them (rows split)."""
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    direct, packed, want, _ = build_both(case, monkeypatch)
    np.testing.assert_allclose(direct, want, rtol=1e-4, atol=1e-4)
    assert np.array_equal(direct, packed)


def window(h, w, k, pad, stride=1, dilation=1):
    oh = (h + 2 * pad - dilation * (k - 1) - 1) // stride + 1
    ow = (w + 2 * pad - dilation * (k - 1) - 1) // stride + 1
    return ((h, w), (k, k), (stride, stride), (dilation, dilation), (pad, pad), (oh, ow))


@pytest.mark.parametrize(
    "geometry, direct",
    [
        (window(55, 55, 3, 1), True),  # 98 virtual tiles for 95 of pixels
        (window(7, 7, 3, 1), True),  # 61 virtual columns, 49 pixels: 2 tiles each
        (window(33, 33, 3, 1), False),  # 32 x 35 + 33 virtual columns: 37 tiles for 35
        (window(14, 14, 3, 1), False),  # rows of 14 and 7 tiles
        (window(56, 56, 3, 1, stride=2), False),  # rows of 28: every tile crosses one
        (window(112, 112, 3, 1, stride=2), True),  # 56 x 57 virtual columns: the phases
        (window(224, 224, 7, 3, stride=2), True),  # a 7x7 stem: 112 x 115
        (window(56, 56, 3, 1, stride=3), False),  # stride 3: the packed path's gathers
        (window(56, 56, 1, 0), False),  # 1x1 (with padding): nothing to gain
    ],
)
def test_which_convolutions_are_read_directly(geometry, direct):
    assert direct_pays(geometry, 144) == direct
    assert not direct_pays(geometry, 27)  # a 3-channel stem: packing costs less


POINTWISE = [
    # data, output channels: 1x1, stride 1, no padding (read in place, no band)
    ((1, 64, 55, 55), 16),  # SqueezeNet's squeeze: rows of a tile or more, a tail tile
    ((1, 40, 9, 7), 20),  # rows shorter than a tile, straight into C; M 20: 8 + 8 + 4
    ((2, 24, 12, 12), 12),  # a batch: the second image's tail reads the first's end
    ((1, 300, 8, 8), 16),  # K 300 over several blocks; 64 pixels: whole tiles, no tail
    ((1, 8, 5, 5), 160),  # M over one block of A's rows; 25 pixels: only the tail tile
]


def pointwise_case(x, m):
    return (x, (m, x[1], 1, 1), (0, 0, 0, 0), (1, 1), 1, 1)


def build_pointwise(case, monkeypatch, target_cpu=None):
    monkeypatch.setattr(gemm_direct, "POINTWISE_MIN_PIXELS", 1)
    monkeypatch.setattr(gemm_direct, "POINTWISE_MIN_K", 1)
    monkeypatch.setattr(gemm_direct, "POINTWISE_MAX_M", 1000)
    return build_both(case, monkeypatch, target_cpu)


@pytest.mark.parametrize(
    "x, m", POINTWISE, ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else str(v)
)
def test_pointwise_read_in_place_is_the_packed_product(x, m, monkeypatch):
    direct, packed, want, specs = build_pointwise(pointwise_case(x, m), monkeypatch)
    assert [(s.direct, s.window[1]) for s in specs] == [(True, (1, 1))]
    np.testing.assert_allclose(direct, want, rtol=1e-4, atol=1e-4)
    assert np.array_equal(direct, packed)


@pytest.mark.parametrize("x, m", POINTWISE[:3], ids=["55x55", "9x7", "batch"])
def test_pointwise_in_place_with_8_float_vectors(x, m, monkeypatch):
    direct, packed, want, specs = build_pointwise(pointwise_case(x, m), monkeypatch, "x86-64-v3")
    assert all(s.direct for s in specs)
    np.testing.assert_allclose(direct, want, rtol=1e-4, atol=1e-4)
    assert np.array_equal(direct, packed)


@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_pointwise_in_place_split_over_threads(monkeypatch, threads):
    """Each thread reads its own columns of the input; only the last one's tail tile
    reads a copy."""
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    direct, packed, want, _ = build_pointwise(pointwise_case((1, 32, 37, 37), 24), monkeypatch)
    np.testing.assert_allclose(direct, want, rtol=1e-4, atol=1e-4)
    assert np.array_equal(direct, packed)


GUARDED = """
import ctypes, mmap, sys
import numpy as np
import xrelay
from xrelay.dialects import relay
from tests.lowering.test_kernels import module
from xrelay.lowering.kernels import gemm_direct
gemm_direct.POINTWISE_MIN_PIXELS = gemm_direct.POINTWISE_MIN_K = 1
x_shape, w_shape = (1, 16, 9, 9), (8, 16, 1, 1)
mod = module([x_shape, w_shape], 1, lambda x, w: [relay.Conv2DOp(x, w)])
rng = np.random.default_rng(0)
w = rng.standard_normal(w_shape).astype(np.float32)
lib = xrelay.build(mod, {"x1": w}, cache=False)
page = mmap.PAGESIZE
buf = mmap.mmap(-1, 3 * page)
base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
libc = ctypes.CDLL(None)
assert libc.mprotect(ctypes.c_void_p(base + 2 * page), page, 0) == 0  # PROT_NONE after it
n = int(np.prod(x_shape))
x = np.frombuffer(buf, np.float32, count=n, offset=2 * page - 4 * n).reshape(x_shape)
x[...] = rng.standard_normal(x_shape)
got = lib.run(x)[0]
want = np.einsum("oc,nchw->nohw", w[:, :, 0, 0], x)
np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
print("ok")
"""


def test_pointwise_in_place_reads_nothing_past_its_input():
    """The input ends where an unreadable page begins: the last tile's columns come from a
    copy (a tile's unmasked loads of 32 values would fault there). In a process of its
    own: the fault would end it."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", GUARDED],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


@pytest.mark.parametrize(
    "m, pixels, k, direct",
    [
        (16, 3025, 128, True),  # SqueezeNet's squeezes
        (64, 784, 512, True),  # ResNet-50's 512 -> 64... on 28 x 28
        (256, 3136, 64, False),  # rows over one block of A: B read once per block
        (16, 169, 512, False),  # few pixels: gemm_pixel's
        (64, 3025, 16, False),  # K 16: packing B costs less than reading it in place
    ],
)
def test_which_pointwise_convolutions_are_read_in_place(m, pixels, k, direct):
    assert gemm_direct.direct_pointwise_pays(m, pixels, k) == direct
