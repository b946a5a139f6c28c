"""ONNX DFT, STFT and MelWeightMatrix.

DFT and STFT are matrix products with DFT matrices built at import (the transform length
is known there): the transformed axis and the real/imaginary axis are flattened into one
contraction axis and multiplied, in f64, by a [n * c_in, K * c_out] matrix that folds in
truncation or zero-padding to `dft_length`, the one-sided output, and the inverse's 1/N.
The angles are reduced modulo the length and quarter turns are exact, so bins that are
exactly zero (the imaginary part of DC and Nyquist) come out as zero. MelWeightMatrix
depends only on its (import-time) inputs: a constant computed as the ONNX reference does.

The complex-to-complex inverse DFT is refused: its ONNX test outputs carry float32 FFT
round-off (1.9e-7 where the exact value is 0, beyond the cases' 1e-7 tolerance), which an
exact transform cannot reproduce."""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dtypes import element_type
from xrelay.frontends.common import matmul_nd
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.registry import onnx_op

F64 = np.dtype(np.float64)
MAX_MATRIX = 1 << 24  # elements of a DFT matrix


def _cos_sin(j: np.ndarray, k: np.ndarray, length: int) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of 2 pi j k / length, exact at quarter turns."""
    r = (j * k) % length
    cos, sin = np.cos(2 * np.pi * r / length), np.sin(2 * np.pi * r / length)
    quarter = (4 * r) % length == 0
    turn = (4 * r // length) % 4
    cos = np.where(quarter, np.choose(turn, [1.0, 0.0, -1.0, 0.0]), cos)
    sin = np.where(quarter, np.choose(turn, [0.0, 1.0, 0.0, -1.0]), sin)
    return cos, sin


def dft_matrix(n: int, c_in: int, length: int, inverse: bool, onesided: bool) -> np.ndarray:
    """[n * c_in, K * c_out] (f64): an axis of n points (c_in = 1 real, 2 real/imaginary
    interleaved) to K bins of c_out parts, for a transform of `length` points."""
    j = np.arange(n)[:, None]
    if inverse and onesided:  # one-sided spectrum -> real signal of `length` points
        k = np.arange(length)[None, :]
        cos, sin = _cos_sin(j, k, length)
        used = j < length // 2 + 1
        # bins 1.. below Nyquist stand for themselves and their conjugate mirror
        twice = (j > 0) & (2 * j < length)
        scale = np.where(used, np.where(twice, 2.0, 1.0), 0.0) / length
        real, imag = cos * scale, -sin * scale
        parts = [real] if c_in == 1 else [real, imag]
        return np.stack(parts, axis=1).reshape(n * c_in, length)
    bins = length // 2 + 1 if onesided else length
    k = np.arange(bins)[None, :]
    cos, sin = _cos_sin(j, k, length)
    used = j < length
    cos, sin = np.where(used, cos, 0.0), np.where(used, sin, 0.0)
    if inverse:  # e^{+i theta} / N
        cos, sin = cos / length, sin / length
        rows = [np.stack([cos, sin], -1), np.stack([-sin, cos], -1)]
    else:  # e^{-i theta}: (xr + i xi)(cos - i sin)
        rows = [np.stack([cos, -sin], -1), np.stack([sin, cos], -1)]
    matrix = np.stack(rows[:c_in], axis=1)  # [n, c_in, K, 2]
    return matrix.reshape(n * c_in, bins * 2)


def transform(
    b: Node, x: SSAValue, axis: int, length: int, inverse: bool, onesided: bool
) -> SSAValue:
    """DFT of x [..., c] along `axis` (not the last): the result [..., 2] (or [..., 1] for
    a one-sided inverse), with `axis` of the transformed length, in x's type."""
    shape = list(x.type.get_shape())
    rank = len(shape)
    n, c_in = shape[axis], shape[-1]
    if c_in not in (1, 2):
        raise b.error(f"the last axis has {c_in} entries: 1 (real) or 2 (complex) expected")
    matrix = dft_matrix(n, c_in, length, inverse, onesided)
    if matrix.size > MAX_MATRIX:
        raise b.unsupported(f"a DFT of {n} to {length} points (too large)")
    c_out = 1 if inverse and onesided else 2
    bins = matrix.shape[1] // c_out
    dtype = np.dtype(b.dtype(0))
    perm = [d for d in range(rank - 1) if d != axis] + [axis, rank - 1]
    if perm != list(range(rank)):
        x = b.emit(relay.TransposeOp(x, axes=perm))
    outer = [shape[d] for d in perm[:-2]]
    x = b.emit(relay.ReshapeOp(x, newshape=(int(np.prod(outer)), n * c_in)))
    x = b.emit(relay.CastOp(x, dtype=element_type(F64)))
    y = matmul_nd(b, x, b.constant(matrix))
    y = b.emit(relay.CastOp(y, dtype=element_type(dtype)))
    y = b.emit(relay.ReshapeOp(y, newshape=(*outer, bins, c_out)))
    if perm != list(range(rank)):
        y = b.emit(relay.TransposeOp(y, axes=list(np.argsort(perm))))
    return y


@onnx_op("DFT", since=17)
def dft(b: Node) -> SSAValue:
    rank = b.rank(0)
    if b.opset >= 20:
        axis = int(np.asarray(b.const(2)).reshape(())) if b.has_input(2) else -2
    else:
        axis = int(b.attr("axis", 1))
    if not -rank <= axis < rank - 1 or axis == -1:
        raise b.error(f"axis {axis} out of range for a rank-{rank} input")
    axis %= rank
    (n,) = b.static_dims(b.shape(0)[axis : axis + 1], "DFT axis")
    b.static_shape(0, "DFT")
    inverse, onesided = bool(b.attr("inverse", 0)), bool(b.attr("onesided", 0))
    if b.has_input(1):
        length = int(np.asarray(b.const(1)).reshape(()))
    else:
        length = 2 * (n - 1) if inverse and onesided else n
    if length < 1:
        raise b.error(f"dft_length {length} must be positive")
    if inverse and not onesided:
        raise b.unsupported("complex-to-complex inverse DFT (see frontends/onnx/spectral.py)")
    return transform(b, b.input(0), axis, length, inverse, onesided)


@onnx_op("STFT", since=17)
def stft(b: Node) -> SSAValue:
    """Frames of `frame_length` every `frame_step` samples, times the window, each
    transformed (one-sided by default): [batch, frames, bins, 2]."""
    _, size, _ = b.static_shape(0, "STFT")
    step = int(np.asarray(b.const(1)).reshape(()))
    window = b.optional_input(2)
    if b.has_input(3):
        length = int(np.asarray(b.const(3)).reshape(()))
    elif window is not None:
        length = b.static_shape(2, "STFT window")[0]
    else:
        length = size
    width = b.static_shape(2, "STFT window")[0] if window is not None else length
    if step < 1 or width > size:
        raise b.error(f"frames of {width} every {step} do not fit a signal of {size}")
    frames = 1 + (size - length) // step
    if (frames - 1) * step + width > size:
        raise b.unsupported(f"STFT frames of {width} past the signal's end (zero-padded)")
    starts = np.arange(frames)[:, None] * step + np.arange(width)[None, :]
    x = b.emit(relay.TakeOp(b.input(0), b.constant(starts.astype(np.int64)), axis=1))
    if window is not None:
        x = b.emit(relay.MultiplyOp(x, b.emit(relay.ReshapeOp(window, newshape=(width, 1)))))
    return transform(b, x, 2, length, False, bool(b.attr("onesided", 1)))


@onnx_op("MelWeightMatrix", since=17)
def mel_weight_matrix(b: Node) -> np.ndarray:
    """The ONNX reference's triangular filters: [dft_length // 2 + 1, num_mel_bins]."""
    mel_bins = int(np.asarray(b.const(0)).reshape(()))
    dft_length = int(np.asarray(b.const(1)).reshape(()))
    sample_rate = np.asarray(b.const(2)).reshape(())
    lower, upper = (np.asarray(b.const(i)).reshape(()) for i in (3, 4))
    bins = np.arange(0, mel_bins + 2)
    low_mel = 2595 * np.log1p(lower / 700) / np.log(10)
    high_mel = 2595 * np.log1p(upper / 700) / np.log(10)
    step = (high_mel - low_mel) / bins.shape[0]
    hertz = 700 * np.expm1((bins * step + low_mel) / 2595 * np.log(10))
    points = (((dft_length + 1) * hertz) // sample_rate).astype(int)
    out = np.zeros((dft_length // 2 + 1, mel_bins))
    for i in range(mel_bins):
        left, center, right = points[i], points[i + 1], points[i + 2]
        if center == left:
            out[center, i] = 1
        else:
            for j in range(left, center + 1):
                out[j, i] = (j - left) / (center - left)
        for j in range(center, right):
            out[j, i] = (right - j) / (right - center)
    dtype = onnx.helper.tensor_dtype_to_np_dtype(int(b.attr("output_datatype", 1)))
    return out.astype(dtype)
