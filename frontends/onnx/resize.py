"""ONNX Resize (and opset-10 Upsample-style Resize) as per-axis gathers with weights
computed at import time: the resized axes are static, so every output coordinate's source
taps and weights are known (a dynamic axis may only keep its size). For each resized axis,
`take` gathers the taps ([..., out * taps, ...]), a multiply by the weights and a sum over
the taps interpolate (nearest has one tap of weight 1). Covers the nearest modes, linear
and cubic (cubic_coeff_a, exclude_outside), antialias, every coordinate_transformation_mode
including tf_crop_and_resize with its extrapolation value, axes and
keep_aspect_ratio_policy."""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dims import Dim, dim_str, equal
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.registry import onnx_op


def source_coordinate(b: Node, mode: str, out: int, size: int, scale: float, roi) -> np.ndarray:
    """Each output index's position in the input (before rounding or interpolation). The
    resized length in the formulas is `size * scale` (the output size when sizes were
    given, the unfloored product when scales were), as the ONNX reference has it."""
    x = np.arange(out, dtype=np.float64)
    length = size * scale
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        adjustment = out / (scale * size)
        offset = size / 2 * (1 - adjustment)
        return offset + (x + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if out > 1 else np.zeros(out)
    if mode == "align_corners":
        return x * (size - 1) / (length - 1) if out > 1 else np.zeros(out)
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_crop_and_resize":
        start, end = roi
        if out > 1:
            return start * (size - 1) + x * (end - start) * (size - 1) / (length - 1)
        return np.full(out, 0.5 * (start + end) * (size - 1))
    raise b.unsupported(f"coordinate_transformation_mode '{mode}'")


def _nearest(b: Node, x: np.ndarray, mode: str) -> np.ndarray:
    if mode == "round_prefer_floor":
        return np.ceil(x - 0.5)
    if mode == "round_prefer_ceil":
        return np.floor(x + 0.5)
    if mode == "floor":
        return np.floor(x)
    if mode == "ceil":
        return np.ceil(x)
    raise b.unsupported(f"nearest_mode '{mode}'")


def _cubic(t: np.ndarray, a: float) -> np.ndarray:
    t = np.abs(t)
    near = ((a + 2) * t - (a + 3)) * t * t + 1
    far = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return np.where(t <= 1, near, np.where(t < 2, far, 0.0))


def taps(b: Node, pos: np.ndarray, size: int, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """(indices [out, n], weights [out, n]) of one axis for the node's mode."""
    mode = b.attr("mode", "nearest")
    if mode == "nearest":
        idx = _nearest(b, pos, b.attr("nearest_mode", "round_prefer_floor"))
        return np.clip(idx, 0, size - 1).astype(np.int64)[:, None], np.ones((len(pos), 1))
    if mode not in ("linear", "cubic"):
        raise b.unsupported(f"mode '{mode}'")
    support = 1.0 if mode == "linear" else 2.0
    stretch = min(scale, 1.0) if b.attr("antialias", 0) else 1.0
    first = math.floor(-support / stretch) + 1
    offsets = np.arange(first, 2 - first)
    base = np.floor(pos)
    ratio = pos - base
    t = (offsets[None, :] - ratio[:, None]) * stretch
    if mode == "linear":
        weights = np.maximum(0.0, 1 - np.abs(t))
    else:
        weights = _cubic(t, float(b.attr("cubic_coeff_a", -0.75)))
    idx = base[:, None] + offsets[None, :]
    if b.attr("exclude_outside", 0):
        weights = np.where((idx < 0) | (idx > size - 1), 0.0, weights)
    if stretch < 1 or b.attr("exclude_outside", 0):
        weights = weights / weights.sum(axis=1, keepdims=True)
    return np.clip(idx, 0, size - 1).astype(np.int64), weights


def _sizes_and_scales(b: Node, shape, axes) -> tuple[list[Dim], list[float]]:
    """The output size and scale of each resized axis. A dynamic axis (its taps would
    depend on its size) must keep its size."""
    scales_in = 1 if b.opset < 11 else 2
    sizes_in = 3
    if b.has_input(sizes_in) and b.shape(sizes_in) != (0,):
        sizes = b.dims_const(sizes_in)
        if len(sizes) != len(axes):
            raise b.error(f"sizes has {len(sizes)} entries for {len(axes)} axes")
        policy = b.attr("keep_aspect_ratio_policy", "stretch")
        scales = [_ratio(b, sizes[i], shape[a]) for i, a in enumerate(axes)]
        if policy in ("not_larger", "not_smaller"):
            pick = min(scales) if policy == "not_larger" else max(scales)
            scales = [pick] * len(axes)
            sizes = [_scaled(b, shape[a], pick, 0.5) for a in axes]
        elif policy != "stretch":
            raise b.error(f"keep_aspect_ratio_policy '{policy}'")
        return sizes, scales
    if not b.has_input(scales_in) or b.shape(scales_in) == (0,):
        raise b.error("Resize needs scales or sizes")
    scales = [float(s) for s in b.const(scales_in)]
    if len(scales) != len(axes):
        raise b.error(f"scales has {len(scales)} entries for {len(axes)} axes")
    if any(s <= 0 for s in scales):
        raise b.error(f"scales must be positive, got {scales}")
    return [_scaled(b, shape[a], s, 0.0) for a, s in zip(axes, scales)], scales


def _ratio(b: Node, out: Dim, size: Dim) -> float:
    """out / size, as a scale."""
    if isinstance(out, int) and isinstance(size, int):
        return out / size
    if equal(out, size):
        return 1.0
    raise b.unsupported(f"Resize of a dynamic axis ({dim_str(size)} to {dim_str(out)})")


def _scaled(b: Node, size: Dim, scale: float, offset: float) -> Dim:
    """floor(size * scale + offset): the output size of an axis."""
    if isinstance(size, int):
        return math.floor(size * scale + offset)
    if scale == 1.0:
        return size
    raise b.unsupported(f"Resize of a dynamic axis ({dim_str(size)}) by {scale}")


def _roi(b: Node, axes, rank) -> dict[int, tuple[float, float]]:
    if b.opset < 11 or not b.has_input(1) or b.shape(1) == (0,):
        return {a: (0.0, 1.0) for a in axes}
    roi = [float(v) for v in b.const(1)]
    n = len(roi) // 2
    starts, ends = roi[:n], roi[n:]
    if n == rank:
        return {a: (starts[a], ends[a]) for a in axes}
    return {a: (starts[i], ends[i]) for i, a in enumerate(axes)}


@onnx_op("Resize", since=10)
def resize(b: Node) -> SSAValue:
    x = b.input(0)
    shape = list(b.shape(0))
    rank = len(shape)
    axes = [b.axis(a, rank, "axes entry") for a in b.attr("axes", list(range(rank)))]
    sizes, scales = _sizes_and_scales(b, shape, axes)
    coord = b.attr(
        "coordinate_transformation_mode", "half_pixel" if b.opset >= 11 else "asymmetric"
    )
    roi = _roi(b, axes, rank)
    dtype = np.dtype(b.dtype(0))
    crop = coord == "tf_crop_and_resize"
    # which outputs fall outside the input (tf_crop_and_resize), broadcast on other axes
    view = [sizes[axes.index(a)] if a in axes else 1 for a in range(rank)]
    outside = np.zeros([d if isinstance(d, int) else 1 for d in view], bool)
    for a, out, scale in zip(axes, sizes, scales):
        if not isinstance(shape[a], int) and crop:
            raise b.unsupported(f"tf_crop_and_resize along a dynamic axis ({dim_str(shape[a])})")
        if out == shape[a] and scale == 1.0 and not crop:
            continue
        pos = source_coordinate(b, coord, out, shape[a], scale, roi[a])
        if coord == "tf_crop_and_resize":
            out_of_range = (pos < 0) | (pos > shape[a] - 1)
            view = [1] * rank
            view[a] = out
            outside |= out_of_range.reshape(view)
        idx, weights = taps(b, pos, shape[a], scale)
        n = idx.shape[1]
        gathered = b.emit(relay.TakeOp(x, b.constant(idx.reshape(-1)), axis=a))
        if n == 1:
            x = gathered
        else:
            split = shape[:a] + [out, n] + shape[a + 1 :]
            gathered = b.emit(relay.ReshapeOp(gathered, newshape=split))
            w_shape = [out, n] + [1] * (rank - a - 1)
            w = b.constant(weights.astype(dtype).reshape(w_shape))
            x = b.emit(relay.SumOp(b.emit(relay.MultiplyOp(gathered, w)), axis=(a + 1,)))
        shape[a] = out
    if outside.any():
        value = b.constant(np.asarray(b.attr("extrapolation_value", 0.0), dtype))
        x = b.emit(relay.WhereOp(b.constant(outside), value, x))
    return x
