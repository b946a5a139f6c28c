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


DIALECTS: dict[str, Callable[[], Dialect]] = {"relay": _relay}

PASSES: dict[str, Callable[[], type[ModulePass]]] = {}

UNIVERSE = Universe(all_dialects=DIALECTS, all_passes=PASSES)
