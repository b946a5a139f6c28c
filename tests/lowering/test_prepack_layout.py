"""The packed weight layout (lowering/kernels/prepack.py) against its definition, element
by element: K blocks of KC, panels of `width` rows, k-major inside a panel, rows past the
end zero. pack_panels writes it in place (it built a padded copy, a copy per block and a
concatenation: 3x the weight at the build's peak)."""

from __future__ import annotations

import numpy as np
import pytest
from xrelay.lowering.kernels.gemm import KC
from xrelay.lowering.kernels.prepack import pack_panels, padded


def _reference(mat: np.ndarray, width: int) -> np.ndarray:
    rows, k = mat.shape
    rpad = padded(rows, width)
    out = []
    for pc in range(0, k, KC):
        for p in range(rpad // width):
            for kk in range(pc, min(k, pc + KC)):
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
