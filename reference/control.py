"""The oracle for run-time control flow and data-dependent sizes: `relay.if`, `relay.loop`
(dialects/relay/control.py) and `relay.nonzero`, `relay.unique`,
`relay.non_max_suppression` (dialects/relay/data_dependent.py).

`evaluate_dynamic` walks a function op by op, as `evaluate_function` does, but learns the
symbols' values as it goes: from the arguments, then from each data-dependent result and
each region's results; a loop body binds its carried values' symbols afresh at every
iteration. An ordinary op whose types hold symbols is evaluated as a copy with those values
substituted (so its shape rule is checked against the real sizes).

These implementations are written apart from the VM's (lowering/host_ops.py), which they
check: plain loops over the definitions rather than vectorized numpy.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dims import is_dynamic, shape_of
from xrelay.dialects.dtypes import numpy_dtype, tensor_type
from xrelay.dialects.specialize import specialize_op, specialize_types
from xrelay.errors import Error
from xrelay.ir import location_str
from xrelay.reference.registry import impl
from xrelay.reference.sequence import SEQUENCE_IMPLS
from xrelay.signature import main_function

MAX_ITERATIONS = 1_000_000


def has_vm_ops(fn: func.FuncOp) -> bool:
    vm_ops = tuple(relay.VM_OPS)
    types = [*fn.function_type.inputs, *fn.function_type.outputs]
    return any(isinstance(t, relay.SequenceType | relay.OptionalType) for t in types) or any(
        isinstance(op, vm_ops) for op in fn.walk()
    )


def evaluate_dynamic(fn: func.FuncOp, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    binding: dict[str, int] = {}
    block = fn.body.block
    for arg, array in zip(block.args, args):
        if isinstance(array, np.ndarray):
            _bind(arg.type, array.shape, binding)
    env: dict[SSAValue, np.ndarray] = dict(zip(block.args, args))
    return _block(block, env, binding)


def _bind(
    t: Attribute, shape: tuple[int, ...], binding: dict[str, int], force: bool = False
) -> None:
    """Learn the symbols `t` names from an array of `shape`."""
    if not isinstance(t, TensorType):
        return
    for d, size in zip(shape_of(t), shape):
        if not isinstance(d, int) and d.is_Symbol and (force or d.name not in binding):
            binding[d.name] = int(size)


def _block(
    block: Block, env: dict[SSAValue, np.ndarray], binding: dict[str, int]
) -> list[np.ndarray]:
    from xrelay.reference.executor import evaluate_op

    for op in block.ops:
        if isinstance(op, func.ReturnOp | relay.YieldOp):
            return [env[v] for v in op.operands]
        if isinstance(op, relay.IfOp):
            region = (
                op.then_region if bool(np.asarray(env[op.cond]).reshape(-1)[0]) else op.else_region
            )
            results = _block(region.block, env, dict(binding))
        elif isinstance(op, relay.LoopOp):
            results = _loop(op, env, binding)
        elif type(op) in SEQUENCE_IMPLS:  # lists, not arrays
            results = SEQUENCE_IMPLS[type(op)](op, *[env[v] for v in op.operands])
        elif isinstance(op, relay.DeferredOp):  # converted for these operands' values
            results = _deferred(op, [env[v] for v in op.operands])
        elif isinstance(op, tuple(relay.DATA_DEPENDENT_OPS)):
            results = evaluate_op(op, [env[v] for v in op.operands])
        else:
            results = _ordinary(op, [env[v] for v in op.operands], binding, evaluate_op)
        for r, array in zip(op.results, results, strict=True):
            if isinstance(array, np.ndarray):
                _bind(r.type, array.shape, binding)
            env[r] = array
    raise Error("a block with no terminator")


def _deferred(op: relay.DeferredOp, operands: list[np.ndarray]) -> list[np.ndarray]:
    """A relay.deferred node among ops of run-time sizes: converted on its own, for the
    operands' shapes and the values it reads, then evaluated."""
    from xrelay.reference.executor import evaluate_function, evaluate_op

    block = Block(arg_types=[tensor_type(a.shape, a.dtype) for a in operands])
    copy = op.clone(value_mapper=dict(zip(op.operands, block.args)))
    block.add_op(copy)
    block.add_op(func.ReturnOp(*copy.results))
    types = FunctionType.from_lists(list(block.arg_types), [r.type for r in copy.results])
    module = ModuleOp([func.FuncOp("main", types, Region(block))])
    values = {i: operands[i] for i in op.value_indices}
    specialize_types(module, {}, location_str, values, evaluate_op)
    return evaluate_function(main_function(module), operands)


def _ordinary(
    op: Operation, operands: list[np.ndarray], binding: dict[str, int], evaluate_op
) -> list[np.ndarray]:
    types = [v.type for v in (*op.operands, *op.results)]
    if not any(is_dynamic(t) for t in types) and "dims" not in op.properties:
        return evaluate_op(op, operands)
    copy = op.clone()
    try:
        specialize_op(copy, binding)
        return evaluate_op(copy, operands)
    finally:
        copy.erase(safe_erase=False)


def _loop(
    op: relay.LoopOp, env: dict[SSAValue, np.ndarray], binding: dict[str, int]
) -> list[np.ndarray]:
    n = len(op.initial)
    trip = int(np.asarray(env[op.max_trip]))
    cond = bool(np.asarray(env[op.cond]))
    carried = [env[v] for v in op.initial]
    args = op.body.block.args
    scans: list[list[np.ndarray]] = [[] for _ in range(len(op.outputs) - n)]
    i = 0
    while cond and i < trip:
        if i >= MAX_ITERATIONS:
            raise Error(f"{location_str(op)}: the loop ran more than {MAX_ITERATIONS} iterations")
        inner = dict(binding)
        values = [np.array(i, np.int64), np.array(cond), *carried]
        for arg, value in zip(args, values):
            if isinstance(value, np.ndarray):
                _bind(arg.type, value.shape, inner, force=True)
            env[arg] = value
        outs = _block(op.body.block, env, inner)
        cond, carried = bool(np.asarray(outs[0])), outs[1 : 1 + n]
        for scan, value in zip(scans, outs[1 + n :]):
            scan.append(value)
        i += 1
    stacked = []
    for k, scan in enumerate(scans):
        if scan:
            stacked.append(np.stack(scan))
        else:
            elem = [d if isinstance(d, int) else 0 for d in shape_of(op.outputs[n + k].type)[1:]]
            stacked.append(np.zeros([0, *elem], numpy_dtype(op.outputs[n + k].type.element_type)))
    return [*carried, *stacked]


@impl(relay.NonZeroOp)
def _nonzero(op: relay.NonZeroOp, x: np.ndarray) -> np.ndarray:
    rows = [idx for idx in np.ndindex(*x.shape) if x[idx] != 0]
    return np.array(rows, np.int64).reshape(len(rows), x.ndim).T


@impl(relay.UniqueOp)
def _unique(op: relay.UniqueOp, x: np.ndarray) -> list[np.ndarray]:
    axis = op.attrs["axis"]
    if axis is None:
        items = list(x.reshape(-1))
        key = lambda v: v.item()
    else:
        axis %= x.ndim
        items = [np.take(x, i, axis=axis) for i in range(x.shape[axis])]
        key = lambda v: tuple(v.reshape(-1).tolist())
    firsts: dict = {}
    for i, item in enumerate(items):
        firsts.setdefault(key(item), i)
    order = list(firsts)  # first occurrence
    if op.attrs["sorted"]:
        order.sort()
    position = {k: j for j, k in enumerate(order)}
    inverse = [position[key(item)] for item in items]
    counts = [inverse.count(j) for j in range(len(order))]
    first = [firsts[k] for k in order]
    if axis is None:
        values = np.array([items[f] for f in first], x.dtype)
    else:
        values = np.stack([items[f] for f in first], axis=axis) if first else np.take(x, [], axis)
    i64 = np.int64
    return [values, np.array(first, i64), np.array(inverse, i64), np.array(counts, i64)]


def _iou(a: np.ndarray, b: np.ndarray, center: bool) -> float:
    def corners(box):
        if center:
            x, y, w, h = (float(v) for v in box)
            return y - h / 2, x - w / 2, y + h / 2, x + w / 2
        y1, x1, y2, x2 = (float(v) for v in box)
        return min(y1, y2), min(x1, x2), max(y1, y2), max(x1, x2)

    (at, al, ab, ar), (bt, bl, bb, br) = corners(a), corners(b)
    inter = max(0.0, min(ab, bb) - max(at, bt)) * max(0.0, min(ar, br) - max(al, bl))
    union = (ab - at) * (ar - al) + (bb - bt) * (br - bl) - inter
    return inter / union if union > 0 else 0.0


@impl(relay.NonMaxSuppressionOp)
def _non_max_suppression(op, boxes, scores, max_output, iou_threshold, score_threshold):
    center = bool(op.attrs["center_point_box"])
    limit, iou_t, score_t = int(max_output), float(iou_threshold), float(score_threshold)
    rows = []
    for b in range(boxes.shape[0]):
        for c in range(scores.shape[1]):
            ranked = sorted(
                (i for i in range(boxes.shape[1]) if scores[b, c, i] > score_t),
                key=lambda i: -float(scores[b, c, i]),
            )
            kept: list[int] = []
            for i in ranked:
                if len(kept) == limit:
                    break
                if all(_iou(boxes[b, i], boxes[b, k], center) <= iou_t for k in kept):
                    kept.append(i)
            rows += [(b, c, i) for i in kept]
    return np.array(rows, np.int64).reshape(len(rows), 3)


@impl(relay.SliceIndicesOp)
def _slice_indices(op, data, start, end):
    """ONNX Slice's rule, written out: negative bounds count from the end, then clamp."""
    size, step = data.shape[op.attrs["axis"] % data.ndim], op.attrs["step"]
    first, last = int(start), int(end)
    first, last = (first + size if first < 0 else first), (last + size if last < 0 else last)
    if step > 0:
        first, last = min(max(first, 0), size), min(max(last, 0), size)
    else:
        first, last = min(max(first, -1), size - 1), min(max(last, -1), size - 1)
    out, i = [], first
    while (i < last) if step > 0 else (i > last):
        out.append(i)
        i += step
    return np.array(out, np.int64)


@impl(relay.TopKOp)
def _topk(op, x, k):
    axis, k = op.attrs["axis"] % x.ndim, int(k)
    if not 0 <= k <= x.shape[axis]:
        raise Error(f"{location_str(op)}: k = {k} is outside [0, {x.shape[axis]}]")
    moved = np.moveaxis(x, axis, -1)
    sign = -1 if op.attrs["largest"] else 1
    values = np.empty((*moved.shape[:-1], k), x.dtype)
    indices = np.empty((*moved.shape[:-1], k), np.int64)
    for idx in np.ndindex(*moved.shape[:-1]):
        row = moved[idx]
        best = sorted(range(row.size), key=lambda i: (sign * row[i].item(), i))[:k]
        values[idx], indices[idx] = row[best], best
    return [np.moveaxis(values, -1, axis), np.moveaxis(indices, -1, axis)]


@impl(relay.MatchDimsOp)
def _match_dims(op, x, ref):
    pairs = op.attrs["pairs"]
    target = list(x.shape)
    for a, r in zip(pairs[::2], pairs[1::2]):
        if x.shape[a] != ref.shape[r] and x.shape[a] != 1:
            raise Error(
                f"{location_str(op)}: axis {a} has size {x.shape[a]}, not {ref.shape[r]} or 1"
            )
        target[a] = ref.shape[r]
    return np.broadcast_to(x, target)
