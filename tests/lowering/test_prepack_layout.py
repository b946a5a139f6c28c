"""The packed weight layout (lowering/kernels/prepack.py) against its definition, element
by element: K blocks of the fewest of at most KC values, of equal length (K = KC + 7 in two
of (KC + 8) / 2 and (KC + 6) / 2), panels of `width` rows, k-major inside a panel, rows past the
end zero. pack_panels writes it in place (it built a padded copy, a copy per block and a
concatenation: 3x the weight at the build's peak)."""

from __future__ import annotations

import numpy as np
import pytest
from xrelay.lowering.kernels.gemm import KC
from xrelay.lowering.kernels.prepack import (
    IKC,
    k_block,
    k_block_f32,
    pack_panels,
    pack_words,
    padded,
)


def _reference(mat: np.ndarray, width: int) -> np.ndarray:
    rows, k = mat.shape
    rpad = padded(rows, width)
    blocks = -(-k // KC)
    step = -(-k // blocks)
    out = []
    for pc in range(0, k, step):
        for p in range(rpad // width):
            for kk in range(pc, min(k, pc + step)):
                for q in range(width):
                    r = p * width + q
                    out.append(mat[r, kk] if r < rows else 0.0)
    return np.array(out, np.float32)


@pytest.mark.parametrize(
    ("rows", "k", "width"),
    [(1, 1, 6), (5, 3, 6), (6, KC, 6), (13, KC + 7, 6), (33, 2 * KC + 1, 16), (32, 5, 32)],
)
def test_pack_panels_matches_the_layout(rows, k, width):
    mat = np.random.default_rng(rows * k).standard_normal((rows, k)).astype(np.float32)
    want = _reference(mat, width)
    np.testing.assert_array_equal(pack_panels(mat, width), want)
    # a transposed view (B's columns as rows) packs the same
    np.testing.assert_array_equal(pack_panels(np.ascontiguousarray(mat.T).T, width), want)


@pytest.mark.parametrize(
    ("k", "group", "words"),
    [(64, 4, 16), (768, 4, 192), (769, 4, 97), (1000, 4, 125), (3072, 4, 192), (2048, 4, 171),
     (576, 2, 288), (1, 4, 1)],
)  # fmt: skip
def test_k_blocks_are_as_few_and_as_even_as_ikc_allows(k, group, words):
    """The 8-bit GEMM's K blocks (VNNI / AVX2): the fewest of at most IKC values, of equal
    length (BERT's K = 768 in one block, 3072 in four; 769 in two of 97 words)."""
    kg = -(-k // group)
    assert k_block(kg, group) == words
    blocks = -(-kg // words)
    assert words * group <= IKC and blocks == max(1, -(-kg // (IKC // group)))


def test_pack_words_blocks_follow_k_block():
    """pack_words lays out each K block of k_block words: K = 1000 (250 words) as two
    blocks of 125, panels of 32 rows, word (panel, g, row)."""
    rng = np.random.default_rng(3)
    rows, k = 40, 1000
    mat = rng.integers(-128, 128, (rows, k)).astype(np.int8)
    out = pack_words(mat, 32, 4)
    assert out.size == 64 * 250 * 4
    first = out[: 64 * 125 * 4].reshape(2, 125, 32, 4)  # [panel][g][row][t]
    second = out[64 * 125 * 4 :].reshape(2, 125, 32, 4)
    np.testing.assert_array_equal(first[1, 3, 5], mat[37, 12:16])
    np.testing.assert_array_equal(second[0, 0, 7], mat[7, 500:504])
    assert not second[1, :, rows - 32 :].any()  # rows past the end


@pytest.mark.parametrize(
    ("k", "step"),
    [(1, 1), (KC, KC), (KC + 7, (KC + 8) // 2), (3 * KC, KC), (3 * KC + 1, -(-(3 * KC + 1) // 4))],
)
def test_f32_k_blocks(k, step):
    """The f32 GEMM's K blocks: the fewest of at most KC values, of equal length."""
    assert k_block_f32(k) == step
