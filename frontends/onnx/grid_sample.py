"""ONNX GridSample (opset 16 on; 2-d, and N-d from opset 20) from relay elementwise ops and
element gathers, following the ONNX reference (onnx/reference/ops/op_grid_sample.py).

Every output position reads a source coordinate per spatial axis from the grid (its last
axis holds them in reverse axis order: x, y[, z]), denormalized to pixel units in the grid's
type and kept in f32 as the reference keeps them. Nearest rounds half to even; border
padding clamps a coordinate outside the reference's borders, reflection folds it back
(in f64, as the reference does). Each axis then gives its taps: one (nearest), two
(linear) or four (cubic, Keys' a = -0.75), each an index, a weight and, for zero padding,
whether it lies inside; an index outside is clamped (border) or reflected (reflection).
The taps' flat positions gather from the input ([N, C, H*W...] by `relay.gather` along the
flat axis) and their weighted sums nest as the reference's: the last axis innermost.

Shapes must be static (the taps are unrolled at import)."""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dtypes import element_type
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.registry import onnx_op

F32, F64, I64 = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int64)
# mode names: opset 16's, then opset 20's
MODES = {
    "bilinear": "linear",
    "bicubic": "cubic",
    "linear": "linear",
    "cubic": "cubic",
    "nearest": "nearest",
}
CUBIC_ALPHA = -0.75


def _c(b: Node, value: float, dtype: np.dtype) -> SSAValue:
    return b.constant(np.asarray(value, dtype))


def _cast(b: Node, x: SSAValue, dtype: np.dtype) -> SSAValue:
    return b.emit(relay.CastOp(x, dtype=element_type(dtype)))


def _add(b: Node, x: SSAValue, y: SSAValue) -> SSAValue:
    return b.emit(relay.AddOp(x, y))


def _sub(b: Node, x: SSAValue, y: SSAValue) -> SSAValue:
    return b.emit(relay.SubtractOp(x, y))


def _mul(b: Node, x: SSAValue, y: SSAValue) -> SSAValue:
    return b.emit(relay.MultiplyOp(x, y))


def _where(b: Node, cond: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
    return b.emit(relay.WhereOp(cond, x, y))


def _outside(b: Node, x: SSAValue, lo: SSAValue, hi: SSAValue) -> SSAValue:
    return b.emit(relay.LogicalOrOp(b.emit(relay.LessOp(x, lo)), b.emit(relay.GreaterOp(x, hi))))


def reflect(b: Node, x: SSAValue, lo: float, hi: float) -> SSAValue:
    """The reference's `_gs_reflect` on f64 values: x folded into [lo, hi] by reflecting at
    the nearer border until inside (values inside are kept)."""
    lo_c, hi_c, span = _c(b, lo, F64), _c(b, hi, F64), _c(b, hi - lo, F64)
    below = b.emit(relay.LessOp(x, lo_c))
    above = b.emit(relay.GreaterOp(x, hi_c))
    zero = _c(b, 0.0, F64)
    dx = _where(b, below, _sub(b, lo_c, x), _where(b, above, _sub(b, x, hi_c), zero))
    # dx >= 0: the reference's int() is a floor; through i64 rather than relay.floor,
    # as an f64 floor beside an f32 one trips the LLVM intrinsic declaration (clipped
    # where f64 has no more integer precision, so that the cast stays defined)
    quotient = b.emit(relay.ClipOp(b.emit(relay.DivideOp(dx, span)), a_min=0.0, a_max=2.0**53))
    n = _cast(b, quotient, I64)
    r = _sub(b, dx, _mul(b, _cast(b, n, F64), span))
    odd = b.emit(relay.BitwiseAndOp(n, _c(b, 1, I64)))
    even = b.emit(relay.EqualOp(odd, _c(b, 0, I64)))
    # below and n even, or above and n odd: lo + r; else hi - r
    from_lo = b.emit(relay.EqualOp(below, even))
    folded = _where(b, from_lo, _add(b, lo_c, r), _sub(b, hi_c, r))
    return _where(b, b.emit(relay.LogicalOrOp(below, above)), folded, x)


def _cubic_weights(b: Node, t: SSAValue) -> list[SSAValue]:
    """Keys' cubic coefficients of the four taps at distance t in [0, 1) (f32), computed
    in the reference's order of operations."""
    a = CUBIC_ALPHA

    def c(v: float) -> SSAValue:
        return _c(b, v, F32)

    def far(s: SSAValue) -> SSAValue:  # ((a s - 5a) s + 8a) s - 4a
        inner = _sub(b, _mul(b, c(a), s), c(5 * a))
        return _sub(b, _mul(b, _add(b, _mul(b, inner, s), c(8 * a)), s), c(4 * a))

    def near(s: SSAValue) -> SSAValue:  # ((a + 2) s - (a + 3)) s s + 1
        inner = _sub(b, _mul(b, c(a + 2), s), c(a + 3))
        return _add(b, _mul(b, _mul(b, inner, s), s), c(1.0))

    one_minus = _sub(b, c(1.0), t)
    two_minus = _sub(b, c(2.0), t)
    return [far(_add(b, t, c(1.0))), near(t), near(one_minus), far(two_minus)]


class Axis:
    """One spatial axis of the input: its length and the reference's borders."""

    def __init__(self, length: int, align: bool) -> None:
        self.length = length
        self.lo, self.hi = (0.0, length - 1.0) if align else (-0.5, length - 0.5)


def _coordinate(b: Node, g: SSAValue, axis: Axis, align: bool, gtype: np.dtype) -> SSAValue:
    """Denormalized coordinate (f32) of normalized grid values g (of type gtype)."""
    n = axis.length
    plus1 = _add(b, g, _c(b, 1.0, gtype))
    if align:
        x = _mul(b, b.emit(relay.DivideOp(plus1, _c(b, 2.0, gtype))), _c(b, n - 1, gtype))
    else:
        scaled = _sub(b, _mul(b, plus1, _c(b, n, gtype)), _c(b, 1.0, gtype))
        x = b.emit(relay.DivideOp(scaled, _c(b, 2.0, gtype)))
    return x if gtype == F32 else _cast(b, x, F32)


def _bounded(b: Node, x: SSAValue, axis: Axis, padding: str) -> SSAValue:
    """x after the reference's out-of-border handling (border clamps, reflection folds)."""
    if padding == "zeros":
        return x
    if padding == "border":
        lo, hi = _c(b, axis.lo, F32), _c(b, axis.hi, F32)
        clamped = b.emit(relay.ClipOp(x, a_min=0.0, a_max=float(axis.length - 1)))
        return _where(b, _outside(b, x, lo, hi), clamped, x)
    return _cast(b, reflect(b, _cast(b, x, F64), axis.lo, axis.hi), F32)


class Tap:
    """One tap along an axis: index (i64, inside the axis), weight, inside flag (zeros)."""

    def __init__(self, index: SSAValue, weight: SSAValue | None, inside: SSAValue | None):
        self.index, self.weight, self.inside = index, weight, inside


def _tap(b: Node, i: SSAValue, weight: SSAValue | None, axis: Axis, padding: str) -> Tap:
    """The pixel at integer index i (i64) as `_pixel_at_array` reads it."""
    if padding == "reflection":
        folded = reflect(b, _cast(b, i, F64), axis.lo, axis.hi)
        i = _cast(b, folded, I64)  # the reference's int(): toward zero
    inside = None
    if padding == "zeros":
        zero, size = _c(b, 0, I64), _c(b, axis.length, I64)
        inside = b.emit(
            relay.LogicalAndOp(b.emit(relay.GreaterEqualOp(i, zero)), b.emit(relay.LessOp(i, size)))
        )
    index = b.emit(relay.MaximumOp(i, _c(b, 0, I64)))
    index = b.emit(relay.MinimumOp(index, _c(b, axis.length - 1, I64)))
    return Tap(index, weight, inside)


def _index(b: Node, x: SSAValue, axis: Axis) -> SSAValue:
    """Whole-number coordinates x as i64, first clamped a few pixels beyond the axis: far
    outside (zero padding only) every tap stays outside, and the cast stays defined."""
    near = b.emit(relay.ClipOp(x, a_min=-8.0, a_max=float(axis.length + 8)))
    return _cast(b, near, I64)


def axis_taps(b: Node, x: SSAValue, axis: Axis, mode: str, padding: str) -> list[Tap]:
    """The taps of the reference's interpolation (`mode`) at f32 coordinates x."""
    if mode == "nearest":
        return [_tap(b, _index(b, x, axis), None, axis, padding)]
    base = b.emit(relay.FloorOp(x))
    t = _sub(b, x, base)
    i0 = _index(b, base, axis)
    if mode == "linear":
        weights, offsets = [_sub(b, _c(b, 1.0, F32), t), t], [0, 1]
    else:
        weights, offsets = _cubic_weights(b, t), [-1, 0, 1, 2]
    return [
        _tap(b, _add(b, i0, _c(b, k, I64)) if k else i0, w, axis, padding)
        for k, w in zip(offsets, weights)
    ]


MAX_GATHERS = 64


@onnx_op("GridSample", since=16)
def grid_sample(b: Node) -> SSAValue:
    xshape = b.static_shape(0, "GridSample")
    gshape = b.static_shape(1, "GridSample")
    n, c, *spatial = xshape
    k = len(spatial)
    if k < 1 or gshape[0] != n or gshape[-1] != k or len(gshape) != k + 2:
        raise b.error(f"grid {list(gshape)} does not match input {list(xshape)}")
    mode = MODES.get(b.attr("mode", "bilinear" if b.opset < 20 else "linear"))
    padding = b.attr("padding_mode", "zeros")
    if mode is None or padding not in ("zeros", "border", "reflection"):
        raise b.unsupported(f"mode '{b.attr('mode')}' / padding_mode '{padding}'")
    align = bool(b.attr("align_corners", 0))
    out_spatial = list(gshape[1:-1])
    points = math.prod(out_spatial)
    if points == 0 or n * c == 0:
        raise b.unsupported("GridSample with an empty output")
    if padding == "reflection" and align and 1 in spatial:
        raise b.unsupported("reflection padding with align_corners over an axis of length 1")
    taps_per_axis = {"nearest": 1, "linear": 2, "cubic": 4}[mode]
    if taps_per_axis**k > MAX_GATHERS:
        raise b.unsupported(f"{mode} GridSample over {k} axes (more than {MAX_GATHERS} taps)")
    dtype, gtype = np.dtype(b.dtype(0)), np.dtype(b.dtype(1))
    grid = b.emit(relay.ReshapeOp(b.input(1), newshape=(n, points, k)))
    axes = [Axis(length, align) for length in spatial]
    taps = []
    for i, axis in enumerate(axes):
        g = b.emit(relay.StridedSliceOp(grid, begin=[k - 1 - i], end=[k - i], axes=[2]))
        g = b.emit(relay.ReshapeOp(g, newshape=(n, points)))
        x = _coordinate(b, g, axis, align, gtype)
        if mode == "nearest":
            x = b.emit(relay.RoundOp(x))  # half to even, as np.rint
        taps.append(axis_taps(b, _bounded(b, x, axis, padding), axis, mode, padding))
    data = b.emit(relay.ReshapeOp(b.input(0), newshape=(n, c, math.prod(spatial))))
    out = interpolate(b, data, taps, axes, dtype, 0, None, None)
    return b.emit(relay.ReshapeOp(out, newshape=(n, c, *out_spatial)))


def interpolate(
    b: Node,
    data: SSAValue,
    taps: list[list[Tap]],
    axes: list[Axis],
    dtype: np.dtype,
    depth: int,
    flat: SSAValue | None,
    inside: SSAValue | None,
) -> SSAValue:
    """sum_j w_j * (the interpolation over the later axes at tap j of axis `depth`), the
    flat position so far in `flat` and whether every tap so far is inside in `inside`."""
    if depth == len(axes):
        return _gather(b, data, flat, inside, dtype)
    total = None
    for tap in taps[depth]:
        here = tap.index
        if flat is not None:
            here = _add(b, _mul(b, flat, _c(b, axes[depth].length, I64)), here)
        ok = tap.inside
        if inside is not None and ok is not None:
            ok = b.emit(relay.LogicalAndOp(inside, ok))
        elif ok is None:
            ok = inside
        value = interpolate(b, data, taps, axes, dtype, depth + 1, here, ok)
        if tap.weight is None:
            return value
        weight = tap.weight if dtype == F32 else _cast(b, tap.weight, dtype)
        n, points = _shape(weight)
        weight = b.emit(relay.ReshapeOp(weight, newshape=(n, 1, points)))
        term = _mul(b, weight, value)
        total = term if total is None else _add(b, total, term)
    assert total is not None
    return total


def _shape(v: SSAValue) -> list[int]:
    return list(v.type.get_shape())


def _gather(
    b: Node, data: SSAValue, flat: SSAValue, inside: SSAValue | None, dtype: np.dtype
) -> SSAValue:
    """data [N, C, S] at flat positions [N, P] -> [N, C, P], zero where not inside."""
    n, c, _ = _shape(data)
    points = _shape(flat)[1]
    index = b.emit(relay.ReshapeOp(flat, newshape=(n, 1, points)))
    index = b.emit(relay.BroadcastToOp(index, shape=(n, c, points)))
    value = b.emit(relay.GatherOp(data, index, axis=2))
    if inside is None:
        return value
    inside = b.emit(relay.ReshapeOp(inside, newshape=(n, 1, points)))
    return _where(b, inside, value, _c(b, 0, dtype))
