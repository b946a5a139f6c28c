"""Lowering relay and qnn to native code: one list of registered passes
(`pipeline.py:STAGES`, described in docs/pipeline.md) from relay down to the llvm dialect,
then LLVM IR and the llvmlite JIT. `build(module, params)` runs it all; `load(path)` reads
a saved library (`lib.save`) without compiling (and without importing the compiler: both
are imported on first use)."""

import importlib as _importlib

_LAZY = {"build": "xrelay.lowering.build", "load": "xrelay.lowering.artifact"}


def __getattr__(name):
    if name in _LAZY:
        value = getattr(_importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'xrelay.lowering' has no attribute {name!r}")


__all__ = ["build", "load"]
