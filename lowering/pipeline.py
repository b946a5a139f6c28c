"""The lowering pipeline, relay -> llvm dialect, as named stages.

    fuse-composites   conv composites -> one fused loop nest each (output written once)
    inline-calls      other composite / partition functions inlined back into @main
    qnn-legalize      qnn ops -> relay ops on integers (i32 products, f32 requantization)
    select-kernels    f32 products/convolutions + epilogue chains -> runtime GEMM calls
    relay-to-linalg   relay ops -> linalg on tensors
    bufferize         tensors -> memrefs, results -> out-parameters
    outline-kernels   each linalg op -> a private kernel function, called from @main
    plan-buffers      temporaries -> views at static offsets of one arena per function
    linalg-to-loops   linalg on memrefs -> scf loops (xDSL's convert-linalg-to-loops)
    parallel-loops    marked kernels -> a range body + an entry that runs it on every core
    lower-affine      affine.apply (from indexing maps) -> arith
    scf-to-cf         structured loops -> blocks and branches
    to-llvm           arith/math/memref/cf/func -> llvm dialect

The module verifies after every stage. `lower(module, stop_after="bufferize")` stops early
(`xrelay-opt -p lower-to-llvm{stop-after=bufferize}` does the same), and
XRELAY_TIME_PASSES=1 prints the time of each stage.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.convert_linalg_to_loops import ConvertLinalgToLoopsPass
from xdsl.transforms.convert_scf_to_cf import ConvertScfToCf
from xdsl.transforms.lower_affine import LowerAffinePass
from xrelay.errors import Error
from xrelay.ir import verify_module
from xrelay.lowering.bufferize import Bufferize
from xrelay.lowering.fuse_composites import FuseComposites
from xrelay.lowering.inline_calls import InlineCalls
from xrelay.lowering.outline_kernels import OutlineKernels
from xrelay.lowering.parallel_loops import ParallelLoops
from xrelay.lowering.plan_buffers import PlanBuffers
from xrelay.lowering.qnn_legalize import QnnLegalize
from xrelay.lowering.relay_to_linalg import RelayToLinalg
from xrelay.lowering.select_kernels import SelectKernels
from xrelay.lowering.to_llvm import ToLLVM

# Order matters: conv composites become fused loop nests while their boundaries are still
# known; the other composites are then inlined (later stages expect one function); bufferize needs linalg on tensors in destination-passing style;
# kernels are outlined before any loop exists, so every later stage sees small functions,
# and @main is then a straight list of calls whose buffers plan-buffers can give offsets;
# parallel-loops needs the loops linalg-to-loops makes;
# xDSL's linalg-to-loops works on memrefs only; affine.apply from indexing maps must
# become arith before scf-to-cf, and to-llvm expects the cf form.
STAGES: list[tuple[str, Callable[[], ModulePass]]] = [
    ("fuse-composites", FuseComposites),
    ("inline-calls", InlineCalls),
    ("qnn-legalize", QnnLegalize),
    ("select-kernels", SelectKernels),
    ("relay-to-linalg", RelayToLinalg),
    ("bufferize", Bufferize),
    ("outline-kernels", OutlineKernels),
    ("plan-buffers", PlanBuffers),
    ("linalg-to-loops", ConvertLinalgToLoopsPass),
    ("parallel-loops", ParallelLoops),
    ("lower-affine", LowerAffinePass),
    ("scf-to-cf", ConvertScfToCf),
    ("to-llvm", ToLLVM),
]
STAGE_NAMES = [name for name, _ in STAGES]


def lower(
    module: ModuleOp,
    stop_after: str | None = None,
    time_passes: bool | None = None,
    start_after: str | None = None,
) -> dict[str, float]:
    """Run the stages in place, after `start_after` (if given) up to and including
    `stop_after`; returns seconds per stage."""
    for stage in (stop_after, start_after):
        if stage is not None and stage not in STAGE_NAMES:
            raise Error(f"unknown stage '{stage}'; the stages are {STAGE_NAMES}")
    if time_passes is None:
        time_passes = os.environ.get("XRELAY_TIME_PASSES", "") not in ("", "0")
    ctx = Context()
    times: dict[str, float] = {}
    first = STAGE_NAMES.index(start_after) + 1 if start_after is not None else 0
    for name, make in STAGES[first:]:
        start = time.perf_counter()
        make().apply(ctx, module)
        verify_module(module)
        times[name] = time.perf_counter() - start
        if time_passes:
            print(f"xrelay: {name:16s} {times[name]:8.3f} s", file=sys.stderr)
        if name == stop_after:
            break
    return times


@dataclass(frozen=True)
class LowerToLLVM(ModulePass):
    """The whole pipeline. Options: stop-after=<stage> (one of STAGE_NAMES)."""

    name = "lower-to-llvm"

    stop_after: str = "to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower(op, self.stop_after)
