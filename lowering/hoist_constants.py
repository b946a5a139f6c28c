"""Large constants of `@main` become hidden parameters before lowering.

A folded or bound weight is a relay.constant; lowering it as an LLVM global makes the LLVM
module (and its compile time) grow with the weight. `build` instead moves every constant of
at least HOIST_MIN_ELEMENTS elements to a new `@main` parameter named `__const<i>` and
passes the array as a buffer at each run, like any other parameter.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    ModuleOp,
    StringAttr,
    UnitAttr,
)
from xdsl.rewriter import Rewriter
from xrelay.dialects import relay
from xrelay.dialects.dtypes import numpy_from_dense
from xrelay.signature import NAME_ATTR, PARAM_ATTR, main_function

HOIST_MIN_ELEMENTS = 1024


def hoist_constants(
    module: ModuleOp, min_elements: int = HOIST_MIN_ELEMENTS
) -> dict[str, np.ndarray]:
    """Move `@main`'s large constants to parameters (in place); returns their arrays."""
    fn = main_function(module)
    block = fn.body.block
    attrs = list(fn.arg_attrs.data) if fn.arg_attrs is not None else None
    hoisted: dict[str, np.ndarray] = {}
    for op in list(block.ops):
        if not isinstance(op, relay.ConstantOp):
            continue
        if int(np.prod(op.result.type.get_shape())) < min_elements:
            continue
        name = f"__const{len(hoisted)}"
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
