"""Converters by TFLite builtin operator name: `@tflite_op("CONV_2D")`.

A converter takes an `Operator` binder (frontends/tflite/binder.py) and returns the
operator's outputs in order: SSA values in the model's layout, `NCHW(value)` for a 4-d
result kept channels-first, or numpy arrays (values known at import time: a converter whose
inputs are all known computes with numpy, as the shape arithmetic of models converted with
a dynamic batch needs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from xrelay.errors import Error

if TYPE_CHECKING:
    from xrelay.frontends.tflite.binder import Operator

Converter = Callable[["Operator"], Any]

CONVERTERS: dict[str, Converter] = {}


def tflite_op(*names: str) -> Callable[[Converter], Converter]:
    """Register a converter for the builtin operators `names`; a second converter for one
    name raises Error."""

    def register(fn: Converter) -> Converter:
        for name in names:
            if name in CONVERTERS:
                raise Error(f"two converters for TFLite {name}: remove one")
            CONVERTERS[name] = fn
        return fn

    return register


register_converter = tflite_op
