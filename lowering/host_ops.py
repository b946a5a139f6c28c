"""The ops the VM computes on the host (lowering/vm.py): those whose result sizes the data
decides. Each takes the op and its operand arrays and returns the result arrays; the sizes
they produce bind the op's `size` symbol in the segments that follow.

Written for the VM, apart from the reference executor's versions (reference/control.py),
which check these.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xrelay.dialects import relay
from xrelay.dialects.limits import bytes_over_limit
from xrelay.errors import Error
from xrelay.ir import location_str

HostOp = Callable[[Any, list[np.ndarray]], list[np.ndarray]]


def _fits(op: Any, count: int, row_bytes: int) -> None:
    why = bytes_over_limit(count * row_bytes)
    if why is not None:
        raise Error(f"{location_str(op)}: '{op.name}' would return {count} rows: {why}")


def nonzero(op: relay.NonZeroOp, operands: list[np.ndarray]) -> list[np.ndarray]:
    (x,) = operands
    mask = x.reshape(x.shape or (1,)) != 0
    count = int(np.count_nonzero(mask))
    _fits(op, count, 8 * max(x.ndim, 1))
    found = np.argwhere(mask).T.astype(np.int64)  # row-major order
    return [found if x.ndim else found[:0]]


def unique(op: relay.UniqueOp, operands: list[np.ndarray]) -> list[np.ndarray]:
    (x,) = operands
    axis = op.attrs["axis"]
    if axis is None:
        keys, along = x.reshape(-1), 0
    else:
        along = axis % x.ndim
        keys = x
    values, first, inverse, counts = np.unique(
        keys,
        return_index=True,
        return_inverse=True,
        return_counts=True,
        axis=None if axis is None else along,
    )
    inverse = inverse.reshape(-1)
    if not op.attrs["sorted"]:  # the order of first occurrence
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        values = np.take(values, order, axis=along)
        first, counts, inverse = first[order], counts[order], rank[inverse]
    i64 = np.int64
    return [values, first.astype(i64), inverse.astype(i64), counts.astype(i64)]


def _corners(boxes: np.ndarray, center: bool) -> np.ndarray:
    """[n, 4] boxes as (ymin, xmin, ymax, xmax)."""
    if center:  # (x_center, y_center, width, height)
        x, y, w, h = boxes.T
        return np.stack([y - h / 2, x - w / 2, y + h / 2, x + w / 2], axis=1)
    y1, x1, y2, x2 = boxes.T
    return np.stack(
        [np.minimum(y1, y2), np.minimum(x1, x2), np.maximum(y1, y2), np.maximum(x1, x2)], 1
    )


def non_max_suppression(
    op: relay.NonMaxSuppressionOp, operands: list[np.ndarray]
) -> list[np.ndarray]:
    boxes, scores, max_out, iou_t, score_t = operands
    limit = int(max_out)
    iou_t, score_t = float(iou_t), float(score_t)
    center = bool(op.attrs["center_point_box"])
    rows: list[tuple[int, int, int]] = []
    for b in range(boxes.shape[0]):
        corners = _corners(boxes[b].astype(np.float64), center)
        area = (corners[:, 2] - corners[:, 0]) * (corners[:, 3] - corners[:, 1])
        for c in range(scores.shape[1]):
            s = scores[b, c]
            candidates = np.flatnonzero(s > score_t)
            order = candidates[np.argsort(-s[candidates], kind="stable")]
            kept: list[int] = []
            for i in order:
                if len(kept) >= limit:
                    break
                if kept:
                    k = np.asarray(kept)
                    top = np.maximum(corners[k, 0], corners[i, 0])
                    left = np.maximum(corners[k, 1], corners[i, 1])
                    bottom = np.minimum(corners[k, 2], corners[i, 2])
                    right = np.minimum(corners[k, 3], corners[i, 3])
                    inter = np.clip(bottom - top, 0, None) * np.clip(right - left, 0, None)
                    union = area[k] + area[i] - inter
                    with np.errstate(all="ignore"):
                        iou = np.where(union > 0, inter / union, 0.0)
                    if np.any(iou > iou_t):
                        continue
                kept.append(int(i))
            rows += [(b, c, i) for i in kept]
    return [np.asarray(rows, np.int64).reshape(-1, 3)]


def slice_indices(op: relay.SliceIndicesOp, operands: list[np.ndarray]) -> list[np.ndarray]:
    data, start, end = operands
    size = data.shape[op.attrs["axis"] % data.ndim]
    bounds = slice(int(start), int(end), op.attrs["step"]).indices(size)
    return [np.arange(*bounds, dtype=np.int64)]


def topk(op: relay.TopKOp, operands: list[np.ndarray]) -> list[np.ndarray]:
    x, k = operands
    axis = op.attrs["axis"] % x.ndim
    k = int(k)
    if not 0 <= k <= x.shape[axis]:
        raise Error(f"{location_str(op)}: k = {k} is outside [0, {x.shape[axis]}]")
    keys = x
    if op.attrs["largest"]:  # descending, ties in index order: sort an order-reversing key
        keys = -x if x.dtype.kind == "f" else ~x
    order = np.argsort(keys, axis=axis, kind="stable")
    order = np.take(order, np.arange(k), axis=axis).astype(np.int64)
    return [np.take_along_axis(x, order, axis=axis), order]


def match_dims(op: relay.MatchDimsOp, operands: list[np.ndarray]) -> list[np.ndarray]:
    x, ref = operands
    pairs = op.attrs["pairs"]
    shape = list(x.shape)
    for a, r in zip(pairs[::2], pairs[1::2]):
        have, want = x.shape[a], ref.shape[r]
        if have not in (want, 1):
            raise Error(
                f"{location_str(op)}: axis {a} has size {have} where {want} (or 1) is needed "
                "to broadcast against the other operand"
            )
        shape[a] = want
    return [np.broadcast_to(x, shape).copy() if tuple(shape) != x.shape else x]


# --- run-time sequences: lists of arrays ----------------------------------------------------


def _position(op: Any, value: np.ndarray, length: int, inserting: bool = False) -> int:
    pos = int(np.asarray(value).reshape(()))
    hi = length if inserting else length - 1
    if not -length <= pos <= hi:
        raise Error(
            f"{location_str(op)}: position {pos} is out of range for a sequence of {length}"
        )
    return pos + length if pos < 0 else pos


def seq_construct(op: Any, operands: list[Any]) -> list[Any]:
    return [list(operands)]


def seq_insert(op: Any, operands: list[Any]) -> list[Any]:
    seq, item, *at = operands
    out = list(seq)
    out.insert(_position(op, at[0], len(seq), inserting=True) if at else len(seq), item)
    return [out]


def seq_erase(op: Any, operands: list[Any]) -> list[Any]:
    seq, *at = operands
    if not seq:
        raise Error(f"{location_str(op)}: erase from an empty sequence")
    out = list(seq)
    del out[_position(op, at[0], len(seq)) if at else -1]
    return [out]


def seq_at(op: Any, operands: list[Any]) -> list[Any]:
    seq, at = operands
    if not seq:
        raise Error(f"{location_str(op)}: an element of an empty sequence")
    return [seq[_position(op, at, len(seq))]]


def seq_length(op: Any, operands: list[Any]) -> list[Any]:
    return [np.array(len(operands[0]), np.int64)]


def concat_from_sequence(op: Any, operands: list[Any]) -> list[Any]:
    (seq,) = operands
    if not seq:
        raise Error(f"{location_str(op)}: concatenation of an empty sequence")
    axis, stack = op.axis.value.data, op.new_axis.value.data
    try:
        return [np.stack(seq, axis=axis) if stack else np.concatenate(seq, axis=axis)]
    except ValueError as e:
        shapes = [list(a.shape) for a in seq]
        raise Error(f"{location_str(op)}: cannot join elements of shapes {shapes}: {e}") from None


def split_to_sequence(op: Any, operands: list[Any]) -> list[Any]:
    x, *split = operands
    axis = op.axis.value.data
    size = x.shape[axis]
    if not split:
        pieces = np.split(x, size, axis=axis) if size else []
        return [[p.squeeze(axis) for p in pieces] if not op.keepdims.value.data else pieces]
    sizes = np.asarray(split[0]).astype(np.int64)
    if sizes.ndim == 0:
        step = int(sizes)
        if step <= 0:
            raise Error(f"{location_str(op)}: split size {step} is not positive")
        sizes = np.array([min(step, size - s) for s in range(0, size, step)], np.int64)
    if sizes.sum() != size or (sizes < 0).any():
        raise Error(f"{location_str(op)}: split sizes {sizes.tolist()} do not add up to {size}")
    return [np.split(x, np.cumsum(sizes)[:-1], axis=axis)]


# --- run-time optionals: the value or None ---------------------------------------------------


def opt_get(op: Any, operands: list[Any]) -> list[Any]:
    if operands[0] is None:
        raise Error(f"{location_str(op)}: the optional holds no value")
    return [operands[0]]


HOST_OPS: dict[type, HostOp] = {
    relay.OptConstructOp: lambda op, operands: [operands[0] if operands else None],
    relay.OptHasOp: lambda op, operands: [np.array(operands[0] is not None)],
    relay.OptGetOp: opt_get,
    relay.MatchDimsOp: match_dims,
    relay.SeqConstructOp: seq_construct,
    relay.SeqInsertOp: seq_insert,
    relay.SeqEraseOp: seq_erase,
    relay.SeqAtOp: seq_at,
    relay.SeqLengthOp: seq_length,
    relay.ConcatFromSequenceOp: concat_from_sequence,
    relay.SplitToSequenceOp: split_to_sequence,
    relay.TopKOp: topk,
    relay.SliceIndicesOp: slice_indices,
    relay.NonZeroOp: nonzero,
    relay.UniqueOp: unique,
    relay.NonMaxSuppressionOp: non_max_suppression,
}
