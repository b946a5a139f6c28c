"""PyTorch indexing ops -> relay: advanced indexing (`index`) and its write (`index_put`),
scatters, slice/select/masked scatters, flip, diagonal, and sorting (`sort`, `topk`).

Advanced indexing turns the index tensors (None for a full axis) into the flat position in
`self` of every element of the result, so a read is one `take` and a write scatters onto the
flattened tensor. Writes use a match matrix: every target position is compared with every
update's position ([targets x updates]), and the matched updates combine by the reduction
(a plain write: the last one wins). Sorting ranks each element by comparing it with every
other along the axis ([n x n]; stable, NaN above every number, as torch orders them). Both
are bounded by MAX_PAIRS elements; past it the op is unsupported. Index values are checked
(at import when known, else at run time by relay.check_indices): out of range is an error.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import torch
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dtypes import numpy_dtype
from xrelay.frontends.common import broadcast_shapes, checked_indices
from xrelay.frontends.pytorch.call import Call
from xrelay.frontends.pytorch.registry import aten_op

MAX_PAIRS = 1 << 22
I64 = np.dtype(np.int64)


def _shape(v: SSAValue) -> list[int]:
    return list(v.type.get_shape())


def _dtype(v: SSAValue) -> np.dtype:
    return numpy_dtype(v.type.element_type)


def _axis(c: Call, dim: int, rank: int) -> int:
    if not -max(rank, 1) <= dim < max(rank, 1):
        raise c.error(f"dimension {dim} is out of range for a rank-{rank} tensor")
    return dim % max(rank, 1)


def _reshape(c: Call, x: SSAValue, shape: list[int]) -> SSAValue:
    if _shape(x) == list(shape):
        return x
    return c.emit(relay.ReshapeOp(x, newshape=list(shape)))


def _wrapped(c: Call, index: SSAValue, data: SSAValue, axis: int) -> SSAValue:
    """Index values checked against `axis` of `data`, as int64, negatives counted from the end."""
    index = checked_indices(c, c.cast(index, I64), data, axis, c.label)
    size = _shape(data)[axis]
    negative = c.emit(relay.LessOp(index, c.constant(0, I64)))
    return c.emit(relay.WhereOp(negative, c.emit(relay.AddOp(index, c.constant(size, I64))), index))


# --- advanced indexing -----------------------------------------------------------------------


def _index_list(c: Call, key: str, rank: int) -> list[SSAValue | None]:
    """The index tensors, one per leading axis (None: the whole axis). A boolean mask known
    at import time becomes the integer indices it selects; one computed at run time gives a
    data-dependent shape and is unsupported."""
    out: list[SSAValue | None] = []
    for v in c.raw(key):
        if isinstance(v, torch.Tensor) and v.dtype in (torch.bool, torch.uint8):
            out.extend(c.constant(i) for i in torch.nonzero(v.bool(), as_tuple=True))
        elif v is None:
            out.append(None)
        else:
            t = c.as_tensor(v)
            if _dtype(t) == np.bool_ or _dtype(t) == np.uint8:
                raise c.unsupported(
                    "boolean-mask indexing with a run-time mask (data-dependent shape)"
                )
            out.append(t)
    if len(out) > rank:
        raise c.error(f"{len(out)} indices for a rank-{rank} tensor")
    return out + [None] * (rank - len(out))


def flat_positions(c: Call, data: SSAValue, indices: list[SSAValue | None]) -> SSAValue:
    """The flat position in `data` of every element of `data[indices]` (int64, in the
    result's shape): the broadcast index tensors' axes replace the indexed axes when those
    are adjacent, else they come first (numpy's rule)."""
    shape = _shape(data)
    rank = len(shape)
    strides = [math.prod(shape[d + 1 :]) for d in range(rank)]
    used = [d for d, v in enumerate(indices) if v is not None]
    bshape = list(broadcast_shapes(*[tuple(_shape(indices[d])) for d in used]))
    full = [d for d in range(rank) if indices[d] is None]
    adjacent = used == list(range(used[0], used[-1] + 1))
    before = [d for d in full if d < used[0]] if adjacent else []
    after = [d for d in full if d not in before]
    out_shape = [shape[d] for d in before] + bshape + [shape[d] for d in after]
    nb = len(bshape)
    total = None
    for d in used:
        index = indices[d]
        assert index is not None
        term = c.emit(relay.MultiplyOp(_wrapped(c, index, data, d), c.constant(strides[d], I64)))
        own = _shape(index)
        term = _reshape(c, term, [1] * len(before) + [1] * (nb - len(own)) + own + [1] * len(after))
        total = term if total is None else c.emit(relay.AddOp(total, term))
    for position, d in enumerate(before + after):
        at = position if d in before else len(before) + nb + (position - len(before))
        view = [1] * len(out_shape)
        view[at] = shape[d]
        term = c.constant((np.arange(shape[d], dtype=np.int64) * strides[d]).reshape(view))
        total = c.emit(relay.AddOp(total, term))
    assert total is not None
    if _shape(total) != out_shape:
        total = c.emit(relay.BroadcastToOp(total, shape=out_shape))
    return total


def _flat(c: Call, x: SSAValue) -> SSAValue:
    return _reshape(c, x, [math.prod(_shape(x))])


# --- data-dependent sizes: relay.nonzero (computed by the VM, docs/control-flow.md) -----------

_SIZES = itertools.count()


def _count_symbol(what: str) -> str:
    """A symbol for a size the data decides, unique in the process."""
    return f"{what}_{next(_SIZES)}"


def _positions(c: Call, mask: SSAValue) -> SSAValue:
    """The flat positions where `mask` (any rank) is true: [n] int64, n decided at run time."""
    flat = _flat(c, mask) if len(_shape(mask)) != 1 else mask
    found = c.emit(relay.NonZeroOp(flat, size=_count_symbol("nonzero")))  # [1, n]
    return c.emit(relay.SqueezeOp(found, axis=[0]))


def _masked(c: Call, x: SSAValue, mask: SSAValue) -> SSAValue:
    """x[mask] for a boolean mask over x's leading axes, computed at run time."""
    xs, ms = _shape(x), _shape(mask)
    if xs[: len(ms)] != ms:
        raise c.error(f"the mask's shape {ms} does not match the indexed shape {xs[: len(ms)]}")
    rows = _reshape(c, x, [math.prod(ms), *xs[len(ms) :]])
    return c.emit(relay.TakeOp(rows, _positions(c, mask), axis=0))


@aten_op("nonzero")
def nonzero(c: Call) -> SSAValue:
    """The indices of the nonzero elements, one row each ([n, rank], n decided at run time)."""
    x = c.tensor(0)
    found = c.emit(relay.NonZeroOp(x, size=_count_symbol("nonzero")))
    return c.emit(relay.TransposeOp(found, axes=[1, 0]))


@aten_op("masked_select")
def masked_select(c: Call) -> SSAValue:
    """The elements of x (broadcast with mask) where mask is true, flattened."""
    x, mask = c.tensor(0), c.tensor("mask", np.bool_)
    shape = list(broadcast_shapes(tuple(_shape(x)), tuple(_shape(mask))))
    if _shape(x) != shape:
        x = c.emit(relay.BroadcastToOp(x, shape=shape))
    if _shape(mask) != shape:
        mask = c.emit(relay.BroadcastToOp(mask, shape=shape))
    return c.emit(relay.TakeOp(_flat(c, x), _positions(c, mask), axis=0))


@aten_op("index")
def index(c: Call) -> SSAValue:
    """x[indices]: one index tensor is a `take` along its axis; several (or with a full axis
    before them) gather flat positions; a boolean mask computed at run time selects the rows
    where it is true (a data-dependent size)."""
    x = c.tensor(0)
    raw = [v for v in c.raw("indices")]
    if len(raw) == 1 and isinstance(raw[0], SSAValue) and _dtype(raw[0]) in (np.bool_, np.uint8):
        mask = raw[0] if _dtype(raw[0]) == np.bool_ else c.as_tensor(raw[0], np.bool_)
        return _masked(c, x, mask)
    indices = _index_list(c, "indices", c.rank(0))
    used = [d for d, v in enumerate(indices) if v is not None]
    if not used:
        return x
    if len(used) == 1:
        axis = used[0]
        idx = _wrapped(c, indices[axis], x, axis)
        return c.emit(relay.TakeOp(x, idx, axis=axis))
    positions = flat_positions(c, x, indices)
    return c.emit(relay.TakeOp(_flat(c, x), positions, axis=0))


# --- writes ------------------------------------------------------------------------------------

REDUCTIONS = {
    "sum": (relay.SumOp, relay.AddOp),
    "prod": (relay.ProdOp, relay.MultiplyOp),
    "amax": (relay.MaxOp, relay.MaximumOp),
    "amin": (relay.MinOp, relay.MinimumOp),
}


def _neutral(reduction: str, dtype: np.dtype) -> object:
    if reduction in ("sum", "mean"):
        return 0
    if reduction == "prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if reduction == "amax" else np.inf
    if dtype == np.bool_:
        return reduction == "amin"
    info = np.iinfo(dtype)
    return info.min if reduction == "amax" else info.max


def scatter_rows(
    c: Call,
    data: SSAValue,
    positions: SSAValue,
    updates: SSAValue,
    reduction: str,
    include_self: bool = True,
) -> SSAValue:
    """data [L, R...] with the rows at `positions` [Q] (in 0..L-1) combined with `updates`
    [Q, R...] by `reduction`: "none" (the last update wins), sum, prod, amax, amin, mean."""
    rows, rest = _shape(data)[0], _shape(data)[1:]
    count = _shape(positions)[0]
    if rows * count * max(1, math.prod(rest)) > MAX_PAIRS:
        raise c.unsupported(f"a scatter of {count} updates into {rows} rows (too large)")
    dtype = _dtype(data)
    updates = c.cast(updates, dtype)
    iota = c.constant(np.arange(rows, dtype=np.int64).reshape(rows, 1))
    match = c.emit(relay.EqualOp(iota, _reshape(c, positions, [1, count])))
    order = c.constant(np.arange(count, dtype=np.int64).reshape(1, count))
    latest = c.emit(relay.WhereOp(match, order, c.constant(-1, I64)))
    top = c.emit(relay.MaxOp(latest, axis=[1]))  # [L]: the last matching update, or -1
    hit = c.emit(relay.GreaterEqualOp(top, c.constant(0, I64)))
    hit = _reshape(c, hit, [rows] + [1] * len(rest))
    if reduction == "none":
        safe = c.emit(relay.MaximumOp(top, c.constant(0, I64)))
        chosen = c.emit(relay.TakeOp(updates, safe, axis=0))
        return c.emit(relay.WhereOp(hit, chosen, data))
    wide = _reshape(c, match, [rows, count] + [1] * len(rest))
    spread = c.emit(relay.ExpandDimsOp(updates, axis=0))  # [1, Q, R...]
    work = dtype if dtype != np.bool_ else np.dtype(np.int8)
    neutral = c.constant(np.asarray(_neutral(reduction, dtype), work))
    picked = c.emit(relay.WhereOp(wide, c.cast(spread, work), neutral))
    reduce, combine = REDUCTIONS["sum" if reduction == "mean" else reduction]
    total = c.emit(reduce(picked, axis=[1]))
    base = c.cast(data, work)
    if include_self:
        total = c.emit(combine(base, total))
    if reduction == "mean":
        counts = c.emit(relay.SumOp(c.cast(wide, work), axis=[1]))
        if include_self:
            counts = c.emit(relay.AddOp(counts, c.constant(1, work)))
        counts = c.emit(relay.MaximumOp(counts, c.constant(1, work)))
        divide = relay.DivideOp if dtype.kind == "f" else relay.FloorDivideOp
        total = c.emit(divide(total, counts))
    return c.emit(relay.WhereOp(hit, c.cast(total, dtype), data))


@aten_op("index_put")
def index_put(c: Call) -> SSAValue:
    """x[indices] = values (accumulate: +=), on the flattened x."""
    x = c.tensor(0)
    indices = _index_list(c, "indices", c.rank(0))
    if all(v is None for v in indices):
        raise c.unsupported("index_put without index tensors")
    positions = flat_positions(c, x, indices)
    shape = _shape(positions)
    values = c.tensor("values", c.dtype(0))
    if _shape(values) != shape:
        values = c.emit(relay.BroadcastToOp(values, shape=shape))
    count = math.prod(shape)
    reduction = "sum" if c.value("accumulate", False) else "none"
    out = scatter_rows(
        c, _flat(c, x), _reshape(c, positions, [count]), _reshape(c, values, [count]), reduction
    )
    return _reshape(c, out, c.shape(0))


SCATTER_REDUCE = {"add": "sum", "multiply": "prod", "sum": "sum", "prod": "prod"}
SCATTER_REDUCE |= {"mean": "mean", "amax": "amax", "amin": "amin"}


@aten_op("scatter", "scatter_add", "scatter_reduce")
def scatter(c: Call) -> SSAValue:
    """self with self[..., index[i], ...] (along dim) set from src (or value), or combined
    with it by the reduction."""
    x = c.tensor(0)
    shape = list(c.shape(0))
    rank = len(shape)
    axis = _axis(c, c.int("dim"), rank)
    ishape = list(c.shape("index"))
    if math.prod(ishape) == 0:
        return x
    if len(ishape) != rank or any(
        i > s for d, (i, s) in enumerate(zip(ishape, shape)) if d != axis
    ):
        raise c.error(f"index {ishape} does not fit self {shape} along dim {axis}")
    reduction = "sum" if c.name == "scatter_add" else "none"
    reduce = c.value("reduce", None) if "reduce" in c.names else None
    if reduce is not None:
        if reduce not in SCATTER_REDUCE:
            raise c.unsupported(f"scatter reduce '{reduce}'")
        reduction = SCATTER_REDUCE[reduce]
    include_self = bool(c.value("include_self", True)) if "include_self" in c.names else True
    if "src" in c.names:
        src = c.tensor("src", c.dtype(0))
        if _shape(src) != ishape:
            src = c.emit(relay.StridedSliceOp(src, begin=[0] * rank, end=ishape))
    else:
        src = c.emit(relay.BroadcastToOp(c.as_tensor(c.raw("value"), c.dtype(0)), shape=ishape))
    strides = [math.prod(shape[d + 1 :]) for d in range(rank)]
    coords = np.indices(ishape)
    base = sum((coords[d] * strides[d] for d in range(rank) if d != axis), np.zeros(ishape, int))
    target = _wrapped(c, c.tensor("index"), x, axis)
    target = c.emit(relay.MultiplyOp(target, c.constant(strides[axis], I64)))
    positions = c.emit(relay.AddOp(target, c.constant(base.astype(np.int64))))
    count = math.prod(ishape)
    out = scatter_rows(
        c,
        _flat(c, x),
        _reshape(c, positions, [count]),
        _reshape(c, src, [count]),
        reduction,
        include_self,
    )
    return _reshape(c, out, shape)


def _write_along(c: Call, x: SSAValue, src: SSAValue, axis: int, picks: list[int]) -> SSAValue:
    """x with the positions `picks` along `axis` replaced by src's slices in order."""
    size = _shape(x)[axis]
    src = c.cast(src, _dtype(x))
    want = _shape(x)
    want[axis] = len(picks)
    if _shape(src) != want:
        if len(_shape(src)) > len(want):
            raise c.error(f"src {_shape(src)} does not fit {want}")
        src = c.emit(relay.BroadcastToOp(src, shape=want))
    if not picks:
        return x
    if picks == list(range(size)):
        return src
    source = np.zeros(size, np.int64)
    source[picks] = np.arange(len(picks))
    mask = np.zeros(size, np.bool_)
    mask[picks] = True
    view = [1] * len(want)
    view[axis] = size
    taken = c.emit(relay.TakeOp(src, c.constant(source), axis=axis))
    return c.emit(relay.WhereOp(c.constant(mask.reshape(view)), taken, x))


@aten_op("slice_scatter")
def slice_scatter(c: Call) -> SSAValue:
    x = c.tensor(0)
    rank = c.rank(0)
    axis = _axis(c, c.int("dim", 0), rank)
    start, end = c.value("start", None), c.value("end", None)
    step = c.int("step", 1)
    if step < 1:
        raise c.error(f"slice step must be positive, got {step}")
    picks = list(range(c.shape(0)[axis]))[slice(start, end, step)]
    return _write_along(c, x, c.tensor("src"), axis, picks)


@aten_op("select_scatter")
def select_scatter(c: Call) -> SSAValue:
    x = c.tensor(0)
    rank = c.rank(0)
    axis = _axis(c, c.int("dim"), rank)
    size = c.shape(0)[axis]
    index = c.int("index")
    if not -size <= index < size:
        raise c.error(f"index {index} is out of range for dimension {axis} of size {size}")
    src = c.emit(relay.ExpandDimsOp(c.tensor("src"), axis=axis))
    return _write_along(c, x, src, axis, [index % size])


def _inclusive_prefix_sum(c: Call, x: SSAValue) -> SSAValue:
    """Running totals of a 1-d tensor in log2(n) shifted additions (Hillis-Steele)."""
    (n,) = _shape(x)
    shift = 1
    while shift < n:
        zeros = c.constant(np.zeros(shift, _dtype(x)))
        head = c.emit(relay.StridedSliceOp(x, begin=[0], end=[n - shift], axes=[0]))
        x = c.emit(relay.AddOp(x, c.emit(relay.ConcatenateOp(zeros, head, axis=0))))
        shift *= 2
    return x


@aten_op("masked_scatter")
def masked_scatter(c: Call) -> SSAValue:
    """The positions where mask is true, in order, take source's elements in order."""
    x = c.tensor(0)
    shape = list(c.shape(0))
    mask = c.tensor("mask", np.bool_)
    if _shape(mask) != shape:
        mask = c.emit(relay.BroadcastToOp(mask, shape=shape))
    source = _flat(c, c.tensor("source", c.dtype(0)))
    mask = _flat(c, mask)
    if math.prod(_shape(source)) == 0:
        raise c.unsupported("masked_scatter with an empty source")
    rank = _inclusive_prefix_sum(c, c.cast(mask, I64))
    position = c.emit(relay.SubtractOp(rank, c.constant(1, I64)))
    position = c.emit(relay.WhereOp(mask, position, c.constant(0, I64)))
    position = checked_indices(c, position, source, 0, c.label)
    taken = c.emit(relay.TakeOp(source, position, axis=0))
    return _reshape(c, c.emit(relay.WhereOp(mask, taken, _flat(c, x))), shape)


# --- reordering --------------------------------------------------------------------------------


@aten_op("flip")
def flip(c: Call) -> SSAValue:
    x = c.tensor(0)
    shape = c.shape(0)
    for d in sorted({_axis(c, d, len(shape)) for d in c.ints("dims")}):
        if shape[d] > 1:
            reverse = c.constant(np.arange(shape[d] - 1, -1, -1, dtype=np.int64))
            x = c.emit(relay.TakeOp(x, reverse, axis=d))
    return x


@aten_op("diagonal")
def diagonal(c: Call) -> SSAValue:
    """The (offset) diagonal of axes dim1, dim2, appended as the last axis."""
    shape = list(c.shape(0))
    rank = len(shape)
    d1, d2 = _axis(c, c.int("dim1", 0), rank), _axis(c, c.int("dim2", 1), rank)
    if d1 == d2:
        raise c.error(f"diagonal dimensions {d1} and {d2} are the same")
    offset = c.int("offset", 0)
    n1, n2 = shape[d1], shape[d2]
    if offset >= 0:
        i = np.arange(max(0, min(n1, n2 - offset)))
        flat = i * n2 + i + offset
    else:
        i = np.arange(max(0, min(n1 + offset, n2)))
        flat = (i - offset) * n2 + i
    if flat.size == 0:
        raise c.unsupported("an empty diagonal")
    perm = [d for d in range(rank) if d not in (d1, d2)] + [d1, d2]
    x = c.tensor(0)
    if perm != list(range(rank)):
        x = c.emit(relay.TransposeOp(x, axes=perm))
    rest = [shape[d] for d in perm[:-2]]
    x = _reshape(c, x, rest + [n1 * n2])
    return c.emit(relay.TakeOp(x, c.constant(flat.astype(np.int64)), axis=len(rest)))


def _last(c: Call, x: SSAValue, axis: int) -> tuple[SSAValue, list[int] | None]:
    """x with `axis` moved last, and the permutation that moves it back (None: none)."""
    rank = len(_shape(x))
    if axis == rank - 1:
        return x, None
    perm = [d for d in range(rank) if d != axis] + [axis]
    back = [int(a) for a in np.argsort(perm)]
    return c.emit(relay.TransposeOp(x, axes=perm)), back


def _before(c: Call, a: SSAValue, b: SSAValue) -> SSAValue:
    """a < b, NaN above every number (so NaNs sort last ascending, first descending)."""
    less = c.emit(relay.LessOp(a, b))
    if _dtype(a).kind != "f":
        return less
    nan_b = c.emit(relay.IsNanOp(b))
    number_a = c.emit(relay.LogicalNotOp(c.emit(relay.IsNanOp(a))))
    return c.emit(relay.LogicalOrOp(less, c.emit(relay.LogicalAndOp(nan_b, number_a))))


def _same(c: Call, a: SSAValue, b: SSAValue) -> SSAValue:
    equal = c.emit(relay.EqualOp(a, b))
    if _dtype(a).kind != "f":
        return equal
    both_nan = c.emit(relay.LogicalAndOp(c.emit(relay.IsNanOp(a)), c.emit(relay.IsNanOp(b))))
    return c.emit(relay.LogicalOrOp(equal, both_nan))


def _sorted_order(c: Call, x: SSAValue, descending: bool, k: int) -> SSAValue:
    """The indices (int64) of the first k elements of x [..., n] in sorted order (stable):
    element i's rank counts the elements that sort before it."""
    shape = _shape(x)
    n = shape[-1]
    if math.prod(shape) * n > MAX_PAIRS:
        raise c.unsupported(f"sorting {math.prod(shape[:-1])} rows of {n} elements (too large)")
    mine = _reshape(c, x, shape + [1])  # [..., i, 1]
    other = _reshape(c, x, shape[:-1] + [1, n])  # [..., 1, j]
    ahead = _before(c, mine, other) if descending else _before(c, other, mine)
    j_first = c.constant(np.less.outer(np.arange(n), np.arange(n)).T)  # [i, j]: j < i
    tie = c.emit(relay.LogicalAndOp(_same(c, other, mine), j_first))
    ahead = c.emit(relay.LogicalOrOp(ahead, tie))
    rank = c.emit(relay.SumOp(c.cast(ahead, I64), axis=[len(shape)]))  # [..., i]
    slots = c.constant(np.arange(k, dtype=np.int64).reshape(1, k))
    at = c.emit(relay.EqualOp(_reshape(c, rank, shape + [1]), slots))  # [..., i, r]
    iota = c.constant(np.arange(n, dtype=np.int64).reshape(n, 1))
    placed = c.emit(relay.WhereOp(at, iota, c.constant(0, I64)))
    return c.emit(relay.SumOp(placed, axis=[len(shape) - 1]))  # [..., r]


def _sort(c: Call, axis_key: str, descending: bool, k: int | None) -> tuple[SSAValue, SSAValue]:
    x = c.tensor(0)
    if c.rank(0) == 0:
        return x, c.constant(np.zeros((), np.int64))
    axis = _axis(c, c.int(axis_key, -1), c.rank(0))
    n = c.shape(0)[axis]
    k = n if k is None else k
    if not 0 <= k <= n:
        raise c.error(f"k = {k} is outside [0, {n}]")
    if k == 0 or n == 0:
        raise c.unsupported("an empty sort or topk result")
    moved, back = _last(c, x, axis)
    order = _sorted_order(c, moved, descending, k)
    values = c.emit(relay.GatherOp(moved, order, axis=len(_shape(moved)) - 1))
    if back is not None:
        values = c.emit(relay.TransposeOp(values, axes=back))
        order = c.emit(relay.TransposeOp(order, axes=back))
    return values, order


@aten_op("sort")
def sort(c: Call) -> tuple[SSAValue, SSAValue]:
    """Values and indices in order; equal values keep their order (stable, which is also a
    valid result where torch does not promise stability)."""
    return _sort(c, "dim", bool(c.value("descending", False)), None)


@aten_op("argsort")
def argsort(c: Call) -> SSAValue:
    return _sort(c, "dim", bool(c.value("descending", False)), None)[1]


@aten_op("topk")
def topk(c: Call) -> tuple[SSAValue, SSAValue]:
    """The k largest (or smallest) in sorted order; equal values: the lower index first."""
    return _sort(c, "dim", bool(c.value("largest", True)), c.int("k"))
