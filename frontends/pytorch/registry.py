"""Converters by PyTorch op kind, shared by both capture paths: `@aten_op("convolution")`.

The key is the op's schema name without its overload ("aten::add" for `aten.add.Tensor` in an
exported program and for `aten::add` in TorchScript), so one converter serves both paths; a
converter that must tell overloads apart reads `c.overload`. In-place variants ("aten::add_")
use the functional converter. A converter takes a `Call` and returns the op's outputs: one
value, or a list/tuple for several (SSA values, or Python/torch values known at import time).
Registering a second converter for a name already registered raises at import, so neither
silently wins.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from xrelay.errors import Error

if TYPE_CHECKING:
    from xrelay.frontends.pytorch.call import Call

Converter = Callable[["Call"], Any]

CONVERTERS: dict[str, Converter] = {}


def aten_op(*names: str, namespace: str = "aten") -> Callable[[Converter], Converter]:
    """Register a converter for each of `names` (without namespace and overload); raises Error
    if one of them already has a converter."""

    def register(fn: Converter) -> Converter:
        kinds = [f"{namespace}::{name}" for name in names]
        for kind in kinds:
            other = CONVERTERS.get(kind)
            if other is not None:
                raise Error(
                    f"two converters for {kind}: {other.__module__}.{other.__qualname__} and "
                    f"{fn.__module__}.{fn.__qualname__}; remove one"
                )
        for kind in kinds:
            CONVERTERS[kind] = fn
        return fn

    return register


def functional_kind(kind: str) -> str:
    """'aten::add_' -> 'aten::add'; other kinds unchanged (dunder names keep their '_')."""
    ns, _, name = kind.partition("::")
    if name.endswith("_") and not name.endswith("__") and not name.startswith("_"):
        return f"{ns}::{name[:-1]}"
    return kind


def is_inplace(kind: str) -> bool:
    return functional_kind(kind) != kind


def lookup(kind: str) -> Converter | None:
    return CONVERTERS.get(functional_kind(kind))
