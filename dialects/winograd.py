"""The matrices of Winograd's minimal filtering F(m x m, 3 x 3) (Lavin and Gray, "Fast
Algorithms for Convolutional Neural Networks", 2016), from the Cook-Toom points 0, 1, -1
(m = 2) and 0, 1, -1, 2, -2 (m = 4), plus the point at infinity.

A 3x3 correlation of an (m + 2) x (m + 2) input tile d with a filter g, giving its m x m
outputs, is

    Y = A^T [(G g G^T) * (B^T d B)] A      (* elementwise, alpha = m + 2 terms a side)

so a convolution becomes alpha^2 independent matrix products over channels (weights
transformed once at build time) between an input and an output transform
(`relay.nn.winograd_input`, `relay.nn.winograd_output`, lowering/winograd_convs.py).
"""

from __future__ import annotations

import numpy as np

TILES = (2, 4)

_AT = {
    2: [[1, 1, 1, 0], [0, 1, -1, 1]],
    4: [
        [1, 1, 1, 1, 1, 0],
        [0, 1, -1, 2, -2, 0],
        [0, 1, 1, 4, 4, 0],
        [0, 1, -1, 8, -8, 1],
    ],
}
_G = {
    2: [[-1, 0, 0], [1 / 2, 1 / 2, 1 / 2], [1 / 2, -1 / 2, 1 / 2], [0, 0, 1]],
    4: [
        [1 / 4, 0, 0],
        [-1 / 6, -1 / 6, -1 / 6],
        [-1 / 6, 1 / 6, -1 / 6],
        [1 / 24, 1 / 12, 1 / 6],
        [1 / 24, -1 / 12, 1 / 6],
        [0, 0, 1],
    ],
}
_BT = {
    2: [[-1, 0, 1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, -1, 0, 1]],
    4: [
        [4, 0, -5, 0, 1, 0],
        [0, -4, -4, 1, 1, 0],
        [0, 4, -4, -1, 1, 0],
        [0, -2, -1, 2, 1, 0],
        [0, 2, -1, -2, 1, 0],
        [0, 4, 0, -5, 0, 1],
    ],
}


def output_transform(m: int) -> np.ndarray:
    """A^T, m x alpha."""
    return np.array(_AT[m], np.float64)


def filter_transform(m: int) -> np.ndarray:
    """G, alpha x 3."""
    return np.array(_G[m], np.float64)


def input_transform(m: int) -> np.ndarray:
    """B^T, alpha x alpha."""
    return np.array(_BT[m], np.float64)


def tile_count(size: int, m: int) -> int:
    """Tiles of m outputs covering `size` outputs (the last may reach past the end)."""
    return -(-size // m)


TRANSFORM_CHUNK = 1 << 14  # (output, input) channel pairs per step of transform_weight


def transform_weight(weight: np.ndarray, m: int, out: np.ndarray | None = None) -> np.ndarray:
    """OIHW 3x3 weights [K, C, 3, 3] -> G g G^T per (output, input) channel pair, laid out
    as the batched product's left operand [alpha^2, K, C] (f32, computed in f64): one
    product of G (x) G [alpha^2, 9] by the pairs' 9 values, which lands in that layout
    (two contractions and a transpose took ResNet-50's build 0.29 s, this 0.08). A few
    pairs at a time: the f64 intermediates of a whole 512 x 512 weight are about 100 MB,
    which were the peak of ResNet-50's build. Written into `out` (alpha^2 K C f32 values;
    a new array when None)."""
    g = filter_transform(m)
    k, c = weight.shape[:2]
    alpha = g.shape[0]
    kron = np.kron(g, g)  # [a alpha + b, 3 i + j] = G[a, i] G[b, j]
    if out is None:
        out = np.empty((alpha * alpha, k, c), np.float32)
    flat_out = out.reshape(alpha * alpha, k * c)
    pairs = np.asarray(weight).reshape(k * c, 9)
    for lo in range(0, k * c, TRANSFORM_CHUNK):
        part = np.asarray(pairs[lo : lo + TRANSFORM_CHUNK], np.float64)
        flat_out[:, lo : lo + TRANSFORM_CHUNK] = kron @ part.T
    return out.reshape(alpha * alpha, k, c)
