"""ONNX Col2Im and MaxUnpool: scatters onto an image.

- Col2Im: every column entry (kernel offset, block position) lands on a fixed image
  position or outside it; the positions are computed at import from the (import-time)
  image and block shapes. Each image position then gathers the entries that land on it
  (padded with a zero slot to the largest count) and sums them: a `take` and a `sum`.
- MaxUnpool: each value is written at its flat index into the inferred output (the last
  write wins), through the match matrix of frontends/onnx/scatter.py, then zero-padded at
  the end of each axis to `output_shape`."""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dtypes import element_type
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.registry import onnx_op
from xrelay.frontends.onnx.scatter import scatter_rows

MAX_GATHER = 1 << 24  # image positions x entries per position


def col2im_sources(
    image: list[int], block: list[int], dilations: list[int], pads: list[int], strides: list[int]
) -> tuple[np.ndarray, int]:
    """([prod(image), T] indices into the flattened [prod(block) * L] columns, the index
    prod(block) * L (a zero) where a position has fewer than T entries; L, the number of
    blocks)."""
    dims = len(image)
    begin = pads[:dims]
    blocks = [
        (image[i] + pads[i] + pads[i + dims] - (dilations[i] * (block[i] - 1) + 1)) // strides[i]
        + 1
        for i in range(dims)
    ]
    count = math.prod(blocks)
    kernel = np.indices(block).reshape(dims, -1)  # [dims, K]
    where = np.indices(blocks).reshape(dims, -1)  # [dims, L]
    pos = (
        where[:, None, :] * np.asarray(strides)[:, None, None]
        - np.asarray(begin)[:, None, None]
        + kernel[:, :, None] * np.asarray(dilations)[:, None, None]
    )  # [dims, K, L]
    inside = np.all((pos >= 0) & (pos < np.asarray(image)[:, None, None]), axis=0)
    flat_pos = np.ravel_multi_index(tuple(np.where(inside, pos, 0)), image)
    entry = np.arange(pos.shape[1] * count).reshape(pos.shape[1], count)
    targets, sources = flat_pos[inside], entry[inside]  # in the reference's order
    size = math.prod(image)
    per_position = np.bincount(targets, minlength=size)
    width = max(1, int(per_position.max(initial=0)))
    table = np.full((size, width), pos.shape[1] * count, np.int64)
    fill = np.zeros(size, np.int64)
    for target, source in zip(targets, sources):
        table[target, fill[target]] = source
        fill[target] += 1
    return table, count


@onnx_op("Col2Im", since=18)
def col2im(b: Node) -> SSAValue:
    n, channels, length = b.static_shape(0, "Col2Im")
    image = [int(v) for v in np.asarray(b.const(1)).reshape(-1)]
    block = [int(v) for v in np.asarray(b.const(2)).reshape(-1)]
    dims = len(image)
    if len(block) != dims or dims == 0 or min(image + block) < 1:
        raise b.error(f"image shape {image} and block shape {block} do not match")
    dilations = list(b.attr("dilations", [1] * dims))
    pads = list(b.attr("pads", [0] * 2 * dims))
    strides = list(b.attr("strides", [1] * dims))
    kernel = math.prod(block)
    if channels % kernel:
        raise b.error(f"{channels} column channels do not split into blocks of {kernel}")
    table, count = col2im_sources(image, block, dilations, pads, strides)
    if count != length:
        raise b.error(f"{length} columns, but the shapes give {count} blocks")
    if table.size > MAX_GATHER:
        raise b.unsupported(f"Col2Im onto {image} (too large)")
    c = channels // kernel
    dtype = np.dtype(b.dtype(0))
    x = b.emit(relay.ReshapeOp(b.input(0), newshape=(n, c, kernel * length)))
    zero = b.constant(np.zeros((n, c, 1), dtype))
    x = b.emit(relay.ConcatenateOp(x, zero, axis=2))
    picked = b.emit(relay.TakeOp(x, b.constant(table), axis=2))  # [n, c, P, T]
    total = b.emit(relay.SumOp(picked, axis=(3,)))
    return b.emit(relay.ReshapeOp(total, newshape=(n, c, *image)))


@onnx_op("MaxUnpool", since=9)
def max_unpool(b: Node) -> SSAValue:
    shape = b.static_shape(0, "MaxUnpool")
    if b.static_shape(1, "MaxUnpool indices") != shape:
        raise b.error(f"indices {b.shape(1)} do not match the input {list(shape)}")
    kernel = list(b.attr("kernel_shape"))
    dims = len(kernel)
    if len(shape) != dims + 2:
        raise b.error(f"a {dims}-d kernel for a rank-{len(shape)} input")
    strides = list(b.attr("strides", [1] * dims))
    pads = list(b.attr("pads", [0] * 2 * dims))
    inferred = list(shape[:2]) + [
        (shape[d + 2] - 1) * strides[d] - (pads[d] + pads[dims + d]) + kernel[d]
        for d in range(dims)
    ]
    out = inferred
    if b.has_input(2):
        out = [int(v) for v in np.asarray(b.const(2)).reshape(-1)]
        if len(out) != len(inferred) or any(o < i for o, i in zip(out, inferred)):
            raise b.error(f"output_shape {out} is smaller than the inferred {inferred}")
    dtype = np.dtype(b.dtype(0))
    count = math.prod(shape)
    values = b.emit(relay.ReshapeOp(b.input(0), newshape=(count, 1)))
    positions = b.emit(relay.ReshapeOp(b.input(1), newshape=(count,)))
    if b.dtype(1) != np.int64:
        positions = b.emit(relay.CastOp(positions, dtype=element_type(np.int64)))
    zeros = b.constant(np.zeros((math.prod(inferred), 1), dtype))
    y = scatter_rows(b, zeros, positions, values, "none")
    y = b.emit(relay.ReshapeOp(y, newshape=inferred))
    if out != inferred:
        widths = [w for o, i in zip(out, inferred) for w in (0, o - i)]
        y = b.emit(relay.PadOp(y, pad_width=widths))
    return y
