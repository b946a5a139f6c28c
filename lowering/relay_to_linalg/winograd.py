"""Lowerings of the Winograd transforms (`relay.nn.winograd_input` / `winograd_output`,
dialects/relay/nn.py; matrices in dialects/winograd.py).

Each 2-d transform X -> P X Q^T is two 1-d passes, one per side, so an output reads alpha
values, not alpha^2. Every pass is one parallel generic whose innermost loop runs along
contiguous memory (tiles, input columns); its terms are inputs: the matrix coefficient
through a map that is constant along that loop, the value through a shifted map, so the
body is only the multiply-adds.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr
from xrelay.dialects import relay, winograd
from xrelay.dialects.dtypes import numpy_dtype
from xrelay.lowering.relay_to_linalg.builder import (
    Body,
    Emitter,
    amap,
    dims,
    scalar_unary,
    shape_of,
)
from xrelay.lowering.relay_to_linalg.nn import pad_spatial, view


def _transform(
    e: Emitter,
    table: np.ndarray,
    row: int,
    source: SSAValue,
    reads: Sequence[Sequence[AffineExpr | int]],
    shape: list[int],
    extra: Sequence[tuple[SSAValue, Sequence[AffineExpr | int]]] = (),
    finish=None,
) -> SSAValue:
    """out[d...] = sum_j table[d_row, j] * source[reads[j](d...)], then `finish(body, y,
    *extra values)`: a generic over `shape` whose inputs are the table (once per column),
    the source (once per read) and `extra`."""
    rank = len(shape)
    d = dims(rank)
    elem = source.type.element_type
    coeffs = e.constant(table.astype(numpy_dtype(elem)))
    terms = len(reads)
    inputs = [coeffs] * terms + [source] * terms + [v for v, _ in extra]
    maps = [amap(rank, [d[row], j]) for j in range(terms)]
    maps += [amap(rank, r) for r in reads] + [amap(rank, r) for _, r in extra]

    def body(b: Body) -> SSAValue:
        acc = None
        for j in range(terms):
            term = b.binary("mul", b.args[j], b.args[terms + j])
            acc = term if acc is None else b.binary("add", acc, term)
        assert acc is not None
        return acc if finish is None else finish(b, acc, *b.args[2 * terms : len(inputs)])

    return e.map(inputs, shape, elem, body, in_maps=maps)


def lower_winograd_input(e: Emitter, op: relay.WinogradInputOp) -> SSAValue:
    m = op.attrs.tile
    alpha = m + 2
    top, left, _, _ = op.attrs.padding
    n, c, h, w = shape_of(op.data)
    _, _, _, th, tw1 = shape_of(op.result)  # tw1: the tiles of a row and one more
    # padded input: th + 1 rows of tiles (the last only read past the end of the flat
    # column pass below), m * tw1 columns (at least the m * tw + 2 the tiles read)
    hp, wp = (th + 1) * m + 2, tw1 * m
    x = pad_spatial(e, op.data, [top, left], [hp - h - top, wp - w - left], 0)
    bt = winograd.input_transform(m)
    # r[a, n, c, i, col] = sum_y BT[a, y] x[n, c, m*i + y, col]
    a, ni, ci, i, col = dims(5)
    reads = [[ni, ci, i * m + y, col] for y in range(alpha)]
    r = _transform(e, bt, 0, x, reads, [alpha, n, c, th + 1, wp])
    # the rows of one (a, n, c) end to end: tile u = i * tw1 + j reads m*u + x, x < alpha
    # (a generic's loop sizes come from the first operand indexed by the loop alone, so
    # no read may be u alone here: its size is the output's)
    flat = view(e, r, [alpha, n, c, (th + 1) * wp])
    # v[a, b, n, c, u] = sum_x BT[b, x] r[a, n, c, m*u + x]
    a, _, ni, ci, u = dims(5)
    reads = [[a, ni, ci, u * m + xx] for xx in range(alpha)]
    v = _transform(e, bt, 1, flat, reads, [alpha, alpha, n, c, th * tw1])
    return view(e, v, [alpha * alpha, n, c, th, tw1])


def lower_winograd_output(e: Emitter, op: relay.WinogradOutputOp) -> SSAValue:
    m = op.attrs.tile
    alpha = m + 2
    oh, ow = op.attrs.size
    _, n, k, th, tw = shape_of(op.data)
    elem = op.data.type.element_type
    at = winograd.output_transform(m)
    prods = view(e, op.data, [alpha, alpha, n, k, th * tw])
    # s[y, b, n, k, t] = sum_a AT[y, a] M[a, b, n, k, t]
    _, bi, ni, ki, t = dims(5)
    reads = [[term, bi, ni, ki, t] for term in range(alpha)]
    s = _transform(e, at, 0, prods, reads, [m, alpha, n, k, th * tw])
    s = view(e, s, [m, alpha, n, k, th, tw])
    # out[n, k, i, y, j, x] = sum_b AT[x, b] s[y, b, n, k, i, j], row-major [n, k, m*i + y,
    # m*j + x]: the epilogue reads its vectors and residual there unless the crop follows
    attrs = op.attrs
    operands = iter(op.epilogue)
    used = (attrs.scale, attrs.shift, attrs.residual)
    scale, shift, residual = (next(operands) if f else None for f in used)
    cropped = (th * m, tw * m) != (oh, ow)
    ni, ki, i, y, j, xx = dims(6)
    reads = [[y, bb, ni, ki, i, j] for bb in range(alpha)]
    at_out = [ni, ki, i * m + y, j * m + xx]
    extra = [(v, [ki]) for v in (scale, shift) if v is not None]
    extra += [(residual, at_out)] if residual is not None else []
    extra = [] if cropped else extra

    def finish(b: Body, value: SSAValue, *args: SSAValue) -> SSAValue:
        values = iter(args)
        if scale is not None:
            value = b.binary("mul", value, next(values))
        if shift is not None:
            value = b.binary("add", value, next(values))
        if residual is not None:
            value = b.binary("add", value, next(values))
        return scalar_unary(b, "relu", value) if attrs.relu else value

    full = _transform(e, at, 5, s, reads, [n, k, th, m, tw, m], extra, None if cropped else finish)
    out = view(e, full, [n, k, th * m, tw * m])
    if not cropped:
        return out

    def crop(b: Body) -> SSAValue:
        ni, ki, row, col = (b.idx(d) for d in range(4))
        vectors = [
            b.extract(v, [ni, ki, row, col] if v is residual else [ki])
            for v in (scale, shift, residual)
            if v is not None
        ]
        return finish(b, b.extract(out, [ni, ki, row, col]), *vectors)

    return e.map([], [n, k, oh, ow], elem, crop)


LOWERINGS = {
    relay.WinogradInputOp: lower_winograd_input,
    relay.WinogradOutputOp: lower_winograd_output,
}
