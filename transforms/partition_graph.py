"""`partition-graph`: outline each compiler region of @main into a function carrying
`Compiler = "target"` and `global_symbol = "<target>_main_<n>"`, called from @main; the
unsupported ops stay in @main. Annotations are removed.

Before:
    %a = relay.exp %x {xrelay.target = "numpy", xrelay.region = 0 : i64} : ...
    %b = relay.nn.relu %a {xrelay.target = "numpy", xrelay.region = 0 : i64} : ...
After:
    %b = func.call @numpy_main_0(%x) : ...
    func.func @numpy_main_0(%arg: ...) attributes {Compiler = "numpy", global_symbol = "numpy_main_0"}
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xrelay.signature import main_function
from xrelay.transforms.annotate_target import TARGET_ATTR
from xrelay.transforms.merge_compiler_regions import REGION_ATTR
from xrelay.transforms.outline import outline_ops

COMPILER_ATTR = "Compiler"
SYMBOL_ATTR = "global_symbol"


def partition_graph(module: ModuleOp) -> ModuleOp:
    main = main_function(module)
    regions: dict[int, list[Operation]] = {}
    for op in main.body.block.ops:
        r = op.attributes.get(REGION_ATTR)
        if isinstance(r, IntegerAttr):
            regions.setdefault(r.value.data, []).append(op)
    counts: dict[str, int] = {}
    for ops in regions.values():
        target = ops[0].attributes[TARGET_ATTR].data
        symbol = f"{target}_main_{counts.get(target, 0)}"
        counts[target] = counts.get(target, 0) + 1
        for op in ops:
            del op.attributes[TARGET_ATTR], op.attributes[REGION_ATTR]
        attrs = {COMPILER_ATTR: StringAttr(target), SYMBOL_ATTR: StringAttr(symbol)}
        fn, _ = outline_ops(ops, symbol, attrs, private=False)
        module.body.block.add_op(fn)
    for op in main.body.block.ops:  # annotated ops that joined no region
        op.attributes.pop(TARGET_ATTR, None)
    return module


@dataclass(frozen=True)
class PartitionGraph(ModulePass):
    """Outline compiler regions into target functions. No options."""

    name = "partition-graph"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        partition_graph(op)
