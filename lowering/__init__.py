"""Lowering relay and qnn to native code: one list of registered passes
(`pipeline.py:STAGES`, described in docs/pipeline.md) from relay down to the llvm dialect,
then LLVM IR and the llvmlite JIT. `build(module, params)` runs it all; `load(path)` reads
a saved library (`lib.save`) without compiling (and without importing the compiler: both
are imported on first use)."""

import importlib as _importlib
import sys as _sys
import types as _types

_LAZY = {"build": "xrelay.lowering.build", "load": "xrelay.lowering.artifact"}


class _Package(_types.ModuleType):
    """`build` and `load` are the functions, imported on first use, also once their
    modules are imported: the import system binds a submodule to its name on the package,
    which would make `xrelay.lowering.build` the module lowering/build.py."""

    def __getattr__(self, name):
        if name in _LAZY:
            return getattr(_importlib.import_module(_LAZY[name]), name)
        raise AttributeError(f"module 'xrelay.lowering' has no attribute {name!r}")

    def __setattr__(self, name, value):
        if name in _LAZY and isinstance(value, _types.ModuleType):
            return  # the submodule's binding: the name stays the function
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package

__all__ = ["build", "load"]
