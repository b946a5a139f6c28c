"""`xrelay.build(module, params) -> Library`: lower a copy of the module to LLVM and JIT it."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xrelay.errors import Error
from xrelay.ir import verify_module
from xrelay.lowering.external import compile_external
from xrelay.lowering.hoist_constants import hoist_constants
from xrelay.lowering.jit import Library, llvm_ir, threads_available
from xrelay.lowering.kernels.prepack import prepack_params
from xrelay.lowering.kernels.wrappers import kernels_ir
from xrelay.lowering.pipeline import lower
from xrelay.signature import FunctionSignature, main_function


def build(module: ModuleOp, params: Mapping[str, np.ndarray] | None = None) -> Library:
    """Compile `module` (relay IR with `@main`); the module itself is left unchanged.
    Parameters, and constants of 1024 elements or more, are passed to native code as
    buffers at every run, never embedded. Partitioned functions of a target with a codegen
    are compiled by it and linked in (see `xrelay.transforms.targets`)."""
    verify_module(module)
    signature = FunctionSignature.of(main_function(module))
    params = dict(params or {})
    missing = [a.name for a in signature.args if a.is_param and a.name not in params]
    if missing:
        raise Error(f"build: missing parameters {missing}")
    work = module.clone()
    externals = compile_external(work)
    # constants are hoisted once composites are fused or inlined into @main
    times = lower(work, stop_after="inline-calls")
    params.update(hoist_constants(work))
    times |= lower(work, start_after="inline-calls", stop_after="select-kernels")
    params.update(prepack_params(work, params))
    hoisted = FunctionSignature.of(main_function(work))
    # the data inputs and results are those of the module (narrow types included)
    inputs = {a.name: a for a in signature.inputs}
    args = tuple(a if a.is_param else inputs.get(a.name, a) for a in hoisted.args)
    signature = replace(hoisted, args=args, result_dtypes=signature.result_dtypes)
    times |= lower(work, start_after="select-kernels", stop_after="parallel-loops")
    runtime = kernels_ir(work, threads_available())
    times |= lower(work, start_after="parallel-loops")
    start = time.perf_counter()
    text = llvm_ir(work)
    times["llvm-ir"] = time.perf_counter() - start
    return Library(text, signature, params, times, externals, runtime)
