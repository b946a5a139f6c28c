"""`emit-runtime`: the runtime code a module calls, as LLVM IR carried by the module.

After `parallel-loops` the module declares what it needs from the runtime: GEMM
declarations (`#kernel.gemm`, select-kernels), entries of split kernels (`xrelay.parallel`,
parallel-loops) and uninitialized arenas (plan-buffers). This pass generates their
definitions (lowering/kernels: the GEMM and one wrapper per declaration, the thread-pool
entries, the arena globals) and attaches them to the module as LLVM IR text in the
`xrelay.runtime` attribute; `jit.llvm_module` links it with the translated module.

Options: threads=true|false (default: whether libgomp is found on this host) chooses
thread-pool entries or single-threaded ones. The GEMM's vector width is the one
prepack-weights chose (`xrelay.vector_width` on the module: B's packed panels must match
the micro-kernel), else `vector-width` (0: this host's, 16 with AVX-512, else 8).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xrelay.lowering.instrument_calls import SITES_ATTR, profiler_ir
from xrelay.lowering.jit import RUNTIME_ATTR, threads_available
from xrelay.lowering.kernels.wrappers import kernels_ir
from xrelay.lowering.prepack_weights import module_vector_width


@dataclass(frozen=True)
class EmitRuntime(ModulePass):
    """Attach the runtime the module calls (LLVM IR) as `xrelay.runtime`."""

    name = "emit-runtime"

    threads: bool | None = None
    vector_width: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        threads = threads_available() if self.threads is None else self.threads
        runtime = kernels_ir(op, threads, module_vector_width(op, self.vector_width))
        sites = op.attributes.get(SITES_ATTR)
        if isinstance(sites, ArrayAttr):  # build(profile=True): the call counters
            runtime = (runtime or "") + profiler_ir(len(sites.data))
        if runtime is not None:
            op.attributes[RUNTIME_ATTR] = StringAttr(runtime)
