"""`fuse-elementwise`: chains of elementwise linalg.generic ops on tensors -> one op each.

relay-to-linalg gives every relay op its own `linalg.generic`, so a chain like a
requantization (subtract, cast, multiply, round, add, clip, cast) makes seven loops, each
reading and writing a whole tensor. Fusing a producer into its consumer computes the
producer's value inside the consumer's body instead: one loop, one memory pass, no
intermediate buffer.

A producer P fuses into a consumer C when
- both are all-parallel `linalg.generic`s with one result, P's result is used only by C
  (once), and P's body does not read its output (elementwise);
- P writes through the identity map and C reads it through the identity map, so both
  iterate the same domain with the same loop variables (then P's input maps, broadcasts
  and transposes included, stay valid in C).
The fused op takes C's other inputs and P's inputs; its body is P's body feeding C's.
Loop sizes come from the operands a loop indexes alone, so the fused op must keep, for
every loop, such an operand of the domain's size: a producer read only through
`tensor.extract` (padding, concatenation) fused into a pad's copy (which writes the
interior of a larger, filled result) would leave only that result, and the loops would
run over the padding too; such a pair stays apart.
A consumer may also be an integer reduction that reads P through the identity map (a
quantized average pool: the data's cast to i32 and its zero point's subtraction, then the
sum): each of P's values is still computed once, and the sum reads the bytes instead of a
buffer of i32 four times their size (SqueezeNet int8's last pool: 50 -> 5 us, with
collapse-loops merging its plane loops; same-process A/B). A float reduction keeps its
producers apart: its loop is sequential (no reassociation), the producer's loop alone runs
in vectors.
Everything else (float reductions, GEMM calls, ops read through a non-identity map or by
several users) is left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import AffineMapAttr, IntegerType, ModuleOp, ShapedType
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.ir import Block, Operation, Region
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter


def _all_parallel(op: linalg.GenericOp) -> bool:
    return all(t.data == IteratorType.PARALLEL for t in op.iterator_types.data)


def _integer_reduction(op: linalg.GenericOp) -> bool:
    """A reduction whose results are all integers (its loop vectorizes as it is)."""
    return not _all_parallel(op) and all(
        isinstance(r.type, ShapedType) and isinstance(r.type.get_element_type(), IntegerType)
        for r in op.results
    )


def _identity(m: AffineMapAttr, loops: int) -> bool:
    return m.data == AffineMap.identity(loops)


def _fusible_producer(consumer: linalg.GenericOp, index: int) -> linalg.GenericOp | None:
    """The producer of consumer input `index`, if it can be fused (module docstring)."""
    value = consumer.inputs[index]
    producer = value.owner
    if not isinstance(producer, linalg.GenericOp) or len(producer.outputs) != 1:
        return None
    if value.uses.get_length() != 1 or not _all_parallel(producer):
        return None
    loops = len(consumer.iterator_types.data)
    if len(producer.iterator_types.data) != loops:
        return None
    p_maps = producer.indexing_maps.data
    if not _identity(p_maps[-1], loops) or not _identity(consumer.indexing_maps.data[index], loops):
        return None
    p_block = producer.body.block
    if p_block.args[-1].uses:  # reads its output: not elementwise
        return None
    if not _sizes_kept(producer, consumer, index):
        return None
    return producer


def _sizes_kept(producer: linalg.GenericOp, consumer: linalg.GenericOp, index: int) -> bool:
    """Do the fused op's operands still give every loop its size, the consumer's domain
    (the producer's result shape)? Each loop must be indexed alone by some operand, and
    every operand indexed by a loop alone must have that size there (a pad's copy writes
    its result's interior: its result is larger than its domain)."""
    domain = producer.results[0].type.get_shape()
    c_maps = consumer.indexing_maps.data
    kept = [
        (v, m)
        for i, (v, m) in enumerate(zip([*consumer.inputs, *consumer.outputs], c_maps))
        if i != index
    ]
    kept += list(zip(producer.inputs, producer.indexing_maps.data))
    sized = set()
    for value, m in kept:
        shape = value.type.get_shape() if isinstance(value.type, ShapedType) else ()
        for axis, r in enumerate(m.data.results):
            if isinstance(r, AffineDimExpr):
                size, want = shape[axis], domain[r.position]
                if size != want and min(size, want) >= 0:
                    return False
                sized.add(r.position)
    return len(sized) == len(domain)


def fuse_pair(
    producer: linalg.GenericOp, consumer: linalg.GenericOp, index: int
) -> linalg.GenericOp:
    """Replace `consumer` by one op computing `producer` in its body (the conditions:
    `_fusible_producer`); returns the new op."""
    c_inputs = list(consumer.inputs)
    c_maps = list(consumer.indexing_maps.data)
    n_in = len(c_inputs)
    inputs = c_inputs[:index] + list(producer.inputs) + c_inputs[index + 1 :]
    maps = (
        c_maps[:index]
        + list(producer.indexing_maps.data[: len(producer.inputs)])
        + c_maps[index + 1 : n_in]
        + c_maps[n_in:]
    )
    c_block, p_block = consumer.body.block, producer.body.block
    c_args = list(c_block.args)
    p_args = list(p_block.args)
    arg_types = (
        [a.type for a in c_args[:index]]
        + [a.type for a in p_args[: len(producer.inputs)]]
        + [a.type for a in c_args[index + 1 :]]
    )
    block = Block(arg_types=arg_types)
    new_args = list(block.args)
    k = len(producer.inputs)
    # the bodies' ops move (no copies: a chain's body would be copied once per link)
    for old, new in zip(p_args[:k], new_args[index : index + k]):
        old.replace_all_uses_with(new)
    p_yield = p_block.last_op
    assert isinstance(p_yield, linalg.YieldOp)
    yielded = p_yield.operands[0]
    for op in list(p_block.ops):
        if op is p_yield:
            break
        op.detach()
        block.add_op(op)
    for old, new in zip(c_args[:index], new_args[:index]):
        old.replace_all_uses_with(new)
    c_args[index].replace_all_uses_with(yielded)
    for old, new in zip(c_args[index + 1 :], new_args[index + k :]):
        old.replace_all_uses_with(new)
    for op in list(c_block.ops):
        op.detach()
        block.add_op(op)
    fused = linalg.GenericOp(
        inputs,
        list(consumer.outputs),
        Region(block),
        maps,
        consumer.iterator_types.data,
        [r.type for r in consumer.results],
    )
    fused.location = consumer.location
    Rewriter.replace_op(consumer, fused)
    outs = [o.owner for o in producer.outputs]
    Rewriter.erase_op(producer)
    for owner in outs:  # the producer's tensor.empty, now unused
        if isinstance(owner, Operation) and not any(r.uses for r in owner.results):
            Rewriter.erase_op(owner)
    return fused


def fuse_elementwise(module: ModuleOp) -> int:
    """Fuse every chain, consumers in program order (a consumer absorbs its producers one
    by one, so a whole chain ends in its last op); returns how many pairs were fused."""
    count = 0
    for op in list(module.walk()):
        if not isinstance(op, linalg.GenericOp) or op.parent is None:
            continue
        if not (_all_parallel(op) or _integer_reduction(op)):
            continue
        index = 0
        while index < len(op.inputs):
            producer = _fusible_producer(op, index)
            if producer is None:
                index += 1
                continue
            op = fuse_pair(producer, op, index)
            count += 1
            index = 0
    return count


@dataclass(frozen=True)
class FuseElementwise(ModulePass):
    """Elementwise linalg.generic producers -> their single consumer. Option: enabled."""

    name = "fuse-elementwise"

    enabled: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.enabled:
            fuse_elementwise(op)
