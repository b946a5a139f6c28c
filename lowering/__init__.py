"""Lowering relay and qnn to native code: one list of registered passes
(`pipeline.py:STAGES`, described in docs/pipeline.md) from relay down to the llvm dialect,
then LLVM IR and the llvmlite JIT. `build(module, params)` runs it all; `load(path)` reads
a saved library (`lib.save`) without compiling."""

from xrelay.lowering.artifact import load
from xrelay.lowering.build import build

__all__ = ["build", "load"]
