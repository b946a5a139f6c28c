"""Build-time packing of GEMM operands that are the same at every run (weights), in the
layout the runtime's packed path reads (lowering/kernels/gemm.py): K blocks of KC, each
holding the rows in panels of `width` (6 for A's rows, the spec's panel, 16 or 32, for B's
columns), k-major inside
a panel, rows past the end zero."""

from __future__ import annotations

import numpy as np
from xrelay.dialects.kernel import PackSpec
from xrelay.lowering.kernels.gemm import KC

IKC = 512  # the 8-bit GEMM's K block in values (a 32-column panel of B: 16 KB of words)


def padded(rows: int, width: int) -> int:
    return -(-rows // width) * width


def pack_panels(mat: np.ndarray, width: int) -> np.ndarray:
    """[R, K] -> the flat packed layout, size padded(R, width) * K, written in place (no
    padded or per-block copies of the whole weight: the build's peak memory)."""
    rows, k = mat.shape
    rpad = padded(rows, width)
    out = np.empty(rpad * k, np.float32)
    whole, rest = divmod(rows, width)
    offset = 0
    for pc in range(0, k, KC):
        kc = min(KC, k - pc)
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
        if spec.groups == 1:
            return pack_panels(groups[0], spec.panel)
        return np.concatenate([pack_panels(g, spec.panel) for g in groups])
    mat = source.reshape(-1, source.shape[-1])  # B's columns as rows: [N, K]
    return pack_panels(mat.T if spec.transpose else mat, spec.panel)


def pack_words(mat: np.ndarray, width: int, group: int) -> np.ndarray:
    """An 8-bit weight [R, K] (s8 values) -> the packed layout of lowering/kernels/igemm.py:
    K zero-padded to whole groups of `group` values (one 32-bit word per row and group), K
    blocks of IKC values, panels of `width` rows, word (panel, g, row) at (panel * kcg + g) *
    width + row, rows past the end zero. int8 values for group 4 (VNNI), int16 for 2."""
    rows, k = mat.shape
    dtype = np.int8 if group == 4 else np.int16
    kg = -(-k // group)
    rpad = padded(rows, width)
    words = np.zeros((rpad, kg * group), dtype)
    words[:rows, :k] = mat
    words = words.reshape(rpad, kg, group)
    out = np.empty(rpad * kg * group, dtype)
    step = IKC // group
    offset = 0
    for pg in range(0, kg, step):
        kcg = min(step, kg - pg)
        # block[p, g, q, t] = words[p * width + q, pg + g, t]
        block = out[offset : offset + rpad * kcg * group].reshape(rpad // width, kcg, width, group)
        block[:] = (
            words[:, pg : pg + kcg].reshape(rpad // width, width, kcg, group).transpose(0, 2, 1, 3)
        )
        offset += rpad * kcg * group
    return out
