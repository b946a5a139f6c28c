"""ONNX optionals: Optional, OptionalHasElement, OptionalGetElement.

An optional whose presence is known at import is its value (OptionalGetElement of a tensor
or sequence is that value, OptionalHasElement of one is true, of no input false). One that
is built from a value or from a type, passed in as a graph input, or given by a run-time
branch or loop is a run-time optional (`!relay.opt`, dialects/relay/optional.py) that the
VM holds as the value or None.
"""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.dialects.builtin import TensorType
from xrelay.dialects import relay
from xrelay.dialects.dims import make_tensor, unknown
from xrelay.dialects.dtypes import tensor_type
from xrelay.dialects.relay.optional import OptionalType
from xrelay.dialects.relay.sequence import SequenceType
from xrelay.frontends.onnx.binder import Node, Value
from xrelay.frontends.onnx.registry import onnx_op
from xrelay.frontends.onnx.sequence import element_type, fresh_dims, is_run_time, lift


def is_optional(value: Value) -> bool:
    """Whether `value` is a run-time optional (an SSA value of type !relay.opt)."""
    return value.ssa is not None and isinstance(value.ssa.type, OptionalType)


def inner_type(b: Node, proto: onnx.TypeProto):
    """The IR type of an ONNX tensor or sequence type (unknown dimensions as `?`)."""
    kind = proto.WhichOneof("value")
    if kind == "sequence_type":
        element = element_type(proto)
        if element is not None:
            return SequenceType(element)
    elif kind == "tensor_type":
        t = proto.tensor_type
        try:
            dtype = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)
        except (KeyError, TypeError, ValueError):
            dtype = None
        if dtype is not None and t.HasField("shape"):
            dims = [d.dim_value if d.HasField("dim_value") else unknown() for d in t.shape.dim]
            return make_tensor(tensor_type((), dtype).element_type, dims)
    raise b.unsupported(f"an optional of {kind or 'an undeclared type'} without a declared shape")


def as_optional(b: Node, value: Value, hint: OptionalType | None = None) -> Value:
    """`value` (a tensor or sequence, or already an optional) as a run-time optional."""
    if is_optional(value):
        return value
    if value.items is not None or is_run_time(value):
        hint_seq = hint.inner if hint is not None and isinstance(hint.inner, SequenceType) else None
        inner = lift(b, value, hint_seq.element if hint_seq is not None else None)
    else:
        inner = b.ssa(value)
    return Value(ssa=b.emit(relay.OptConstructOp([inner], OptionalType(inner.type))))


@onnx_op("Optional", since=15, structured=True)
def optional(b: Node) -> Value:
    if b.has_input(0):
        return as_optional(b, b.value(0))
    if not b.has_attr("type"):
        raise b.error("an empty Optional needs its `type`")
    inner = inner_type(b, b.attr("type"))
    return Value(ssa=b.emit(relay.OptConstructOp([], OptionalType(inner))))


@onnx_op("OptionalHasElement", since=15, structured=True)
def optional_has_element(b: Node) -> Value | np.ndarray:
    if not b.has_input(0):
        return np.array(False)
    value = b.value(0)
    if is_optional(value):
        return Value(ssa=b.emit(relay.OptHasOp(value.ssa)))
    return np.array(True)  # a tensor or sequence: always present


@onnx_op("OptionalGetElement", since=15, structured=True)
def optional_get_element(b: Node) -> Value:
    value = b.value(0)
    if not is_optional(value):
        return value  # a tensor or sequence is its own element
    return get(b, value)


def get(b: Node, value: Value) -> Value:
    """The value a run-time optional holds (an error at run time when it holds none)."""
    inner = value.ssa.type.inner
    result = fresh_dims(b, inner, "d") if isinstance(inner, TensorType) else inner
    return Value(ssa=b.emit(relay.OptGetOp(value.ssa, result)))
