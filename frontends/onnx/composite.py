"""ONNX ops with no relay op of their own, composed of relay ops at import time:
RMSNormalization, GroupNormalization, MeanVarianceNormalization, LpNormalization, Trilu,
Hardmax, OneHot, CumSum, CumProd, CenterCropPad, EyeLike, SpaceToDepth, DepthToSpace, and the small activations
(Swish, ThresholdedRelu, Celu, Softsign, Shrink, Mish, HardSwish, IsInf, Sinh, Cosh).
Masks and index ranges are constants for static shapes, and computed at run time along a
dynamic axis (frontends/common.py:arange)."""

from __future__ import annotations

import math

import numpy as np
import onnx
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dims import Dim, equal, fmt_dims, normalize, shape_of
from xrelay.dialects.dtypes import element_type
from xrelay.frontends.common import arange, dim_scalar, matmul_nd
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.registry import onnx_op
from xrelay.frontends.onnx.symbolic import is_symbolic


def _c(b: Node, value: float) -> SSAValue:
    return b.constant(value, b.dtype(0))


def _mean_square_rsqrt(b: Node, x: SSAValue, axes: tuple[int, ...], eps: float) -> SSAValue:
    square = b.emit(relay.MultiplyOp(x, x))
    mean = b.emit(relay.MeanOp(square, axis=axes, keepdims=True))
    return b.emit(relay.RsqrtOp(b.emit(relay.AddOp(mean, _c(b, eps)))))


@onnx_op("RMSNormalization", since=23)
def rms_norm(b: Node) -> SSAValue:
    rank = b.rank(0)
    axis = b.axis(b.attr("axis", -1), rank)
    x = b.input(0)
    inv = _mean_square_rsqrt(b, x, tuple(range(axis, rank)), float(b.attr("epsilon", 1e-5)))
    return b.emit(relay.MultiplyOp(b.emit(relay.MultiplyOp(x, inv)), b.input(1)))


def _standardize(b: Node, x: SSAValue, axes: tuple[int, ...], eps: float) -> SSAValue:
    mean = b.emit(relay.MeanOp(x, axis=axes, keepdims=True))
    centered = b.emit(relay.SubtractOp(x, mean))
    return b.emit(relay.MultiplyOp(centered, _mean_square_rsqrt(b, centered, axes, eps)))


@onnx_op("MeanVarianceNormalization", since=9)
def mean_variance_norm(b: Node) -> SSAValue:
    axes = tuple(b.axis(a, b.rank(0), "axes entry") for a in b.attr("axes", [0, 2, 3]))
    x = b.input(0)
    mean = b.emit(relay.MeanOp(x, axis=axes, keepdims=True))
    centered = b.emit(relay.SubtractOp(x, mean))
    var = b.emit(
        relay.MeanOp(b.emit(relay.MultiplyOp(centered, centered)), axis=axes, keepdims=True)
    )
    return b.emit(
        relay.DivideOp(centered, b.emit(relay.AddOp(b.emit(relay.SqrtOp(var)), _c(b, 1e-9))))
    )


@onnx_op("GroupNormalization", since=21)
def group_norm(b: Node) -> SSAValue:
    shape = list(b.shape(0))
    n, groups = shape[0], b.attr("num_groups")
    (c,) = b.static_dims(shape[1:2], "GroupNormalization channels")
    if c % groups:
        raise b.error(f"{c} channels do not split into {groups} groups")
    grouped = b.emit(relay.ReshapeOp(b.input(0), newshape=(n, groups, -1)))
    normed = _standardize(b, grouped, (2,), float(b.attr("epsilon", 1e-5)))
    normed = b.emit(relay.ReshapeOp(normed, newshape=shape))
    channel = (c,) + (1,) * (len(shape) - 2)
    scale = b.emit(relay.ReshapeOp(b.input(1), newshape=channel))
    bias = b.emit(relay.ReshapeOp(b.input(2), newshape=channel))
    return b.emit(relay.AddOp(b.emit(relay.MultiplyOp(normed, scale)), bias))


@onnx_op("LpNormalization")
def lp_norm(b: Node) -> SSAValue:
    axis = b.axis(b.attr("axis", -1), b.rank(0))
    p = b.attr("p", 2)
    x = b.input(0)
    if p == 1:
        norm = b.emit(relay.SumOp(b.emit(relay.AbsOp(x)), axis=(axis,), keepdims=True))
    elif p == 2:
        norm = b.emit(
            relay.SqrtOp(
                b.emit(relay.SumOp(b.emit(relay.MultiplyOp(x, x)), axis=(axis,), keepdims=True))
            )
        )
    else:
        raise b.unsupported(f"p={p} (only 1 and 2)")
    zero = b.emit(relay.EqualOp(norm, _c(b, 0.0)))
    safe = b.emit(relay.WhereOp(zero, _c(b, 1.0), norm))
    return b.emit(relay.DivideOp(x, safe))


@onnx_op("Trilu", since=14)
def trilu(b: Node) -> SSAValue:
    rows, cols = b.shape(0)[-2:]
    k = int(b.const(1)) if b.has_input(1) else 0
    mask = _index_mask(b, rows, cols, "ge" if b.attr("upper", 1) else "le", k)
    return b.emit(relay.WhereOp(mask, b.input(0), b.constant(0, b.dtype(0))))


# comparisons of a mask's diagonal offset with k: numpy and relay
COMPARE = {
    "eq": (np.equal, relay.EqualOp),
    "ge": (np.greater_equal, relay.GreaterEqualOp),
    "gt": (np.greater, relay.GreaterOp),
    "le": (np.less_equal, relay.LessEqualOp),
    "lt": (np.less, relay.LessOp),
}


def _index_mask(b: Node, rows: Dim, cols: Dim, cmp: str, k: int, dtype=np.bool_) -> SSAValue:
    """The [rows, cols] mask `(j - i) cmp k` of the column and row indices, as `dtype`: a
    constant for static sizes, computed at run time otherwise."""
    np_cmp, relay_cmp = COMPARE[cmp]
    if isinstance(rows, int) and isinstance(cols, int):
        mask = np_cmp(np.arange(cols)[None, :] - np.arange(rows)[:, None], k)
        return b.constant(mask.astype(dtype))
    offset = b.emit(relay.SubtractOp(_iota_along(b, 1, 2, cols), _iota_along(b, 0, 2, rows)))
    mask = b.emit(relay_cmp(offset, b.constant(k, np.int64)))
    if np.dtype(dtype) == np.bool_:
        return mask
    return b.emit(relay.CastOp(mask, dtype=element_type(dtype)))


def _iota_along(b: Node, axis: int, rank: int, size: Dim) -> SSAValue:
    """0..size-1 along `axis` of a rank-`rank` tensor of size 1 elsewhere (int64)."""
    shape: list[Dim] = [1] * rank
    shape[axis] = size
    if isinstance(size, int):
        return b.constant(np.arange(size, dtype=np.int64).reshape(shape))
    return b.emit(relay.ReshapeOp(arange(b, size), newshape=shape))


@onnx_op("Hardmax", since=13)
def hardmax(b: Node) -> SSAValue:
    rank = b.rank(0)
    axis = b.axis(b.attr("axis", -1), rank)
    best = b.emit(relay.ArgmaxOp(b.input(0), axis=axis, keepdims=True))
    hit = b.emit(relay.EqualOp(best, _iota_along(b, axis, rank, b.shape(0)[axis])))
    return b.emit(relay.CastOp(hit, dtype=element_type(b.dtype(0))))


@onnx_op("OneHot", since=11)
def one_hot(b: Node) -> SSAValue:
    depth = np.asarray(b.const(1)).reshape(()).item()
    depth = normalize(depth) if is_symbolic(b.const(1)) else int(depth)
    off, on = (np.asarray(v) for v in b.const(2))
    rank = b.rank(0) + 1
    axis = b.axis(b.attr("axis", -1), rank)
    indices = b.input(0)
    if b.dtype(0) != np.int64:
        indices = b.emit(relay.CastOp(indices, dtype=element_type(np.int64)))
    # negative indices count from the end
    negative = b.emit(relay.LessOp(indices, b.constant(0, np.int64)))
    indices = b.emit(
        relay.WhereOp(negative, b.emit(relay.AddOp(indices, dim_scalar(b, depth))), indices)
    )
    indices = b.emit(relay.ExpandDimsOp(indices, axis=axis))
    hit = b.emit(relay.EqualOp(indices, _iota_along(b, axis, rank, depth)))
    values_type = b.dtype(2)
    return b.emit(relay.WhereOp(hit, b.constant(on, values_type), b.constant(off, values_type)))


@onnx_op("CumSum", since=11)
def cumsum(b: Node) -> SSAValue:
    """A matrix product with a triangular 0/1 matrix along the axis."""
    rank = b.rank(0)
    axis = b.axis(np.asarray(b.const(1)).reshape(()), rank)
    n = b.shape(0)[axis]
    # y[..., j] = sum over i of x[..., i] * m[i, j]
    # i <= j is j - i >= 0, and so on
    if b.attr("reverse", 0):
        keep = "lt" if b.attr("exclusive", 0) else "le"
    else:
        keep = "gt" if b.attr("exclusive", 0) else "ge"
    m = _index_mask(b, n, n, keep, 0, b.dtype(0))
    perm = [d for d in range(rank) if d != axis] + [axis]
    x = b.input(0)
    if axis != rank - 1:
        x = b.emit(relay.TransposeOp(x, axes=perm))
    y = matmul_nd(b, x, m)
    if axis != rank - 1:
        y = b.emit(relay.TransposeOp(y, axes=list(np.argsort(perm))))
    return y


CUMPROD_MAX_LENGTH = 1024


@onnx_op("CumProd", since=26)
def cumprod(b: Node) -> SSAValue:
    """A running product along the axis, one multiply per position (the axis is at most
    CUMPROD_MAX_LENGTH long), then the positions concatenated back."""
    rank = b.rank(0)
    axis = b.axis(np.asarray(b.const(1)).reshape(()), rank)
    (n,) = b.static_dims(b.shape(0)[axis : axis + 1], "CumProd along a dynamic axis")
    if n > CUMPROD_MAX_LENGTH:
        raise b.unsupported(f"CumProd along an axis of {n} (at most {CUMPROD_MAX_LENGTH})")
    x = b.input(0)
    order = list(range(n))[::-1] if b.attr("reverse", 0) else list(range(n))
    slices = {
        k: b.emit(relay.StridedSliceOp(x, begin=[k], end=[k + 1], axes=[axis])) for k in order
    }
    running = None
    out: dict[int, SSAValue] = {}
    for k in order:
        if b.attr("exclusive", 0):
            out[k] = (
                running
                if running is not None
                else b.emit(relay.BroadcastToOp(_c(b, 1), shape=shape_of(slices[k].type)))
            )
        running = slices[k] if running is None else b.emit(relay.MultiplyOp(running, slices[k]))
        if not b.attr("exclusive", 0):
            out[k] = running
    return b.emit(relay.ConcatenateOp(*[out[k] for k in range(n)], axis=axis))


@onnx_op("EyeLike", since=9)
def eye_like(b: Node) -> np.ndarray | SSAValue:
    rows, cols = b.shape(0)
    dtype = b.dtype(0)
    if b.has_attr("dtype"):
        dtype = onnx.helper.tensor_dtype_to_np_dtype(b.attr("dtype"))
    k = b.attr("k", 0)
    if isinstance(rows, int) and isinstance(cols, int):
        return np.eye(rows, cols, k=k, dtype=dtype)  # known at import
    # ones where column - row == k
    return _index_mask(b, rows, cols, "eq", k, dtype)


def _space_depth(b: Node, to_depth: bool) -> SSAValue:
    n, c, h, w = b.shape(0)
    s = b.attr("blocksize")
    c = b.static_dims([c], f"{b.op_type} channels")[0]
    if to_depth and not all(equal((d // s) * s, d) for d in (h, w)):
        raise b.error(f"spatial sizes {fmt_dims([h, w])} are not multiples of blocksize {s}")
    x = b.input(0)
    if to_depth:
        x = b.emit(relay.ReshapeOp(x, newshape=(n, c, h // s, s, w // s, s)))
        crd = b.attr("mode", "DCR") == "CRD"
        x = b.emit(relay.TransposeOp(x, axes=(0, 1, 3, 5, 2, 4) if crd else (0, 3, 5, 1, 2, 4)))
        return b.emit(relay.ReshapeOp(x, newshape=(n, c * s * s, h // s, w // s)))
    if b.attr("mode", "DCR") == "DCR":
        x = b.emit(relay.ReshapeOp(x, newshape=(n, s, s, c // (s * s), h, w)))
        x = b.emit(relay.TransposeOp(x, axes=(0, 3, 4, 1, 5, 2)))
    else:
        x = b.emit(relay.ReshapeOp(x, newshape=(n, c // (s * s), s, s, h, w)))
        x = b.emit(relay.TransposeOp(x, axes=(0, 1, 4, 2, 5, 3)))
    return b.emit(relay.ReshapeOp(x, newshape=(n, c // (s * s), h * s, w * s)))


@onnx_op("SpaceToDepth")
def space_to_depth(b: Node) -> SSAValue:
    return _space_depth(b, True)


@onnx_op("DepthToSpace")
def depth_to_space(b: Node) -> SSAValue:
    return _space_depth(b, False)


@onnx_op("Swish", since=24)
def swish(b: Node) -> SSAValue:
    x = b.input(0)
    gate = b.emit(relay.SigmoidOp(b.emit(relay.MultiplyOp(x, _c(b, b.attr("alpha", 1.0))))))
    return b.emit(relay.MultiplyOp(x, gate))


@onnx_op("ThresholdedRelu", since=10)
def thresholded_relu(b: Node) -> SSAValue:
    x = b.input(0)
    above = b.emit(relay.GreaterOp(x, _c(b, b.attr("alpha", 1.0))))
    return b.emit(relay.WhereOp(above, x, _c(b, 0.0)))


@onnx_op("Celu", since=12)
def celu(b: Node) -> SSAValue:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    x = b.input(0)
    alpha = b.attr("alpha", 1.0)
    inner = b.emit(relay.ExpOp(b.emit(relay.DivideOp(x, _c(b, alpha)))))
    neg = b.emit(relay.MultiplyOp(b.emit(relay.SubtractOp(inner, _c(b, 1.0))), _c(b, alpha)))
    return b.emit(relay.AddOp(b.emit(relay.ReluOp(x)), b.emit(relay.MinimumOp(neg, _c(b, 0.0)))))


@onnx_op("Softsign")
def softsign(b: Node) -> SSAValue:
    x = b.input(0)
    return b.emit(relay.DivideOp(x, b.emit(relay.AddOp(b.emit(relay.AbsOp(x)), _c(b, 1.0)))))


@onnx_op("Shrink", since=9)
def shrink(b: Node) -> SSAValue:
    x = b.input(0)
    lambd, bias = b.attr("lambd", 0.5), b.attr("bias", 0.0)
    low = b.emit(relay.LessOp(x, _c(b, -lambd)))
    high = b.emit(relay.GreaterOp(x, _c(b, lambd)))
    plus = b.emit(relay.AddOp(x, _c(b, bias)))
    minus = b.emit(relay.SubtractOp(x, _c(b, bias)))
    return b.emit(relay.WhereOp(low, plus, b.emit(relay.WhereOp(high, minus, _c(b, 0)))))


@onnx_op("Mish", since=18)
def mish(b: Node) -> SSAValue:
    """x * tanh(softplus(x)), softplus computed without overflow."""
    x = b.input(0)
    neg_abs = b.emit(relay.NegativeOp(b.emit(relay.AbsOp(x))))
    log1p = b.emit(relay.LogOp(b.emit(relay.AddOp(b.emit(relay.ExpOp(neg_abs)), _c(b, 1.0)))))
    softplus = b.emit(relay.AddOp(b.emit(relay.ReluOp(x)), log1p))
    return b.emit(relay.MultiplyOp(x, b.emit(relay.TanhOp(softplus))))


@onnx_op("HardSwish", since=14)
def hard_swish(b: Node) -> SSAValue:
    x = b.input(0)
    gate = b.emit(
        relay.ClipOp(
            b.emit(relay.AddOp(b.emit(relay.MultiplyOp(x, _c(b, 1 / 6))), _c(b, 0.5))),
            a_min=0.0,
            a_max=1.0,
        )
    )
    return b.emit(relay.MultiplyOp(x, gate))


@onnx_op("IsInf", since=10)
def is_inf(b: Node) -> SSAValue:
    x = b.input(0)
    pos = b.emit(relay.EqualOp(x, _c(b, math.inf)))
    neg = b.emit(relay.EqualOp(x, _c(b, -math.inf)))
    detect_pos, detect_neg = b.attr("detect_positive", 1), b.attr("detect_negative", 1)
    if detect_pos and detect_neg:
        return b.emit(relay.LogicalOrOp(pos, neg))
    if detect_pos:
        return pos
    if detect_neg:
        return neg
    return b.emit(relay.LogicalAndOp(pos, neg))  # never both: all false


def _exp_pair(b: Node) -> tuple[SSAValue, SSAValue]:
    x = b.input(0)
    return b.emit(relay.ExpOp(x)), b.emit(relay.ExpOp(b.emit(relay.NegativeOp(x))))


@onnx_op("Sinh", since=9)
def sinh(b: Node) -> SSAValue:
    up, down = _exp_pair(b)
    return b.emit(relay.MultiplyOp(b.emit(relay.SubtractOp(up, down)), _c(b, 0.5)))


@onnx_op("Cosh", since=9)
def cosh(b: Node) -> SSAValue:
    up, down = _exp_pair(b)
    return b.emit(relay.MultiplyOp(b.emit(relay.AddOp(up, down)), _c(b, 0.5)))


@onnx_op("CenterCropPad", since=18)
def center_crop_pad(b: Node) -> SSAValue:
    """Each listed axis cropped (a centered window, the extra element at the end) or
    zero-padded (centered, the extra element at the end) to the target length: one pad
    whose negative widths crop."""
    shape = b.shape(0)
    rank = len(shape)
    targets = [int(t) for t in b.const(1)]
    axes = [b.axis(a, rank, "axes entry") for a in b.attr("axes", list(range(rank)))]
    b.static_dims([shape[a] for a in axes], "CenterCropPad axes")
    if len(targets) != len(axes):
        raise b.error(f"shape has {len(targets)} entries for {len(axes)} axes")
    widths = [0] * (2 * rank)
    for axis, target in zip(axes, targets):
        size = shape[axis]
        if target <= size:
            start = (size - target) // 2
            widths[2 * axis], widths[2 * axis + 1] = -start, -(size - target - start)
        else:
            begin = (target - size) // 2
            widths[2 * axis], widths[2 * axis + 1] = begin, target - size - begin
    return b.emit(relay.PadOp(b.input(0), pad_width=widths))
