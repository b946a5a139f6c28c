"""What `relay.build` and the compiled executors share: reading a Relay target, applying
the PassContext's passes, calling `xrelay.build`, and running the library it returns.

PassContext -> xrelay (relay/transform.py has the levels):

    SimplifyInference (level 0)   simplify-inference on a copy of the module
    FuseOps (level 1)             xrelay.build(kernels=True): products and convolutions with
                                  their elementwise epilogues on the runtime GEMM; below level 1,
                                  kernels=False (one plain loop nest per op, nothing fused)
    FoldConstant (level 2)        fold-constants (params stay run-time buffers: bind them first
                                  with bind_params_by_name to fold them)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import xrelay
from xdsl.dialects.builtin import ModuleOp
from xrelay.errors import Error
from xrelay.lowering import host
from xrelay.lowering.dynamic import DynamicLibrary
from xrelay.lowering.jit import X86_LEVELS, Library
from xrelay.relay.nd import NDArray, to_numpy
from xrelay.relay.transform import BUILD_PASSES, FoldConstant, PassContext, SimplifyInference

CompiledModel = Library | DynamicLibrary


def target_cpu(target: Any, where: str) -> str | None:
    """The `target_cpu` of xrelay.build for a Relay target string: "llvm" is the host,
    "llvm -mcpu=NAME" the host's CPU name or a portable x86-64 level (x86-64-v3)."""
    if target is None:
        return None
    if not isinstance(target, str) or target.split()[:1] != ["llvm"]:
        raise Error(
            f"{where}: target {target!r} is not supported: xrelay compiles for the host CPU "
            "('llvm', or 'llvm -mcpu=' a portable x86-64 level)"
        )
    cpu = None
    here = host.describe()
    for option in target.split()[1:]:
        key, _, value = option.partition("=")
        if key == "-mcpu" and value:
            cpu = value
        elif key == "-mtriple" and value == here["triple"]:
            continue
        else:
            raise Error(f"{where}: target option '{option}' of {target!r} is not supported")
    if cpu in (None, "native", here["cpu"]):
        return None
    if cpu not in X86_LEVELS:
        raise Error(
            f"{where}: target {target!r}: -mcpu={cpu} is not supported; use this host's CPU "
            f"({here['cpu']}) or one of {', '.join(X86_LEVELS)}"
        )
    return cpu


def optimize(module: ModuleOp) -> ModuleOp:
    """`module` after the build passes the current PassContext enables (each pass returns
    a copy: `module` itself is left unchanged)."""
    ctx = PassContext.current()
    for relay_pass in (SimplifyInference(), FoldConstant()):
        if ctx.pass_enabled(relay_pass.name, relay_pass.opt_level):
            module = relay_pass(module)
    return module


def compile_model(
    module: ModuleOp,
    target: Any,
    params: Mapping[str, np.ndarray],
    where: str,
    static: bool,
) -> CompiledModel:
    """`module` optimized and compiled with xrelay.build; `static` refuses dynamic shapes
    (the graph and AOT executors hold one static build; the VM takes any)."""
    cpu = target_cpu(target, where)
    fuse = PassContext.current().pass_enabled("FuseOps", BUILD_PASSES["FuseOps"])
    lib = xrelay.build(optimize(module), params, kernels=fuse, target_cpu=cpu)
    if static and isinstance(lib, DynamicLibrary):
        raise Error(
            f"{where}: the model has dynamic dimensions (inputs "
            f"{[a.name for a in lib.signature.inputs]}): use create_executor('vm'), or pin the "
            "shapes at import (relay.frontend.from_onnx(model, shape={...}))"
        )
    return lib


def run(
    lib: Any,
    built_params: Mapping[str, np.ndarray],
    args: tuple[Any, ...],
    named: Mapping[str, Any],
) -> list[np.ndarray]:
    """`lib.run` with NDArrays converted. A parameter given again with the value it was
    built with is dropped: relay.build replaced some weights by prepacked copies, and
    Relay scripts pass `**params` to every call."""
    inputs = {}
    for name, value in named.items():
        array = to_numpy(value)
        same = name in built_params and (
            array is built_params[name] or np.array_equal(array, built_params[name])
        )
        if not same:
            inputs[name] = array
    return lib.run(*[to_numpy(a) for a in args], **inputs)


def results(arrays: list[np.ndarray]) -> NDArray | list[NDArray]:
    """One NDArray for a single output, else a list of them (in the model's output order)."""
    wrapped = [NDArray(a) for a in arrays]
    return wrapped[0] if len(wrapped) == 1 else wrapped
