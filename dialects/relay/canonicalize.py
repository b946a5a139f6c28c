"""Canonicalization patterns for relay ops, run by xDSL's `canonicalize` pass (each relay op
carries the `RelayCanonicalization` trait, which looks its patterns up here). They belong to
the dialect, as MLIR's `getCanonicalizationPatterns` do, so the dialect imports no pass.

- reshape to the operand's own type, cast to its own dtype, broadcast_to its own shape,
  transpose by the identity permutation: the operand itself;
- reshape of a reshape: one reshape; transpose of a transpose: one composed transpose;
- x * 1, 1 * x, x / 1, x + 0, 0 + x, x - 0 (constants, the result typed like x): x.

Before:
    %t = relay.transpose %x {axes = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %u = relay.transpose %t {axes = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
    %y = relay.multiply %u, %one : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
After:
    (uses of %y use %x)
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xrelay.dialects import relay
from xrelay.dialects.constants import constant_value


def _is_all(value: SSAValue, scalar: float) -> bool:
    array = constant_value(value)
    return array is not None and bool(np.all(array == scalar))


def _forward(rewriter: PatternRewriter, op: Operation, value: SSAValue) -> None:
    rewriter.replace(op, [], [value])


class IdentityReshape(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.ReshapeOp, rewriter: PatternRewriter, /) -> None:
        if op.data.type == op.result.type:
            _forward(rewriter, op, op.data)
            return
        inner = op.data.owner
        if isinstance(inner, relay.ReshapeOp):
            shape = list(op.result.type.get_shape())
            rewriter.replace(op, relay.ReshapeOp(inner.data, newshape=shape))


class TransposePair(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.TransposeOp, rewriter: PatternRewriter, /) -> None:
        rank = len(op.data.type.get_shape())
        axes = list(op.attrs.axes) if op.attrs.axes is not None else list(reversed(range(rank)))
        if axes == list(range(rank)):
            _forward(rewriter, op, op.data)
            return
        inner = op.data.owner
        if not isinstance(inner, relay.TransposeOp):
            return
        inner_axes = inner.attrs.axes
        inner_axes = list(inner_axes) if inner_axes is not None else list(reversed(range(rank)))
        composed = [inner_axes[a] for a in axes]
        if composed == list(range(rank)):
            _forward(rewriter, op, inner.data)
        else:
            rewriter.replace(op, relay.TransposeOp(inner.data, axes=composed))


class IdentityCast(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.CastOp, rewriter: PatternRewriter, /) -> None:
        if op.data.type == op.result.type:
            _forward(rewriter, op, op.data)


class IdentityBroadcast(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.BroadcastToOp, rewriter: PatternRewriter, /) -> None:
        if op.data.type == op.result.type:
            _forward(rewriter, op, op.data)


class NeutralOperand(RewritePattern):
    """x * 1, x / 1, x + 0, x - 0 (and 1 * x, 0 + x) where the result is typed like x."""

    RIGHT: ClassVar = {
        relay.MultiplyOp: 1.0,
        relay.DivideOp: 1.0,
        relay.AddOp: 0.0,
        relay.SubtractOp: 0.0,
    }
    LEFT: ClassVar = {relay.MultiplyOp: 1.0, relay.AddOp: 0.0}

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        kind = type(op)
        if kind not in self.RIGHT:
            return
        lhs, rhs = op.operands
        result = op.results[0]
        if lhs.type == result.type and _is_all(rhs, self.RIGHT[kind]):
            _forward(rewriter, op, lhs)
        elif kind in self.LEFT and rhs.type == result.type and _is_all(lhs, self.LEFT[kind]):
            _forward(rewriter, op, rhs)


_NEUTRAL = NeutralOperand()
CANONICALIZATION: dict[type[Operation], tuple[RewritePattern, ...]] = {
    relay.ReshapeOp: (IdentityReshape(),),
    relay.TransposeOp: (TransposePair(),),
    relay.CastOp: (IdentityCast(),),
    relay.BroadcastToOp: (IdentityBroadcast(),),
    relay.MultiplyOp: (_NEUTRAL,),
    relay.DivideOp: (_NEUTRAL,),
    relay.AddOp: (_NEUTRAL,),
    relay.SubtractOp: (_NEUTRAL,),
}
