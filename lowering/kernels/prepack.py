"""Build-time packing of GEMM operands that are the same at every run (weights), in the
layout the runtime's packed path reads (lowering/kernels/gemm.py): K blocks of k_block_f32
values (the fewest of at most KC, of equal length), each holding the rows in panels of
`width` (6 for A's rows, the spec's panel, 16 or 32, for B's columns), k-major inside a
panel, rows past the end zero."""

from __future__ import annotations

import numpy as np
from xrelay.dialects.kernel import PackSpec
from xrelay.lowering.context import aligned_empty
from xrelay.lowering.kernels.gemm import KC

# the 8-bit GEMM's longest K block in values (a 32-column panel of B: 24 KB of words). A
# product's K is cut into as few blocks as that allows, of equal length (k_block): BERT-base
# int8's K = 768 products in one block instead of 512 + 256 (same-process A/B 37.51 -> 36.70
# ms), SqueezeNet int8's 576 in one instead of 512 + 64
IKC = 768
AMX_KC = 512  # AMX tiles' K block in values (kernels/amx.py: every block but the last whole)


def even_block(n: int, most: int) -> int:
    """The length of each of the fewest blocks of at most `most` that cover `n`, of equal
    length (the last one shorter by what the division leaves): gemm.k_block computes the
    same in the kernels."""
    blocks = max(1, -(-n // most))
    return -(-n // blocks)


def k_block(kg: int, group: int) -> int:
    """Words (groups of `group` values) per K block of the VNNI / AVX2 8-bit GEMM for a
    product of kg words: at most IKC values."""
    return even_block(kg, IKC // group)


def k_block_f32(k: int) -> int:
    """The f32 GEMM's K per block for a product of K = k: at most KC."""
    return even_block(k, KC)


def padded(rows: int, width: int) -> int:
    return -(-rows // width) * width


def pack_panels(mat: np.ndarray, width: int, out: np.ndarray | None = None) -> np.ndarray:
    """[R, K] -> the flat packed layout, size padded(R, width) * K, written in place (no
    padded or per-block copies of the whole weight: the build's peak memory) into `out`
    (a new aligned array when None)."""
    rows, k = mat.shape
    rpad = padded(rows, width)
    if out is None:
        out = aligned_empty(rpad * k, np.float32)
    whole, rest = divmod(rows, width)
    offset = 0
    step = k_block_f32(k)
    for pc in range(0, k, step):
        kc = min(step, k - pc)
        # block[p, kk, q] = mat[p * width + q, pc + kk]
        block = out[offset : offset + rpad * kc].reshape(rpad // width, kc, width)
        if whole:
            part = mat[: whole * width, pc : pc + kc].reshape(whole, width, kc)
            block[:whole] = part.transpose(0, 2, 1)
        if rest:
            block[whole] = 0
            block[whole, :, :rest] = mat[whole * width :, pc : pc + kc].T
        offset += rpad * kc
    return out


def pack_weight(source: np.ndarray, spec: PackSpec) -> np.ndarray:
    """The packed array `spec` describes, made from the parameter's array."""
    source = np.asarray(source, np.float32)
    if spec.operand == "a":  # conv weights [O, C/g, kh, kw] -> per group [O/g, K]
        groups = source.reshape(spec.groups, spec.rows, spec.k)
        size = padded(spec.rows, spec.panel) * spec.k
        out = aligned_empty(spec.groups * size, np.float32)
        for i, g in enumerate(groups):  # in place: a concatenation held the weight twice
            pack_panels(g, spec.panel, out[i * size : (i + 1) * size])
        return out
    # B's columns as rows: [N, K] (from [K, N] when `transpose`; a 1x1 convolution's
    # weight [O, C, 1, 1] is [N, K] too)
    mat = source.reshape(spec.k, -1).T if spec.transpose else source.reshape(-1, spec.k)
    return pack_panels(mat, spec.panel)


def word_groups(k: int, group: int, multiple: int = 1) -> int:
    """Words per packed row of an 8-bit weight with K = k: whole groups of `group` values,
    each K block's rounded up to `multiple` (16 for AMX tiles: whole 64-byte steps)."""
    kg = -(-k // group)
    if multiple == 1:
        return kg
    step = AMX_KC // group
    return (kg // step) * step + padded(kg % step, multiple)


def _words(mat: np.ndarray, width: int, group: int, multiple: int) -> tuple[np.ndarray, int]:
    """[R, K] -> [rows padded to width, words, group] (zeros past the ends), and K blocks'
    word count."""
    rows, k = mat.shape
    dtype = np.int8 if group == 4 else np.int16
    kw = word_groups(k, group, multiple)
    words = np.zeros((padded(rows, width), kw * group), dtype)
    words[:rows, :k] = mat
    step = AMX_KC // group if multiple > 1 else k_block(-(-k // group), group)
    return words.reshape(len(words), kw, group), step


def pack_words(mat: np.ndarray, width: int, group: int, multiple: int = 1) -> np.ndarray:
    """An 8-bit weight [R, K] (s8 values) -> the packed layout of lowering/kernels/igemm.py:
    K zero-padded to whole groups of `group` values (one 32-bit word per row and group), K
    blocks of k_block words (AMX_KC values with a `multiple`, each block's groups rounded up
    to it), panels of `width`
    rows, word (panel, g, row) at (panel * kcg + g) * width + row, rows past the end zero.
    int8 values for group 4 (VNNI), int16 for 2."""
    words, step = _words(mat, width, group, multiple)
    rpad, kw = words.shape[:2]
    out = np.empty(words.size, words.dtype)
    offset = 0
    for pg in range(0, kw, step):
        kcg = min(step, kw - pg)
        # block[p, g, q, t] = words[p * width + q, pg + g, t]
        block = out[offset : offset + rpad * kcg * group].reshape(rpad // width, kcg, width, group)
        block[:] = (
            words[:, pg : pg + kcg].reshape(rpad // width, width, kcg, group).transpose(0, 2, 1, 3)
        )
        offset += rpad * kcg * group
    return out


def pack_tile_rows(mat: np.ndarray, width: int) -> np.ndarray:
    """An 8-bit weight [R, K] (s8) -> the A layout of AMX tiles (lowering/kernels/amx.py):
    K blocks of AMX_KC values, each block's groups of 4 rounded up to 16, rows padded to
    `width` (32), tile-major: per panel of `width` rows, each step of 16 groups' rows of
    64 bytes together."""
    words, step = _words(mat, width, 4, 16)
    rpad, kw = words.shape[:2]
    blocks = []
    for pg in range(0, kw, step):  # [panel][row][g][t] -> [panel][g / 16][row][g % 16][t]
        block = words[:, pg : pg + step]
        kcg = block.shape[1]
        tiles = block.reshape(rpad // width, width, kcg // 16, 16, 4).transpose(0, 2, 1, 3, 4)
        blocks.append(tiles.reshape(-1))
    return np.concatenate(blocks) if len(blocks) > 1 else blocks[0].copy()


def pack_direct_rows(weight: np.ndarray, width: int, block: int = 64) -> np.ndarray:
    """An 8-bit convolution weight [R, C, KH, KW] (s8) -> the A layout of a direct
    convolution: K ordered (i, j, c) with c padded to a multiple of `block`, rows padded
    to `width`, step-major: per panel of `width` rows, each step's rows of `block` bytes
    together. AMX (lowering/kernels/amx_conv.py): width 32, steps of 64 bytes (a tile
    row); VNNI (lowering/kernels/vnni_conv.py): width 6, steps of one 4-byte word."""
    r, c, kh, kw = weight.shape
    cp = -(-c // block) * block
    m = np.zeros((padded(r, width), kh, kw, cp), np.int8)
    m[:r, :, :, :c] = weight.transpose(0, 2, 3, 1)
    steps = kh * kw * cp // block
    return np.ascontiguousarray(m.reshape(-1, width, steps, block).transpose(0, 2, 1, 3)).reshape(
        -1
    )


def direct_size(rows: int, c: int, kh: int, kw: int, width: int, block: int = 64) -> int:
    """Bytes of pack_direct_rows' result."""
    return padded(rows, width) * kh * kw * (-(-c // block) * block)
