"""Implicit im2col (lowering/kernels/conv_pack.py): the GEMM packs a convolution's columns
from its input. Geometries that stress the packer against the reference: output rows
shorter than a vector (one chunk spans several rows), rows that cross panel boundaries,
columns that end mid-panel, K over several KC blocks, strides (gathers), dilation,
asymmetric and large padding (whole rows and columns outside the input), groups, a batch,
both vector widths, and products split over threads along N and along M."""

from __future__ import annotations

import pytest
from xrelay.dialects import relay
from xrelay.lowering import select_kernels
from xrelay.lowering.jit import missing_features, resolve_target

from .test_kernels import check, specs_after_selection

# K over several blocks of the f32 GEMM (conftest.small_k_blocks)
pytestmark = pytest.mark.usefixtures("small_k_blocks")


@pytest.fixture(autouse=True)
def gemm_only(monkeypatch):
    """Convolutions with few input channels per group stay GEMMs here (this module tests
    the GEMM's columns; the narrow convolution has its own tests: test_narrow_conv)."""
    monkeypatch.setattr(select_kernels, "NARROW", False)


CASES = [
    # data, weight, strides, padding (top, left, bottom, right), dilation, groups
    ((1, 3, 5, 3), (8, 3, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),  # OW 3: rows per chunk
    ((2, 4, 9, 37), (6, 4, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),  # rows across panels
    ((1, 40, 11, 13), (9, 40, 3, 3), (1, 1), (0, 2, 1, 0), (1, 1), 1),  # K 360: 2 KC blocks
    ((1, 5, 23, 19), (12, 5, 5, 5), (2, 3), (2, 2, 2, 2), (1, 1), 1),  # strides: gathers
    ((1, 6, 14, 14), (8, 6, 3, 3), (1, 1), (2, 2, 2, 2), (2, 2), 1),  # dilation
    ((1, 4, 6, 6), (5, 4, 3, 3), (1, 1), (4, 3, 0, 5), (1, 1), 1),  # rows of padding only
    ((1, 4, 4, 4), (4, 4, 1, 1), (1, 1), (1, 1, 1, 1), (1, 1), 1),  # a padded 1x1
    ((1, 8, 13, 13), (16, 4, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 2),  # groups
    ((1, 2, 10, 10), (4, 2, 1, 3), (1, 2), (0, 1, 0, 1), (1, 1), 1),  # 1x3, stride (1, 2)
]


def conv_body(strides, padding, dilation, groups):
    def body(x, w, b):
        c = relay.Conv2DOp(x, w, strides=strides, padding=padding, dilation=dilation, groups=groups)
        a = relay.BiasAddOp(c, b, axis=1)
        return [c, a, relay.ReluOp(a)]

    return body


@pytest.mark.parametrize(
    "case", CASES, ids=lambda c: f"{c[0][2]}x{c[0][3]}-{c[1][2]}x{c[1][3]}-s{c[2][1]}"
)
@pytest.mark.parametrize("target", [None, "x86-64-v3"])
def test_implicit_columns_match_the_reference(case, target):
    if target and missing_features(resolve_target(target)):
        pytest.skip(f"this CPU lacks {target}'s features")
    x, w, strides, padding, dilation, groups = case
    mod = check([x, w, (w[0],)], conv_body(strides, padding, dilation, groups), params_from=1,
                target_cpu=target, rtol=1e-4, atol=1e-4)  # fmt: skip
    (spec,) = specs_after_selection(mod)
    assert spec.window and spec.window[0] == x[2:] and spec.window[1] == w[2:]


@pytest.mark.parametrize("threads", ["1", "2", "3"])
@pytest.mark.parametrize(
    "shape", [((1, 16, 30, 30), (8, 16, 3, 3)), ((1, 16, 6, 6), (96, 16, 3, 3))]
)
def test_implicit_columns_split_over_threads(monkeypatch, threads, shape):
    """Wide outputs split along N (each thread packs its own columns from bcol0), tall
    ones along M (each packs them all)."""
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    x, w = shape
    check([x, w, (w[0],)], conv_body((1, 1), (1, 1, 1, 1), (1, 1), 1), params_from=1,
          rtol=1e-4, atol=1e-4)  # fmt: skip
