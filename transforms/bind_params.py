"""`bind_params_by_name(module, params)`: turn `@main` parameters into constants.

Each `@main` argument whose name (its `xrelay.name`) is a key of `params` is replaced by a
relay.constant of that array and removed from the signature; `fold-constants` can then
evaluate everything that depended only on weights (a reshaped or transposed weight, a
folded batch norm). The array must match the argument's type exactly.

Before:  func.func @main(%x: tensor<2x4xf32> {xrelay.name = "x"},
                         %w: tensor<3x4xf32> {xrelay.name = "w", xrelay.param})
After:   func.func @main(%x: tensor<2x4xf32> {xrelay.name = "x"})
           %w = relay.constant dense<...> : tensor<3x4xf32>
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, FunctionType, ModuleOp, NameLoc, NoneAttr, StringAttr
from xdsl.rewriter import InsertPoint, Rewriter
from xrelay.dialects.constants import constant_ops
from xrelay.dialects.dtypes import tensor_type
from xrelay.errors import Error
from xrelay.signature import FunctionSignature, main_function


def bind_params_by_name(module: ModuleOp, params: Mapping[str, np.ndarray]) -> ModuleOp:
    """Bind `params` into `module` (in place) as constants; returns the module."""
    fn = main_function(module)
    sig = FunctionSignature.of(fn)
    names = [a.name for a in sig.args]
    unknown = sorted(set(params) - set(names))
    if unknown:
        raise Error(f"bind_params_by_name: '{unknown[0]}' is not an argument of @main: {names}")
    block = fn.body.block
    attrs = list(fn.arg_attrs.data) if fn.arg_attrs is not None else [None] * len(names)
    for i in reversed(range(len(names))):
        if names[i] not in params:
            continue
        array = np.asarray(params[names[i]])
        arg = block.args[i]
        if tensor_type(array.shape, array.dtype) != arg.type:
            raise Error(
                f"bind_params_by_name: '{names[i]}' is {arg.type} but the array is "
                f"{array.dtype}{list(array.shape)}"
            )
        ops = constant_ops(np.asarray(array, order="C"))
        for op in ops:
            op.location = NameLoc(StringAttr(names[i]), NoneAttr())
        Rewriter.insert_op(ops, InsertPoint.at_start(block))
        arg.replace_all_uses_with(ops[-1].results[0])
        block.erase_arg(arg)
        del attrs[i]
    fn.function_type = FunctionType.from_lists(
        [a.type for a in block.args], fn.function_type.outputs.data
    )
    fn.arg_attrs = ArrayAttr(attrs) if all(a is not None for a in attrs) else None
    return module
