"""`collapse-loops`: adjacent loops of a linalg.generic that every operand indexes together
(or not at all) -> one loop over their product.

An elementwise op on [1, 512, 7, 7] runs its innermost loop 7 times, too short for a
vector of 8 or 16 lanes: LLVM vectorizes nothing, or a few iterations and a scalar
remainder. Where every operand reads loops d and d + 1 as adjacent dimensions of its row-
major tensor (in that order), or reads neither (a broadcast), the two loops are one loop
over d's size times d + 1's on the operands reshaped to merge those dimensions
(`tensor.reshape`: a view once bufferized). A per-channel scale on NCHW keeps its channel
loop: [1, 512, 7, 7] x [512, 1, 1] runs as [1, 512, 49] x [512, 1, 1], the result viewed
back.

Reductions too: two adjacent loops of the same kind merge (both parallel, or both reduced,
which keeps the order of a sum: row-major over the pair is the merged loop's order), so a
pool over a 13 x 13 plane sums one loop of 169 (SqueezeNet int8's last average pool).

Applies to `linalg.generic`s on static shapes whose maps are plain loop
dimensions (or 0 on an axis of size 1: a broadcast; no offsets), whose operands all have,
along each dimension they read, the same size (one that reads a prefix of a larger tensor
would be addressed with other strides once merged: Inception v1 came out 13 % off before
this check), and whose bodies do not read `linalg.index` (the indices would change
meaning). Others are left as they are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import AffineMapAttr, ModuleOp, TensorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xrelay.dialects.dtypes import dense_from_numpy


def _dims(op: linalg.GenericOp) -> list[list[int | None]] | None:
    """Per operand, the loop dimension of each of its tensor's axes (None: a constant 0
    on an axis of size 1, a broadcast); None if a map has anything else."""
    out: list[list[int | None]] = []
    operands = [*op.inputs, *op.outputs]
    for value, attr in zip(operands, op.indexing_maps.data):
        dims: list[int | None] = []
        for axis, expr in enumerate(attr.data.results):
            if isinstance(expr, AffineDimExpr):
                dims.append(expr.position)
            elif (
                isinstance(expr, AffineConstantExpr)
                and expr.value == 0
                and isinstance(value.type, TensorType)
                and value.type.get_shape()[axis] == 1
            ):
                dims.append(None)
            else:
                return None
        out.append(dims)
    return out


def groups(op: linalg.GenericOp) -> tuple[list[list[int]], list[list[int | None]]] | None:
    """The loops of `op` in runs that merge (each run of consecutive loops) and `_dims` of
    its operands, or None when nothing merges or the op does not qualify."""
    kinds = [it.data for it in op.iterator_types.data]
    if any(isinstance(inner, linalg.IndexOp) for inner in op.body.walk()):
        return None
    operands = [*op.inputs, *op.outputs]
    if not all(isinstance(v.type, TensorType) for v in operands):
        return None
    if any(d < 0 for v in operands for d in v.type.get_shape()):
        return None
    per_operand = _dims(op)
    if per_operand is None:
        return None
    loops = op.indexing_maps.data[0].data.num_dims
    # every operand the size of the loops it reads (an operand read only in part, a
    # prefix of a larger tensor, would be addressed with other strides once merged)
    sizes: dict[int, int] = {}
    for value, dims in zip(operands, per_operand):
        for d, extent in zip(dims, value.type.get_shape()):
            if d is not None and sizes.setdefault(d, extent) != extent:
                return None

    def merges(d: int) -> bool:
        if kinds[d] != kinds[d + 1]:  # a parallel loop and a reduction stay apart
            return False
        for dims in per_operand:
            if (d in dims) != (d + 1 in dims):
                return False
            if d in dims and dims.index(d + 1) != dims.index(d) + 1:
                return False
        return True

    runs: list[list[int]] = [[0]] if loops else []
    for d in range(loops - 1):
        if merges(d):
            runs[-1].append(d + 1)
        else:
            runs.append([d + 1])
    return (runs, per_operand) if len(runs) < loops else None


def view_as(value: SSAValue, shape: list[int], where: InsertPoint, at: Operation) -> SSAValue:
    """`value` viewed as `shape` (a tensor.reshape inserted at `where`, with `at`'s
    location), or `value` itself when it has that shape."""
    assert isinstance(value.type, TensorType)
    if list(value.type.get_shape()) == shape:
        return value
    sizes = arith.ConstantOp(dense_from_numpy(np.array(shape, np.int64)))
    new = tensor.ReshapeOp(value, sizes.result, TensorType(value.type.element_type, shape))
    for o in (sizes, new):
        o.location = at.location
    Rewriter.insert_op([sizes, new], where)
    return new.result


def collapse(op: linalg.GenericOp, runs: list[list[int]], per_operand: list) -> None:
    """Rebuild `op` over the merged loops `runs` on reshaped operands (`per_operand`: its
    `_dims`)."""
    new_dim = {d: i for i, run in enumerate(runs) for d in run}
    operands = [*op.inputs, *op.outputs]

    maps, values = [], []
    for value, dims in zip(operands, per_operand):
        shape = list(value.type.get_shape())
        results, new_shape, axis = [], [], 0
        while axis < len(dims):
            d = dims[axis]
            if d is None:  # a broadcast axis of size 1 stays
                results.append(AffineConstantExpr(0))
                new_shape.append(1)
                axis += 1
                continue
            run = runs[new_dim[d]]
            width = len(run) if d == run[0] else 1
            results.append(AffineDimExpr(new_dim[d]))
            new_shape.append(math.prod(shape[axis : axis + width]))
            axis += width
        maps.append(AffineMapAttr(AffineMap(len(runs), 0, tuple(results))))
        values.append(view_as(value, new_shape, InsertPoint.before(op), op))
    n_in = len(op.inputs)
    body = op.body.clone()
    new = linalg.GenericOp(
        values[:n_in],
        values[n_in:],
        body,
        maps,
        [op.iterator_types.data[run[0]] for run in runs],
        [v.type for v in values[n_in:]],
    )
    new.location = op.location
    Rewriter.insert_op(new, InsertPoint.before(op))
    for old, result in zip(op.results, new.results):
        assert isinstance(old.type, TensorType)
        back = view_as(result, list(old.type.get_shape()), InsertPoint.before(op), op)
        old.replace_all_uses_with(back)
    Rewriter.erase_op(op)


@dataclass(frozen=True)
class CollapseLoops(ModulePass):
    """Merge adjacent loops of the same kind of linalg.generic ops (see the module doc).
    Options: enabled (default true)."""

    name = "collapse-loops"

    enabled: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.enabled:
            return
        for generic in [o for o in op.walk() if isinstance(o, linalg.GenericOp)]:
            found = groups(generic)
            if found is not None:
                collapse(generic, *found)
