"""Small ONNX ops composed of a few relay ops: ReverseSequence (an element gather along the
time axis), SwiGLU, ai.onnx.ml Binarizer, the deprecated Upsample (nearest, integer
scales, as the ONNX reference has it) and Det (LU with partial pivoting, unrolled at
import over the static matrix size, as LAPACK factors it for numpy)."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dtypes import element_type
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.registry import onnx_op

I64 = np.dtype(np.int64)


@onnx_op("ReverseSequence", since=10)
def reverse_sequence(b: Node) -> SSAValue:
    """y[batch b, time t] = x[b, lens[b] - 1 - t] for t < lens[b], else x[b, t]."""
    shape = list(b.shape(0))
    rank = len(shape)
    batch_axis = b.axis(b.attr("batch_axis", 1), rank, "batch_axis")
    time_axis = b.axis(b.attr("time_axis", 0), rank, "time_axis")
    if {batch_axis, time_axis} != {0, 1}:
        raise b.error(f"batch_axis {batch_axis} and time_axis {time_axis} must be 0 and 1")
    (steps,) = b.static_dims(shape[time_axis : time_axis + 1], "ReverseSequence time axis")
    lens = b.input(1)
    if b.dtype(1) != I64:
        lens = b.emit(relay.CastOp(lens, dtype=element_type(I64)))
    lens = b.emit(relay.MinimumOp(lens, b.constant(np.int64(steps))))  # as numpy's slices
    view = [1] * rank
    view[batch_axis] = shape[batch_axis]
    lens = b.emit(relay.ReshapeOp(lens, newshape=view))
    view = [1] * rank
    view[time_axis] = steps
    t = b.constant(np.arange(steps, dtype=np.int64).reshape(view))
    reversed_t = b.emit(relay.SubtractOp(b.emit(relay.SubtractOp(lens, b.constant(1, I64))), t))
    index = b.emit(relay.WhereOp(b.emit(relay.LessOp(t, lens)), reversed_t, t))
    index = b.emit(relay.BroadcastToOp(index, shape=shape))
    return b.emit(relay.GatherOp(b.input(0), index, axis=time_axis))


@onnx_op("SwiGLU", since=28)
def swiglu(b: Node) -> SSAValue:
    """a * sigmoid(alpha * a) * b (the inputs have one shape: no broadcasting)."""
    if b.shape(0) != b.shape(1):
        raise b.error(f"inputs of shapes {b.shape(0)} and {b.shape(1)} differ")
    a = b.input(0)
    alpha = b.constant(np.asarray(b.attr("alpha", 1.0), b.dtype(0)))
    gate = b.emit(relay.SigmoidOp(b.emit(relay.MultiplyOp(a, alpha))))
    return b.emit(relay.MultiplyOp(b.emit(relay.MultiplyOp(a, gate)), b.input(1)))


@onnx_op("Binarizer", since=1, domain="ai.onnx.ml")
def binarizer(b: Node) -> SSAValue:
    dtype = b.dtype(0)
    above = b.emit(
        relay.GreaterOp(b.input(0), b.constant(np.asarray(b.attr("threshold", 0.0), dtype)))
    )
    return b.emit(relay.CastOp(above, dtype=element_type(dtype)))


@onnx_op("Upsample", since=7)
def upsample(b: Node) -> SSAValue:
    """Nearest upsampling by whole-number scales: each element repeated along each axis
    (the ONNX reference supports no other mode or scale)."""
    mode = b.attr("mode", "nearest")
    scales = [float(s) for s in (b.const(1) if b.opset >= 9 else b.attr("scales"))]
    shape = list(b.shape(0))
    if len(scales) != len(shape):
        raise b.error(f"{len(scales)} scales for a rank-{len(shape)} input")
    if mode != "nearest" or any(s != int(s) or s < 1 for s in scales):
        raise b.unsupported(f"Upsample mode '{mode}' with scales {scales}")
    x = b.input(0)
    for axis, scale in enumerate(int(s) for s in scales):
        if scale == 1:
            continue
        (size,) = b.static_dims(shape[axis : axis + 1], "Upsample axis")
        index = np.arange(size * scale, dtype=np.int64) // scale
        x = b.emit(relay.TakeOp(x, b.constant(index), axis=axis))
    return x


MAX_DET_SIZE = 16


@onnx_op("Det", since=11)
def det(b: Node) -> SSAValue:
    """det of the last two axes: Gaussian elimination with partial pivoting (the first
    largest magnitude in the column, as LAPACK's getrf picks it), the product of the pivots,
    negated per row exchange. A zero pivot (a singular matrix) gives 0."""
    *batch, rows, cols = b.shape(0)
    (n,) = b.static_dims([rows], "Det matrix size")
    if rows != cols:
        raise b.error(f"Det of non-square matrices ({rows} x {cols})")
    if n > MAX_DET_SIZE:
        raise b.unsupported(f"Det of {n} x {n} matrices (at most {MAX_DET_SIZE})")
    dtype = np.dtype(b.dtype(0))
    count = int(np.prod(b.static_dims(batch, "Det batch")))
    a = b.emit(relay.ReshapeOp(b.input(0), newshape=(count, n, n)))
    result = _det(b, a, n, count, dtype)
    return b.emit(relay.ReshapeOp(result, newshape=tuple(batch)))


def _det(b: Node, a: SSAValue, n: int, count: int, dtype: np.dtype) -> SSAValue:
    def c(v: float) -> SSAValue:
        return b.constant(np.asarray(v, dtype))

    result = None
    for m in range(n, 1, -1):  # a is the [count, m, m] trailing submatrix
        column = b.emit(relay.StridedSliceOp(a, begin=[0], end=[1], axes=[2]))  # [count, m, 1]
        p = b.emit(relay.ArgmaxOp(b.emit(relay.AbsOp(column)), axis=1, keepdims=True))
        p = b.emit(relay.ReshapeOp(p, newshape=(count, 1, 1)))
        rows = b.emit(relay.BroadcastToOp(p, shape=(count, 1, m)))
        pivot_row = b.emit(relay.GatherOp(a, rows, axis=1))  # [count, 1, m]
        first_row = b.emit(relay.StridedSliceOp(a, begin=[0], end=[1], axes=[1]))
        iota = b.constant(np.arange(m, dtype=np.int64).reshape(1, m, 1))
        swapped = b.emit(relay.WhereOp(b.emit(relay.EqualOp(iota, p)), first_row, a))
        pivot = b.emit(relay.StridedSliceOp(pivot_row, begin=[0], end=[1], axes=[2]))
        exchanged = b.emit(relay.NotEqualOp(p, b.constant(0, I64)))
        signed = b.emit(relay.WhereOp(exchanged, b.emit(relay.NegativeOp(pivot)), pivot))
        result = signed if result is None else b.emit(relay.MultiplyOp(result, signed))
        rest = b.emit(relay.StridedSliceOp(swapped, begin=[1], end=[m], axes=[1]))
        lower = b.emit(relay.StridedSliceOp(rest, begin=[0], end=[1], axes=[2]))
        zero = b.emit(relay.EqualOp(pivot, c(0.0)))
        safe = b.emit(relay.WhereOp(zero, c(1.0), pivot))
        factor = b.emit(relay.WhereOp(zero, c(0.0), b.emit(relay.DivideOp(lower, safe))))
        upper = b.emit(relay.StridedSliceOp(pivot_row, begin=[1], end=[m], axes=[2]))
        trailing = b.emit(relay.StridedSliceOp(rest, begin=[1], end=[m], axes=[2]))
        a = b.emit(relay.SubtractOp(trailing, b.emit(relay.MultiplyOp(factor, upper))))
    last = a if result is None else b.emit(relay.MultiplyOp(result, a))
    return b.emit(relay.ReshapeOp(last, newshape=(count,)))
