"""The lowering pipeline, relay -> llvm dialect, as one list of registered passes.

    link-external     functions a target's codegen compiles -> external declarations
    fuse-composites   conv composites -> one fused loop nest each (output written once)
    inline-calls      other composite / partition functions inlined back into @main
    expose-checks     run-time index checks -> min/max of the indices, an extra result
    hoist-constants   large constants of @main -> parameters (passed as buffers, not globals)
    qnn-int-products  8-bit dense/conv2d with s8 parameter weights -> 8-bit GEMM calls
                      (u8 x s8 words, VNNI or vpmaddwd; exact i32)
    qnn-lookup-tables chains of unary ops from 8-bit to 8-bit values (dequantize, batch_norm,
                      quantize, ...) -> calls of the runtime's table lookup (tables
                      computed at build)
    qnn-float-products  8-bit dense/conv2d with parameter weights -> exact f32 products in
                      K chunks (the runtime GEMM's), summed in i32
    qnn-legalize      qnn ops -> relay ops on integers (i32 products, f32 requantization)
    winograd-convs    f32 3x3 stride-1 convolutions with parameter weights -> Winograd
                      transforms around a batched product (weights transformed at build)
    select-kernels    f32 products/convolutions + epilogue chains -> runtime GEMM calls
    prepack-weights   GEMM weights that are parameters -> parameters in the kernel's layout
    relay-to-linalg   relay ops -> linalg on tensors
    fuse-elementwise  chains of elementwise linalg.generic ops -> one op (one loop) each
    collapse-loops    adjacent loops every operand indexes together -> one loop (views)
    tile-transposes   transposing copies -> loops over tiles of a cache line (views)
    bufferize         tensors -> memrefs, results -> out-parameters
    outline-kernels   each linalg op -> a private kernel function, called from @main
    plan-buffers      temporaries -> views at static offsets of one arena per function (run-time
                      sizes: at offsets the caller plans per run, in an arena main receives);
                      concatenation inputs placed in the result's bytes (no copy)
    instrument-calls  (build(profile=True) only) each call of @main timed into counters
    linalg-to-loops   linalg on memrefs -> scf loops (xDSL's convert-linalg-to-loops)
    parallel-loops    marked kernels -> a range body + an entry that runs it on every core
    emit-runtime      the runtime the module calls (GEMM, thread entries, arenas) as LLVM IR
    lower-affine      affine.apply (from indexing maps) -> arith
    scf-to-cf         structured loops -> blocks and branches
    expand-math       f32 exp, erf, tanh -> arith polynomials (vectorizable, no libm calls)
    to-llvm           arith/math/memref/cf/func -> llvm dialect

`xrelay.build` runs exactly this list and JIT-compiles `jit.llvm_module` of the result;
`xrelay-opt -p lower-to-llvm -t llvm` prints the same LLVM IR. Passes that make values and
not only IR (hoisted constants, packed weights, external code) put them in a
`BuildContext` (lowering/context.py) under `build`; under a plain `Context` (xrelay-opt)
they change the IR in the same way and compute no values.

The module verifies after the last stage it runs; with `verify_each` (XRELAY_VERIFY_EACH=1,
and always under xrelay-opt) after every stage, naming the stage whose output is invalid.
(Verifying after each of the 23 stages was a quarter of a build: 1.0 of 4.0 s for
ResNet-50, 3.9 of 13.2 s for DenseNet-121.) A final verification that fails says which
setting finds the stage. `lower(module, stop_after="bufferize")` stops early
(`lower-to-llvm{stop-after=bufferize}`), `start_after` resumes on IR printed there, and
XRELAY_TIME_PASSES=1 prints the time of each stage.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.convert_linalg_to_loops import ConvertLinalgToLoopsPass
from xdsl.transforms.convert_scf_to_cf import ConvertScfToCf
from xdsl.transforms.lower_affine import LowerAffinePass
from xrelay.errors import Error, VerificationError
from xrelay.ir import verify_module
from xrelay.lowering.bufferize import Bufferize
from xrelay.lowering.collapse_loops import CollapseLoops
from xrelay.lowering.emit_runtime import EmitRuntime
from xrelay.lowering.expand_math import ExpandMath
from xrelay.lowering.expose_checks import ExposeChecks
from xrelay.lowering.external import LinkExternal
from xrelay.lowering.fuse_composites import FuseComposites
from xrelay.lowering.fuse_elementwise import FuseElementwise
from xrelay.lowering.hoist_constants import HoistConstants
from xrelay.lowering.inline_calls import InlineCalls
from xrelay.lowering.instrument_calls import InstrumentCalls
from xrelay.lowering.outline_kernels import OutlineKernels
from xrelay.lowering.parallel_loops import ParallelLoops
from xrelay.lowering.plan_buffers import PlanBuffers
from xrelay.lowering.prepack_weights import PrepackWeights
from xrelay.lowering.qnn_float_products import QnnFloatProducts
from xrelay.lowering.qnn_int_products import QnnIntProducts
from xrelay.lowering.qnn_legalize import QnnLegalize
from xrelay.lowering.qnn_lookup_tables import QnnLookupTables
from xrelay.lowering.relay_to_linalg import RelayToLinalg
from xrelay.lowering.select_kernels import SelectKernels
from xrelay.lowering.tile_transposes import TileTransposes
from xrelay.lowering.to_llvm import ToLLVM
from xrelay.lowering.winograd_convs import WinogradConvs

# Order matters:
# - external functions are taken out first: nothing after may lower or inline them;
# - conv composites become fused loop nests while their boundaries are still known; the
#   other composites are then inlined (later stages expect one function);
# - index checks become results once every check is in @main, before anything is hoisted;
# - constants are hoisted once everything is in @main, and before select-kernels so that
#   folded weights are parameters prepack-weights can pack;
# - qnn-int-products, then qnn-float-products, read weights that hoist-constants made
#   parameters; the 8-bit GEMM takes what it can first (it packs its own words), and
#   qnn-float-products adds f32 parameters for the rest, which prepack-weights then
#   packs; qnn-legalize makes the remaining integer
#   products, which select-kernels leaves alone (it picks f32);
# - qnn-lookup-tables follows qnn-int-products, whose epilogues take the requantize (and
#   clip) after a product first; its chains start at the bytes that gives;
# - winograd-convs reads weights that are parameters and leaves batched products for
#   select-kernels;
# - bufferize needs linalg on tensors in destination-passing style;
# - kernels are outlined before any loop exists, so every later stage sees small functions,
#   and @main is then a straight list of calls whose buffers plan-buffers can give offsets;
# - parallel-loops needs the loops linalg-to-loops makes; emit-runtime reads the GEMM and
#   split-kernel declarations and the arenas, which to-llvm turns into plain llvm symbols;
# - xDSL's linalg-to-loops works on memrefs only; affine.apply from indexing maps must
#   become arith before scf-to-cf, and to-llvm expects the cf form.
STAGES: list[tuple[str, type[ModulePass]]] = [
    ("link-external", LinkExternal),
    ("fuse-composites", FuseComposites),
    ("inline-calls", InlineCalls),
    ("expose-checks", ExposeChecks),
    ("hoist-constants", HoistConstants),
    # before qnn-float-products: the 8-bit GEMM takes what it can, the f32 GEMM the rest
    ("qnn-int-products", QnnIntProducts),
    ("qnn-lookup-tables", QnnLookupTables),
    ("qnn-float-products", QnnFloatProducts),
    ("qnn-legalize", QnnLegalize),
    ("winograd-convs", WinogradConvs),
    ("select-kernels", SelectKernels),
    ("prepack-weights", PrepackWeights),
    ("relay-to-linalg", RelayToLinalg),
    ("fuse-elementwise", FuseElementwise),
    ("collapse-loops", CollapseLoops),
    ("tile-transposes", TileTransposes),
    ("bufferize", Bufferize),
    ("outline-kernels", OutlineKernels),
    ("plan-buffers", PlanBuffers),
    ("instrument-calls", InstrumentCalls),
    ("linalg-to-loops", ConvertLinalgToLoopsPass),
    ("parallel-loops", ParallelLoops),
    ("emit-runtime", EmitRuntime),
    ("lower-affine", LowerAffinePass),
    ("scf-to-cf", ConvertScfToCf),
    ("expand-math", ExpandMath),
    ("to-llvm", ToLLVM),
]
STAGE_NAMES = [name for name, _ in STAGES]

# the command-line tools set this: a stage-by-stage progress line on a terminal
PROGRESS = False


def _check_stage(stage: str | None) -> None:
    if stage is not None and stage not in STAGE_NAMES:
        raise Error(f"unknown stage '{stage}'; the stages are {STAGE_NAMES}")


def _verify(module: ModuleOp, where: str) -> None:
    try:
        verify_module(module)
    except VerificationError as e:
        raise VerificationError(f"{e} ({where})") from None


def lower(
    module: ModuleOp,
    stop_after: str | None = None,
    time_passes: bool | None = None,
    start_after: str | None = None,
    ctx: Context | None = None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    verify_each: bool | None = None,
    after: Mapping[str, Callable[[ModuleOp], object]] | None = None,
) -> dict[str, float]:
    """Run the stages in place, after `start_after` (if given) up to and including
    `stop_after`; `options` sets pass options by stage name
    (`{"select-kernels": {"enabled": False}}`). Returns seconds per stage. `verify_each`
    (default: XRELAY_VERIFY_EACH) verifies after every stage, not only the last. `after`
    calls a function with the module after a stage (build: compile the runtime ahead)."""
    _check_stage(stop_after)
    _check_stage(start_after)
    for stage in [*(options or {}), *(after or {})]:
        _check_stage(stage)
    if time_passes is None:
        time_passes = os.environ.get("XRELAY_TIME_PASSES", "") not in ("", "0")
    if verify_each is None:
        verify_each = os.environ.get("XRELAY_VERIFY_EACH", "") not in ("", "0")
    ctx = ctx if ctx is not None else Context()
    times: dict[str, float] = {}
    first = STAGE_NAMES.index(start_after) + 1 if start_after is not None else 0
    stages = STAGES[first:]
    for step, (name, cls) in enumerate(stages, 1):
        if PROGRESS and sys.stderr.isatty():  # one line, rewritten; quiet when not a terminal
            print(f"\rxrelay: compiling [{step}/{len(stages)}] {name:<18}", end="", file=sys.stderr)
        start = time.perf_counter()
        stage = cls()
        if options and name in options:
            stage = replace(stage, **options[name])
        stage.apply(ctx, module)
        last = name == stop_after or step == len(stages)
        if verify_each:
            _verify(module, f"after stage '{name}'")
        elif last:
            _verify(module, f"after stage '{name}'; XRELAY_VERIFY_EACH=1 finds the first stage")
        times[name] = time.perf_counter() - start
        if after and name in after:
            after[name](module)
        if time_passes:
            print(f"xrelay: {name:16s} {times[name]:8.3f} s", file=sys.stderr)
        if name == stop_after:
            break
    if PROGRESS and sys.stderr.isatty():
        print("\r" + " " * 50 + "\r", end="", file=sys.stderr)
    return times


@dataclass(frozen=True)
class LowerToLLVM(ModulePass):
    """The whole pipeline. Options: stop-after=<stage>, start-after=<stage> (STAGE_NAMES),
    to print the IR after a stage or resume on IR printed there."""

    name = "lower-to-llvm"

    stop_after: str = "to-llvm"
    start_after: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # a tool for reading IR stage by stage: every stage's output is verified
        lower(op, self.stop_after, start_after=self.start_after, ctx=ctx, verify_each=True)
