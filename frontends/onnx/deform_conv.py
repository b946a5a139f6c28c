"""ONNX DeformConv (2-d) from the bilinear sampling of frontends/onnx/grid_sample.py and
a grouped matrix product, following the ONNX reference (op_deform_conv.py).

Each output position (i, j) and kernel tap (kh, kw) samples every input channel of its
offset group at (i * stride - pad + kh * dilation + offset_y, likewise for x), bilinearly
with zeros outside (GridSample linear, align_corners=1, coordinates in f32); the samples
are scaled by the mask (ones if absent), and each output channel sums its group's samples
times the weights, plus the bias."""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dtypes import element_type
from xrelay.frontends.common import matmul_nd
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.grid_sample import Axis, axis_taps, interpolate
from xrelay.frontends.onnx.registry import onnx_op

F32 = np.dtype(np.float32)


@onnx_op("DeformConv", since=19)
def deform_conv(b: Node) -> SSAValue:
    xshape = b.static_shape(0, "DeformConv")
    if len(xshape) != 4:
        raise b.unsupported(f"{len(xshape) - 2}-d DeformConv (the reference has 2-d only)")
    n, channels, height, width = xshape
    out_channels, per_group, *kernel_dims = b.static_shape(1, "DeformConv weight")
    kernel = list(b.attr("kernel_shape", kernel_dims))
    kh, kw = kernel
    group, offset_group = int(b.attr("group", 1)), int(b.attr("offset_group", 1))
    strides = list(b.attr("strides", [1, 1]))
    dilations = list(b.attr("dilations", [1, 1]))
    pads = list(b.attr("pads", [0, 0, 0, 0]))
    oshape = b.static_shape(2, "DeformConv offset")
    oh, ow = oshape[2:]
    if channels != per_group * group or out_channels % group or channels % offset_group:
        raise b.error(f"channels {channels}, weight {b.shape(1)}, group {group} do not match")
    if oshape[:2] != (n, offset_group * kh * kw * 2):
        raise b.error(f"offset {list(oshape)} does not match offset_group and kernel")
    for size, k, s, d, p0, p1, o in zip(
        (height, width), kernel, strides, dilations, pads[:2], pads[2:], (oh, ow)
    ):
        if o != int((size - ((k - 1) * d + 1) + p0 + p1) / s + 1):
            raise b.error("pads, dilations, strides and kernel do not give the offset's size")
    if height == 1 or width == 1:
        raise b.unsupported("DeformConv over an axis of length 1 (the reference divides by 0)")
    taps, points = kh * kw, kh * kw * oh * ow
    # offset [n, og, kh, kw, 2, oh, ow] -> y and x [n * og, kh * kw * oh * ow]
    offset = b.emit(relay.ReshapeOp(b.input(2), newshape=(n * offset_group, taps, 2, oh * ow)))
    odtype = np.dtype(b.dtype(2))
    axes = [Axis(height, True), Axis(width, True)]
    coords = []
    for part, axis in enumerate(axes):
        o = b.emit(relay.StridedSliceOp(offset, begin=[part], end=[part + 1], axes=[2]))
        o = b.emit(relay.ReshapeOp(o, newshape=(n * offset_group, points)))
        base = _base(part, kernel, strides, dilations, pads, oh, ow).astype(odtype)
        p = b.emit(relay.AddOp(b.constant(base), o))
        if odtype != F32:
            p = b.emit(relay.CastOp(p, dtype=element_type(F32)))
        coords.append(axis_taps(b, p, axis, "linear", "zeros"))
    dtype = np.dtype(b.dtype(0))
    per_offset = channels // offset_group
    data = b.emit(
        relay.ReshapeOp(b.input(0), newshape=(n * offset_group, per_offset, height * width))
    )
    sampled = interpolate(b, data, coords, axes, dtype, 0, None, None)
    sampled = b.emit(
        relay.ReshapeOp(sampled, newshape=(n, offset_group, per_offset, taps, oh * ow))
    )
    if b.has_input(4):
        mask = b.emit(relay.ReshapeOp(b.input(4), newshape=(n, offset_group, 1, taps, oh * ow)))
        sampled = b.emit(relay.MultiplyOp(sampled, mask))
    cols = b.emit(relay.ReshapeOp(sampled, newshape=(n, group, per_group * taps, oh * ow)))
    per_out = out_channels // group
    weight = b.emit(relay.ReshapeOp(b.input(1), newshape=(1, group, per_out, per_group * taps)))
    y = matmul_nd(b, weight, cols)  # [n, group, per_out, oh * ow]
    y = b.emit(relay.ReshapeOp(y, newshape=(n, out_channels, oh, ow)))
    if b.has_input(3):
        y = b.emit(
            relay.AddOp(b.emit(relay.ReshapeOp(b.input(3), newshape=(1, out_channels, 1, 1))), y)
        )
    return y


def _base(
    part: int,
    kernel: list[int],
    strides: list[int],
    dilations: list[int],
    pads: list[int],
    oh: int,
    ow: int,
) -> np.ndarray:
    """[1, kh * kw * oh * ow]: the undeformed sampling position along axis `part` (0: y)."""
    kh, kw = kernel
    i = np.arange(oh if part == 0 else ow) * strides[part] - pads[part]
    k = np.arange(kernel[part]) * dilations[part]
    if part == 0:
        grid = k[:, None, None, None] + i[None, None, :, None] + np.zeros((kh, kw, oh, ow))
    else:
        grid = k[None, :, None, None] + i[None, None, None, :] + np.zeros((kh, kw, oh, ow))
    return grid.reshape(1, math.prod(grid.shape))
