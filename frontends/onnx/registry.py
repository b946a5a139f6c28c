"""Converters by ONNX op type and version: `@onnx_op("Conv", since=11)`.

Dispatch picks, for a model's opset, the converter with the highest `since` not above it.
A converter takes a `Node` binder and returns the node's outputs in order: an SSA value, a
numpy array (a value known at import time), or None for an absent optional output.
Converters registered with `structured=True` (sequences, control flow, Gradient) work on
importer `Value`s and may return them; they are never run in fold mode (the nodes of their
bodies fold one by one).

Two converters may not claim the same opset range of one op: registering a second one for
the same domain, op type and `since` raises at import, so neither silently wins. A `since`
below the version that introduced the op in the ONNX standard counts as that version
(`@onnx_op("Tan")` and `@onnx_op("Tan", since=7)` both claim every model with Tan).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

import onnx.defs
from xrelay.errors import Error

if TYPE_CHECKING:
    from xrelay.frontends.onnx.binder import Node

Converter = Callable[["Node"], Any]

# (domain, op_type) -> [(since, converter)], sorted by since
CONVERTERS: dict[tuple[str, str], list[tuple[int, Converter]]] = {}

# op types whose converters work on importer Values (sequences, control flow, Gradient)
STRUCTURED: set[str] = set()

DEFAULT_DOMAINS = ("", "ai.onnx")


def onnx_op(
    op_type: str, since: int = 1, domain: str = "", structured: bool = False
) -> Callable[[Converter], Converter]:
    """Register a converter for `op_type` from opset `since` on (in `domain`); raises Error
    if another converter already claims that opset range (see the module docstring)."""
    if structured:
        STRUCTURED.add(op_type)

    def register(fn: Converter) -> Converter:
        key = (_domain(domain), op_type)
        entries = CONVERTERS.setdefault(key, [])
        start = _first_claimed(key, since)
        for other_since, other in entries:
            if _first_claimed(key, other_since) == start:
                raise Error(
                    f"two converters for ONNX {_op_name(key)} from opset {start}: "
                    f"{_qualname(other)} (since={other_since}) and {_qualname(fn)} "
                    f"(since={since}); remove one"
                )
        entries.append((since, fn))
        entries.sort(key=lambda e: e[0])
        return fn

    return register


register_converter = onnx_op


def _domain(domain: str) -> str:
    return "" if domain in DEFAULT_DOMAINS else domain


@cache
def _introduced() -> dict[tuple[str, str], int]:
    """(domain, op type) -> the opset version that introduced the op, for the ops the ONNX
    standard defines."""
    first: dict[tuple[str, str], int] = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        key = (_domain(schema.domain), schema.name)
        first[key] = min(first.get(key, schema.since_version), schema.since_version)
    return first


def _first_claimed(key: tuple[str, str], since: int) -> int:
    """The first opset a converter registered at `since` serves: no model has the op before
    the version that introduced it."""
    return max(since, _introduced().get(key, since))


def _op_name(key: tuple[str, str]) -> str:
    domain, op_type = key
    return f"{domain}.{op_type}" if domain else op_type


def _qualname(fn: Converter) -> str:
    return f"{fn.__module__}.{fn.__qualname__}"


def lookup(op_type: str, opset: int, domain: str = "") -> Converter | None:
    """The converter for `op_type` at `opset`, or None."""
    best = None
    for since, fn in CONVERTERS.get((_domain(domain), op_type), []):
        if since <= opset:
            best = fn
    return best
