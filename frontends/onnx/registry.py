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
        start = _first_claimed(key, since) if entries else since  # (the first looks nothing up)
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
def _introduced(key: tuple[str, str]) -> int | None:
    """The opset version that introduced op `key` (domain, op type) in the ONNX standard, or
    None if the standard has no such op. Asked only for ops with two converters or more, and
    schema by schema: the whole history (`get_all_schemas_with_history`) would hold 4 MB of
    schema objects in every process that imports xrelay."""
    domain, op_type = key
    try:
        version = onnx.defs.get_schema(op_type, domain=domain).since_version
    except onnx.defs.SchemaError:
        return None
    while version > 1:  # step back through the op's versions
        try:
            version = onnx.defs.get_schema(op_type, version - 1, domain).since_version
        except onnx.defs.SchemaError:
            break
    return version


def _first_claimed(key: tuple[str, str], since: int) -> int:
    """The first opset a converter registered at `since` serves: no model has the op before
    the version that introduced it."""
    introduced = _introduced(key)
    return since if introduced is None else max(since, introduced)


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
