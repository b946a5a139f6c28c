"""Fixtures of the lowering tests."""

from __future__ import annotations

import pytest
from xrelay.lowering.kernels import gemm, gemm_direct, gemm_pixel, prepack

SMALL_KC = 128


@pytest.fixture
def small_k_blocks(monkeypatch):
    """The f32 GEMM's K blocks at most SMALL_KC values (KC, 1024 in builds), so that the
    products of a few hundred K these tests build cover several blocks: partial sums read
    back, blocks of equal length (gemm.k_block, prepack.k_block_f32), prepacked operands
    laid out block by block."""
    for module in (gemm, gemm_direct, gemm_pixel, prepack):
        monkeypatch.setattr(module, "KC", SMALL_KC)
