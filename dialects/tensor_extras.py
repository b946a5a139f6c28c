"""xDSL 0.74's `tensor.reshape` verifier multiplies the dimensions of dynamic shapes as if
they were sizes (a dynamic dimension is a large negative number there), so it rejects every
reshape between dynamic shapes. `ReshapeOp` is the same op, under the same name, with
MLIR's rule: the element counts must agree only when both shapes are static.
`tensor_with_fixes()` is xDSL's tensor dialect with it; xrelay's contexts register it under
the name `tensor`, so dynamic reshapes printed after relay-to-linalg parse back.
"""

from __future__ import annotations

import math

from xdsl.dialects import tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, AnySignlessIntegerType, IndexType, TensorType
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """tensor.reshape (https://mlir.llvm.org/docs/Dialects/TensorOps/#tensorreshape-tensorreshapeop)."""

    name = "tensor.reshape"

    source = operand_def(TensorType[Attribute])
    shape = operand_def(TensorType[AnySignlessIntegerType | IndexType])
    result = result_def(TensorType[Attribute])
    assembly_format = (
        "attr-dict $source `(` $shape `)` `:` `(` type($source) `,` type($shape) `)` "
        "`->` type($result)"
    )
    traits = traits_def(Pure())

    def __init__(self, source: SSAValue, shape: SSAValue, result_type: Attribute) -> None:
        super().__init__(operands=(source, shape), result_types=(result_type,))

    def verify_(self) -> None:
        source, shape, result = self.source.type, self.shape.type, self.result.type
        if not (isinstance(source, TensorType) and isinstance(shape, TensorType)):
            raise VerifyException("tensor.reshape operands must be tensors")
        if source.element_type != result.element_type:
            raise VerifyException(
                "element types of source and result tensor types should be the same"
            )
        if len(shape.get_shape()) != 1:
            raise VerifyException("shape tensor must have a rank one")
        if shape.get_shape()[0] != len(result.get_shape()):
            raise VerifyException("the length of the shape operand must equal the result's rank")
        src, res = source.get_shape(), result.get_shape()
        if DYNAMIC_INDEX not in (*src, *res) and math.prod(src) != math.prod(res):
            raise VerifyException(
                "source and result tensor should have the same number of elements"
            )


def tensor_with_fixes() -> Dialect:
    """xDSL's tensor dialect with `tensor.reshape` verified as MLIR does."""
    ops = [op for op in tensor.Tensor.operations if op.name != "tensor.reshape"]
    return Dialect("tensor", [*ops, ReshapeOp], [*tensor.Tensor.attributes])
