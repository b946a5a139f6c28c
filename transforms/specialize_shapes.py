"""`specialize-shapes{dims="batch=2,seq=7"}`: give the dynamic dimensions values.

Every tensor type in the module (block arguments, results, function types) has its
dimension expressions (dialects/dims.py) evaluated under the binding, and every op target
that lists expressions in a `dims` property (`relay.reshape`'s newshape,
`relay.broadcast_to`'s shape) gets the values. The module is then verified, so a binding
that breaks a shape rule the symbols hid (a dimension that must be positive, an
expression that is not whole) is an error naming the op. A dimension left without an
expression (`?`) cannot be given a value: the pass refuses it, naming the value.

Before:  func.func @main(%x: tensor<?x4xf32, #relay.dims<"batch">>) -> ...
After:   func.func @main(%x: tensor<2x4xf32>) -> ...        (dims="batch=2")
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xrelay.dialects.specialize import specialize_types
from xrelay.errors import Error
from xrelay.ir import location_str, verify_module
from xrelay.reference import evaluate_op


def parse_binding(text: str) -> dict[str, int]:
    """`"batch=2,seq=7"` -> {"batch": 2, "seq": 7}."""
    binding: dict[str, int] = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or not value.strip().isdigit():
            raise Error(f"specialize-shapes: expected name=value, got '{item}'")
        binding[name.strip()] = int(value)
    return binding


def specialize_shapes(
    module: ModuleOp,
    binding: Mapping[str, int],
    values: Mapping[int, np.ndarray] | None = None,
) -> None:
    """Evaluate every dynamic dimension in `module` (in place) under `binding`, converting
    `relay.deferred` nodes with the @main argument `values` they read; then verify."""
    specialize_types(module, binding, location_str, values, evaluate_op)
    verify_module(module)


@dataclass(frozen=True)
class SpecializeShapes(ModulePass):
    """Give the dynamic dimensions the values `dims` lists ("batch=2,seq=7")."""

    name = "specialize-shapes"

    dims: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        specialize_shapes(op, parse_binding(self.dims))
