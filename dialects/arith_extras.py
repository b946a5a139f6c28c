"""Upstream MLIR arith ops that xDSL 0.74 lacks, under their upstream names.

    %r = arith.remf %a, %b : f32      // C fmod: remainder with the sign of %a

The lowering creates them and to-llvm consumes them; the printer prints them by name.
They are not registered in xDSL's arith dialect, so printed IR holding them does not parse
back (it appears only between relay-to-linalg and to-llvm).
"""

from __future__ import annotations

from xdsl.dialects.arith import FloatingPointLikeBinaryOperation
from xdsl.irdl import irdl_op_definition, traits_def
from xdsl.traits import Pure


@irdl_op_definition
class RemFOp(FloatingPointLikeBinaryOperation):
    """Floating-point remainder with the sign of the dividend (C fmod, LLVM frem)."""

    name = "arith.remf"
    traits = traits_def(Pure())
