"""Walks a function's ops in order and evaluates each with its numpy implementation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xrelay.dialects.dtypes import numpy_dtype
from xrelay.dialects.limits import over_limit
from xrelay.dialects.relay.base import fmt_type
from xrelay.dialects.specialize import deferred_inputs, has_deferred, specialize_types
from xrelay.errors import Error, ShapeError
from xrelay.ir import location_str, verify_module
from xrelay.reference.control import evaluate_dynamic, has_vm_ops
from xrelay.reference.registry import IMPLS
from xrelay.signature import FunctionSignature, bind_dims, check_inputs, main_function


def evaluate_op(op: Operation, operands: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Evaluate one op on numpy operands; results are checked against the op's types."""
    fn = IMPLS.get(type(op))
    if fn is None:
        raise Error(f"{location_str(op)}: no reference implementation for '{op.name}'")
    for res in op.results:
        why = over_limit(res.type) if isinstance(res.type, TensorType) else None
        if why is not None:
            raise ShapeError(f"the result of '{op.name}' is a {fmt_type(res.type)} of {why}")
    with np.errstate(all="ignore"):
        out = fn(op, *operands)
    outs = list(out) if isinstance(out, list | tuple) else [out]
    results: list[np.ndarray] = []
    for value, res in zip(outs, op.results, strict=True):
        t = res.type
        assert isinstance(t, TensorType)
        array = np.asarray(value).astype(numpy_dtype(t.element_type), copy=False)
        expected = t.get_shape()
        if DYNAMIC_INDEX in expected and len(expected) == array.ndim:  # a size the data decides
            expected = tuple(a if e == DYNAMIC_INDEX else e for e, a in zip(expected, array.shape))
        if array.shape != expected:
            raise Error(
                f"{location_str(op)}: reference '{op.name}' gave shape {array.shape}, "
                f"the IR says {t.get_shape()}"
            )
        results.append(array)
    return results


def evaluate_function(fn: func.FuncOp, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Evaluate a single-block function on already checked arguments."""
    env: dict[SSAValue, np.ndarray] = dict(zip(fn.body.block.args, args, strict=True))
    for op in fn.body.block.ops:
        if isinstance(op, func.ReturnOp):
            return [env[v] for v in op.arguments]
        operands = [env[v] for v in op.operands]
        if isinstance(op, func.CallOp):
            values = evaluate_function(_callee(fn, op), operands)
        else:
            values = evaluate_op(op, operands)
        for res, value in zip(op.results, values):
            env[res] = value
    raise Error(f"function @{fn.sym_name.data} has no return")


def _callee(caller: func.FuncOp, call: func.CallOp) -> func.FuncOp:
    module = caller.parent_op()
    name = call.callee.root_reference.data
    if module is not None:
        for op in module.regions[0].block.ops:
            if isinstance(op, func.FuncOp) and op.sym_name.data == name and op.body.blocks:
                return op
    raise Error(f"{location_str(call)}: call of @{name}, which the module does not define")


class DebugExecutor:
    """Runs a module's `@main` with numpy; `run(**inputs)` or `executor(*arrays)`."""

    def __init__(self, module: ModuleOp, params: Mapping[str, np.ndarray] | None = None) -> None:
        self.module = module
        self.function = main_function(module)
        self.signature = FunctionSignature.of(self.function)
        self.params = dict(params or {})

    def run(self, *args: np.ndarray, **inputs: Any) -> list[np.ndarray]:
        arrays = check_inputs(self.signature, args, inputs, self.params)
        function = self.function
        if has_vm_ops(function):  # control flow, data-dependent sizes: symbols learned as it runs
            bind_dims(self.signature, arrays)
            return self.signature.outputs(evaluate_dynamic(function, arrays))
        if self.signature.is_dynamic or has_deferred(self.module):
            # the module with the symbols' values (checked first) and deferred nodes converted
            work = self.module.clone()
            values = {i: arrays[i] for i in deferred_inputs(self.function)}
            specialize_types(
                work, bind_dims(self.signature, arrays), location_str, values, evaluate_op
            )
            verify_module(work)  # a shape rule the symbols hid (batch against 4) holds
            function = main_function(work)
            if has_vm_ops(function):  # a deferred node converted into control flow
                return self.signature.outputs(evaluate_dynamic(function, arrays))
        return self.signature.outputs(evaluate_function(function, arrays))

    __call__ = run


def create_executor(
    kind: str, module: ModuleOp, params: Mapping[str, np.ndarray] | None = None
) -> DebugExecutor:
    """An executor of `module`: "debug" is the numpy reference evaluator."""
    if kind != "debug":
        raise Error(f"unknown executor kind '{kind}' (known: debug; use xrelay.build for native)")
    return DebugExecutor(module, params)
