"""LLVM casts that xDSL 0.74's llvm dialect lacks (fptosi, fptoui, uitofp).

They are ordinary `GenericCastOp`s; registering their instruction names in the LLVM IR
converter's cast table (`xdsl.backend.llvm.convert_op._CAST_OP_NAMES`, keyed by op class)
is all `xdsl.backend.llvm.convert` needs to emit them.
"""

from __future__ import annotations

from xdsl.backend.llvm import convert_op
from xdsl.dialects.llvm import GenericCastOp
from xdsl.irdl import irdl_op_definition


@irdl_op_definition
class FPToSIOp(GenericCastOp):
    name = "llvm.fptosi"


@irdl_op_definition
class FPToUIOp(GenericCastOp):
    name = "llvm.fptoui"


@irdl_op_definition
class UIToFPOp(GenericCastOp):
    name = "llvm.uitofp"


convert_op._CAST_OP_NAMES.update({FPToSIOp: "fptosi", FPToUIOp: "fptoui", UIToFPOp: "uitofp"})
