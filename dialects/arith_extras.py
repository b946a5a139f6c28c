"""Upstream MLIR arith ops that xDSL 0.74 lacks, under their upstream names.

    %r = arith.remf %a, %b : f32      // C fmod: remainder with the sign of %a

The lowering creates them and to-llvm consumes them. `arith_with_extras()` is xDSL's
arith dialect with them added; xrelay's contexts (`xrelay.ir.make_context`, xrelay-opt)
register it under the name `arith`, so IR printed between relay-to-linalg and to-llvm
parses back.
"""

from __future__ import annotations

from xdsl.dialects.arith import Arith, FloatingPointLikeBinaryOperation
from xdsl.ir import Dialect
from xdsl.irdl import irdl_op_definition, traits_def
from xdsl.traits import Pure


@irdl_op_definition
class RemFOp(FloatingPointLikeBinaryOperation):
    """Floating-point remainder with the sign of the dividend (C fmod, LLVM frem)."""

    name = "arith.remf"
    traits = traits_def(Pure())


def arith_with_extras() -> Dialect:
    """xDSL's arith dialect plus the upstream ops above."""
    return Dialect(
        "arith", [*Arith.operations, RemFOp], [*Arith.attributes], list(Arith._interfaces)
    )
