"""The xDSL universe of xrelay: its dialects and passes, for `xdsl-opt` and `xrelay-opt`.

Registered through the `xdsl.universe` entry point (pyproject.toml), so an installed xrelay
makes plain `xdsl-opt` parse relay IR and run xrelay's passes.
"""

from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe


def _relay() -> Dialect:
    from xrelay.dialects.relay import Relay

    return Relay


def _qnn() -> Dialect:
    from xrelay.dialects.qnn import Qnn

    return Qnn


DIALECTS: dict[str, Callable[[], Dialect]] = {"relay": _relay, "qnn": _qnn}


def _relay_to_linalg() -> type[ModulePass]:
    from xrelay.lowering.relay_to_linalg import RelayToLinalg

    return RelayToLinalg


def _qnn_legalize() -> type[ModulePass]:
    from xrelay.lowering.qnn_legalize import QnnLegalize

    return QnnLegalize


def _bufferize() -> type[ModulePass]:
    from xrelay.lowering.bufferize import Bufferize

    return Bufferize


def _outline_kernels() -> type[ModulePass]:
    from xrelay.lowering.outline_kernels import OutlineKernels

    return OutlineKernels


def _parallel_loops() -> type[ModulePass]:
    from xrelay.lowering.parallel_loops import ParallelLoops

    return ParallelLoops


def _plan_buffers() -> type[ModulePass]:
    from xrelay.lowering.plan_buffers import PlanBuffers

    return PlanBuffers


def _to_llvm() -> type[ModulePass]:
    from xrelay.lowering.to_llvm import ToLLVM

    return ToLLVM


def _lower_to_llvm() -> type[ModulePass]:
    from xrelay.lowering.pipeline import LowerToLLVM

    return LowerToLLVM


def _fold_constants() -> type[ModulePass]:
    from xrelay.transforms.fold_constants import FoldConstants

    return FoldConstants


def _simplify_inference() -> type[ModulePass]:
    from xrelay.transforms.simplify_inference import SimplifyInference

    return SimplifyInference


def _merge_composite() -> type[ModulePass]:
    from xrelay.transforms.merge_composite import MergeComposite

    return MergeComposite


def _annotate_target() -> type[ModulePass]:
    from xrelay.transforms.annotate_target import AnnotateTarget

    return AnnotateTarget


def _merge_compiler_regions() -> type[ModulePass]:
    from xrelay.transforms.merge_compiler_regions import MergeCompilerRegions

    return MergeCompilerRegions


def _partition_graph() -> type[ModulePass]:
    from xrelay.transforms.partition_graph import PartitionGraph

    return PartitionGraph


def _qnn_fold_quantize_constants() -> type[ModulePass]:
    from xrelay.transforms.qnn_canonicalize import QnnFoldQuantizeConstants

    return QnnFoldQuantizeConstants


def _qnn_remove_clip_after_requantize() -> type[ModulePass]:
    from xrelay.transforms.qnn_canonicalize import QnnRemoveClipAfterRequantize

    return QnnRemoveClipAfterRequantize


def _qdq_to_qnn() -> type[ModulePass]:
    from xrelay.transforms.qdq_to_qnn import QdqToQnn

    return QdqToQnn


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "annotate-target": _annotate_target,
    "merge-compiler-regions": _merge_compiler_regions,
    "partition-graph": _partition_graph,
    "fold-constants": _fold_constants,
    "merge-composite": _merge_composite,
    "simplify-inference": _simplify_inference,
    "qnn-fold-quantize-constants": _qnn_fold_quantize_constants,
    "qnn-remove-clip-after-requantize": _qnn_remove_clip_after_requantize,
    "qdq-to-qnn": _qdq_to_qnn,
    "qnn-legalize": _qnn_legalize,
    "relay-to-linalg": _relay_to_linalg,
    "bufferize": _bufferize,
    "outline-kernels": _outline_kernels,
    "parallel-loops": _parallel_loops,
    "plan-buffers": _plan_buffers,
    "to-llvm": _to_llvm,
    "lower-to-llvm": _lower_to_llvm,
}

UNIVERSE = Universe(all_dialects=DIALECTS, all_passes=PASSES)
