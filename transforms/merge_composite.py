"""`merge-composite`: outline each match of a pattern table into a private function carrying
`Composite = "name"`, called from where the match stood (TVM's MergeComposite).

A table is a list of `CompositePattern(name, pattern, check=None)` records in priority
order: each pattern is applied over the whole function before the next, matches rooted at
later ops first. A match is outlined only if no interior op has a user outside it and its
`check(match)` (if any) accepts it. Values the pattern bound to wildcards or vars become the
function's arguments (in first-use order); constants it uses are copied into the function.

Tables are registered by name so `xrelay-opt -p "merge-composite{table=NAME}"` finds them:

    @register_pattern_table("example")
    def example_table() -> list[CompositePattern]:
        return [CompositePattern("conv_bias_relu", conv_bias_relu_pattern())]

Before:
    %c = relay.nn.conv2d %x, %w ...
    %b = relay.nn.bias_add %c, %bias ...
    %r = relay.nn.relu %b ...
After:
    %r = func.call @composite_conv_bias_relu_0(%x) ...
    func.func private @composite_conv_bias_relu_0(%a0: ...) -> ... attributes {Composite = "conv_bias_relu"}
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xrelay.errors import Error
from xrelay.signature import main_function
from xrelay.transforms.outline import outline_ops
from xrelay.transforms.pattern.patterns import CallPattern, Match, Pattern, PatternError

COMPOSITE_ATTR = "Composite"


@dataclass(frozen=True)
class CompositePattern:
    """One pattern-table entry: the composite's name, its pattern, an optional extra check."""

    name: str
    pattern: Pattern
    check: Callable[[Match], bool] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.pattern, Pattern):
            raise PatternError(f"composite '{self.name}' needs a Pattern, got {self.pattern!r}")


PATTERN_TABLES: dict[str, Callable[[], list[CompositePattern]]] = {}


def register_pattern_table(
    name: str,
) -> Callable[[Callable[[], list[CompositePattern]]], Callable[[], list[CompositePattern]]]:
    def register(fn: Callable[[], list[CompositePattern]]) -> Callable[[], list[CompositePattern]]:
        PATTERN_TABLES[name] = fn
        return fn

    return register


def get_pattern_table(name: str) -> list[CompositePattern]:
    if name not in PATTERN_TABLES:
        # the built-in tables register on import
        import xrelay.transforms.pattern_tables  # noqa: F401

    if name not in PATTERN_TABLES:
        raise Error(f"no pattern table '{name}'; registered: {sorted(PATTERN_TABLES)}")
    return PATTERN_TABLES[name]()


def _matched_ops(match: Match) -> list[Operation]:
    """The ops a match's op patterns bound (constants and arguments are not among them)."""
    ops: list[Operation] = []
    for pattern, value in match.bound():
        owner = value.owner if isinstance(value.owner, Operation) else None
        if isinstance(pattern, CallPattern) and owner is not None and owner not in ops:
            ops.append(owner)
    return ops


def _self_contained(root: Operation, ops: list[Operation]) -> bool:
    inside = set(ops)
    for op in ops:
        if op is root:
            continue
        for result in op.results:
            if any(use.operation not in inside for use in result.uses):
                return False
    return True


def merge_composite(module: ModuleOp, table: Sequence[CompositePattern]) -> ModuleOp:
    """Outline every match of `table` in `@main` (in place); returns the module."""
    main = main_function(module)
    block = main.body.block
    counts: dict[str, int] = {}
    new_functions: list[func.FuncOp] = []
    for entry in table:
        for op in reversed(list(block.ops)):
            if op.parent is None or len(op.results) != 1:
                continue
            match = entry.pattern.match(op.results[0])
            if match is None or (entry.check is not None and not entry.check(match)):
                continue
            ops = _matched_ops(match)
            if op not in ops or not _self_contained(op, ops):
                continue
            index = counts.get(entry.name, 0)
            counts[entry.name] = index + 1
            symbol = f"composite_{entry.name}_{index}"
            attrs = {COMPOSITE_ATTR: StringAttr(entry.name)}
            fn, _ = outline_ops(ops, symbol, attrs, results=[op.results[0]])
            new_functions.append(fn)
    for fn in new_functions:
        module.body.block.add_op(fn)
    return module


@dataclass(frozen=True)
class MergeComposite(ModulePass):
    """Outline pattern-table matches into composite functions. Options: table=NAME."""

    name = "merge-composite"
    table: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.table:
            raise Error("merge-composite needs a pattern table: merge-composite{table=NAME}")
        merge_composite(op, get_pattern_table(self.table))
