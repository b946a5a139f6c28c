"""`annotate-target`: mark each relay op of @main that a target supports with
`xrelay.target = "NAME"` (the first of `targets` whose predicate accepts it).

Options: `targets` (comma-separated target names, registered with `register_target`).

Before:  %y = relay.nn.relu %x : ...
After:   %y = relay.nn.relu %x {xrelay.target = "numpy"} : ...
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xrelay.dialects import relay
from xrelay.dialects.relay.base import RelayOp
from xrelay.errors import Error
from xrelay.signature import main_function
from xrelay.transforms.targets import get_target

TARGET_ATTR = "xrelay.target"


def annotate_target(module: ModuleOp, targets: list[str]) -> ModuleOp:
    resolved = [get_target(t) for t in targets]
    for op in main_function(module).body.block.ops:
        if not isinstance(op, RelayOp) or isinstance(op, relay.ConstantOp):
            continue
        for target in resolved:
            if target.supports(op):
                op.attributes[TARGET_ATTR] = StringAttr(target.name)
                break
    return module


@dataclass(frozen=True)
class AnnotateTarget(ModulePass):
    """Mark ops by supporting target. Options: targets=NAME[,NAME...]."""

    name = "annotate-target"
    targets: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        names = [t for t in self.targets.split(",") if t]
        if not names:
            raise Error("annotate-target needs targets: annotate-target{targets=NAME}")
        annotate_target(op, names)
