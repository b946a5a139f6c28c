"""`BuildContext`: the context `xrelay.build` runs the pipeline in.

Passes that compute values besides IR (hoisted constants, packed weights, externally
compiled code) store them here when they run under `build`. Under a plain xDSL `Context`
(xrelay-opt, xdsl-opt) they change the IR in the same way and compute no values, so both
drivers produce the same IR.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Attribute, SSAValue
from xrelay.dialects.dtypes import numpy_dtype
from xrelay.signature import NAME_ATTR, PARAM_ATTR


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


# the first byte of every parameter a build adds: numpy's large arrays start 16 bytes past
# a page (malloc's header), so each 64-byte vector load of a packed weight read two cache
# lines (512 -> 1000 1x1 on 13 x 13, one thread: 1.28 -> 1.22 ms; SqueezeNet 1.1 3.03 ->
# 2.98 ms)
ALIGNMENT = 64


def aligned_empty(size: int, dtype: Any) -> np.ndarray:
    """An uninitialized flat array of `size` values whose data starts on an ALIGNMENT-byte
    boundary (what the packing writes its weights into)."""
    dtype = np.dtype(dtype)
    raw = np.empty(size * dtype.itemsize + ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % ALIGNMENT
    return raw[start : start + size * dtype.itemsize].view(dtype)


def aligned(array: np.ndarray) -> np.ndarray:
    """`array` (C-contiguous) if its data starts on an ALIGNMENT-byte boundary, else an
    aligned copy."""
    if array.ctypes.data % ALIGNMENT == 0:
        return array
    out = aligned_empty(array.size, array.dtype).reshape(array.shape)
    out[...] = array
    return out


def add_parameter(
    fn: func.FuncOp,
    ctx: Context,
    name: str,
    t: TensorType,
    make: Callable[[], np.ndarray],
    attrs: dict[str, Attribute] | None = None,
) -> SSAValue:
    """A new last parameter `name` of type `t` for `fn` (with extra argument `attrs`, such
    as how it was made); under build its array is `make()`."""
    block = fn.body.block
    arg = block.insert_arg(t, len(block.args))
    entry = {NAME_ATTR: StringAttr(name), PARAM_ATTR: UnitAttr(), **(attrs or {})}
    assert fn.arg_attrs is not None
    fn.arg_attrs = ArrayAttr([*fn.arg_attrs.data, DictionaryAttr(entry)])
    fn.function_type = FunctionType.from_lists(
        [a.type for a in block.args], fn.function_type.outputs.data
    )
    if isinstance(ctx, BuildContext):
        array = np.ascontiguousarray(make(), numpy_dtype(t.element_type))
        array = aligned(array)
        assert array.shape == tuple(t.get_shape()), (array.shape, t)
        ctx.params[name] = array
    return arg
