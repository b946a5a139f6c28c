"""`merge-compiler-regions`: group ops annotated with the same target into regions, marked
`xrelay.region = N`, as large as possible without creating a cycle.

An op joins the region of one of its producers (same target) unless a path leaves that
region and comes back to the op through ops outside it, which would make the outlined
function both an input and a user of another op. Otherwise it starts a new region.

    a (numpy)   b (numpy)            a, b, c: region 0   (c uses a and b)
       \\        /                     d: region 1        (d uses c through e, a non-numpy op)
        c (numpy) -> e (other) -> d (numpy)

Before:  %c = relay.add %a, %b {xrelay.target = "numpy"} : ...
After:   %c = relay.add %a, %b {xrelay.target = "numpy", xrelay.region = 0 : i64} : ...
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xrelay.signature import main_function
from xrelay.transforms.annotate_target import TARGET_ATTR

REGION_ATTR = "xrelay.region"


def _target(op: Operation) -> str | None:
    attr = op.attributes.get(TARGET_ATTR)
    return attr.data if isinstance(attr, StringAttr) else None


def _producers(op: Operation) -> list[Operation]:
    return [v.owner for v in op.operands if isinstance(v.owner, Operation)]


def _reaches(
    region_id: int,
    starts: list[Operation],
    region: dict[Operation, int],
    members: dict[int, list[Operation]],
) -> bool:
    """Whether walking back from `starts` (outside the region) reaches the region, where a
    region counts as one node (reaching any of its ops continues from all of them)."""
    seen: set[Operation] = set()
    stack = list(starts)
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        r = region.get(op)
        if r == region_id:
            return True
        group = members[r] if r is not None else [op]
        for member in group:
            seen.add(member)
            stack.extend(p for p in _producers(member) if p not in seen)
    return False


def merge_compiler_regions(module: ModuleOp) -> ModuleOp:
    region: dict[Operation, int] = {}
    members: dict[int, list[Operation]] = {}
    for op in main_function(module).body.block.ops:
        target = _target(op)
        if target is None:
            continue
        producers = _producers(op)
        chosen = None
        for p in producers:
            if p not in region or _target(p) != target:
                continue
            r = region[p]
            outside = [q for q in producers if region.get(q) != r]
            if not _reaches(r, outside, region, members):
                chosen = r
                break
        if chosen is None:
            chosen = len(members)
            members[chosen] = []
        region[op] = chosen
        members[chosen].append(op)
        op.attributes[REGION_ATTR] = IntegerAttr(chosen, i64)
    return module


@dataclass(frozen=True)
class MergeCompilerRegions(ModulePass):
    """Group same-target ops into acyclic regions. No options."""

    name = "merge-compiler-regions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        merge_compiler_regions(op)
