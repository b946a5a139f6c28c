"""Lowerings of dialects/relay/nn.py.

Window ops (conv, pool) pad their input first (a fill, then a copy into its interior),
then run one linalg.generic whose maps are plain affine: every loop dimension appears alone
in some operand's map, so loop bounds follow from shapes. Grouped convolutions view data, weight
and result with an explicit group axis (reshapes are free views); pools and lrn take a
window-shaped dummy operand that carries the window's bounds, as MLIR's pooling ops do.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, f32
from xdsl.ir import Attribute, Region, SSAValue
from xdsl.ir.affine import AffineExpr
from xrelay.dialects import relay
from xrelay.dialects.dims import Dim
from xrelay.dialects.dims import equal as dim_equal
from xrelay.dialects.dims import prod as dim_prod
from xrelay.dialects.dtypes import numpy_dtype
from xrelay.lowering.dynamic_sizes import DynamicUnsupported
from xrelay.lowering.relay_to_linalg.builder import (
    Body,
    Emitter,
    accumulator_type,
    amap,
    dims,
    identity,
    is_float,
    result_shape,
    shape_of,
)
from xrelay.lowering.relay_to_linalg.reduce import count_value, lowest, reduce_into

CONV_UNROLLED = 25  # convolutions with up to this many products per output: one loop
POOL_UNROLLED = 16  # pooling windows up to this many values: one loop, the window unrolled
LRN_UNROLLED = 16  # windows up to this size: one elementwise loop, the window unrolled


def view(e: Emitter, value: SSAValue, shape: list[Dim]) -> SSAValue:
    """The same elements in another shape (row-major order kept)."""
    if list(shape_of(value)) == list(shape):
        return value
    return e.reshape(value, shape)


def static_spatial(shape: Sequence[Dim], lead: int = 2) -> None:
    """Window ops take a dynamic batch (and channels); their spatial sizes must be static."""
    if not all(isinstance(d, int) for d in shape[lead:]):
        raise DynamicUnsupported("dynamic spatial dimensions")


def pad_spatial(
    e: Emitter, x: SSAValue, begins: list[int], ends: list[int], fill: float
) -> SSAValue:
    """Pad the trailing len(begins) axes of x with `fill` (ends may include ceil-mode cells):
    a fill, then a copy of x into it at the offsets (unit-stride loops on both sides; a
    select per element with clamped reads made LLVM gather). Negative widths (a
    convolution's padding that crops) keep the select form."""
    if not any(begins) and not any(ends):
        return x
    shape = list(shape_of(x))
    lead = len(shape) - len(begins)
    static_spatial(shape, lead)
    out = shape[:lead] + [s + b + t for s, b, t in zip(shape[lead:], begins, ends)]
    elem = x.type.element_type
    if min(*begins, *ends) >= 0:
        rank = len(shape)
        d = dims(rank)
        y = _fill_border(e, e.empty(out, elem), shape, begins, ends, fill)
        at = amap(rank, [d[i] + (begins[i - lead] if i >= lead else 0) for i in range(rank)])
        (y,) = e.generic([x], [identity(rank)], [y], [at], ["parallel"] * rank, lambda b: b.args[0])
        return y

    def body(b: Body) -> SSAValue:
        idx = [b.idx(k) for k in range(len(shape))]
        ok = None
        src = list(idx[:lead])
        for j, begin in enumerate(begins):
            i = b.affine([(1, idx[lead + j])], -begin)
            inside = b.in_range(i, shape[lead + j])
            ok = inside if ok is None else b.binary("and", ok, inside)
            src.append(b.clamp(i, shape[lead + j]))
        value = b.extract(x, src)
        assert ok is not None
        return b.select(ok, value, b.const(fill, elem))

    return e.map([], out, elem, body)


def _fill_border(
    e: Emitter, y: SSAValue, shape: list[Dim], begins: list[int], ends: list[int], fill: float
) -> SSAValue:
    """Write `fill` into the padding of y (x's `shape` padded by begins/ends on its trailing
    axes) and nowhere else: per padded axis k, the slabs before and after x along k, within
    x's extent on the padded axes before k and whole along those after (disjoint boxes
    covering the border once). Each slab is a generic over a dummy operand of its shape
    writing y at its offsets, so the interior is written once, by the copy that follows."""
    lead = len(shape) - len(begins)
    rank = len(shape)
    d = dims(rank)
    elem = y.type.element_type
    out = [*shape[:lead], *(s + b + t for s, b, t in zip(shape[lead:], begins, ends))]
    for k in range(len(begins)):
        inner = [shape[lead + j] for j in range(k)]
        outer = out[lead + k + 1 :]
        for width, start in ((begins[k], 0), (ends[k], begins[k] + shape[lead + k])):
            if width == 0:
                continue
            box = [*shape[:lead], *inner, width, *outer]
            offsets = [0] * lead + begins[:k] + [start] + [0] * len(outer)
            # a plain loop dimension must span its whole axis (the verifier's rule), so a
            # box starting at 0 on a padded axis it does not fill runs that axis backwards
            at = amap(
                rank,
                [
                    d[i] * -1 + (box[i] - 1)
                    if i >= lead and not offsets[i] and box[i] != out[i]
                    else d[i] + offsets[i]
                    for i in range(rank)
                ],
            )
            (y,) = e.generic(
                [e.empty(box, elem)],
                [identity(rank)],
                [y],
                [at],
                ["parallel"] * rank,
                lambda b: b.const(fill, elem),
            )
    return y


def _check_layout(e: Emitter, actual: str, expected: str, what: str) -> None:
    if actual != expected:
        raise e.error(f"{what} '{actual}' (only {expected} is lowered)")


def lower_conv(e: Emitter, op) -> SSAValue:
    a = op.attrs
    spatial = op.SPATIAL
    n_sp = len(spatial)
    _check_layout(e, a.data_layout, "NC" + spatial, "data_layout")
    _check_layout(e, a.kernel_layout, "OI" + spatial, "kernel_layout")
    x_shape, w_shape = list(shape_of(op.data)), list(shape_of(op.weight))
    static_spatial(x_shape)
    out_t = op.results[0].type
    out_shape = list(result_shape(op))
    elem = out_t.element_type
    groups = a.groups
    n = x_shape[0]
    o_all, c = w_shape[:2]
    o = o_all // groups
    kernel = w_shape[2:]
    windowed = is_float(elem) and c * math.prod(kernel) <= CONV_UNROLLED
    # a window loop with stride 2 along rows reads its columns from two halves, the even
    # and the odd columns of the padded input (unit stride: strided reads were gathers)
    halves = windowed and n_sp == 2 and a.strides[1] == 2 and a.dilation[1] == 1
    ends = list(a.padding[n_sp:])
    if halves and (x_shape[3] + a.padding[1] + ends[1]) % 2:
        ends[1] += 1  # an even padded width, so both halves have the same length
    x = pad_spatial(e, op.data, list(a.padding[:n_sp]), ends, 0)
    padded = list(shape_of(x))
    x = view(e, x, [n, groups, c, *padded[2:]])
    w = view(e, op.weight, [groups, o, c, *kernel])
    if windowed:
        # few products per output (depthwise convolutions): one loop over the output whose
        # body reads them all (the weights are invariant along the innermost, vectorized
        # loop); the output is written once instead of once per product
        acc_elem = accumulator_type(elem)
        parts = _column_halves(e, x) if halves else None

        def read(b: Body, ni, gi, ci, sp, offs) -> SSAValue:
            if parts is not None:
                row = b.affine([(a.strides[0], sp[0])], offs[0] * a.dilation[0])
                col = b.affine([(1, sp[1])], offs[1] // 2)
                return b.extract(parts[offs[1] % 2], [ni, gi, ci, row, col])
            where = [
                b.affine([(a.strides[i], sp[i])], offs[i] * a.dilation[i]) for i in range(n_sp)
            ]
            return b.extract(x, [ni, gi, ci, *where])

        def window_body(b: Body) -> SSAValue:
            ni, gi, oi, *sp = (b.idx(k) for k in range(3 + n_sp))
            acc = b.const(0, acc_elem)
            for ci in range(c):
                for offs in itertools.product(*(range(k) for k in kernel)):
                    xv = b.cast(read(b, ni, gi, b.iconst(ci), sp, offs), acc_elem)
                    wv = b.extract(w, [gi, oi, b.iconst(ci), *(b.iconst(k) for k in offs)])
                    acc = b.binary("add", acc, b.binary("mul", xv, b.cast(wv, acc_elem)))
            return b.cast(acc, elem) if acc_elem != elem else acc

        y = e.map([], [n, groups, o, *out_shape[2:]], elem, window_body)
        return view(e, y, out_shape)
    # loops: n, g, o, c, *kernel, *out spatial: the innermost loop runs along an output row
    # (unit stride in the output, stride `strides[-1]` in the input), which LLVM vectorizes
    rank = 3 + n_sp + 1 + n_sp
    d = dims(rank)
    ln, lg, lo = d[0], d[1], d[2]
    lc = d[3]
    lk = d[4 : 4 + n_sp]
    lsp = d[4 + n_sp :]
    x_map = amap(
        rank, [ln, lg, lc, *[lsp[i] * a.strides[i] + lk[i] * a.dilation[i] for i in range(n_sp)]]
    )
    w_map = amap(rank, [lg, lo, lc, *lk])
    out_map = amap(rank, [ln, lg, lo, *lsp])
    iterators = ["parallel"] * 3 + ["reduction"] * (1 + n_sp) + ["parallel"] * n_sp
    y = e.accumulate(
        [x, w],
        [x_map, w_map],
        [n, groups, o, *out_shape[2:]],
        out_map,
        iterators,
        elem,
        0,
        multiply_add,
    )
    return view(e, y, out_shape)


def _column_halves(e: Emitter, x: SSAValue) -> tuple[SSAValue, SSAValue]:
    """The even and the odd columns of x (its last axis, of even length), in one loop that
    reads each pair of columns once (LLVM loads whole vectors and shuffles them apart)."""
    shape = list(shape_of(x))
    # rows one after another: an even row length keeps each pair within its row, and the
    # loop runs over whole planes (a half row is too short to vectorize)
    x = view(e, x, [*shape[:-2], shape[-2] * shape[-1]])
    half = [*shape[:-2], shape[-2] * shape[-1] // 2]
    rank = len(half)
    elem = x.type.element_type

    def split(b: Body) -> list[SSAValue]:
        *lead, j = (b.idx(k) for k in range(rank))
        return [b.extract(x, [*lead, b.affine([(2, j)], k)]) for k in (0, 1)]

    even, odd = e.generic(
        [],
        [],
        [e.empty(half, elem), e.empty(half, elem)],
        [identity(rank), identity(rank)],
        ["parallel"] * rank,
        split,
    )
    rows = [*shape[:-1], shape[-1] // 2]
    return view(e, even, rows), view(e, odd, rows)


def _loop(b: Body, count: int, acc: SSAValue, step: Callable[..., SSAValue]) -> SSAValue:
    """scf.for i in [0, count) carrying `acc`; `step(body, i, acc)` gives the next acc."""
    inner = Body([IndexType(), acc.type])
    iv, carried = inner.args
    inner.block.add_op(scf.YieldOp(step(inner, iv, carried)))
    return b.add(scf.ForOp(b.iconst(0), b.iconst(count), b.iconst(1), [acc], Region(inner.block)))


def fused_conv2d(
    e: Emitter,
    x: SSAValue,
    w: SSAValue,
    bias: SSAValue,
    strides: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
    out_shape: Sequence[int],
    relu: bool,
) -> SSAValue:
    """NCHW/OIHW f32 conv + bias (+ relu) as one linalg.generic with only parallel
    iterators: each output element starts from its bias, sums over its input channels and
    window in nested scf.for loops, and is written once.

        out[n, o, y, x] = [relu](bias[o] + sum over c, i, j of
                                 xpad[n, g*C + c, y*sy + i*dy, x*sx + j*dx] * w[o, c, i, j])
    """
    xp = pad_spatial(e, x, list(padding[:2]), list(padding[2:]), 0.0)
    o_all, c, kh, kw = w.type.get_shape()
    per_group = o_all // groups
    (sh, sw), (dh, dw) = strides, dilation

    def body(b: Body) -> SSAValue:
        n, o, y, xo = (b.idx(k) for k in range(4))
        base = b.add(arith.MuliOp(b.add(arith.DivUIOp(o, b.iconst(per_group))), b.iconst(c)))
        y0 = b.add(arith.MuliOp(y, b.iconst(sh)))
        x0 = b.add(arith.MuliOp(xo, b.iconst(sw)))

        def channel(bc: Body, ci: SSAValue, acc: SSAValue) -> SSAValue:
            cin = bc.add(arith.AddiOp(base, ci))

            def row(br: Body, i: SSAValue, acc: SSAValue) -> SSAValue:
                yi = br.add(arith.AddiOp(y0, br.add(arith.MuliOp(i, br.iconst(dh)))))

                def col(bk: Body, j: SSAValue, acc: SSAValue) -> SSAValue:
                    xi = bk.add(arith.AddiOp(x0, bk.add(arith.MuliOp(j, bk.iconst(dw)))))
                    xv = bk.extract(xp, [n, cin, yi, xi])
                    wv = bk.extract(w, [o, ci, i, j])
                    return bk.binary("add", acc, bk.binary("mul", xv, wv))

                return _loop(br, kw, acc, col)

            return _loop(bc, kh, acc, row)

        total = _loop(b, c, b.args[0], channel)
        if relu:
            total = b.add(arith.MaximumfOp(total, b.const(0.0, f32)))
        return total

    rank = 4
    (y,) = e.generic(
        [bias],
        [amap(rank, [dims(rank)[1]])],
        [e.empty(out_shape, f32)],
        [identity(rank)],
        ["parallel"] * rank,
        body,
    )
    return y


def lower_conv2d_bias(e: Emitter, op: relay.Conv2DBiasOp) -> SSAValue:
    if op.result.type.element_type != f32:
        raise e.error(f"element type {op.result.type.element_type} (only f32 is lowered)")
    a = op.attrs
    out_shape = list(op.result.type.get_shape())
    return fused_conv2d(
        e, op.data, op.weight, op.bias, a.strides, a.padding, a.dilation, a.groups, out_shape, False
    )


def multiply_add(b: Body, acc: SSAValue, x: SSAValue, w: SSAValue) -> SSAValue:
    return b.binary("add", acc, b.binary("mul", x, w))


def lower_conv2d_transpose(e: Emitter, op: relay.Conv2DTransposeOp) -> SSAValue:
    """out[n, g, o, y, x] = sum over c, kh, kw of data[n, g*C + c, iy, ix] * w[g, c, o, kh, kw]
    where y + pad_top - kh * dil = iy * stride (likewise x) and iy, ix are inside."""
    a = op.attrs
    _check_layout(e, a.data_layout, "NCHW", "data_layout")
    _check_layout(e, a.kernel_layout, "IOHW", "kernel_layout")
    n, c_all, h, wd = shape_of(op.data)
    w_shape = list(shape_of(op.weight))
    groups = a.groups
    c, o = c_all // groups, w_shape[1]
    kh, kw = w_shape[2:]
    out_shape = list(op.results[0].type.get_shape())
    elem = op.results[0].type.element_type
    w = view(e, op.weight, [groups, c, o, kh, kw])
    rank = 8  # n, g, o, y, x, c, kh, kw
    d = dims(rank)
    w_map = amap(rank, [d[1], d[5], d[2], d[6], d[7]])
    out_map = amap(rank, [d[0], d[1], d[2], d[3], d[4]])

    def body(b: Body, total: SSAValue, weight: SSAValue) -> SSAValue:
        ok = None
        src = []
        for axis, (loop, kloop, size) in enumerate(((3, 6, h), (4, 7, wd))):
            stride, dil, pad = a.strides[axis], a.dilation[axis], a.padding[axis]
            num = b.affine([(1, b.idx(loop)), (-dil, b.idx(kloop))], pad)
            q = b.add(arith.FloorDivSIOp(num, b.iconst(stride)))
            exact = b.cmp("eq", b.affine([(stride, q)]), num)
            inside = b.binary("and", exact, b.in_range(q, size))
            ok = inside if ok is None else b.binary("and", ok, inside)
            src.append(b.clamp(q, size))
        channel = b.affine([(c, b.idx(1)), (1, b.idx(5))])
        value = b.cast(b.extract(op.data, [b.idx(0), channel, *src]), total.type)
        assert ok is not None
        term = b.select(ok, b.binary("mul", value, weight), b.const(0, total.type))
        return b.binary("add", total, term)

    iterators = ["parallel"] * 5 + ["reduction"] * 3
    y = e.accumulate(
        [w], [w_map], [n, groups, o, *out_shape[2:]], out_map, iterators, elem, 0, body
    )
    return view(e, y, out_shape)


def swap_last_axes(e: Emitter, value: SSAValue) -> SSAValue:
    """A copy of `value` with its last two axes swapped."""
    shape = list(shape_of(value))
    rank = len(shape)
    d = dims(rank)
    in_map = amap(rank, [*d[:-2], d[-1], d[-2]])
    out_shape = [*shape[:-2], shape[-1], shape[-2]]
    return e.map([value], out_shape, value.type.element_type, lambda b: b.args[0], [in_map])


def lower_dense(e: Emitter, op: relay.DenseOp) -> SSAValue:
    """x [..., K] times w [N, K]^T. The weight is transposed to [K, N] first, so the loops
    (..., k, n) end in a unit-stride parallel loop over n that LLVM vectorizes."""
    x_shape = list(shape_of(op.data))
    units = shape_of(op.weight)[0]
    out_shape = x_shape[:-1] + [units]
    elem = op.results[0].type.element_type
    lead = len(x_shape) - 1
    rank = lead + 2  # *lead, k, n
    d = dims(rank)
    w_kn = swap_last_axes(e, op.weight)
    x_map = amap(rank, [*d[:lead], d[lead]])
    w_map = amap(rank, [d[lead], d[lead + 1]])
    out_map = amap(rank, [*d[:lead], d[lead + 1]])
    return e.accumulate(
        [op.data, w_kn],
        [x_map, w_map],
        out_shape,
        out_map,
        ["parallel"] * lead + ["reduction", "parallel"],
        elem,
        0,
        multiply_add,
    )


def lower_matmul(e: Emitter, op) -> SSAValue:
    """matmul and batch_matmul: loops (batch?), m, k, n, so the innermost loop runs over n
    with unit stride in the rhs and the output (a transposed rhs is copied to [k, n] first);
    a batch of 1 is read at index 0."""
    out_t = op.results[0].type
    out_shape = list(result_shape(op))
    batched = isinstance(op, relay.BatchMatmulOp)
    rank = 4 if batched else 3
    d = dims(rank)
    bdim: list[AffineExpr | int] = [d[0]] if batched else []
    m, k, nn = d[rank - 3 :]
    rhs = swap_last_axes(e, op.rhs) if op.attrs.transpose_b else op.rhs

    def operand_map(value: SSAValue, rows: AffineExpr, cols: AffineExpr, transpose: bool):
        batch = bdim
        if batched and shape_of(value)[0] == 1 and out_shape[0] != 1:
            batch = [0]
        elif batched and not dim_equal(shape_of(value)[0], out_shape[0]):
            raise DynamicUnsupported("a dynamic batch broadcast in a batch_matmul")
        pair = [cols, rows] if transpose else [rows, cols]
        return amap(rank, [*batch, *pair])

    lhs_map = operand_map(op.lhs, m, k, op.attrs.transpose_a)
    rhs_map = operand_map(rhs, k, nn, False)
    out_map = amap(rank, [*bdim, m, nn])
    return e.accumulate(
        [op.lhs, rhs],
        [lhs_map, rhs_map],
        out_shape,
        out_map,
        ["parallel"] * (rank - 2) + ["reduction", "parallel"],
        out_t.element_type,
        0,
        multiply_add,
    )


def _along(rank: int, axis: int) -> Attribute:
    return amap(rank, [dims(rank)[axis]])


def lower_bias_add(e: Emitter, op: relay.BiasAddOp) -> SSAValue:
    out = op.results[0].type
    rank = len(out.get_shape())
    maps = [identity(rank), _along(rank, op.attrs.axis % rank)]
    return e.map(
        [op.data, op.bias],
        result_shape(op),
        out.element_type,
        lambda b: b.binary("add", *b.args[:2]),
        maps,
    )


def lower_batch_norm(e: Emitter, op: relay.BatchNormOp) -> SSAValue:
    out = op.results[0].type
    elem = out.element_type
    rank = len(out.get_shape())
    vec = _along(rank, op.attrs.axis % rank)
    maps = [identity(rank), vec, vec, vec, vec]

    def body(b: Body) -> SSAValue:
        x, gamma, beta, mean, var = b.args[:5]
        inv = b.unary("rsqrt", b.binary("add", var, b.const(op.attrs.epsilon, elem)))
        return b.binary(
            "add", b.binary("mul", b.binary("mul", b.binary("sub", x, mean), inv), gamma), beta
        )

    operands = [op.data, op.gamma, op.beta, op.moving_mean, op.moving_var]
    return e.map(operands, result_shape(op), elem, body, maps)


def _normalize_over(e: Emitter, x: SSAValue, axes: list[int]) -> tuple[SSAValue, SSAValue]:
    """(mean, variance) of x over axes, kept as size-1 axes."""
    shape = list(shape_of(x))
    elem = x.type.element_type
    count = dim_prod(shape[a] for a in axes)
    total = reduce_into(e, x, axes, True, 0, "add")
    kept = shape_of(total)
    mean = e.map(
        [total], kept, elem, lambda b: b.binary("div", b.args[0], count_value(e, b, count, elem))
    )

    def squared_deviation(b: Body) -> SSAValue:
        deviation = b.binary("sub", b.args[0], b.args[1])
        return b.binary("mul", deviation, deviation)

    centered_sq = e.map([x, mean], shape, elem, squared_deviation)
    var_total = reduce_into(e, centered_sq, axes, True, 0, "add")
    var = e.map(
        [var_total],
        kept,
        elem,
        lambda b: b.binary("div", b.args[0], count_value(e, b, count, elem)),
    )
    return mean, var


def lower_layer_norm(e: Emitter, op: relay.LayerNormOp) -> SSAValue:
    out = op.results[0].type
    shape = list(result_shape(op))
    elem = out.element_type
    rank = len(shape)
    axis = op.attrs.axis % rank
    mean, var = _normalize_over(e, op.data, list(range(axis, rank)))
    d = dims(rank)
    trailing = amap(rank, d[axis:])
    maps = [
        identity(rank),
        amap(rank, [*d[:axis], *[0] * (rank - axis)]),
        amap(rank, [*d[:axis], *[0] * (rank - axis)]),
        trailing,
        trailing,
    ]

    def body(b: Body) -> SSAValue:
        x, m, v, gamma, beta = b.args[:5]
        inv = b.unary("rsqrt", b.binary("add", v, b.const(op.attrs.epsilon, elem)))
        return b.binary(
            "add", b.binary("mul", b.binary("mul", b.binary("sub", x, m), inv), gamma), beta
        )

    return e.map([op.data, mean, var, op.gamma, op.beta], shape, elem, body, maps)


def _lrn_power(b: Body, s: SSAValue, beta: float) -> SSAValue:
    """s ** beta; square roots for the usual exponents (a scalar powf call per element
    otherwise keeps the loop from vectorizing)."""
    if beta == 1.0:
        return s
    if beta == 0.5:
        return b.unary("sqrt", s)
    if beta == 0.75:  # s^(1/2) * s^(1/4)
        root = b.unary("sqrt", s)
        return b.binary("mul", root, b.unary("sqrt", root))
    return b.binary("pow", s, b.const(beta, s.type))


def lower_lrn(e: Emitter, op: relay.LRNOp) -> SSAValue:
    """x / (bias + alpha/size * sum of squares over the window) ** beta. Small windows are
    one loop whose body reads the window's values (the innermost loop runs along the
    last axis, contiguous, and vectorizes); larger ones reduce over the window first."""
    a = op.attrs
    out = op.results[0].type
    shape = list(result_shape(op))
    elem = out.element_type
    rank = len(shape)
    axis = a.axis % rank
    size = e.size_value(shape[axis])
    before = (a.size - 1) // 2
    if a.size <= LRN_UNROLLED:
        acc_elem = accumulator_type(elem)

        def fused(b: Body) -> SSAValue:
            idx = [b.idx(k) for k in range(rank)]
            total = b.const(0, acc_elem)
            for w in range(a.size):
                i = b.affine([(1, idx[axis])], w - before)
                value = b.extract(op.data, [*idx[:axis], b.clamp(i, size), *idx[axis + 1 :]])
                value = b.cast(value, acc_elem)
                square = b.select(
                    b.in_range(i, size), b.binary("mul", value, value), b.const(0, acc_elem)
                )
                total = b.binary("add", total, square)
            s = b.cast(total, elem) if acc_elem != elem else total
            scaled = b.binary(
                "add", b.const(a.bias, elem), b.binary("mul", s, b.const(a.alpha / a.size, elem))
            )
            return b.binary("div", b.args[0], _lrn_power(b, scaled, a.beta))

        return e.map([op.data], shape, elem, fused)
    window = e.empty([a.size], elem)
    d = dims(rank + 1)  # x dims, then the window position

    def sum_body(b: Body, acc: SSAValue, _window: SSAValue) -> SSAValue:
        idx = [b.idx(k) for k in range(rank)]
        i = b.affine([(1, idx[axis]), (1, b.idx(rank))], -before)
        value = b.extract(op.data, [*idx[:axis], b.clamp(i, size), *idx[axis + 1 :]])
        value = b.cast(value, acc.type)
        square = b.select(b.in_range(i, size), b.binary("mul", value, value), b.const(0, acc.type))
        return b.binary("add", acc, square)

    sums = e.accumulate(
        [window],
        [amap(rank + 1, [d[rank]])],
        shape,
        amap(rank + 1, d[:rank]),
        ["parallel"] * rank + ["reduction"],
        elem,
        0,
        sum_body,
    )

    def final(b: Body) -> SSAValue:
        x, s = b.args[:2]
        scaled = b.binary(
            "add", b.const(a.bias, elem), b.binary("mul", s, b.const(a.alpha / a.size, elem))
        )
        return b.binary("div", x, _lrn_power(b, scaled, a.beta))

    return e.map([op.data, sums], shape, elem, final)


def _pool_padding(op) -> tuple[list[int], list[int]]:
    """Begin and end padding of a pool's input, ends including the cells ceil mode reads."""
    a = op.attrs
    n_sp = len(op.SPATIAL)
    in_sp = shape_of(op.data)[2:]
    out_sp = op.results[0].type.get_shape()[2:]
    ends = []
    for i in range(n_sp):
        span = a.dilation[i] * (a.pool_size[i] - 1) + 1
        need = (out_sp[i] - 1) * a.strides[i] + span
        ends.append(max(a.padding[n_sp + i], need - in_sp[i] - a.padding[i]))
    return list(a.padding[:n_sp]), ends


def _taps_within(out: int, pool: int, stride: int, dilation: int, lo: int, hi: int) -> np.ndarray:
    """For each of `out` windows along one padded axis (window o's taps at
    o * stride + k * dilation), how many taps fall in [lo, hi)."""
    taps = np.arange(out)[:, None] * stride + np.arange(pool)[None, :] * dilation
    return ((taps >= lo) & (taps < hi)).sum(axis=1)


def avg_pool_divisors(op) -> np.ndarray:
    """What an average pool divides each output cell's sum by, over the output's spatial
    shape: the taps on input cells, plus those on explicit padding if count_include_pad
    (never the cells only ceil mode reads), at least 1. A window is a box, so its count is
    the product of per-axis counts."""
    a = op.attrs
    n_sp = len(op.SPATIAL)
    in_sp = shape_of(op.data)[2:]
    out_sp = op.results[0].type.get_shape()[2:]
    total = np.ones((), np.int64)
    for i in range(n_sp):
        before, after = a.padding[i], a.padding[n_sp + i]
        lo, hi = before, before + in_sp[i]  # the input's own cells, in padded coordinates
        if a.count_include_pad:
            lo, hi = 0, hi + after
        counts = _taps_within(out_sp[i], a.pool_size[i], a.strides[i], a.dilation[i], lo, hi)
        total = np.multiply.outer(total, counts)
    return np.maximum(total, 1)


def lower_pool(e: Emitter, op) -> SSAValue:
    a = op.attrs
    n_sp = len(op.SPATIAL)
    _check_layout(e, a.layout, "NC" + op.SPATIAL, "layout")
    static_spatial(shape_of(op.data))
    out = op.results[0].type
    out_shape = list(result_shape(op))
    elem = out.element_type
    is_max = isinstance(op, relay.MaxPool1DOp | relay.MaxPool2DOp | relay.MaxPool3DOp)
    begins, ends = _pool_padding(op)
    kind = "max" if is_max else "add"
    fill = lowest(elem) if is_max else 0
    if n_sp == 2 and min(a.pool_size) > 1 and max(a.pool_size) <= POOL_UNROLLED:
        y = _pool_separable(e, op, out_shape, elem, is_max, begins, ends)
    elif math.prod(a.pool_size) <= POOL_UNROLLED:
        x = pad_spatial(e, op.data, begins, ends, fill)
        # one loop over the output, the window's reads unrolled in its body: each is affine
        # in the output position (unit stride along a row for stride 1), so the innermost
        # loop vectorizes and the result is written once
        acc_elem = elem if is_max else accumulator_type(elem)

        def window_body(b: Body) -> SSAValue:
            n, c, *sp_idx = (b.idx(k) for k in range(2 + n_sp))
            acc = None
            for offsets in itertools.product(*(range(k) for k in a.pool_size)):
                index = [
                    b.affine([(a.strides[i], sp_idx[i])], offsets[i] * a.dilation[i])
                    for i in range(n_sp)
                ]
                value = b.cast(b.extract(x, [n, c, *index]), acc_elem)
                acc = value if acc is None else b.binary(kind, acc, value)
            assert acc is not None
            return b.cast(acc, elem) if acc_elem != elem else acc

        y = e.map([], out_shape, elem, window_body)
    else:
        y = _pool_loops(e, op, pad_spatial(e, op.data, begins, ends, fill), kind, out_shape, elem)
    if is_max:
        return y
    divisors = e.constant(avg_pool_divisors(op).astype(numpy_dtype(elem)))
    rank_out = 2 + n_sp
    maps = [identity(rank_out), amap(rank_out, dims(rank_out)[2:])]
    return e.map([y, divisors], out_shape, elem, lambda b: b.binary("div", *b.args[:2]), maps)


def _pool_separable(
    e: Emitter, op, out_shape: list, elem, is_max: bool, begins: list, ends: list
) -> SSAValue:
    """A 2-D pool as two 1-D passes (a window is a box): down the rows of the unpadded
    input into [N, C, OH, padded W] (interior columns; the padding's columns are filled),
    then along each output row. Each pass reads kh or kw values per result instead of
    kh * kw, the first at unit stride whatever the stride, and the input is never copied
    into a padded buffer: a row tap outside the input (the same for a whole row, so the
    loop still vectorizes) reads a clamped row and selects the padding's value."""
    a = op.attrs
    x = op.data
    kind, acc_elem = ("max", elem) if is_max else ("add", accumulator_type(elem))
    fill = lowest(acc_elem) if is_max else 0
    (sh, sw), (dh, dw), (kh, kw) = a.strides, a.dilation, a.pool_size
    n_, c_, h, w = shape_of(x)
    oh = out_shape[2]

    def down(b: Body) -> SSAValue:
        n, c, i, j = (b.idx(k) for k in range(4))
        acc = None
        for t in range(kh):
            row = b.affine([(sh, i)], t * dh - begins[0])
            if t * dh - begins[0] >= 0 and (oh - 1) * sh + t * dh - begins[0] < h:
                value = b.cast(b.extract(x, [n, c, row, j]), acc_elem)
            else:
                value = b.cast(b.extract(x, [n, c, b.clamp(row, h), j]), acc_elem)
                value = b.select(b.in_range(row, h), value, b.const(fill, acc_elem))
            acc = value if acc is None else b.binary(kind, acc, value)
        assert acc is not None
        return acc

    # the interior's first column in the partial rows: the padding's (or 1 when there is
    # padding after only: a plain loop dimension may not stop short of its axis)
    lo = begins[1] if begins[1] or not ends[1] else 1
    rows = [n_, c_, oh, w]
    partial = e.empty([n_, c_, oh, lo + w + ends[1]], acc_elem)
    partial = _fill_border(e, partial, rows, [lo], ends[1:], fill)
    d = dims(4)
    (partial,) = e.generic(
        [e.empty(rows, acc_elem)],  # a dummy operand carrying the loops' sizes
        [identity(4)],
        [partial],
        [amap(4, [d[0], d[1], d[2], d[3] + lo])],
        ["parallel"] * 4,
        down,
    )
    skip = lo - begins[1]

    def along(b: Body) -> SSAValue:
        n, c, i, j = (b.idx(k) for k in range(4))
        acc = None
        for t in range(kw):
            value = b.extract(partial, [n, c, i, b.affine([(sw, j)], t * dw + skip)])
            acc = value if acc is None else b.binary(kind, acc, value)
        assert acc is not None
        return b.cast(acc, elem) if acc_elem != elem else acc

    return e.map([], out_shape, elem, along)


def _pool_loops(e: Emitter, op, x: SSAValue, kind: str, out_shape: list, elem) -> SSAValue:
    """A pool with a large window: a reduction over the window into the output."""
    a = op.attrs
    n_sp = len(op.SPATIAL)
    # loops n, c, *window, *out: the output's spatial loops innermost, so the innermost loop
    # runs along an output row (vectorizable; a window-innermost order has 2-3 iterations)
    rank = 2 + 2 * n_sp
    d = dims(rank)
    win, sp = d[2 : 2 + n_sp], d[2 + n_sp :]
    x_map = amap(
        rank, [d[0], d[1], *[sp[i] * a.strides[i] + win[i] * a.dilation[i] for i in range(n_sp)]]
    )
    window = e.empty(list(a.pool_size), elem)
    return e.accumulate(
        [x, window],
        [x_map, amap(rank, win)],
        out_shape,
        amap(rank, [d[0], d[1], *sp]),
        ["parallel"] * 2 + ["reduction"] * n_sp + ["parallel"] * n_sp,
        elem,
        lowest(elem) if kind == "max" else 0,
        lambda b, acc, value, _window: b.binary(kind, acc, value),
    )


def lower_global_pool(e: Emitter, op) -> SSAValue:
    _check_layout(e, op.attrs.layout, "NCHW", "layout")
    elem = op.results[0].type.element_type
    if isinstance(op, relay.GlobalMaxPool2DOp):
        return reduce_into(e, op.data, [2, 3], True, lowest(elem), "max")
    static_spatial(shape_of(op.data))
    h, w = shape_of(op.data)[2:]
    total = reduce_into(e, op.data, [2, 3], True, 0, "add")
    return e.map(
        [total], shape_of(total), elem, lambda b: b.binary("div", b.args[0], b.const(h * w, elem))
    )


def lower_softmax(e: Emitter, op) -> SSAValue:
    out = op.results[0].type
    shape = list(result_shape(op))
    elem = out.element_type
    axis = op.attrs.axis % len(shape)
    top = reduce_into(e, op.data, [axis], True, lowest(elem), "max")
    exps = e.map(
        [op.data, top], shape, elem, lambda b: b.unary("exp", b.binary("sub", *b.args[:2]))
    )
    total = reduce_into(e, exps, [axis], True, 0, "add")
    if isinstance(op, relay.SoftmaxOp):
        return e.map([exps, total], shape, elem, lambda b: b.binary("div", *b.args[:2]))
    return e.map(
        [op.data, top, total],
        shape,
        elem,
        lambda b: b.binary("sub", b.binary("sub", b.args[0], b.args[1]), b.unary("log", b.args[2])),
    )


def lower_pad(e: Emitter, op: relay.PadOp) -> SSAValue:
    a = op.attrs
    in_shape = list(shape_of(op.data))
    out = op.results[0].type
    elem = out.element_type
    rank = len(in_shape)
    widths = list(a.pad_width)
    padded = [k for k in range(rank) if widths[2 * k] or widths[2 * k + 1]]
    if a.pad_mode == "constant" and padded and min(widths) >= 0:
        first = padded[0]
        if all(isinstance(d, int) for d in in_shape[first:]):
            # the border filled once and the input copied in at unit stride (the select
            # per element below read through clamped indices: 8-bit convolutions' padding
            # took 0.1-0.2 ms a layer)
            return pad_spatial(
                e, op.data, widths[2 * first :: 2], widths[2 * first + 1 :: 2], a.pad_value
            )

    def body(b: Body) -> SSAValue:
        ok = None
        src = []
        for k in range(rank):
            size = in_shape[k]
            i = b.affine([(1, b.idx(k))], -a.pad_width[2 * k])
            if a.pad_mode == "reflect" and size > 1:
                period = b.iconst(2 * (size - 1))
                r = b.add(arith.RemSIOp(i, period))
                r = b.select(b.cmp("lt", r, b.iconst(0)), b.add(arith.AddiOp(r, period)), r)
                mirrored = b.add(arith.SubiOp(period, r))
                i = b.select(b.cmp("lt", r, b.iconst(size)), r, mirrored)
            inside = b.in_range(i, size)
            ok = inside if ok is None else b.binary("and", ok, inside)
            src.append(b.clamp(i, size))
        value = b.extract(op.data, src)
        if a.pad_mode != "constant" or ok is None:
            return value
        return b.select(ok, value, b.const(a.pad_value, elem))

    return e.map([], out.get_shape(), elem, body)


def lower_dropout(e: Emitter, op: relay.DropoutOp) -> SSAValue:
    return op.data


LOWERINGS = {
    relay.Conv1DOp: lower_conv,
    relay.Conv2DOp: lower_conv,
    relay.Conv2DBiasOp: lower_conv2d_bias,
    relay.Conv3DOp: lower_conv,
    relay.Conv2DTransposeOp: lower_conv2d_transpose,
    relay.DenseOp: lower_dense,
    relay.MatmulOp: lower_matmul,
    relay.BatchMatmulOp: lower_matmul,
    relay.BiasAddOp: lower_bias_add,
    relay.BatchNormOp: lower_batch_norm,
    relay.LayerNormOp: lower_layer_norm,
    relay.LRNOp: lower_lrn,
    relay.MaxPool1DOp: lower_pool,
    relay.MaxPool2DOp: lower_pool,
    relay.MaxPool3DOp: lower_pool,
    relay.AvgPool1DOp: lower_pool,
    relay.AvgPool2DOp: lower_pool,
    relay.AvgPool3DOp: lower_pool,
    relay.GlobalAvgPool2DOp: lower_global_pool,
    relay.GlobalMaxPool2DOp: lower_global_pool,
    relay.SoftmaxOp: lower_softmax,
    relay.LogSoftmaxOp: lower_softmax,
    relay.PadOp: lower_pad,
    relay.DropoutOp: lower_dropout,
}

# lowerings that read every shape through shape_of / result_shape and compute with
# dimensions as sympy allows (reductions over dynamic axes count at run time)
DYNAMIC = frozenset(
    {
        lower_dense,
        lower_matmul,
        lower_bias_add,
        lower_layer_norm,
        lower_softmax,
        lower_dropout,
        lower_conv,
        lower_pool,
        lower_global_pool,
        lower_batch_norm,
        lower_lrn,
    }
)
