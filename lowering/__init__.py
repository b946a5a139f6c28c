"""Lowering relay and qnn to native code: one list of registered passes
(`pipeline.py:STAGES`, described in docs/pipeline.md) from relay down to the llvm dialect,
then LLVM IR and the llvmlite JIT. `build(module, params)` runs it all."""

from xrelay.lowering.build import build

__all__ = ["build"]
