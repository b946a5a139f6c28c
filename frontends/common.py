"""Relay-building pieces shared by the ONNX and PyTorch frontends.

`emit_constant` puts a numpy constant into a block (its ops from
`xrelay.dialects.constants.constant_ops`: a large splat becomes a broadcast scalar).
`matmul_nd` gives numpy matmul semantics (any batch rank, broadcasting, 1-d operands) on
relay's 2-d/3-d matmuls; `stack` joins tensors on a new axis; `arange`, `dim_scalar` and
`dims_tensor` give, as run-time tensors, an index range of a dynamic length and the values
of dynamic dimensions (dialects/dims.py). They take anything with an `emit(op)` that adds
the op and returns its result. `checked_axis` is how every frontend's converters read an
axis the model gives.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np
from xdsl.dialects.builtin import LocationAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xrelay.dialects import relay
from xrelay.dialects.constants import constant_ops, constant_value
from xrelay.dialects.dims import ANONYMOUS, Dim, dim_str, make_tensor, prod, shape_of, symbol
from xrelay.dialects.dtypes import element_type
from xrelay.dialects.relay.tensor import check_index_values


class Emitter(Protocol):
    def emit(self, op: Operation) -> Any: ...


def checked_axis(value: Any, rank: int, error: Callable[[str], Exception], what: str) -> int:
    """`value`, an axis of a rank-`rank` tensor a model gives (negative from the end), as
    0 .. rank - 1; out of [-rank, rank) raises `error(message)` (the converter's, naming its
    node): wrapping it around would answer for another axis."""
    a = int(value)
    if not -rank <= a < rank:
        raise error(f"{what} {a} is out of range for rank {rank}")
    return a % rank


def emit_constant(block: Block, array: np.ndarray, loc: LocationAttr) -> SSAValue:
    """Append a constant holding `array` to `block`; a large splat becomes a broadcast scalar."""
    ops = constant_ops(array)
    for op in ops:
        op.location = loc
        block.add_op(op)
    return ops[-1].results[0]


def const(b: Emitter, array: Any, dtype: Any = None) -> SSAValue:
    """A constant emitted through `b`."""
    result = None
    for op in constant_ops(np.asarray(array, dtype=dtype)):
        result = b.emit(op)
    return result


def checked_indices(
    b: Emitter, indices: SSAValue, data: SSAValue, axis: int, what: str, depth: int = 0
) -> SSAValue:
    """`indices` as an op of `what` (the model node) may use them: constant ones are
    checked now, the others at run time (relay.check_indices)."""
    value = constant_value(indices)
    shape = shape_of(data.type)
    if value is not None and all(isinstance(d, int) for d in shape):
        check_index_values(what, value, shape, axis % len(shape), depth)
        return indices
    return b.emit(relay.CheckIndicesOp(indices, data, axis=axis, depth=depth, what=what))


def arange(b: Emitter, n: Dim, dtype: Any = np.int64) -> SSAValue:
    """0, 1, ..., n - 1 as a 1-d tensor of `dtype`, `n` an int or a dimension expression."""
    if isinstance(n, int):
        return const(b, np.arange(n, dtype=dtype))
    return b.emit(relay.ArangeOp(n, dtype=element_type(np.dtype(dtype))))


def dim_scalar(b: Emitter, d: Dim, dtype: Any = np.int64) -> SSAValue:
    """The value of dimension `d` (an int or an expression) as a 0-d tensor at run time:
    the size of a tensor of that length, read with shape_of."""
    if isinstance(d, int):
        return const(b, d, dtype)
    line = b.emit(relay.BroadcastToOp(const(b, 0, np.int8), shape=[d]))
    size = b.emit(relay.ReshapeOp(b.emit(relay.ShapeOfOp(line)), newshape=[]))
    if np.dtype(dtype) == np.int64:
        return size
    return b.emit(relay.CastOp(size, dtype=element_type(np.dtype(dtype))))


def dims_tensor(b: Emitter, dims: np.ndarray) -> SSAValue:
    """An int64 tensor holding dimension values (ints and expressions), computed at run
    time: what `Shape` of a tensor with dynamic dimensions gives."""
    entries = [b.emit(relay.ReshapeOp(dim_scalar(b, d), newshape=[1])) for d in dims.flat]
    flat = entries[0] if len(entries) == 1 else b.emit(relay.ConcatenateOp(*entries, axis=0))
    return b.emit(relay.ReshapeOp(flat, newshape=list(dims.shape)))


def stack(b: Emitter, values: list[SSAValue], axis: int) -> SSAValue:
    """Tensors of one shape joined on a new axis `axis` (numpy.stack)."""
    parts = [b.emit(relay.ExpandDimsOp(v, axis=axis)) for v in values]
    return parts[0] if len(parts) == 1 else b.emit(relay.ConcatenateOp(*parts, axis=axis))


def broadcast_shapes(*shapes: tuple) -> tuple:
    """numpy broadcasting of shapes whose dimensions may be expressions (dialects/dims.py);
    raises ValueError when two dimensions are neither equal nor 1."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        dims = {s[i - rank + len(s)] for s in shapes if i - rank + len(s) >= 0} - {1}
        if len(dims) > 1:
            raise ValueError(f"shapes {[list(s) for s in shapes]} are not broadcastable")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def matmul_nd(b: Emitter, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    """numpy matmul semantics on relay matmul/batch_matmul plus reshapes."""
    ls, rs = list(shape_of(lhs.type)), list(shape_of(rhs.type))
    batch = list(broadcast_shapes(tuple(ls[:-2]), tuple(rs[:-2])))
    out = batch + ls[-2:-1] * (len(ls) > 1) + rs[-1:] * (len(rs) > 1)
    if len(ls) == 1:
        lhs, ls = b.emit(relay.ReshapeOp(lhs, newshape=(1, ls[0]))), [1, ls[0]]
    if len(rs) == 1:
        rhs, rs = b.emit(relay.ReshapeOp(rhs, newshape=(rs[0], 1))), [rs[0], 1]
    y = _matmul_2d_up(b, lhs, rhs, ls, rs, batch)
    if list(shape_of(y.type)) != out:
        y = b.emit(relay.ReshapeOp(y, newshape=out))
    return y


def _matmul_2d_up(
    b: Emitter, lhs: SSAValue, rhs: SSAValue, ls: list[int], rs: list[int], batch: list[int]
) -> SSAValue:
    m, k, n = ls[-2], ls[-1], rs[-1]
    if len(ls) == 2 and len(rs) == 2:
        return b.emit(relay.MatmulOp(lhs, rhs))
    if len(rs) == 2:  # fold the batch into the rows
        flat = b.emit(relay.ReshapeOp(lhs, newshape=(prod(ls[:-1]), k)))
        y = b.emit(relay.MatmulOp(flat, rhs))
        return b.emit(relay.ReshapeOp(y, newshape=(*ls[:-1], n)))
    nb = prod(batch)

    def as_3d(v: SSAValue, shape: list[int]) -> SSAValue:
        full = [*batch, *shape[-2:]]
        if shape != full:
            v = b.emit(relay.BroadcastToOp(v, shape=full))
        return b.emit(relay.ReshapeOp(v, newshape=(nb, *shape[-2:])))

    y = b.emit(relay.BatchMatmulOp(as_3d(lhs, ls), as_3d(rhs, rs)))
    return b.emit(relay.ReshapeOp(y, newshape=(*batch, m, n)))


def match_run_time_dims(b: Emitter, x: SSAValue, ref: SSAValue) -> SSAValue:
    """`x`, about to be broadcast against `ref`: where the two have different symbols for
    one (right-aligned) axis, neither of which is 1 (two sizes the shape rules cannot prove
    compatible: data-dependent sizes, a loop-carried value), `x` takes ref's symbol through
    `relay.match_dims`, which checks at run time that its size equals ref's or is 1."""
    xs, rs = shape_of(x.type), shape_of(ref.type)
    pairs: list[int] = []
    for k in range(1, min(len(xs), len(rs)) + 1):
        p, q = xs[-k], rs[-k]
        if not isinstance(p, int) and not isinstance(q, int) and p != q:
            pairs += [len(xs) - k, len(rs) - k]
    if not pairs:
        return x
    return b.emit(relay.MatchDimsOp(x, ref, pairs=pairs))


def join_types(
    x: TensorType, y: TensorType, fresh: Callable[[int], str], free: set[str] | None = None
) -> TensorType:
    """The type of a value that is `x` on one path and `y` on another (one element type and
    rank, which callers check): a dimension they disagree on is a fresh symbol `fresh(axis)`.
    For a branch (`free` None) an unknown `?` counts as disagreeing. For a loop-carried value
    `x` is the body's argument; a dimension of it that is a symbol in `free` (made by an
    earlier widening) already stands for any size and stays, and the symbols made are added
    to `free`."""
    dims = []
    for axis, (p, q) in enumerate(zip(shape_of(x), shape_of(y))):
        if free is None:
            same = p == q and dim_str(p) != ANONYMOUS
        else:
            same = p == q or (not isinstance(p, int) and p.is_Symbol and p.name in free)
        if not same:
            name = fresh(axis)
            if free is not None:
                free.add(name)
            p = symbol(name)
        dims.append(p)
    return make_tensor(x.element_type, dims)


def outside_type(
    element: Attribute, dims: Sequence[Dim], local: set[str], fresh: Callable[[int], str]
) -> TensorType:
    """The type of a loop's result seen from outside it: every dimension that reads a
    symbol of the loop body (`local`) is a fresh symbol `fresh(axis)`."""
    out = [
        symbol(fresh(axis))
        if not isinstance(d, int) and {s.name for s in d.free_symbols} & local
        else d
        for axis, d in enumerate(dims)
    ]
    return make_tensor(element, out)


def erase_block(block: Block) -> None:
    """Erase a region body converted speculatively (last op first, so no use is left)."""
    for op in reversed(list(block.ops)):
        op.detach()
        op.erase(safe_erase=False)
