"""TFLite shape and data-movement builtins -> relay: reshape, transpose, concatenation,
pad, slices, gather, squeeze/expand_dims, pack/unpack/split, shape, and reductions.

They work on float and quantized integers alike (TFLite gives their input and output one
quantization); a converter whose inputs are all known at import time computes with numpy
(the shape arithmetic of a dynamic batch: SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE)."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import dims, relay
from xrelay.dialects.dims import Dim, normalize
from xrelay.frontends.common import stack
from xrelay.frontends.tflite import quantized
from xrelay.frontends.tflite.binder import NCHW, Operator
from xrelay.frontends.tflite.registry import tflite_op

NHWC_TO_NCHW_AXIS = {0: 0, 1: 2, 2: 3, 3: 1}


def reshape_target(b: Operator, shape: tuple[Dim, ...]) -> list[Dim]:
    """RESHAPE's new shape (the shape input, else the new_shape option), -1 resolved from
    the input's converted shape (not the shape stored in the file). Entries may be
    expressions of the dynamic batch (SHAPE of a dynamic tensor computes them)."""
    if b.has_input(1) and b.is_const(1):
        target = [normalize(d) for d in np.asarray(b.const(1)).reshape(-1)]
    elif b.has_input(1):
        raise b.unsupported("a shape computed at run time")
    else:
        target = [int(d) for d in b.option("NewShapeAsNumpy", [])]
    total = dims.prod(shape)
    if target.count(-1) > 1:
        raise b.error(f"new shape {dims.fmt_dims(target)} has more than one -1")
    if -1 in target:
        known = dims.prod(d for d in target if not (isinstance(d, int) and d == -1))
        rest = normalize(dims.simplify_ratio(total, known)) if known != 0 else None
        if rest is None or not (isinstance(rest, int) or rest.is_integer):
            raise b.error(f"cannot reshape {dims.fmt_dims(shape)} to {dims.fmt_dims(target)}")
        target[target.index(-1)] = rest
    if not dims.equal(dims.prod(target), total):
        raise b.error(f"cannot reshape {dims.fmt_dims(shape)} to {dims.fmt_dims(target)}")
    return target


@tflite_op("RESHAPE")
def reshape(b: Operator) -> SSAValue | np.ndarray:
    target = reshape_target(b, b.shape(0))
    if b.is_const(0):
        return b.const(0).reshape(target)
    if list(b.shape(0)) == target:
        return b.input(0)
    return b.emit(relay.ReshapeOp(b.input(0), newshape=target))


@tflite_op("TRANSPOSE")
def transpose(b: Operator) -> SSAValue | np.ndarray:
    perm = [int(p) for p in b.const(1)]
    if b.is_const(0):
        return b.const(0).transpose(perm)
    if perm == [0, 3, 1, 2] and b.value(0).nchw is not None:
        return b.value(0).nchw
    return b.emit(relay.TransposeOp(b.input(0), axes=perm))


@tflite_op("CONCATENATION")
def concatenation(b: Operator) -> SSAValue | NCHW | np.ndarray:
    axis = b.axis(b.option("Axis", 0), b.rank(0))
    if b.all_known():
        return np.concatenate([b.const(i) for i in range(b.n_inputs)], axis=axis)
    if b.quant(0) is not None:
        return quantized.concatenation(b, axis)
    rank = b.rank(0)
    axis %= rank
    if rank == 4 and all(b.value(i).nchw is not None for i in range(b.n_inputs)):
        values = [b.value(i).nchw for i in range(b.n_inputs)]
        y = b.emit(relay.ConcatenateOp(*values, axis=NHWC_TO_NCHW_AXIS[axis]))
        return NCHW(b.activation(y))
    values = [b.input(i) for i in range(b.n_inputs)]
    return b.activation(b.emit(relay.ConcatenateOp(*values, axis=axis)))


@tflite_op("PAD", "PADV2")
def pad(b: Operator) -> SSAValue | NCHW:
    widths = np.asarray(b.const(1)).astype(np.int64).reshape(-1, 2)
    value = 0.0
    q = b.quant(0)
    if b.has_input(2):
        value = float(np.asarray(b.const(2)).reshape(-1)[0])
    elif q is not None:
        value = float(q.zero_point[0])
    if b.is_nchw(0) and len(widths) == 4:
        nchw = widths[[0, 3, 1, 2]]
        return NCHW(
            b.emit(
                relay.PadOp(b.value(0).nchw, pad_width=nchw.reshape(-1).tolist(), pad_value=value)
            )
        )
    return b.emit(relay.PadOp(b.input(0), pad_width=widths.reshape(-1).tolist(), pad_value=value))


def slice_arguments(b: Operator, shape: tuple[int, ...]) -> tuple[list[slice], list[int]]:
    """STRIDED_SLICE's per-axis slices (masks applied) and the axes shrink_axis_mask drops."""
    begin, end = [int(x) for x in b.const(1)], [int(x) for x in b.const(2)]
    strides = [int(x) for x in b.const(3)] if b.has_input(3) else [1] * len(begin)
    if b.option("EllipsisMask", 0) or b.option("NewAxisMask", 0):
        raise b.unsupported("ellipsis_mask or new_axis_mask")
    begin_mask, end_mask = b.option("BeginMask", 0), b.option("EndMask", 0)
    shrink, offset = b.option("ShrinkAxisMask", 0), b.option("Offset", False)
    slices, dropped = [], []
    for i, size in enumerate(shape):
        if i >= len(begin):
            slices.append(slice(None))
            continue
        start = None if begin_mask >> i & 1 else begin[i]
        stop = None if end_mask >> i & 1 else (begin[i] + end[i] if offset else end[i])
        if shrink >> i & 1:
            start = begin[i] + size if begin[i] < 0 else begin[i]
            stop, strides[i] = start + 1, 1
            dropped.append(i)
        slices.append(slice(start, stop, strides[i]))
    return slices, dropped


def emit_slices(b: Operator, x: SSAValue, shape: tuple[Dim, ...], slices: list[slice]) -> SSAValue:
    """relay.strided_slice of `slices`; a dynamic axis (the batch) may only be taken whole,
    and is then left out of the slice's axes."""
    if not all(isinstance(d, int) for d in shape):
        return emit_static_axes(b, x, shape, slices)
    begins, ends, steps = [], [], []
    for size, s in zip(shape, slices):
        start, stop, step = s.indices(size)
        if stop < 0:  # a backward slice down to the first element: past it, not "from the end"
            stop = -(size + 1)
        begins.append(start)
        ends.append(stop)
        steps.append(step)
    return b.emit(relay.StridedSliceOp(x, begin=begins, end=ends, strides=steps))


def emit_static_axes(
    b: Operator, x: SSAValue, shape: tuple[Dim, ...], slices: list[slice]
) -> SSAValue:
    axes, begins, ends, steps = [], [], [], []
    for axis, (size, s) in enumerate(zip(shape, slices)):
        if not isinstance(size, int):
            if s.start not in (None, 0) or s.stop is not None or s.step not in (None, 1):
                raise b.unsupported(f"a slice of the dynamic axis {axis}")
            continue
        start, stop, step = s.indices(size)
        if stop < 0:
            stop = -(size + 1)
        axes.append(axis)
        begins.append(start)
        ends.append(stop)
        steps.append(step)
    return b.emit(relay.StridedSliceOp(x, begin=begins, end=ends, strides=steps, axes=axes))


@tflite_op("STRIDED_SLICE")
def strided_slice(b: Operator) -> SSAValue | np.ndarray:
    shape = b.shape(0)
    slices, dropped = slice_arguments(b, shape)
    if b.is_const(0):
        return np.squeeze(b.const(0)[tuple(slices)], axis=tuple(dropped))
    y = emit_slices(b, b.input(0), shape, slices)
    if dropped:
        kept = [d for i, d in enumerate(shape_after(y)) if i not in dropped]
        y = b.emit(relay.ReshapeOp(y, newshape=kept))
    return y


def shape_after(y: SSAValue) -> tuple[int, ...]:
    from xrelay.dialects.dims import shape_of

    return tuple(shape_of(y.type))


@tflite_op("SLICE")
def slice_(b: Operator) -> SSAValue | np.ndarray:
    begin, size = [int(x) for x in b.const(1)], [int(x) for x in b.const(2)]
    shape = b.shape(0)
    slices = [slice(s, d if n == -1 else s + n) for s, n, d in zip(begin, size, shape)]
    if b.is_const(0):
        return b.const(0)[tuple(slices)]
    return emit_slices(b, b.input(0), shape, slices)


@tflite_op("GATHER")
def gather(b: Operator) -> SSAValue | np.ndarray:
    axis = b.axis(b.option("Axis", 0), b.rank(0))
    if b.option("BatchDims", 0):
        raise b.unsupported("batch_dims")
    if b.all_known():
        return np.take(b.const(0), b.const(1), axis=axis)
    indices = b.input(1)
    return b.emit(relay.TakeOp(b.input(0), indices, axis=axis))


@tflite_op("SQUEEZE")
def squeeze(b: Operator) -> SSAValue | np.ndarray:
    shape = b.shape(0)
    axes = [b.axis(a, len(shape), "squeeze dim") for a in b.option("SqueezeDimsAsNumpy", [])]
    if not axes:
        axes = [i for i, d in enumerate(shape) if d == 1]
    kept = [d for i, d in enumerate(shape) if i not in axes]
    if b.is_const(0):
        return b.const(0).reshape(kept)
    return b.emit(relay.ReshapeOp(b.input(0), newshape=kept))


@tflite_op("EXPAND_DIMS")
def expand_dims(b: Operator) -> SSAValue | np.ndarray:
    axis = int(np.asarray(b.const(1)).reshape(-1)[0])
    shape = list(b.shape(0))
    axis = axis % (len(shape) + 1)
    shape.insert(axis, 1)
    if b.is_const(0):
        return b.const(0).reshape(shape)
    return b.emit(relay.ReshapeOp(b.input(0), newshape=shape))


@tflite_op("SHAPE")
def shape_(b: Operator) -> np.ndarray:
    """The shape, known at import; with a dynamic batch an object array of expressions,
    which the shape arithmetic after it (slices, PACK, GATHER, products) carries to a
    RESHAPE target."""
    shape = b.shape(0)
    if all(isinstance(d, int) for d in shape):
        return np.asarray(shape, dtype=np.dtype(b.out_tensor().dtype or np.int32))
    return np.array(shape, dtype=object)


@tflite_op("PACK")
def pack(b: Operator) -> SSAValue | np.ndarray:
    axis = b.axis(b.option("Axis", 0), b.rank(0) + 1)
    if b.all_known():
        return np.stack([b.const(i) for i in range(b.n_inputs)], axis=axis)
    return stack(b, [b.input(i) for i in range(b.n_inputs)], axis)


@tflite_op("UNPACK")
def unpack(b: Operator) -> list:
    axis = b.axis(b.option("Axis", 0), b.rank(0))
    shape = list(b.shape(0))
    kept = shape[:axis] + shape[axis + 1 :]
    if b.is_const(0):
        return [np.take(b.const(0), i, axis=axis) for i in range(shape[axis])]
    outs = []
    for i in range(shape[axis]):
        part = b.emit(relay.StridedSliceOp(b.input(0), begin=[i], end=[i + 1], axes=[axis]))
        outs.append(b.emit(relay.ReshapeOp(part, newshape=kept)))
    return outs


@tflite_op("SPLIT")
def split(b: Operator) -> list:
    axis = int(np.asarray(b.const(0)).reshape(-1)[0]) % b.rank(1)
    n = b.option("NumSplits", 1)
    size = b.shape(1)[axis]
    if size % n:
        raise b.error(f"axis {axis} of size {size} does not split into {n}")
    step = size // n
    return [
        b.emit(
            relay.StridedSliceOp(b.input(1), begin=[i * step], end=[(i + 1) * step], axes=[axis])
        )
        for i in range(n)
    ]


REDUCERS = {
    "MEAN": (relay.MeanOp, np.mean),
    "SUM": (relay.SumOp, np.sum),
    "REDUCE_MAX": (relay.MaxOp, np.max),
    "REDUCE_MIN": (relay.MinOp, np.min),
    "REDUCE_PROD": (relay.ProdOp, np.prod),
}


@tflite_op(*REDUCERS)
def reduce(b: Operator) -> SSAValue | NCHW | np.ndarray:
    cls, fold = REDUCERS[b.code]
    rank = b.rank(0)
    axes = sorted({b.axis(a, rank) for a in np.asarray(b.const(1)).reshape(-1)})
    keep = bool(b.option("KeepDims", False))
    if b.is_const(0):
        folded = np.asarray(fold(b.const(0), axis=tuple(axes), keepdims=keep))
        return folded.astype(b.const(0).dtype)
    nchw_axes = None
    if b.is_nchw(0) and (keep or axes == [1, 2]):  # over H and W: [N, C] either way
        nchw_axes = sorted(NHWC_TO_NCHW_AXIS[a] for a in axes)
    if b.quant(0) is not None and b.code in ("MEAN", "SUM"):
        return quantized.mean_or_sum(b, axes, keep, nchw_axes)
    if b.quant(0) is not None and b.code == "REDUCE_PROD":
        return quantized.through_float(b)
    if nchw_axes is not None:
        y = b.emit(cls(b.value(0).nchw, axis=nchw_axes, keepdims=keep))
        return NCHW(y) if keep else y
    return b.emit(cls(b.input(0), axis=axes, keepdims=keep))


@tflite_op("ARG_MAX", "ARG_MIN")
def arg_reduce(b: Operator) -> SSAValue:
    axis = int(np.asarray(b.const(1)).reshape(-1)[0]) % b.rank(0)
    cls = relay.ArgmaxOp if b.code == "ARG_MAX" else relay.ArgminOp
    y = b.emit(cls(b.input(0), axis=[axis], keepdims=False))
    from xrelay.dialects.dtypes import element_type

    dtype = np.dtype(b.out_tensor().dtype)
    return b.emit(relay.CastOp(y, dtype=element_type(dtype)))


def _block_and_pairs(b: Operator) -> tuple[list[int], list[list[int]]]:
    block = [int(d) for d in b.const(1)]
    pairs = np.asarray(b.const(2)).astype(np.int64).reshape(-1, 2).tolist()
    if b.rank(0) != 4 or len(block) != 2:
        raise b.unsupported(f"{b.code} other than 2 spatial axes of a 4-d input")
    return block, pairs


@tflite_op("SPACE_TO_BATCH_ND")
def space_to_batch(b: Operator) -> SSAValue:
    """Pad H and W, then move each (bh, bw) phase of the blocks into the batch."""
    (bh, bw), pads = _block_and_pairs(b)
    x = b.input(0)
    if any(p for pair in pads for p in pair):
        widths = [0, 0, *pads[0], *pads[1], 0, 0]
        value = float(b.quant(0).zero_point[0]) if b.quant(0) is not None else 0.0
        x = b.emit(relay.PadOp(x, pad_width=widths, pad_value=value))
    n, h, w, c = shape_after(x)
    if h % bh or w % bw:
        raise b.error(f"padded size {h}x{w} is not a multiple of the block {bh}x{bw}")
    x = b.emit(relay.ReshapeOp(x, newshape=(n, h // bh, bh, w // bw, bw, c)))
    x = b.emit(relay.TransposeOp(x, axes=(2, 4, 0, 1, 3, 5)))
    return b.emit(relay.ReshapeOp(x, newshape=(bh * bw * n, h // bh, w // bw, c)))


@tflite_op("BATCH_TO_SPACE_ND")
def batch_to_space(b: Operator) -> SSAValue:
    """The inverse of SPACE_TO_BATCH_ND: phases back into the blocks, then crop."""
    (bh, bw), crops = _block_and_pairs(b)
    nb, h, w, c = b.shape(0)
    if nb % (bh * bw):
        raise b.error(f"batch {nb} is not a multiple of the block {bh}x{bw}")
    n = nb // (bh * bw)
    x = b.emit(relay.ReshapeOp(b.input(0), newshape=(bh, bw, n, h, w, c)))
    x = b.emit(relay.TransposeOp(x, axes=(2, 3, 0, 4, 1, 5)))
    x = b.emit(relay.ReshapeOp(x, newshape=(n, h * bh, w * bw, c)))
    if not any(p for pair in crops for p in pair):
        return x
    (top, bottom), (left, right) = crops
    return b.emit(
        relay.StridedSliceOp(
            x, begin=[top, left], end=[h * bh - bottom, w * bw - right], axes=[1, 2]
        )
    )


@tflite_op("TILE")
def tile(b: Operator) -> SSAValue | np.ndarray:
    reps = [int(r) for r in b.const(1)]
    if b.is_const(0):
        return np.tile(b.const(0), reps)
    return b.emit(relay.TileOp(b.input(0), reps=reps))


@tflite_op("BROADCAST_TO")
def broadcast_to(b: Operator) -> SSAValue | np.ndarray:
    shape = [int(d) for d in b.const(1)]
    if b.is_const(0):
        return np.broadcast_to(b.const(0), shape).copy()
    return b.emit(relay.BroadcastToOp(b.input(0), shape=shape))
