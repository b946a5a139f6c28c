"""`tile-transposes`: a copy that transposes -> loops over tiles of one cache line.

A transpose as linalg-to-loops writes it runs the output's loops in order, its innermost
loop the output's last axis: each read of the input then moves a row of the input ahead
(its stride). ResNet-50 int8's pixel-major convolutions leave [1, 49, 2048] bytes that
the next ops read as [1, 2048, 49]: the 49 rows read per channel are 2,048 bytes apart,
all in two of L1's 64 sets, and the copy of 100 KB took 77 us.

Here the loop that reads the input's last (contiguous) axis, of extent S, becomes two:
S / T tiles in its place and T lanes innermost (T: a cache line of elements), on views of
the operands ([.., S, ..] -> [.., S / T, T, ..]). Each step of the loop that walks the
output's rows then reads T contiguous elements of the input, and the T rows of the output
a tile writes stay in L1 until they are done.

Applies to all-parallel `linalg.generic`s on static shapes with one input and one output,
whose body yields its input unchanged, whose output is read through the identity map and
input through a permutation, where S is a multiple of T and at least 2 T, and where the
untiled reads are a multiple of CONFLICT_STRIDE bytes apart. Others are left as they are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import AffineMapAttr, ModuleOp, TensorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xrelay.dialects.dtypes import numpy_dtype
from xrelay.lowering.collapse_loops import view_as

LINE = 64  # bytes in a tile's row of the input
# reads this many bytes apart (or a multiple) share a few of L1's sets: 1,024 apart, 4 sets
# of 8 lines, fewer than a 7 x 7 plane's 49 rows. Tiles are slower where the rows fit: the
# lanes' writes go a row apart, one byte at a time (ResNet-50 int8, same-process A/B:
# [1, 49, 512] 5 -> 30 us, [1, 196, 256] 15 -> 60 us; [1, 49, 2048] 77 -> 33 us)
CONFLICT_STRIDE = 1024


def _permutation(op: linalg.GenericOp) -> list[int] | None:
    """The loop each axis of the input reads, if `op` is a transposing copy (the module
    docstring's conditions); None otherwise."""
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        return None
    if not all(it.data == IteratorType.PARALLEL for it in op.iterator_types.data):
        return None
    block = op.body.block
    last = block.last_op
    if not isinstance(last, linalg.YieldOp) or last.operands[0] is not block.args[0]:
        return None
    if len(block.ops) != 1:
        return None
    src, dst = op.inputs[0], op.outputs[0]
    if not (isinstance(src.type, TensorType) and isinstance(dst.type, TensorType)):
        return None
    if any(d < 0 for d in (*src.type.get_shape(), *dst.type.get_shape())):
        return None
    in_map, out_map = (m.data for m in op.indexing_maps.data)
    rank = out_map.num_dims
    if out_map != AffineMap.identity(rank) or len(in_map.results) != rank:
        return None
    perm = [r.position if isinstance(r, AffineDimExpr) else -1 for r in in_map.results]
    if sorted(perm) != list(range(rank)):
        return None
    return perm


def tile(op: linalg.GenericOp) -> bool:
    """Rebuild `op` over tiles of its input's rows (module docstring); False if it does
    not qualify."""
    perm = _permutation(op)
    if perm is None:
        return False
    rank = len(perm)
    if rank < 2:
        return False  # a scalar's or a vector's copy (CI found the scalar's IndexError)
    a = perm[-1]  # the loop that reads the input's contiguous axis
    if a == rank - 1:
        return False  # the innermost loop reads it already: no transpose there
    src, dst = op.inputs[0], op.outputs[0]
    itemsize = numpy_dtype(dst.type.element_type).itemsize
    in_shape = list(src.type.get_shape())
    # the stride of the untiled innermost loop's reads, in bytes
    stride = math.prod(in_shape[perm.index(rank - 1) + 1 :]) * itemsize
    if stride % CONFLICT_STRIDE:
        return False
    lanes = LINE // itemsize
    size = dst.type.get_shape()[a]
    if lanes < 2 or size % lanes or size < 2 * lanes:
        return False
    tiles = size // lanes
    # loops: the old ones (a now counts tiles), then the lanes innermost (loop `rank`)
    out_shape = list(dst.type.get_shape())
    out_shape[a : a + 1] = [tiles, lanes]
    out_exprs = [AffineDimExpr(d) for d in range(rank)]
    out_exprs[a + 1 : a + 1] = [AffineDimExpr(rank)]
    in_shape[-1:] = [tiles, lanes]
    in_exprs = [AffineDimExpr(d) for d in perm] + [AffineDimExpr(rank)]
    where = InsertPoint.before(op)
    new = linalg.GenericOp(
        [view_as(src, in_shape, where, op)],
        [view_as(dst, out_shape, where, op)],
        op.body.clone(),
        [
            AffineMapAttr(AffineMap(rank + 1, 0, tuple(in_exprs))),
            AffineMapAttr(AffineMap(rank + 1, 0, tuple(out_exprs))),
        ],
        [linalg.IteratorTypeAttr.parallel()] * (rank + 1),
        [TensorType(dst.type.element_type, out_shape)],
    )
    new.location = op.location
    Rewriter.insert_op(new, where)
    back = view_as(new.results[0], list(dst.type.get_shape()), where, op)
    op.results[0].replace_all_uses_with(back)
    Rewriter.erase_op(op)
    return True


@dataclass(frozen=True)
class TileTransposes(ModulePass):
    """Transposing copies -> loops over cache-line tiles (see the module doc). Options:
    enabled (default true)."""

    name = "tile-transposes"

    enabled: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.enabled:
            return
        for generic in [o for o in op.walk() if isinstance(o, linalg.GenericOp)]:
            tile(generic)
