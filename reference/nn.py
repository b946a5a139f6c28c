"""numpy implementations of the ops in dialects/relay/nn.py.

Window ops (conv, pool) work in channel-first layout: other layouts are transposed in and
out. Windows are strided views (`sliding_window_view`), so no loop runs per output pixel.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from xrelay.dialects import relay, winograd
from xrelay.reference.registry import along, impl


def _to_first(x: np.ndarray, layout: str, canonical: str) -> np.ndarray:
    return np.transpose(x, [layout.index(c) for c in canonical])


def _from_first(x: np.ndarray, layout: str, canonical: str) -> np.ndarray:
    return np.transpose(x, [canonical.index(c) for c in layout])


def _windows(
    x: np.ndarray, kernel: tuple[int, ...], strides: tuple[int, ...], dilation: tuple[int, ...]
) -> np.ndarray:
    """(N, C, *S) padded input -> (N, C, *out, *kernel) view of every dilated window."""
    n = len(kernel)
    spans = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    view = sliding_window_view(x, spans, axis=tuple(range(2, 2 + n)))
    index = (
        (slice(None), slice(None))
        + tuple(slice(None, None, s) for s in strides)
        + tuple(slice(None, None, d) for d in dilation)
    )
    return view[index]


def _pad_spatial(x: np.ndarray, begins, ends, value: float = 0.0) -> np.ndarray:
    widths = [(0, 0), (0, 0)] + [(int(b), int(e)) for b, e in zip(begins, ends)]
    return np.pad(x, widths, constant_values=value)


@impl(relay.Conv1DOp, relay.Conv2DOp, relay.Conv3DOp)
def conv(op, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    a = op.attrs
    spatial = op.SPATIAL
    n = len(spatial)
    x = _to_first(x, a.data_layout, "NC" + spatial)
    w = _to_first(w, a.kernel_layout, "OI" + spatial)
    dtype = x.dtype
    # accumulate in float64: channels computed alike stay bit-identical, as in onnxruntime
    x = _pad_spatial(_wide(x), a.padding[:n], a.padding[n:])
    w = _wide(w)
    win = _windows(x, w.shape[2:], a.strides, a.dilation)  # N, C, *out, *k
    groups = a.groups
    cin, cout = w.shape[1], w.shape[0] // groups
    outs = []
    for g in range(groups):
        wg = w[g * cout : (g + 1) * cout]
        xg = win[:, g * cin : (g + 1) * cin]
        # contract C and the kernel axes: (N, *out, O)
        k_axes = [1] + list(range(2 + n, 2 + 2 * n))
        y = np.tensordot(xg, wg, axes=(k_axes, [1] + list(range(2, 2 + n))))
        outs.append(np.moveaxis(y, -1, 1))
    y = np.concatenate(outs, axis=1).astype(dtype)
    return _from_first(y, a.data_layout, "NC" + spatial)


@impl(relay.Conv2DBiasOp)
def conv2d_bias(op: relay.Conv2DBiasOp, x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    layouts = {"data_layout": "NCHW", "kernel_layout": "OIHW"}
    as_conv = SimpleNamespace(SPATIAL="HW", attrs=relay.Attrs({**op.attrs, **layouts}))
    return (conv(as_conv, x, w) + b.reshape(1, -1, 1, 1)).astype(x.dtype)


@impl(relay.Conv2DTransposeOp)
def conv2d_transpose(op: relay.Conv2DTransposeOp, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    a = op.attrs
    x = _to_first(x, a.data_layout, "NCHW")
    w = _to_first(w, a.kernel_layout, "IOHW")
    n, c, h, wd = x.shape
    groups = a.groups
    cin, cout = c // groups, w.shape[1]
    (sh, sw), (dh, dw), (kh, kw) = a.strides, a.dilation, w.shape[2:]
    full_h = (h - 1) * sh + dh * (kh - 1) + 1 + a.output_padding[0]
    full_w = (wd - 1) * sw + dw * (kw - 1) + 1 + a.output_padding[1]
    y = np.zeros((n, cout * groups, full_h, full_w), dtype=np.float64)
    for g in range(groups):
        xg = x[:, g * cin : (g + 1) * cin].astype(np.float64)
        for i in range(kh):
            for j in range(kw):
                contrib = np.einsum("nchw,co->nohw", xg, w[g * cin : (g + 1) * cin, :, i, j])
                rows = slice(i * dh, i * dh + (h - 1) * sh + 1, sh)
                cols = slice(j * dw, j * dw + (wd - 1) * sw + 1, sw)
                y[:, g * cout : (g + 1) * cout, rows, cols] += contrib
    top, left, bottom, right = a.padding
    y = y[:, :, top : full_h - bottom, left : full_w - right].astype(x.dtype)
    return _from_first(y, a.data_layout, "NCHW")


def _wide(x: np.ndarray) -> np.ndarray:
    """float16/float32 -> float64 for accumulation; other types unchanged."""
    return x.astype(np.float64) if x.dtype in (np.float16, np.float32) else x


@impl(relay.DenseOp)
def dense(op, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return np.matmul(_wide(x), _wide(w).T)


@impl(relay.MatmulOp, relay.BatchMatmulOp)
def matmul(op, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if op.attrs.transpose_a:
        a = np.swapaxes(a, -1, -2)
    if op.attrs.transpose_b:
        b = np.swapaxes(b, -1, -2)
    return np.matmul(_wide(a), _wide(b))


@impl(relay.BiasAddOp)
def bias_add(op: relay.BiasAddOp, x: np.ndarray, b: np.ndarray) -> np.ndarray:
    return x + along(b, op.attrs.axis % x.ndim, x.ndim)


@impl(relay.BatchNormOp)
def batch_norm(op: relay.BatchNormOp, x, gamma, beta, mean, var) -> np.ndarray:
    axis, rank = op.attrs.axis % x.ndim, x.ndim
    eps = x.dtype.type(op.attrs.epsilon)
    scale = along(gamma / np.sqrt(var + eps), axis, rank)
    return (x - along(mean, axis, rank)) * scale + along(beta, axis, rank)


@impl(relay.LayerNormOp)
def layer_norm(op: relay.LayerNormOp, x, gamma, beta) -> np.ndarray:
    axes = tuple(range(op.attrs.axis % x.ndim, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    eps = x.dtype.type(op.attrs.epsilon)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


@impl(relay.LRNOp)
def lrn(op: relay.LRNOp, x: np.ndarray) -> np.ndarray:
    a = op.attrs
    axis = a.axis % x.ndim
    sq = np.moveaxis(x.astype(np.float64) ** 2, axis, -1)
    before, after = (a.size - 1) // 2, a.size // 2
    padded = np.pad(sq, [(0, 0)] * (sq.ndim - 1) + [(before, after)])
    sums = sliding_window_view(padded, a.size, axis=-1).sum(axis=-1)
    sums = np.moveaxis(sums, -1, axis)
    return x / (a.bias + a.alpha / a.size * sums) ** a.beta


def _pool_input(op, x: np.ndarray, fill: float) -> tuple[np.ndarray, list[int]]:
    """Pad for a pool: explicit padding, plus the extra end cells ceil mode reads."""
    a = op.attrs
    n = len(op.SPATIAL)
    out = op.results[0].type.get_shape()
    extra = []
    for i, size in enumerate(x.shape[2:]):
        span = a.dilation[i] * (a.pool_size[i] - 1) + 1
        need = (out[a.layout.index(op.SPATIAL[i])] - 1) * a.strides[i] + span
        extra.append(max(0, need - (size + a.padding[i] + a.padding[n + i])))
    ends = [a.padding[n + i] + extra[i] for i in range(n)]
    return _pad_spatial(x, a.padding[:n], ends, fill), extra


@impl(relay.MaxPool1DOp, relay.MaxPool2DOp, relay.MaxPool3DOp)
def max_pool(op, x: np.ndarray) -> np.ndarray:
    a = op.attrs
    canonical = "NC" + op.SPATIAL
    x = _to_first(x, a.layout, canonical)
    lowest = -np.inf if np.issubdtype(x.dtype, np.floating) else np.iinfo(x.dtype).min
    padded, _ = _pool_input(op, x, lowest)
    win = _windows(padded, a.pool_size, a.strides, a.dilation)
    axes = tuple(range(-len(op.SPATIAL), 0))
    return _from_first(win.max(axis=axes), a.layout, canonical)


def avg_pool_divisors(op) -> np.ndarray:
    """The divisor of each output cell of an average pool, over the output's spatial shape
    (channel-first): real input cells, plus explicit padding if count_include_pad, never
    the cells only ceil mode reads."""
    a = op.attrs
    n = len(op.SPATIAL)
    in_shape = op.data.type.get_shape()
    spatial = tuple(in_shape[a.layout.index(c)] for c in op.SPATIAL)
    ones = np.ones((1, 1) + spatial)
    _, extra = _pool_input(op, ones, 0.0)
    pad_fill = 1.0 if a.count_include_pad else 0.0
    counted = _pad_spatial(ones, a.padding[:n], a.padding[n:], pad_fill)
    counted = _pad_spatial(counted, (0,) * n, extra, 0.0)
    counts = _windows(counted, a.pool_size, a.strides, a.dilation).sum(axis=tuple(range(-n, 0)))
    return np.maximum(counts[0, 0], 1)


@impl(relay.AvgPool1DOp, relay.AvgPool2DOp, relay.AvgPool3DOp)
def avg_pool(op, x: np.ndarray) -> np.ndarray:
    a = op.attrs
    n = len(op.SPATIAL)
    canonical = "NC" + op.SPATIAL
    x = _to_first(x, a.layout, canonical)
    padded, _ = _pool_input(op, x, 0.0)
    axes = tuple(range(-n, 0))
    sums = _windows(padded.astype(np.float64), a.pool_size, a.strides, a.dilation).sum(axis=axes)
    return _from_first((sums / avg_pool_divisors(op)).astype(x.dtype), a.layout, canonical)


@impl(relay.GlobalAvgPool2DOp, relay.GlobalMaxPool2DOp)
def global_pool2d(op, x: np.ndarray) -> np.ndarray:
    axes = tuple(op.attrs.layout.index(c) for c in "HW")
    if isinstance(op, relay.GlobalAvgPool2DOp):
        return x.mean(axis=axes, keepdims=True)
    return x.max(axis=axes, keepdims=True)


@impl(relay.SoftmaxOp)
def softmax(op: relay.SoftmaxOp, x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=op.attrs.axis, keepdims=True))
    return e / e.sum(axis=op.attrs.axis, keepdims=True)


@impl(relay.LogSoftmaxOp)
def log_softmax(op: relay.LogSoftmaxOp, x: np.ndarray) -> np.ndarray:
    shifted = x - x.max(axis=op.attrs.axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=op.attrs.axis, keepdims=True))


@impl(relay.PadOp)
def pad(op: relay.PadOp, x: np.ndarray) -> np.ndarray:
    a = op.attrs
    widths = [(a.pad_width[2 * i], a.pad_width[2 * i + 1]) for i in range(x.ndim)]
    crop = tuple(slice(max(0, -b), x.shape[i] - max(0, -e)) for i, (b, e) in enumerate(widths))
    x = x[crop]
    grow = [(max(0, b), max(0, e)) for b, e in widths]
    if a.pad_mode == "constant":
        return np.pad(x, grow, constant_values=x.dtype.type(a.pad_value))
    return np.pad(x, grow, mode=a.pad_mode)


@impl(relay.WinogradInputOp)
def winograd_input(op: relay.WinogradInputOp, x: np.ndarray) -> np.ndarray:
    m = op.attrs.tile
    top, left, _, _ = op.attrs.padding
    n, c, h, w = x.shape
    _, _, _, th, tw1 = op.result.type.get_shape()
    hp, wp = (th + 1) * m + 2, tw1 * m
    padded = np.zeros((n, c, hp, wp), np.float64)
    rows, cols = min(h, hp - top), min(w, wp - left)
    padded[:, :, top : top + rows, left : left + cols] = x[:, :, :rows, :cols]
    bt = winograd.input_transform(m)
    # the row transform of every row of tiles, the rows of tiles then read as one run
    blocks = sliding_window_view(padded, m + 2, axis=2)[:, :, ::m]  # n, c, i, col, y
    flat = np.einsum("ay,nciwy->anciw", bt, blocks).reshape(m + 2, n, c, -1)
    starts = m * np.arange(th * tw1)
    tiles = flat[..., starts[:, None] + np.arange(m + 2)]  # a, n, c, u, x
    v = np.einsum("ancux,bx->abncu", tiles, bt)
    return v.reshape((m + 2) ** 2, n, c, th, tw1).astype(x.dtype)


@impl(relay.WinogradOutputOp)
def winograd_output(op: relay.WinogradOutputOp, data: np.ndarray, *epilogue) -> np.ndarray:
    m = op.attrs.tile
    oh, ow = op.attrs.size
    _, n, k, th, tw = data.shape
    prods = data.astype(np.float64).reshape(m + 2, m + 2, n, k, th, tw)
    at = winograd.output_transform(m)
    y = np.einsum("ya,abnkij,xb->nkiyjx", at, prods, at).reshape(n, k, th * m, tw * m)
    y = y[:, :, :oh, :ow].astype(data.dtype)
    a = op.attrs
    vectors = iter(epilogue)
    if a.scale:
        y = y * next(vectors)[:, None, None]
    if a.shift:
        y = y + next(vectors)[:, None, None]
    if a.residual:
        y = y + next(vectors)
    return np.maximum(y, 0) if a.relu else y


@impl(relay.DropoutOp)
def dropout(op, x: np.ndarray) -> np.ndarray:
    return x
