"""ONNX RoiAlign with a fixed `sampling_ratio` (> 0: the sample grid per bin is known at
import), following the ONNX reference (op_roi_align.py) step by step in the inputs' type.

Per region: its box scaled (and shifted half a pixel in half_pixel mode; at least 1 x 1
in output_half_pixel mode), split into output_height x output_width bins of
sampling_ratio^2 samples each. A sample beyond [-1, size] on either axis contributes
nothing; else its coordinates are clamped at 0, its low corner truncated (clamped to the
last pixel), and the four corners weighted bilinearly. `avg` averages the samples'
interpolations; `max` takes the largest weighted corner over the bin's samples."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dtypes import element_type
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.registry import onnx_op

I64 = np.dtype(np.int64)


class Axis:
    """The samples of one axis of every region, [R, bins, grid] each: the low and high
    corner indices, their weights, and whether the sample lies inside [-1, size]."""

    def __init__(
        self,
        b: Node,
        start: SSAValue,
        end: SSAValue,
        size: int,
        bins: int,
        grid: int,
        half_pixel: bool,
        dtype: np.dtype,
    ) -> None:
        def c(v: float) -> SSAValue:
            return b.constant(np.asarray(v, dtype))

        extent = b.emit(relay.SubtractOp(end, start))
        if not half_pixel:  # malformed regions become 1 x 1
            extent = b.emit(relay.MaximumOp(extent, c(1.0)))
        step = b.emit(relay.DivideOp(extent, c(bins)))  # [R, 1, 1]
        # start + bin * step + (i + 0.5) * step / grid, in the reference's order
        whole = b.constant(np.arange(bins, dtype=dtype).reshape(1, bins, 1))
        part = b.constant((np.arange(grid) + 0.5).astype(dtype).reshape(1, 1, grid))
        at = b.emit(relay.AddOp(start, b.emit(relay.MultiplyOp(whole, step))))
        offset = b.emit(relay.DivideOp(b.emit(relay.MultiplyOp(part, step)), c(grid)))
        x = b.emit(relay.AddOp(at, offset))
        below = b.emit(relay.LessOp(x, c(-1.0)))
        beyond = b.emit(relay.GreaterOp(x, c(size)))
        self.inside = b.emit(relay.LogicalNotOp(b.emit(relay.LogicalOrOp(below, beyond))))
        # clamped at 0 (and, for samples outside only, at size: the cast stays defined)
        x = b.emit(relay.ClipOp(x, a_min=0.0, a_max=float(size)))
        low = b.emit(relay.CastOp(x, dtype=element_type(I64)))  # x >= 0: int() truncates
        last = b.constant(np.int64(size - 1))
        at_end = b.emit(relay.GreaterEqualOp(low, last))
        self.low = b.emit(relay.WhereOp(at_end, last, low))
        after = b.emit(relay.AddOp(low, b.constant(np.int64(1))))
        self.high = b.emit(relay.WhereOp(at_end, last, after))
        x = b.emit(relay.WhereOp(at_end, c(size - 1), x))
        low_f = b.emit(relay.CastOp(self.low, dtype=element_type(dtype)))
        self.high_weight = b.emit(relay.SubtractOp(x, low_f))
        self.low_weight = b.emit(relay.SubtractOp(c(1.0), self.high_weight))


@onnx_op("RoiAlign", since=10)
def roi_align(b: Node) -> SSAValue:
    n, channels, height, width = b.static_shape(0, "RoiAlign")
    regions, cols = b.static_shape(1, "RoiAlign rois")
    if cols != 4 or b.static_shape(2, "RoiAlign batch_indices") != (regions,):
        raise b.error(f"rois {b.shape(1)} / batch_indices {b.shape(2)} are not [R, 4] / [R]")
    mode = b.attr("mode", "avg")
    ratio = int(b.attr("sampling_ratio", 0))
    if mode not in ("avg", "max"):
        raise b.error(f"mode '{mode}' is not avg or max")
    if ratio <= 0:
        raise b.unsupported("sampling_ratio 0 (sample counts that depend on the regions)")
    default = "half_pixel" if b.opset >= 16 else "output_half_pixel"
    half_pixel = b.attr("coordinate_transformation_mode", default) == "half_pixel"
    ph, pw = int(b.attr("output_height", 1)), int(b.attr("output_width", 1))
    scale = float(b.attr("spatial_scale", 1.0))
    dtype = np.dtype(b.dtype(0))
    if np.dtype(b.dtype(1)) != dtype:
        raise b.error("X and rois differ in type")

    def c(v: float) -> SSAValue:
        return b.constant(np.asarray(v, dtype))

    boxes = b.emit(relay.MultiplyOp(b.input(1), c(scale)))
    if half_pixel:
        boxes = b.emit(relay.SubtractOp(boxes, c(0.5)))

    def corner(i: int) -> SSAValue:
        v = b.emit(relay.StridedSliceOp(boxes, begin=[i], end=[i + 1], axes=[1]))
        return b.emit(relay.ReshapeOp(v, newshape=(regions, 1, 1)))

    ys = Axis(b, corner(1), corner(3), height, ph, ratio, half_pixel, dtype)
    xs = Axis(b, corner(0), corner(2), width, pw, ratio, half_pixel, dtype)
    samples = ph * ratio * pw * ratio
    inside = b.emit(relay.LogicalAndOp(_outer(b, ys.inside, 0), _outer(b, xs.inside, 1)))
    batch = b.input(2)
    if b.dtype(2) != I64:
        batch = b.emit(relay.CastOp(batch, dtype=element_type(I64)))
    data = b.emit(relay.ReshapeOp(b.input(0), newshape=(n, channels, height * width)))
    data = b.emit(relay.TakeOp(data, batch, axis=0))  # [R, C, H * W]
    zero_w, zero_i = c(0.0), b.constant(np.int64(0))
    terms = []
    y_low, y_high = (ys.low, ys.low_weight), (ys.high, ys.high_weight)
    x_low, x_high = (xs.low, xs.low_weight), (xs.high, xs.high_weight)
    corners = [(*y_low, *x_low), (*y_low, *x_high), (*y_high, *x_low), (*y_high, *x_high)]
    for y_idx, y_w, x_idx, x_w in corners:
        row = b.emit(relay.MultiplyOp(_outer(b, y_idx, 0), b.constant(np.int64(width))))
        pos = b.emit(relay.AddOp(row, _outer(b, x_idx, 1)))
        weight = b.emit(relay.MultiplyOp(_outer(b, y_w, 0), _outer(b, x_w, 1)))
        pos = b.emit(relay.WhereOp(inside, pos, zero_i))
        weight = b.emit(relay.WhereOp(inside, weight, zero_w))
        pos = b.emit(relay.ReshapeOp(pos, newshape=(regions, 1, samples)))
        pos = b.emit(relay.BroadcastToOp(pos, shape=(regions, channels, samples)))
        value = b.emit(relay.GatherOp(data, pos, axis=2))
        weight = b.emit(relay.ReshapeOp(weight, newshape=(regions, 1, samples)))
        terms.append(b.emit(relay.MultiplyOp(weight, value)))
    shape = (regions, channels, ph, ratio, pw, ratio)
    if mode == "avg":
        total = terms[0]
        for t in terms[1:]:
            total = b.emit(relay.AddOp(total, t))
        total = b.emit(relay.ReshapeOp(total, newshape=shape))
        total = b.emit(relay.SumOp(total, axis=(3, 5)))
        return b.emit(relay.DivideOp(total, c(ratio * ratio)))
    top = terms[0]
    for t in terms[1:]:
        top = b.emit(relay.MaximumOp(top, t))
    return b.emit(relay.MaxOp(b.emit(relay.ReshapeOp(top, newshape=shape)), axis=(3, 5)))


def _outer(b: Node, v: SSAValue, axis: int) -> SSAValue:
    """An [R, bins, grid] value of the y (axis 0) or x (axis 1) samples, shaped
    [R, bins, grid, 1, 1] or [R, 1, 1, bins, grid] to broadcast against the other axis."""
    regions, bins, grid = v.type.get_shape()
    shape = (regions, bins, grid, 1, 1) if axis == 0 else (regions, 1, 1, bins, grid)
    return b.emit(relay.ReshapeOp(v, newshape=shape))
