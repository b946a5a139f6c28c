"""The oracle for run-time sequences (dialects/relay/sequence.py) and optionals
(dialects/relay/optional.py): a sequence is a Python list of arrays, an optional the value
or None. `SEQUENCE_IMPLS[op class](op, *operands) -> list of results`; the walk in
reference/control.py calls them (their results are lists, not arrays, so they are not in
IMPLS)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
from xrelay.dialects import relay
from xrelay.errors import Error
from xrelay.ir import location_str


def _index(op: Any, at: Any, n: int, insert: bool = False) -> int:
    i = int(np.asarray(at).reshape(-1)[0])
    i = i + n if i < 0 else i
    if i < 0 or i > n or (i == n and not insert):
        raise Error(
            f"{location_str(op)}: position {int(np.asarray(at).reshape(-1)[0])} is out of range for a sequence of {n}"
        )
    return i


def _insert(op, seq, item, *at):
    i = _index(op, at[0], len(seq), insert=True) if at else len(seq)
    return [seq[:i] + [item] + seq[i:]]


def _erase(op, seq, *at):
    if len(seq) == 0:
        raise Error(f"{location_str(op)}: erase from an empty sequence")
    i = _index(op, at[0], len(seq)) if at else len(seq) - 1
    return [seq[:i] + seq[i + 1 :]]


def _at(op, seq, at):
    if len(seq) == 0:
        raise Error(f"{location_str(op)}: an element of an empty sequence")
    return [seq[_index(op, at, len(seq))]]


def _concat(op, seq):
    if len(seq) == 0:
        raise Error(f"{location_str(op)}: concatenation of an empty sequence")
    axis = op.axis.value.data
    if op.new_axis.value.data:
        seq = [np.expand_dims(a, axis) for a in seq]
    return [np.concatenate(seq, axis=axis)]


def _split(op, x, *split):
    axis, n = op.axis.value.data, x.shape[op.axis.value.data]
    if not split:
        keep = bool(op.keepdims.value.data)
        return [[np.take(x, [i] if keep else i, axis=axis) for i in range(n)]]
    sizes = np.asarray(split[0]).astype(np.int64).reshape(-1).tolist()
    if np.asarray(split[0]).ndim == 0:
        if sizes[0] <= 0:
            raise Error(f"{location_str(op)}: split size {sizes[0]} is not positive")
        sizes = [sizes[0]] * (n // sizes[0]) + ([n % sizes[0]] if n % sizes[0] else [])
    if sum(sizes) != n or min(sizes, default=0) < 0:
        raise Error(f"{location_str(op)}: split sizes {sizes} do not add up to {n}")
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    return [[np.take(x, range(a, b), axis=axis) for a, b in itertools.pairwise(starts)]]


def _get(op, value):
    if value is None:
        raise Error(f"{location_str(op)}: the optional holds no value")
    return [value]


SEQUENCE_IMPLS: dict[type, Callable[..., list[Any]]] = {
    # optionals (dialects/relay/optional.py): the value, or None
    relay.OptConstructOp: lambda op, *value: [value[0] if value else None],
    relay.OptHasOp: lambda op, value: [np.array(value is not None)],
    relay.OptGetOp: _get,
    relay.SeqConstructOp: lambda op, *items: [list(items)],
    relay.SeqInsertOp: _insert,
    relay.SeqEraseOp: _erase,
    relay.SeqAtOp: _at,
    relay.SeqLengthOp: lambda op, seq: [np.array(len(seq), np.int64)],
    relay.ConcatFromSequenceOp: _concat,
    relay.SplitToSequenceOp: _split,
}
