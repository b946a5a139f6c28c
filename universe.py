"""The xDSL universe of xrelay: its dialects and passes, for `xdsl-opt` and `xrelay-opt`.

Registered through the `xdsl.universe` entry point (pyproject.toml), so an installed xrelay
makes plain `xdsl-opt` parse relay IR and run xrelay's passes.
"""

import importlib
from collections.abc import Callable

from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xrelay.dialects import DIALECTS

# pass name -> "module:class", imported on first use (so that loading the universe, as
# xdsl-opt does at start, imports no pass)
_PASS_CLASSES: dict[str, str] = {
    # passes on relay/qnn (transforms/)
    "annotate-target": "xrelay.transforms.annotate_target:AnnotateTarget",
    "merge-compiler-regions": "xrelay.transforms.merge_compiler_regions:MergeCompilerRegions",
    "partition-graph": "xrelay.transforms.partition_graph:PartitionGraph",
    "fold-constants": "xrelay.transforms.fold_constants:FoldConstants",
    "merge-composite": "xrelay.transforms.merge_composite:MergeComposite",
    "simplify-inference": "xrelay.transforms.simplify_inference:SimplifyInference",
    "specialize-shapes": "xrelay.transforms.specialize_shapes:SpecializeShapes",
    "qnn-fold-quantize-constants": "xrelay.transforms.qnn_canonicalize:QnnFoldQuantizeConstants",
    "qnn-remove-clip-after-requantize": (
        "xrelay.transforms.qnn_canonicalize:QnnRemoveClipAfterRequantize"
    ),
    "qnn-dense-bias-as-add": "xrelay.transforms.qnn_canonicalize:QnnDenseBiasAsAdd",
    "qdq-to-qnn": "xrelay.transforms.qdq_to_qnn:QdqToQnn",
    # the lowering stages (lowering/pipeline.py:STAGES, in order) and the whole pipeline
    "link-external": "xrelay.lowering.external:LinkExternal",
    "fuse-composites": "xrelay.lowering.fuse_composites:FuseComposites",
    "inline-calls": "xrelay.lowering.inline_calls:InlineCalls",
    "expose-checks": "xrelay.lowering.expose_checks:ExposeChecks",
    "hoist-constants": "xrelay.lowering.hoist_constants:HoistConstants",
    "qnn-int-products": "xrelay.lowering.qnn_int_products:QnnIntProducts",
    "qnn-lookup-tables": "xrelay.lowering.qnn_lookup_tables:QnnLookupTables",
    "qnn-float-products": "xrelay.lowering.qnn_float_products:QnnFloatProducts",
    "qnn-legalize": "xrelay.lowering.qnn_legalize:QnnLegalize",
    "winograd-convs": "xrelay.lowering.winograd_convs:WinogradConvs",
    "select-kernels": "xrelay.lowering.select_kernels:SelectKernels",
    "prepack-weights": "xrelay.lowering.prepack_weights:PrepackWeights",
    "relay-to-linalg": "xrelay.lowering.relay_to_linalg:RelayToLinalg",
    "fuse-elementwise": "xrelay.lowering.fuse_elementwise:FuseElementwise",
    "collapse-loops": "xrelay.lowering.collapse_loops:CollapseLoops",
    "tile-transposes": "xrelay.lowering.tile_transposes:TileTransposes",
    "bufferize": "xrelay.lowering.bufferize:Bufferize",
    "outline-kernels": "xrelay.lowering.outline_kernels:OutlineKernels",
    "plan-buffers": "xrelay.lowering.plan_buffers:PlanBuffers",
    "instrument-calls": "xrelay.lowering.instrument_calls:InstrumentCalls",
    "linalg-to-loops": "xdsl.transforms.convert_linalg_to_loops:ConvertLinalgToLoopsPass",
    "parallel-loops": "xrelay.lowering.parallel_loops:ParallelLoops",
    "emit-runtime": "xrelay.lowering.emit_runtime:EmitRuntime",
    "scf-to-cf": "xdsl.transforms.convert_scf_to_cf:ConvertScfToCf",
    "expand-math": "xrelay.lowering.expand_math:ExpandMath",
    "to-llvm": "xrelay.lowering.to_llvm:ToLLVM",
    "lower-to-llvm": "xrelay.lowering.pipeline:LowerToLLVM",
}


def _loader(path: str) -> Callable[[], type[ModulePass]]:
    def load() -> type[ModulePass]:
        module, name = path.split(":")
        return getattr(importlib.import_module(module), name)

    return load


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    name: _loader(path) for name, path in _PASS_CLASSES.items()
}

UNIVERSE = Universe(all_dialects=DIALECTS, all_passes=PASSES)
