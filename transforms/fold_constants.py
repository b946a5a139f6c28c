"""`fold-constants`: evaluate every relay op whose operands are all constants with the
reference executor and replace it by a constant; constants left without users are erased.

Options: `max-elements` (default 16777216): a result with more elements stays computed at
run time, so folding never blows a small expression up into a huge constant. A splat result
is kept in its compact form (a 0-d constant broadcast to the shape), which is itself never
folded further.

Before:
    %a = relay.constant dense<2.0> : tensor<f32>
    %b = relay.constant dense<3.0> : tensor<f32>
    %c = relay.multiply %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %y = relay.add %x, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
After:
    %c = relay.constant dense<6.0> : tensor<f32>
    %y = relay.add %x, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xrelay.dialects import relay
from xrelay.dialects.constants import constant_ops, constant_value
from xrelay.dialects.relay.base import RelayOp
from xrelay.reference import evaluate_op


def _is_splat_form(op: Operation) -> bool:
    return isinstance(op, relay.BroadcastToOp) and isinstance(op.data.owner, relay.ConstantOp)


def _elements(op: Operation) -> int:
    return sum(
        int(np.prod(r.type.get_shape())) for r in op.results if isinstance(r.type, TensorType)
    )


def fold_op(op: Operation, max_elements: int) -> bool:
    """Replace `op` by constants if all its operands are constants; returns whether it did."""
    if not isinstance(op, RelayOp) or isinstance(op, relay.ConstantOp) or _is_splat_form(op):
        return False
    if not op.operands or _elements(op) > max_elements:
        return False
    arrays = [constant_value(v) for v in op.operands]
    if any(a is None for a in arrays):
        return False
    results = evaluate_op(op, arrays)
    replacements = []
    for array in results:
        ops = constant_ops(np.asarray(array, order="C"))
        for new in ops:
            new.location = op.location
        Rewriter.insert_op(ops, InsertPoint.before(op))
        replacements.append(ops[-1].results[0])
    Rewriter.replace_op(op, [], replacements)
    return True


def erase_dead_constants(module: ModuleOp) -> None:
    for op in reversed(list(module.walk())):
        if (isinstance(op, relay.ConstantOp) or _is_splat_form(op)) and not any(
            r.uses for r in op.results
        ):
            Rewriter.erase_op(op)


@dataclass(frozen=True)
class FoldConstants(ModulePass):
    """Fold relay ops on constants. Options: max-elements (results above it stay)."""

    name = "fold-constants"
    max_elements: int = 1 << 24

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in list(op.walk()):
            fold_op(inner, self.max_elements)
        erase_dead_constants(op)
