"""`BuildContext`: the context `xrelay.build` runs the pipeline in.

Passes that compute values besides IR (hoisted constants, packed weights, externally
compiled code) store them here when they run under `build`. Under a plain xDSL `Context`
(xrelay-opt, xdsl-opt) they change the IR in the same way and compute no values, so both
drivers produce the same IR.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.context import Context


@dataclass
class BuildContext(Context):
    """`params` holds the user's parameters; a pass that adds a parameter to @main adds
    its array here, in the order of @main's arguments. `externals` maps the symbols of
    externally compiled functions to their code (kept alive as long as the library).
    `release`: a pass may drop a parameter's array once nothing in the IR reads it (its
    packed copy replaced it), so that a weight is not held twice during the build."""

    params: dict[str, np.ndarray] = field(default_factory=dict)
    externals: dict[str, Any] = field(default_factory=dict)
    release: bool = False


def release(ctx: Context, name: str) -> None:
    """Under build(release_params=True): parameter `name`, which nothing reads any more (a
    packed copy replaced it), becomes a stand-in of no memory that keeps its shape and
    dtype for the signature."""
    if isinstance(ctx, BuildContext) and ctx.release:
        old = ctx.params[name]
        ctx.params[name] = np.broadcast_to(np.zeros((), old.dtype), old.shape)
