"""TorchScript prim::If and prim::Loop decided at run time -> `relay.if` and `relay.loop`
(dialects/relay/control.py), which the VM runs (lowering/vm.py).

Imports: the relay dialect, the importer's binder pieces (frontends/pytorch/call.py); the
importer passes itself in. Assumes: everything before the node is converted; values known at
import time are Python numbers and bools, torch tensors, or containers of them. Produces:

- prim::If on a condition computed at run time (`aten::Bool` of `x.sum() > 0`): `relay.if`
  on a 0-d tensor<i1>, each block converted into its own region. An output both blocks give
  as the same value known at import stays that value; the others are yielded (known values
  materialized inside the region) and their types joined: a dimension the branches disagree
  on becomes a fresh symbol, a different element type or rank is an Error naming the op.
- prim::Loop whose trip count or condition (the initial one, or the one the body computes)
  is a run-time value: `relay.loop`, the body converted once, and again with widened types
  while a carried value's shape changes in it (those dimensions become fresh symbols). The
  iteration number is a 0-d tensor<i64>; numbers carried become 0-d tensors (int: i64,
  float: f32, bool: i1); a carried value the body passes through unchanged stays what it is.

Python numbers computed at run time are 0-d tensors throughout the import (`scalar_of`).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from xdsl.dialects.builtin import DYNAMIC_INDEX, LocationAttr, TensorType, i1, i64
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dims import shape_of
from xrelay.dialects.dtypes import element_type, numpy_dtype
from xrelay.dialects.relay.base import fmt_type
from xrelay.errors import Error
from xrelay.frontends.common import erase_block, join_types, outside_type
from xrelay.frontends.pytorch.call import Unavailable, has_ssa

if TYPE_CHECKING:
    from xrelay.frontends.pytorch.torchscript import ScriptImporter

# How many times a loop body is converted while its carried shapes widen.
MAX_WIDENINGS = 4


class At:
    """Emits into the importer's current block at one location (frontends/common.py's
    Emitter protocol)."""

    def __init__(self, imp: ScriptImporter, loc: LocationAttr) -> None:
        self.imp = imp
        self.loc = loc

    def emit(self, op: Operation) -> Any:
        self.imp.builder.add(op, self.loc)
        return op.results[0] if len(op.results) == 1 else op

    def constant(self, value: Any, dtype: Any = None) -> SSAValue:
        return self.imp.builder.constant(value, self.loc, dtype)


# The number each TorchScript scalar conversion gives, by the tensor's dtype kind.
_SCALAR_KINDS = ("aten::Bool", "aten::Int", "aten::Float", "aten::item", "aten::ScalarImplicit")


def is_scalar_conversion(kind: str) -> bool:
    return kind in _SCALAR_KINDS


def scalar_of(at: At, value: SSAValue, kind: str, label: str) -> SSAValue:
    """`kind` (aten::Bool, Int, Float, item, ScalarImplicit) of a one-element tensor computed
    at run time: a 0-d tensor (bool: i1, int: i64, float: the tensor's float type, else
    f32; item keeps the dtype)."""
    t = value.type
    assert isinstance(t, TensorType)
    shape = t.get_shape()
    if DYNAMIC_INDEX in shape or math.prod(shape) != 1:
        raise Error(
            f"PyTorch op {label}: a number from a tensor of type {fmt_type(t)} (it needs "
            "exactly one element, known at import)"
        )
    if shape:
        value = at.emit(relay.ReshapeOp(value, newshape=[]))
    dtype = numpy_dtype(t.element_type)
    want = dtype
    if kind == "aten::Bool":
        want = np.dtype(np.bool_)
    elif kind == "aten::Int":
        want = np.dtype(np.int64)
    elif kind == "aten::Float" and dtype.kind != "f":
        want = np.dtype(np.float32)
    if want == dtype:
        return value
    if want == np.bool_:  # truth is "not zero", as bool(tensor)
        return at.emit(relay.NotEqualOp(value, at.constant(np.zeros((), dtype))))
    return at.emit(relay.CastOp(value, dtype=element_type(want)))


def _condition(at: At, value: Any, label: str) -> SSAValue:
    """A condition (a bool known at import or computed at run time) as a 0-d tensor<i1>."""
    if isinstance(value, SSAValue):
        return scalar_of(at, value, "aten::Bool", label)
    return at.constant(np.array(bool(value)))


def _describe(value: Any) -> str:
    if isinstance(value, Unavailable):
        return value.what
    return "None" if value is None else f"a {type(value).__name__}"


def _materialize(
    imp: ScriptImporter, block: Block, value: Any, loc: LocationAttr, what: str, label: str
) -> SSAValue:
    """`value` as an SSA tensor usable in `block` (a known number or tensor becomes a
    constant there, so no region reads a constant made inside another)."""
    if isinstance(value, SSAValue):
        return value
    known = isinstance(value, bool | int | float | torch.Tensor | np.ndarray)
    if not known or has_ssa(value):
        raise Error(
            f"PyTorch op {label}: {what} is {_describe(value)}; run-time control flow "
            "carries tensors and numbers only"
        )
    with imp.in_block(block):
        return imp.builder.constant(value, loc)


def _same_known(a: Any, b: Any) -> bool:
    """Whether two values known at import are the same value (so no region need yield it)."""
    if has_ssa(a) or has_ssa(b):
        return False
    if a is b:
        return True
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (
            isinstance(a, torch.Tensor)
            and isinstance(b, torch.Tensor)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and bool(torch.equal(a, b))
        )
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001 - containers of tensors compare ambiguously: not the same
        return False


def _join(
    imp: ScriptImporter,
    label: str,
    x: Attribute,
    y: Attribute,
    what: str,
    stem: str,
    widened: set[str] | None = None,
) -> TensorType:
    """The type of a value that is `x` on one path and `y` on another, fresh symbols named
    after `stem` (frontends/common.py: join_types; `widened` for a loop-carried value)."""
    assert isinstance(x, TensorType) and isinstance(y, TensorType)
    if x.element_type != y.element_type or x.get_num_dims() != y.get_num_dims():
        raise Error(
            f"PyTorch op {label}: {what} is {fmt_type(x)} on one path and {fmt_type(y)} on "
            "another; run-time control flow needs one element type and rank"
        )
    return join_types(x, y, lambda axis: imp.fresh_symbol(f"{stem}_{axis}"), widened)


def _stem(imp: ScriptImporter, node: torch._C.Node) -> str:
    """A prefix for the fresh symbols of one node: `if3`, `loop1`."""
    return f"{node.kind().split('::')[1].lower()}{imp.counts[node.kind()]}"


def runtime_if(imp: ScriptImporter, node: torch._C.Node, condition: SSAValue) -> list[Any]:
    """`relay.if` for a prim::If whose condition is computed at run time: its outputs."""
    label, loc = imp._label(node), imp._loc(node)
    at = At(imp, loc)
    cond = _condition(at, condition, label)
    blocks = [Block(), Block()]
    outs = [imp.convert_region(body, block, {}) for body, block in zip(node.blocks(), blocks)]
    results = list(outs[0])
    yielded = [i for i, (a, b) in enumerate(zip(*outs)) if not _same_known(a, b)]
    if not yielded:  # the branches agree on everything they give
        return results
    values = [
        [_materialize(imp, block, out[i], loc, f"output {i} of a branch", label) for i in yielded]
        for block, out in zip(blocks, outs)
    ]
    stem = _stem(imp, node)
    types = [
        _join(imp, label, x.type, y.type, f"output {i}", f"{stem}_r{i}")
        for i, x, y in zip(yielded, *values)
    ]
    for block, vals in zip(blocks, values):
        end = relay.YieldOp(*vals)
        end.location = loc
        block.add_op(end)
    op = relay.IfOp(cond, types, blocks[0], blocks[1])
    imp.builder.add(op, loc)
    for i, result in zip(yielded, op.outputs):
        results[i] = result
    return results


def runtime_loop(
    imp: ScriptImporter, node: torch._C.Node, trips: Any, condition: Any, carried: list[Any]
) -> list[Any]:
    """`relay.loop` for a prim::Loop decided at run time: its outputs (the final carried
    values)."""
    label, loc = imp._label(node), imp._loc(node)
    at = At(imp, loc)
    if isinstance(trips, SSAValue):
        max_trip = scalar_of(at, trips, "aten::Int", label)
    else:
        max_trip = at.constant(np.array(int(trips), np.int64))
    cond = _condition(at, condition, label)
    (body,) = list(node.blocks())
    ins, outs = list(body.inputs()), list(body.outputs())
    # carried values the body hands back unchanged are not carried (they keep what they are)
    moving = [k for k in range(len(carried)) if outs[1 + k].unique() != ins[1 + k].unique()]
    fixed = {ins[1 + k].unique(): carried[k] for k in range(len(carried)) if k not in moving}
    outer = imp.builder.block
    initial = [
        _materialize(imp, outer, carried[k], loc, f"loop-carried value {k}", label) for k in moving
    ]
    stem = _stem(imp, node)
    arg_types: list[Attribute] = [v.type for v in initial]
    counts, symbols = Counter(imp.counts), set(imp.symbols)
    any_size: set[str] = set()  # the symbols widening makes: a carried size at each step
    for _attempt in range(MAX_WIDENINGS):
        imp.counts = Counter(counts)  # every attempt names its ops alike
        block = Block(arg_types=[TensorType(i64, []), TensorType(i1, []), *arg_types])
        bindings = {ins[0].unique(): block.args[0], **fixed}
        bindings.update({ins[1 + k].unique(): block.args[2 + j] for j, k in enumerate(moving)})
        got = imp.convert_region(body, block, bindings)
        nexts = [
            _materialize(imp, block, got[1 + k], loc, f"loop-carried value {k}", label)
            for k in moving
        ]
        widened = [
            _join(imp, label, t, v.type, f"loop-carried value {k}", f"{stem}_c{k}", any_size)
            for t, v, k in zip(arg_types, nexts, moving)
        ]
        if widened == arg_types:
            break
        arg_types = widened
        erase_block(block)
    else:
        raise Error(f"PyTorch op {label}: the loop-carried shapes do not settle")
    with imp.in_block(block):
        end = relay.YieldOp(_condition(At(imp, loc), got[0], label), *nexts)
    end.location = loc
    block.add_op(end)
    local = imp.symbols - symbols  # bound inside the loop only: not visible after it
    result_types = [
        outside_type(
            t.element_type,
            shape_of(t),
            local,
            lambda axis, k=k: imp.fresh_symbol(f"{stem}_out{k}_{axis}"),
        )
        for t, k in zip(arg_types, moving)
    ]
    op = relay.LoopOp(max_trip, cond, initial, result_types, block)
    imp.builder.add(op, loc)
    results = list(carried)
    for k, result in zip(moving, op.outputs):
        results[k] = result
    return results
