"""Runtime kernels written as LLVM IR text and linked into compiled models."""
