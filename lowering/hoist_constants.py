"""`hoist-constants`: large constants of `@main` become hidden parameters.

A folded or bound weight is a relay.constant; lowering it as an LLVM global makes the LLVM
module (and its compile time) grow with the weight. This pass instead moves every constant
of at least `min-elements` elements (default HOIST_MIN_ELEMENTS) to a new `@main` parameter
named `__const<i>`; under `build` its array joins the parameters (BuildContext.params) and
is passed as a buffer at each run, like any other parameter.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    ModuleOp,
    StringAttr,
    UnitAttr,
)
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xrelay.dialects import relay
from xrelay.dialects.dtypes import numpy_from_dense
from xrelay.lowering.context import BuildContext
from xrelay.signature import NAME_ATTR, PARAM_ATTR, FunctionSignature, main_function

HOIST_MIN_ELEMENTS = 1024


def _quantization_parameter(op: relay.ConstantOp) -> bool:
    """The constant is a qnn op's scale or zero point (a requantize with TFLite rounding
    reads their values when it is legalized; per-channel ones can be long)."""
    for use in op.result.uses:
        if use.operation.dialect_name() != "qnn":
            continue
        operands = use.operation.get_irdl_definition().operands
        if use.index < len(operands) and operands[use.index][0].endswith(("scale", "zero_point")):
            return True
    return False


def hoist_constants(
    module: ModuleOp, min_elements: int = HOIST_MIN_ELEMENTS
) -> dict[str, np.ndarray]:
    """Move `@main`'s large constants to parameters (in place); returns their arrays."""
    fn = main_function(module)
    block = fn.body.block
    attrs = list(fn.arg_attrs.data) if fn.arg_attrs is not None else None
    hoisted: dict[str, np.ndarray] = {}
    taken = {a.name for a in FunctionSignature.of(fn).args}
    for op in list(block.ops):
        if not isinstance(op, relay.ConstantOp):
            continue
        if int(np.prod(op.result.type.get_shape())) < min_elements:
            continue
        if _quantization_parameter(op):
            continue
        name = f"__const{len(hoisted)}"
        while name in taken:
            name = "_" + name
        hoisted[name] = numpy_from_dense(op.value)
        arg = block.insert_arg(op.result.type, len(block.args))
        op.result.replace_all_uses_with(arg)
        Rewriter.erase_op(op)
        if attrs is not None:
            attrs.append(DictionaryAttr({NAME_ATTR: StringAttr(name), PARAM_ATTR: UnitAttr()}))
    if hoisted:
        fn.function_type = FunctionType.from_lists(
            [a.type for a in block.args], fn.function_type.outputs.data
        )
        if attrs is not None:
            fn.arg_attrs = ArrayAttr(attrs)
    return hoisted


@dataclass(frozen=True)
class HoistConstants(ModulePass):
    """Constants of @main with at least `min-elements` elements -> parameters."""

    name = "hoist-constants"

    min_elements: int = HOIST_MIN_ELEMENTS

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        hoisted = hoist_constants(op, self.min_elements)
        if isinstance(ctx, BuildContext):
            ctx.params.update(hoisted)
