"""`relay.transform`: the PassContext and Relay's pass objects, each applying xrelay's
pass of the same meaning (transforms/).

A pass is called on a module and returns a new module; the argument is left unchanged,
as in Relay (`mod = relay.transform.FoldConstant()(mod)`). A module is xDSL's
`builtin.module` (from `relay.frontend`); a pass also takes its `@main` function (Relay's
`mod["main"]`) and then works on the module around it.

`PassContext(opt_level, required_pass, disabled_pass)` is read by `Sequential` (which
skips the passes it disables, like Relay) and by `relay.build` and the compiled executors
(relay/lower.py): SimplifyInference (level 0), FuseOps (level 1: products and
convolutions with their elementwise epilogues on the runtime GEMM) and FoldConstant
(level 2).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Self

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xrelay.dialects import qnn
from xrelay.errors import Error
from xrelay.ir import verify_module
from xrelay.relay.unsupported import unsupported
from xrelay.signature import main_function
from xrelay.transforms.annotate_target import annotate_target
from xrelay.transforms.fold_constants import erase_dead_constants, fold_op
from xrelay.transforms.merge_compiler_regions import merge_compiler_regions
from xrelay.transforms.merge_composite import CompositePattern, get_pattern_table, merge_composite
from xrelay.transforms.partition_graph import partition_graph
from xrelay.transforms.simplify_inference import SimplifyInference as SimplifyInferencePass

# Relay passes that relay.build and the executors consult, with the level that enables them
BUILD_PASSES = {"SimplifyInference": 0, "FuseOps": 1, "FoldConstant": 2}
# Relay build passes xrelay never runs: disabling one is allowed (nothing to do); requiring
# one is an error
NOT_IN_XRELAY = frozenset(
    {
        "AlterOpLayout", "BackwardFoldScaleAxis", "CanonicalizeCast", "CanonicalizeOps",
        "CombineParallelBatchMatmul", "CombineParallelConv2D", "CombineParallelDense",
        "ConvertLayout", "DeadCodeElimination", "DynamicToStatic", "EliminateCommonSubexpr",
        "FastMath", "FoldScaleAxis", "ForwardFoldScaleAxis", "Legalize", "SimplifyExpr",
        "SplitArgs", "ToMixedPrecision",
    }
)  # fmt: skip


def module_of(mod: Any, where: str) -> ModuleOp:
    """The module `mod` is, or whose `@main` it is; refuses anything else naming `where`."""
    if isinstance(mod, ModuleOp):
        return mod
    if isinstance(mod, func.FuncOp) and isinstance(mod.parent_op(), ModuleOp):
        module = mod.parent_op()
        assert isinstance(module, ModuleOp)
        if main_function(module) is mod:
            return module
    raise Error(
        f"{where}: expected a module from relay.frontend (an xDSL builtin.module) or its "
        f"@main function, got {type(mod).__name__}"
    )


class PassContext:
    """Relay's `tvm.transform.PassContext`: `with PassContext(opt_level=3): ...`.
    `opt_level` 0-4; `required_pass` / `disabled_pass` list pass names. Relay's other
    options (instruments, config keys, tracing) are refused, never ignored: xrelay has no
    pass instruments and reads no config keys."""

    _local = threading.local()

    def __init__(
        self,
        opt_level: int = 2,
        required_pass: Iterable[str] | None = None,
        disabled_pass: Iterable[str] | None = None,
        instruments: Sequence[Any] | None = None,
        config: dict[str, Any] | None = None,
        **options: Any,
    ) -> None:
        if options:
            raise Error(f"PassContext: option '{min(options)}' is not supported by xrelay")
        if instruments:
            raise Error("PassContext: instruments are not supported (xrelay has no instruments)")
        if config:
            raise Error(
                f"PassContext: config '{min(config)}' is not supported (xrelay reads no "
                "config keys; relay.build's options are opt_level and the pass lists)"
            )
        if not isinstance(opt_level, int) or not 0 <= opt_level <= 4:
            raise Error(f"PassContext: opt_level must be an integer from 0 to 4, got {opt_level!r}")
        self.opt_level = opt_level
        self.required_pass = _pass_names(required_pass, "required_pass", allow_absent=False)
        self.disabled_pass = _pass_names(disabled_pass, "disabled_pass", allow_absent=True)
        self.instruments: list[Any] = []
        self.config: dict[str, Any] = {}

    @classmethod
    def current(cls) -> PassContext:
        """The innermost active context, or the default one (opt_level 2)."""
        stack = getattr(cls._local, "stack", None)
        return stack[-1] if stack else PassContext()

    def pass_enabled(self, name: str, opt_level: int) -> bool:
        """Relay's rule: disabled loses, then required wins, then the level decides."""
        if name in self.disabled_pass:
            return False
        return name in self.required_pass or self.opt_level >= opt_level

    def __enter__(self) -> Self:
        if not hasattr(self._local, "stack"):
            self._local.stack = []
        self._local.stack.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        self._local.stack.pop()

    def __getattr__(self, name: str) -> Any:
        raise unsupported("PassContext", name, ["current", "opt_level", "pass_enabled"])


def _pass_names(names: Iterable[str] | None, what: str, allow_absent: bool) -> frozenset[str]:
    if isinstance(names, str):
        raise Error(f"PassContext: {what} is a list of pass names, got the string '{names}'")
    known = set(BUILD_PASSES) | set(PASSES) | {"Sequential"}
    names = frozenset(names or ())
    for name in sorted(names):
        if name in known or (allow_absent and name in NOT_IN_XRELAY):
            continue
        why = "xrelay does not have this pass" if name in NOT_IN_XRELAY else "unknown pass"
        raise Error(f"PassContext: {what} names '{name}': {why}; xrelay knows {sorted(known)}")
    return names


class Pass:
    """A Relay pass: `pass_(mod)` returns the transformed copy of `mod`."""

    name = ""
    opt_level = 0

    def __call__(self, mod: Any) -> ModuleOp:
        module = module_of(mod, f"relay.transform.{self.name}").clone()
        self.apply(module)
        verify_module(module)
        return module

    def apply(self, module: ModuleOp) -> None:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"relay.transform.{self.name}()"


class InferType(Pass):
    """Types are inferred when ops are built; this verifies them (a copy of `mod`)."""

    name = "InferType"

    def apply(self, module: ModuleOp) -> None:
        pass


class FoldConstant(Pass):
    """`fold-constants`: ops whose operands are all constants become constants. With
    `fold_qnn=False` (Relay's default) qnn ops are left for the backend, as in Relay."""

    name = "FoldConstant"
    opt_level = 2

    def __init__(self, fold_qnn: bool = False) -> None:
        self.fold_qnn = fold_qnn

    def apply(self, module: ModuleOp) -> None:
        for op in list(module.walk()):
            if self.fold_qnn or not isinstance(op, tuple(qnn.ALL_OPS)):
                fold_op(op, 1 << 24)  # fold-constants' default max-elements
        erase_dead_constants(module)


class SimplifyInference(Pass):
    """`simplify-inference`: dropout removed, batch norms folded into convs or scale/shift."""

    name = "SimplifyInference"

    def apply(self, module: ModuleOp) -> None:
        SimplifyInferencePass().apply(Context(), module)


class MergeComposite(Pass):
    """`merge-composite`: `pattern_table` is a list of `(name, pattern)` or `(name, pattern,
    check)` entries (patterns from `xrelay.transforms.pattern`; `check` receives the
    `Match`, not Relay's matched expression), of `CompositePattern` records, or the name
    of a registered table."""

    name = "MergeComposite"

    def __init__(self, pattern_table: Any) -> None:
        if isinstance(pattern_table, str):
            self.table = get_pattern_table(pattern_table)
        else:
            self.table = [_composite(entry) for entry in pattern_table]

    def apply(self, module: ModuleOp) -> None:
        merge_composite(module, self.table)


def _composite(entry: Any) -> CompositePattern:
    if isinstance(entry, CompositePattern):
        return entry
    if isinstance(entry, tuple) and len(entry) in (2, 3):
        return CompositePattern(*entry)
    raise Error(
        f"relay.transform.MergeComposite: a pattern-table entry is (name, pattern[, check]), "
        f"got {entry!r}"
    )


class AnnotateTarget(Pass):
    """`annotate-target`: ops a target supports (targets registered with
    `xrelay.transforms.targets.register_target`; built in: "numpy") get its annotation."""

    name = "AnnotateTarget"

    def __init__(self, targets: str | Sequence[str], include_non_call_ops: bool = True) -> None:
        if not include_non_call_ops:
            raise Error(
                "relay.transform.AnnotateTarget: include_non_call_ops=False is not supported "
                "(xrelay annotates every supported op)"
            )
        self.targets = [targets] if isinstance(targets, str) else list(targets)

    def apply(self, module: ModuleOp) -> None:
        annotate_target(module, self.targets)


class MergeCompilerRegions(Pass):
    """`merge-compiler-regions`: annotated ops grouped into regions per target."""

    name = "MergeCompilerRegions"

    def apply(self, module: ModuleOp) -> None:
        merge_compiler_regions(module)


class PartitionGraph(Pass):
    """`partition-graph`: each region outlined into a `Compiler = "target"` function
    (constants it uses are copied in: Relay's `bind_constants=True`)."""

    name = "PartitionGraph"

    def __init__(self, mod_name: str = "default", bind_constants: bool = True) -> None:
        if mod_name != "default":
            raise Error(
                f"relay.transform.PartitionGraph: mod_name '{mod_name}' is not supported "
                "(functions are named <target>_main_<n>)"
            )
        if not bind_constants:
            raise Error(
                "relay.transform.PartitionGraph: bind_constants=False is not supported "
                "(constants are always copied into the partitioned functions)"
            )

    def apply(self, module: ModuleOp) -> None:
        partition_graph(module)


class Sequential(Pass):
    """Runs `passes` in order, skipping those the current PassContext disables (by name,
    or a level above its opt_level) unless `required` or the context requires them."""

    name = "Sequential"

    def __init__(
        self,
        passes: Sequence[Callable[[ModuleOp], ModuleOp]] | None = None,
        opt_level: int = 0,
        name: str = "sequential",
        required: Iterable[str] | None = None,
    ) -> None:
        for p in passes or ():
            if not callable(p):
                raise Error(f"relay.transform.Sequential: {p!r} is not a pass")
        self.passes = list(passes or ())
        self.opt_level = opt_level
        self.label = name
        self.required = frozenset(required or ())

    def __call__(self, mod: Any) -> ModuleOp:
        ctx = PassContext.current()
        module = module_of(mod, f"relay.transform.Sequential '{self.label}'")
        for p in self.passes:
            name, level = getattr(p, "name", ""), getattr(p, "opt_level", 0)
            if name in self.required or ctx.pass_enabled(name, level):
                module = p(module)
        return module


PASSES = {
    cls.name: cls
    for cls in (
        InferType, FoldConstant, SimplifyInference, MergeComposite, AnnotateTarget,
        MergeCompilerRegions, PartitionGraph,
    )
}  # fmt: skip

__all__ = [
    "AnnotateTarget", "FoldConstant", "InferType", "MergeCompilerRegions", "MergeComposite",
    "PartitionGraph", "PassContext", "Sequential", "SimplifyInference",
]  # fmt: skip


def __getattr__(name: str) -> Any:
    raise unsupported("relay.transform", name, __all__)
