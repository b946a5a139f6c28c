"""Lowering relay to native code: relay -> linalg (tensors) -> bufferize -> loops -> cf ->
llvm dialect -> LLVM IR -> llvmlite JIT. `build(module, params)` runs it all."""

from xrelay.lowering.build import build

__all__ = ["build"]
