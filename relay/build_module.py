"""`relay.build`, `relay.build_module.create_executor` and `bind_params_by_name`.

    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    lib.export_library("model.so")                  # a shared library and its C header
    m = graph_executor.GraphModule(lib["default"](relay.cpu(0)))

The parameters stay run-time buffers of the library (xrelay.build never embeds them), so
`get_params()` returns the arrays given; relay/lower.py says what each opt level does.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import xrelay
from xdsl.dialects.builtin import ModuleOp
from xrelay.errors import Error
from xrelay.lowering.jit import Library
from xrelay.relay.executors import create_executor
from xrelay.relay.graph_executor import GraphRuntimeModule
from xrelay.relay.lower import compile_model
from xrelay.relay.nd import Device, NDArray, check_device, cpu, numpy_params
from xrelay.relay.transform import module_of
from xrelay.relay.unsupported import unsupported
from xrelay.signature import main_function


class GraphExecutorFactoryModule:
    """What `relay.build` returns: `lib["default"](dev)` for GraphModule, `get_lib()` (the
    xrelay Library: `run`, `save`), `get_params()`, `export_library(path)`."""

    def __init__(self, lib: Library, params: Mapping[str, np.ndarray], mod_name: str) -> None:
        self.lib = lib
        self.params = dict(params)
        self.mod_name = mod_name

    def __getitem__(self, name: str) -> Callable[..., GraphRuntimeModule]:
        if name != self.mod_name:
            raise Error(f"relay.build's module is lib['{self.mod_name}'], not lib[{name!r}]")

        def create(device: Device | None = None) -> GraphRuntimeModule:
            check_device(device, f"lib['{name}']")
            return GraphRuntimeModule(self.lib, self.params, device or cpu(0))

        return create

    def get_lib(self) -> Library:
        return self.lib

    def get_params(self) -> dict[str, NDArray]:
        return {name: NDArray(value) for name, value in self.params.items()}

    def export_library(self, file_name: str | os.PathLike, **options: Any) -> Any:
        """A shared library callable from C and its header (lowering/export.py; needs a C
        compiler, `cc`); returns the header's path. Load it in Python? Save an artifact
        instead: `get_lib().save("model.xrl")`, then `xrelay.load`."""
        if options:
            raise Error(f"export_library: option '{min(options)}' is not supported")
        return self.lib.export_library(file_name)

    def __getattr__(self, name: str) -> Any:
        raise unsupported("GraphExecutorFactoryModule", name, PROVIDED)


PROVIDED = ["['default'](dev)", "export_library", "get_lib", "get_params"]


def build(
    ir_mod: ModuleOp | Any,
    target: Any = "llvm",
    target_host: Any = None,
    executor: Any = None,
    runtime: Any = None,
    workspace_memory_pools: Any = None,
    constant_memory_pools: Any = None,
    params: Mapping[str, np.ndarray | NDArray] | None = None,
    mod_name: str = "default",
) -> GraphExecutorFactoryModule:
    """Relay's `relay.build` (its argument order): compile `ir_mod` for the host CPU under
    the current PassContext. `target` "llvm" or "llvm -mcpu=<x86-64 level>"; the other
    arguments but `params` and `mod_name` must keep their defaults (xrelay has one
    executor and one runtime). Static shapes only: use create_executor('vm') otherwise."""
    if isinstance(target_host, Mapping):
        raise Error("relay.build: the third argument is target_host; pass params=params")
    for name, value in [
        ("target_host", target_host), ("executor", executor), ("runtime", runtime),
        ("workspace_memory_pools", workspace_memory_pools),
        ("constant_memory_pools", constant_memory_pools),
    ]:  # fmt: skip
        if value is not None and not (name == "target_host" and value == "llvm"):
            raise Error(f"relay.build: {name}={value!r} is not supported (host CPU only)")
    module = module_of(ir_mod, "relay.build")
    arrays = numpy_params(params)
    lib = compile_model(module, target, arrays, "relay.build", static=True)
    return GraphExecutorFactoryModule(lib, arrays, mod_name)


def bind_params_by_name(func_or_mod: Any, params: Mapping[str, np.ndarray | NDArray]) -> Any:
    """A copy of the module (or of its @main, when given @main) with `params` bound as
    constants; FoldConstant then evaluates what depends only on them."""
    module = module_of(func_or_mod, "bind_params_by_name").clone()
    xrelay.bind_params_by_name(module, numpy_params(params))
    return module if isinstance(func_or_mod, ModuleOp) else main_function(module)


__all__ = ["GraphExecutorFactoryModule", "bind_params_by_name", "build", "create_executor"]


def __getattr__(name: str) -> Any:
    raise unsupported("relay.build_module", name, __all__)
