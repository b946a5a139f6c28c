"""Converters by ONNX op type and version: `@onnx_op("Conv", since=11)`.

Dispatch picks, for a model's opset, the converter with the highest `since` not above it.
A converter takes a `Node` binder and returns the node's outputs in order: an SSA value, a
numpy array (a value known at import time), or None for an absent optional output.
Converters registered with `structured=True` (sequences, control flow, Gradient) work on
importer `Value`s and may return them; they are never run in fold mode (the nodes of their
bodies fold one by one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

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
    """Register a converter for `op_type` from opset `since` on (in `domain`)."""
    if structured:
        STRUCTURED.add(op_type)

    def register(fn: Converter) -> Converter:
        entries = CONVERTERS.setdefault((_domain(domain), op_type), [])
        entries[:] = [e for e in entries if e[0] != since] + [(since, fn)]
        entries.sort(key=lambda e: e[0])
        return fn

    return register


register_converter = onnx_op


def _domain(domain: str) -> str:
    return "" if domain in DEFAULT_DOMAINS else domain


def lookup(op_type: str, opset: int, domain: str = "") -> Converter | None:
    """The converter for `op_type` at `opset`, or None."""
    best = None
    for since, fn in CONVERTERS.get((_domain(domain), op_type), []):
        if since <= opset:
            best = fn
    return best
