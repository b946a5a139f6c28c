"""PyTorch image ops -> relay: upsampling (nearest, nearest-exact, linear, bilinear,
trilinear, bicubic), grid sampling, col2im / im2col (fold / unfold) and pixel (un)shuffle.

Upsampling follows ATen's CPU kernels (aten/src/ATen/native/UpSample.h): the spatial sizes
are static, so every output index's source taps and weights are computed at import, in the
input's float type as the kernels compute them; each resized axis is then a `take` of the
taps, a multiply by the weights and a sum over the taps. Grid sampling computes the taps at
run time from the grid (ATen's GridSampler.h: unnormalize, border clamp or reflection, then
nearest / bilinear / bicubic taps, each read with an element gather; a tap outside the
input reads zero).
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dtypes import numpy_dtype
from xrelay.frontends.pytorch.call import Call
from xrelay.frontends.pytorch.registry import aten_op

I64 = np.dtype(np.int64)
CUBIC_A = -0.75

# ATen name -> (interpolation, spatial rank)
UPSAMPLES = {
    "upsample_nearest1d": ("nearest", 1),
    "upsample_nearest2d": ("nearest", 2),
    "upsample_nearest3d": ("nearest", 3),
    "_upsample_nearest_exact1d": ("nearest_exact", 1),
    "_upsample_nearest_exact2d": ("nearest_exact", 2),
    "_upsample_nearest_exact3d": ("nearest_exact", 3),
    "upsample_linear1d": ("linear", 1),
    "upsample_bilinear2d": ("linear", 2),
    "upsample_trilinear3d": ("linear", 3),
    "upsample_bicubic2d": ("cubic", 2),
}


def _shape(v: SSAValue) -> list[int]:
    return list(v.type.get_shape())


def _dtype(v: SSAValue) -> np.dtype:
    return numpy_dtype(v.type.element_type)


def _sizes_and_scales(c: Call, n: int) -> tuple[list[int], list[float | None]]:
    """The output sizes and the per-axis scales ATen's kernels read (None: in / out)."""
    spatial = list(c.shape(0)[2:])
    size = c.value("output_size", None)
    if "scale_factors" in c.names:
        factors = c.value("scale_factors", None)
        if size is not None:
            return [int(s) for s in size], [None] * n
        if factors is None:
            raise c.error("neither output_size nor scale_factors given")
        factors = [float(f) for f in factors]
        if len(factors) != n:
            raise c.error(f"{len(factors)} scale factors for {n} spatial axes")
        return [math.floor(s * f) for s, f in zip(spatial, factors)], factors
    keys = [k for k in c.names if k.startswith("scales")]
    scales = [c.value(k, None) for k in keys]
    if size is None:
        raise c.error("missing output_size")
    return [int(s) for s in size], [None if s is None else float(s) for s in scales]


def _scale(size: int, out: int, align: bool, scale: float | None, ftype: np.dtype) -> np.generic:
    """area_pixel_compute_scale."""
    t = ftype.type
    if align:
        return t(size - 1) / t(out - 1) if out > 1 else t(0)
    if scale is not None and scale > 0:
        return t(1.0 / scale)
    return t(size) / t(out)


def _nearest_taps(size: int, out: int, scale: float | None, exact: bool) -> np.ndarray:
    """nearest_idx / nearest_exact_idx of every output index (the scale in float32)."""
    i = np.arange(out)
    if out == size:
        return i
    if out == 2 * size and not exact:
        return i >> 1
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(size / out)
    pos = (i.astype(np.float32) + np.float32(0.5)) if exact else i.astype(np.float32)
    return np.minimum(np.floor(pos * s).astype(np.int64), size - 1)


def _linear_taps(
    size: int, out: int, align: bool, scale: float | None, ftype: np.dtype
) -> tuple[np.ndarray, np.ndarray]:
    """compute_source_index_and_lambda: two taps and their weights per output index."""
    t = ftype.type
    i = np.arange(out)
    if out == size:
        return np.stack([i, i], 1), np.stack([np.ones(out, ftype), np.zeros(out, ftype)], 1)
    ratio = _scale(size, out, align, scale, ftype)
    if align:
        real = ratio * i.astype(ftype)
    else:
        real = np.maximum(ratio * (i.astype(ftype) + t(0.5)) - t(0.5), t(0))
    i0 = np.minimum(np.floor(real).astype(np.int64), size - 1)
    lam1 = np.clip(real - i0.astype(ftype), t(0), t(1)).astype(ftype)
    i1 = i0 + (i0 < size - 1)
    return np.stack([i0, i1], 1), np.stack([t(1) - lam1, lam1], 1)


def _cubic_weights(x: np.ndarray, ftype: np.dtype) -> np.ndarray:
    """get_cubic_upsample_coefficients for distances x in [0, 1)."""
    a = ftype.type(CUBIC_A)

    def near(v: np.ndarray) -> np.ndarray:
        return ((a + 2) * v - (a + 3)) * v * v + 1

    def far(v: np.ndarray) -> np.ndarray:
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a

    one = ftype.type(1)
    return np.stack([far(x + one), near(x), near(one - x), far(one - x + one)], 1).astype(ftype)


def _cubic_taps(
    size: int, out: int, align: bool, scale: float | None, ftype: np.dtype
) -> tuple[np.ndarray, np.ndarray]:
    t = ftype.type
    i = np.arange(out).astype(ftype)
    ratio = _scale(size, out, align, scale, ftype)
    real = ratio * i if align else ratio * (i + t(0.5)) - t(0.5)
    base = np.floor(real)
    idx = base.astype(np.int64)[:, None] + np.arange(-1, 3)[None, :]
    return np.clip(idx, 0, size - 1), _cubic_weights((real - base).astype(ftype), ftype)


def resample_axis(
    c: Call, x: SSAValue, axis: int, idx: np.ndarray, w: np.ndarray | None
) -> SSAValue:
    """x along `axis` replaced by sum_t w[o, t] * x[idx[o, t]] (w None: one tap, idx [out])."""
    shape = _shape(x)
    out = idx.shape[0]
    gathered = c.emit(relay.TakeOp(x, c.constant(idx.reshape(-1).astype(np.int64)), axis=axis))
    if w is None:
        return gathered
    taps = idx.shape[1]
    split = shape[:axis] + [out, taps] + shape[axis + 1 :]
    gathered = c.emit(relay.ReshapeOp(gathered, newshape=split))
    weights = c.constant(w.reshape([out, taps] + [1] * (len(shape) - axis - 1)), w.dtype)
    return c.emit(relay.SumOp(c.emit(relay.MultiplyOp(gathered, weights)), axis=[axis + 1]))


@aten_op(*UPSAMPLES)
def upsample(c: Call) -> SSAValue:
    mode, n = UPSAMPLES[c.name]
    if c.rank(0) != n + 2:
        raise c.error(f"a {n}-d upsample of a rank-{c.rank(0)} input")
    sizes, scales = _sizes_and_scales(c, n)
    if len(sizes) != n or len(scales) != n:
        raise c.error(f"output_size {sizes} does not give {n} spatial sizes")
    align = bool(c.value("align_corners", False)) if "align_corners" in c.names else False
    x = c.tensor(0)
    ftype = c.dtype(0)
    if mode != "nearest" and ftype.kind != "f":
        raise c.unsupported(f"{mode} upsampling of {ftype} tensors")
    for a, (size, out, scale) in enumerate(zip(c.shape(0)[2:], sizes, scales)):
        if out < 1:
            raise c.error(f"output size {out} for axis {a + 2}")
        if mode.startswith("nearest"):
            idx = _nearest_taps(size, out, scale, mode == "nearest_exact")
            if out != size or not np.array_equal(idx, np.arange(size)):
                x = resample_axis(c, x, a + 2, idx, None)
        elif mode == "linear":
            if out != size:
                x = resample_axis(c, x, a + 2, *_linear_taps(size, out, align, scale, ftype))
        else:
            x = resample_axis(c, x, a + 2, *_cubic_taps(size, out, align, scale, ftype))
    return x


# --- grid sampling ------------------------------------------------------------------------------


class _Grid:
    """Emission helpers for grid sampling: constants in the input's float type."""

    def __init__(self, c: Call, dtype: np.dtype, align: bool, padding: int) -> None:
        self.c, self.dtype, self.align, self.padding = c, dtype, align, padding

    def k(self, value: float) -> SSAValue:
        return self.c.constant(value, self.dtype)

    def op(self, cls: type, *args: SSAValue) -> SSAValue:
        return self.c.emit(cls(*args))

    def unnormalize(self, g: SSAValue, size: int) -> SSAValue:
        plus1 = self.op(relay.AddOp, g, self.k(1.0))
        if self.align:  # ((g + 1) / 2) * (size - 1)
            return self.op(
                relay.MultiplyOp, self.op(relay.DivideOp, plus1, self.k(2.0)), self.k(size - 1)
            )
        scaled = self.op(
            relay.SubtractOp, self.op(relay.MultiplyOp, plus1, self.k(size)), self.k(1.0)
        )
        return self.op(relay.DivideOp, scaled, self.k(2.0))

    def clip(self, x: SSAValue, size: int) -> SSAValue:
        """clip_coordinates: min(size - 1, max(x, 0))."""
        low = self.op(relay.MaximumOp, x, self.k(0.0))
        return self.op(relay.MinimumOp, low, self.k(size - 1))

    def reflect(self, x: SSAValue, twice_low: int, twice_high: int) -> SSAValue:
        """reflect_coordinates."""
        if twice_low == twice_high:
            return self.op(relay.MultiplyOp, x, self.k(0.0))
        low, span = twice_low / 2, (twice_high - twice_low) / 2
        x = self.op(relay.AbsOp, self.op(relay.SubtractOp, x, self.k(low)))
        extra = self.op(relay.ModOp, x, self.k(span))
        flips = self.op(relay.FloorOp, self.op(relay.DivideOp, x, self.k(span)))
        even = self.op(relay.EqualOp, self.op(relay.ModOp, flips, self.k(2.0)), self.k(0.0))
        up = self.op(relay.AddOp, extra, self.k(low))
        down = self.op(relay.AddOp, self.op(relay.SubtractOp, self.k(span), extra), self.k(low))
        return self.op(relay.WhereOp, even, up, down)

    def bound(self, x: SSAValue, size: int) -> SSAValue:
        """compute_coordinates: the padding mode's border handling."""
        if self.padding == 1:
            return self.clip(x, size)
        if self.padding == 2:
            twice = (0, 2 * (size - 1)) if self.align else (-1, 2 * size - 1)
            return self.clip(self.reflect(x, *twice), size)
        return x

    def index(self, x: SSAValue, size: int) -> tuple[SSAValue, SSAValue]:
        """Whole-number coordinates as (i64 index inside the axis, whether inside)."""
        near = self.c.emit(relay.ClipOp(x, a_min=-8.0, a_max=float(size + 8)))
        i = self.c.cast(near, I64)
        zero, top = self.c.constant(0, I64), self.c.constant(size - 1, I64)
        inside = self.op(
            relay.LogicalAndOp,
            self.op(relay.GreaterEqualOp, i, zero),
            self.op(relay.LessEqualOp, i, top),
        )
        return self.op(relay.MinimumOp, self.op(relay.MaximumOp, i, zero), top), inside


@aten_op("grid_sampler_2d", "grid_sampler")
def grid_sampler(c: Call) -> SSAValue:
    """input [N, C, H, W] read at grid [N, Ho, Wo, 2] (x, y in [-1, 1])."""
    if c.rank(0) != 4:
        raise c.unsupported(f"grid sampling of a rank-{c.rank(0)} input (2-d only)")
    n, channels, h, w = c.shape(0)
    gn, ho, wo, two = c.shape(1)
    if gn != n or two != 2:
        raise c.error(f"grid {list(c.shape(1))} does not match input {list(c.shape(0))}")
    mode, padding = c.int(2), c.int(3)
    if mode not in (0, 1, 2) or padding not in (0, 1, 2):
        raise c.unsupported(f"interpolation mode {mode} / padding mode {padding}")
    dtype = c.dtype(0)
    if dtype.kind != "f":
        raise c.error(f"grid sampling of a {dtype} tensor")
    g = _Grid(c, dtype, bool(c.value(4)), padding)
    points = ho * wo
    grid = c.emit(relay.ReshapeOp(c.tensor(1, dtype), newshape=[n, points, 2]))

    def coordinate(k: int) -> SSAValue:
        part = c.emit(relay.StridedSliceOp(grid, begin=[k], end=[k + 1], axes=[2]))
        return c.emit(relay.ReshapeOp(part, newshape=[n, points]))

    ix, iy = g.unnormalize(coordinate(0), w), g.unnormalize(coordinate(1), h)
    data = c.emit(relay.ReshapeOp(c.tensor(0), newshape=[n, channels, h * w]))

    def read(xs: tuple[SSAValue, SSAValue], ys: tuple[SSAValue, SSAValue]) -> SSAValue:
        """data at (index, inside) pairs of each axis [N, P] -> [N, C, P], zero outside."""
        (xi, x_in), (yi, y_in) = xs, ys
        flat = g.op(relay.AddOp, g.op(relay.MultiplyOp, yi, c.constant(w, I64)), xi)
        flat = c.emit(relay.ReshapeOp(flat, newshape=[n, 1, points]))
        flat = c.emit(relay.BroadcastToOp(flat, shape=[n, channels, points]))
        value = c.emit(relay.GatherOp(data, flat, axis=2))
        inside = g.op(relay.LogicalAndOp, x_in, y_in)
        inside = c.emit(relay.ReshapeOp(inside, newshape=[n, 1, points]))
        return g.op(relay.WhereOp, inside, value, g.k(0.0))

    def weighted(terms: list[tuple[SSAValue, SSAValue]]) -> SSAValue:
        total = None
        for value, weight in terms:
            weight = c.emit(relay.ReshapeOp(weight, newshape=[n, 1, points]))
            term = g.op(relay.MultiplyOp, value, weight)
            total = term if total is None else g.op(relay.AddOp, total, term)
        assert total is not None
        return total

    if mode == 1:
        xs = g.index(g.op(relay.RoundOp, g.bound(ix, w)), w)
        out = read(xs, g.index(g.op(relay.RoundOp, g.bound(iy, h)), h))
    elif mode == 0:
        ix, iy = g.bound(ix, w), g.bound(iy, h)
        x0, y0 = g.op(relay.FloorOp, ix), g.op(relay.FloorOp, iy)
        x1, y1 = g.op(relay.AddOp, x0, g.k(1.0)), g.op(relay.AddOp, y0, g.k(1.0))
        wx = [g.op(relay.SubtractOp, x1, ix), g.op(relay.SubtractOp, ix, x0)]
        wy = [g.op(relay.SubtractOp, y1, iy), g.op(relay.SubtractOp, iy, y0)]
        xs, ys = [g.index(v, w) for v in (x0, x1)], [g.index(v, h) for v in (y0, y1)]
        terms = [
            (read(xt, yt), g.op(relay.MultiplyOp, ax, ay))
            for yt, ay in zip(ys, wy)
            for xt, ax in zip(xs, wx)
        ]
        out = weighted(terms)
    else:  # bicubic: taps at floor - 1 .. floor + 2, each bounded by the padding mode
        x0, y0 = g.op(relay.FloorOp, ix), g.op(relay.FloorOp, iy)
        wx = _cubic_run_time(g, g.op(relay.SubtractOp, ix, x0))
        wy = _cubic_run_time(g, g.op(relay.SubtractOp, iy, y0))
        xs = [g.index(g.bound(g.op(relay.AddOp, x0, g.k(i - 1.0)), w), w) for i in range(4)]
        ys = [g.index(g.bound(g.op(relay.AddOp, y0, g.k(j - 1.0)), h), h) for j in range(4)]
        rows = [
            (weighted([(read(xt, yt), wx[i]) for i, xt in enumerate(xs)]), wy[j])
            for j, yt in enumerate(ys)
        ]
        out = weighted(rows)
    return c.emit(relay.ReshapeOp(out, newshape=[n, channels, ho, wo]))


def _cubic_run_time(g: _Grid, t: SSAValue) -> list[SSAValue]:
    """get_cubic_upsample_coefficients on a run-time distance t."""
    a = CUBIC_A

    def near(v: SSAValue) -> SSAValue:  # ((a + 2) v - (a + 3)) v v + 1
        inner = g.op(relay.SubtractOp, g.op(relay.MultiplyOp, g.k(a + 2), v), g.k(a + 3))
        return g.op(
            relay.AddOp, g.op(relay.MultiplyOp, g.op(relay.MultiplyOp, inner, v), v), g.k(1.0)
        )

    def far(v: SSAValue) -> SSAValue:  # ((a v - 5a) v + 8a) v - 4a
        inner = g.op(relay.SubtractOp, g.op(relay.MultiplyOp, g.k(a), v), g.k(5 * a))
        outer = g.op(relay.AddOp, g.op(relay.MultiplyOp, inner, v), g.k(8 * a))
        return g.op(relay.SubtractOp, g.op(relay.MultiplyOp, outer, v), g.k(4 * a))

    one_minus = g.op(relay.SubtractOp, g.k(1.0), t)
    return [
        far(g.op(relay.AddOp, t, g.k(1.0))),
        near(t),
        near(one_minus),
        far(g.op(relay.AddOp, one_minus, g.k(1.0))),
    ]


# --- fold / unfold ------------------------------------------------------------------------------


def _window_args(c: Call) -> tuple[list[int], list[int], list[int], list[int]]:
    def pair(key: str) -> list[int]:
        v = c.ints(key)
        return v * 2 if len(v) == 1 else v

    return pair("kernel_size"), pair("dilation"), pair("padding"), pair("stride")


def _block_positions(
    image: list[int], kernel: list[int], dilation: list[int], padding: list[int], stride: list[int]
) -> tuple[np.ndarray, np.ndarray, int]:
    """For every (kernel offset k, block l): its padded-image row and column ([K, L] each),
    and L."""
    blocks = [
        (image[i] + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1
        for i in range(2)
    ]
    kh, kw = np.indices(kernel).reshape(2, -1)
    bh, bw = np.indices(blocks).reshape(2, -1)
    rows = bh[None, :] * stride[0] + kh[:, None] * dilation[0]
    cols = bw[None, :] * stride[1] + kw[:, None] * dilation[1]
    return rows, cols, math.prod(blocks)


@aten_op("col2im")
def col2im(c: Call) -> SSAValue:
    """F.fold: columns [N, C*K, L] summed onto the image [N, C, H, W]; each image position
    gathers the entries that land on it (padded with a zero slot) and sums them."""
    batched = c.rank(0) == 3
    shape = list(c.shape(0)) if batched else [1, *c.shape(0)]
    n, ck, length = shape
    image = c.ints("output_size")
    kernel, dilation, padding, stride = _window_args(c)
    k = math.prod(kernel)
    if ck % k:
        raise c.error(f"{ck} column channels do not split into blocks of {k}")
    rows, cols, count = _block_positions(image, kernel, dilation, padding, stride)
    if count != length:
        raise c.error(f"{length} columns, but the shapes give {count} blocks")
    rows, cols = rows - padding[0], cols - padding[1]
    inside = (rows >= 0) & (rows < image[0]) & (cols >= 0) & (cols < image[1])
    targets = (rows * image[1] + cols)[inside]
    sources = np.arange(k * length).reshape(k, length)[inside]
    size = math.prod(image)
    width = max(1, int(np.bincount(targets, minlength=size).max(initial=0)))
    table = np.full((size, width), k * length, np.int64)
    fill = np.zeros(size, np.int64)
    for target, source in zip(targets, sources):
        table[target, fill[target]] = source
        fill[target] += 1
    channels = ck // k
    x = c.emit(relay.ReshapeOp(c.tensor(0), newshape=[n, channels, k * length]))
    zero = c.constant(np.zeros((n, channels, 1)), c.dtype(0))
    x = c.emit(relay.ConcatenateOp(x, zero, axis=2))
    picked = c.emit(relay.TakeOp(x, c.constant(table), axis=2))  # [n, c, P, width]
    total = c.emit(relay.SumOp(picked, axis=[3]))
    out = [n, channels, *image] if batched else [channels, *image]
    return c.emit(relay.ReshapeOp(total, newshape=out))


@aten_op("im2col")
def im2col(c: Call) -> SSAValue:
    """F.unfold: every block of the zero-padded image as a column [N, C*K, L]."""
    batched = c.rank(0) == 4
    shape = list(c.shape(0)) if batched else [1, *c.shape(0)]
    n, channels, h, w = shape
    kernel, dilation, padding, stride = _window_args(c)
    rows, cols, count = _block_positions([h, w], kernel, dilation, padding, stride)
    x = c.emit(relay.ReshapeOp(c.tensor(0), newshape=shape))
    if any(padding):
        pads = [0, 0, 0, 0, padding[0], padding[0], padding[1], padding[1]]
        x = c.emit(relay.PadOp(x, pad_width=pads))
    width = w + 2 * padding[1]
    x = c.emit(relay.ReshapeOp(x, newshape=[n, channels, (h + 2 * padding[0]) * width]))
    picked = c.emit(relay.TakeOp(x, c.constant((rows * width + cols).astype(np.int64)), axis=2))
    k = math.prod(kernel)
    out = [n, channels * k, count] if batched else [channels * k, count]
    return c.emit(relay.ReshapeOp(picked, newshape=out))


# --- pixel shuffle ------------------------------------------------------------------------------


@aten_op("pixel_shuffle", "pixel_unshuffle")
def pixel_shuffle(c: Call) -> SSAValue:
    """[*, C r r, H, W] <-> [*, C, H r, W r]."""
    shape = list(c.shape(0))
    if len(shape) < 3:
        raise c.error(f"{c.name} of a rank-{len(shape)} tensor")
    *batch, ch, h, w = shape
    nb = len(batch)
    x = c.tensor(0)
    if c.name == "pixel_shuffle":
        r = c.int("upscale_factor")
        if ch % (r * r):
            raise c.error(f"{ch} channels do not divide by {r}**2")
        x = c.emit(relay.ReshapeOp(x, newshape=[*batch, ch // (r * r), r, r, h, w]))
        axes = [*range(nb), nb, nb + 3, nb + 1, nb + 4, nb + 2]
        x = c.emit(relay.TransposeOp(x, axes=axes))
        return c.emit(relay.ReshapeOp(x, newshape=[*batch, ch // (r * r), h * r, w * r]))
    r = c.int("downscale_factor")
    if h % r or w % r:
        raise c.error(f"spatial sizes {h}x{w} do not divide by {r}")
    x = c.emit(relay.ReshapeOp(x, newshape=[*batch, ch, h // r, r, w // r, r]))
    axes = [*range(nb), nb, nb + 2, nb + 4, nb + 1, nb + 3]
    x = c.emit(relay.TransposeOp(x, axes=axes))
    return c.emit(relay.ReshapeOp(x, newshape=[*batch, ch * r * r, h // r, w // r]))
