"""Outlining a set of ops of one block into a new function called where they stood; shared
by merge-composite (one result) and partition-graph (any number of results).

Arguments are the values the ops use from outside, in first-use order; relay.constant ops
(and constant splats) they use are copied in instead. Results are the values used outside
the set (or `results`, when given), in block order.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xrelay.dialects import relay


def block_order(ops: Sequence[Operation], block: Block) -> list[Operation]:
    position = {op: i for i, op in enumerate(block.ops)}
    return sorted(set(ops), key=lambda op: position[op])


def _constant_chain(value: SSAValue) -> list[Operation]:
    """The ops producing a constant value (a constant, or a constant splat), else []."""
    op = value.owner
    if isinstance(op, relay.ConstantOp):
        return [op]
    if isinstance(op, relay.BroadcastToOp) and isinstance(op.data.owner, relay.ConstantOp):
        return [op.data.owner, op]
    return []


def outline_ops(
    ops: Sequence[Operation],
    symbol: str,
    attributes: dict[str, Attribute],
    results: Sequence[SSAValue] | None = None,
    private: bool = True,
) -> tuple[func.FuncOp, func.CallOp]:
    """Move `ops` into a new function `symbol` and call it; returns (function, call). The
    function is not inserted anywhere: the caller adds it to the module."""
    block = ops[0].parent_block()
    assert block is not None
    ordered = block_order(ops, block)
    inside = set(ordered)
    copied: list[Operation] = []
    args: list[SSAValue] = []
    for op in ordered:
        for value in op.operands:
            owner = value.owner if isinstance(value.owner, Operation) else None
            if owner in inside or value in args:
                continue
            chain = _constant_chain(value)
            if chain:
                copied.extend(c for c in chain if c not in copied)
            else:
                args.append(value)
    if results is None:
        results = [
            r
            for op in ordered
            for r in op.results
            if any(u.operation not in inside for u in r.uses)
        ]
    body = Block(arg_types=[a.type for a in args])
    mapping: dict[SSAValue, SSAValue] = dict(zip(args, body.args))
    for op in block_order(copied, block) + ordered:
        clone = op.clone(value_mapper=mapping)
        body.add_op(clone)
        mapping.update(zip(op.results, clone.results))
    body.add_op(func.ReturnOp(*[mapping[r] for r in results]))
    fn = func.FuncOp(
        symbol,
        FunctionType.from_lists([a.type for a in args], [r.type for r in results]),
        Region(body),
        visibility="private" if private else None,
    )
    for key, attr in attributes.items():
        fn.attributes[key] = attr
    call = func.CallOp(symbol, args, [r.type for r in results])
    call.location = ordered[-1].location
    Rewriter.insert_op(call, InsertPoint.before(ordered[-1]))
    for old, new in zip(results, call.results):
        old.replace_all_uses_with(new)
    for op in reversed(ordered):
        Rewriter.erase_op(op)
    for op in reversed(block_order(copied, block)):
        if not any(r.uses for r in op.results):
            Rewriter.erase_op(op)
    return fn, call
