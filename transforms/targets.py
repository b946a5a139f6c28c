"""External targets for graph partitioning (TVM's BYOC): which ops a target supports and,
optionally, how it compiles a partitioned function.

    register_target(Target("mylib", supports=lambda op: op.name == "relay.nn.conv2d",
                           codegen=my_codegen))

`supports(op)` decides annotation (`annotate-target`). `codegen(fn)` receives a partitioned
`func.func` (relay ops on tensors) and returns an `ExternalFunction`: the address of a native
function taking one pointer per argument, then one per result (C order, contiguous), plus
any objects that must stay alive while it can be called. `xrelay.build` links it in place of
the function; a target without codegen has its functions compiled with the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import func
from xdsl.ir import Operation
from xrelay.errors import Error


@dataclass
class ExternalFunction:
    address: int
    keepalive: list[Any] = field(default_factory=list)


@dataclass(frozen=True)
class Target:
    name: str
    supports: Callable[[Operation], bool]
    codegen: Callable[[func.FuncOp], ExternalFunction] | None = None


TARGETS: dict[str, Target] = {}


def register_target(target: Target) -> Target:
    TARGETS[target.name] = target
    return target


def get_target(name: str) -> Target:
    if name not in TARGETS:
        import xrelay.transforms.numpy_target  # noqa: F401  (the built-in example target)

    if name not in TARGETS:
        raise Error(f"no target '{name}'; registered: {sorted(TARGETS)}")
    return TARGETS[name]
