"""The binder every ONNX converter opens with: reads a node's inputs and attributes with
defaults, emits relay ops at the node's location, and raises errors naming the node.

Inputs are either SSA values or values known at import time (numpy arrays). `b.input(i)`
gives an SSA value (materializing a constant when needed); `b.const(i)` gives the numpy
value and fails with a clear error if the input is only known at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import onnx
from onnx import numpy_helper
from xdsl.dialects.builtin import NameLoc, NoneAttr, StringAttr, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dims import fmt_dims, shape_of
from xrelay.dialects.dtypes import (
    narrow_dtype,
    numpy_dtype,
    storage_dtype,
    tensor_type,
    to_storage,
)
from xrelay.errors import Error, ShapeError

if TYPE_CHECKING:
    from xrelay.frontends.onnx.importer import GraphImporter

_REQUIRED = object()


@dataclass
class Value:
    """An ONNX value: an SSA value, a numpy array known at import time, or both. `is_param`
    marks initializers kept as parameters: their values are readable (`const`) but they are
    not folded into the IR."""

    ssa: SSAValue | None = None
    array: np.ndarray | None = None
    is_param: bool = False
    narrow: np.dtype | None = None  # the narrow ONNX type (bfloat16, float8, int4...) of `ssa`
    items: list[Value] | None = None  # an ONNX sequence: its elements, known at import time

    @property
    def logical(self) -> np.dtype | None:
        """The narrow type of the value, if it has one (its IR type is then the storage)."""
        if self.narrow is not None:
            return self.narrow
        return narrow_dtype(self.array.dtype) if self.array is not None else None

    @property
    def foldable(self) -> bool:
        return self.array is not None and not self.is_param


class Node:
    """One ONNX node being converted."""

    def __init__(self, importer: GraphImporter, node: onnx.NodeProto, index: int, fold: bool):
        self.importer = importer
        self.node = node
        self.op_type = node.op_type
        self.name = node.name or f"{node.op_type}_{index}"
        self.opset = importer.opset
        self.fold = fold
        self.location = NameLoc(StringAttr(self.name), NoneAttr())
        self._attrs = {a.name: a for a in node.attribute}
        self.known: dict[SSAValue, np.ndarray] = {}  # fold mode: the value of each SSA value
        self.narrow_outputs: dict[int, np.dtype] = {}  # set by converters of narrow types
        self.input_names = list(node.input)  # as the model names them (for messages)

    # --- errors --------------------------------------------------------------------------

    def error(self, message: str) -> Error:
        return Error(f"ONNX node '{self.name}' ({self.op_type}): {message}")

    def unsupported(self, what: str) -> Error:
        return self.error(f"unsupported {what}")

    # --- attributes ----------------------------------------------------------------------

    def attr(self, name: str, default: Any = _REQUIRED) -> Any:
        """An attribute as a Python value (ints, floats, strings, lists, tensors as numpy)."""
        proto = self._attrs.get(name)
        if proto is None:
            if default is _REQUIRED:
                raise self.error(f"missing required attribute '{name}'")
            return default
        value = onnx.helper.get_attribute_value(proto)
        if isinstance(value, bytes):
            return value.decode()
        if isinstance(value, onnx.TensorProto):
            return numpy_helper.to_array(value)
        if isinstance(value, list) and value and isinstance(value[0], bytes):
            return [v.decode() for v in value]
        return value

    def has_attr(self, name: str) -> bool:
        return name in self._attrs

    # --- inputs --------------------------------------------------------------------------

    @property
    def n_inputs(self) -> int:
        return len(self.node.input)

    def has_input(self, i: int) -> bool:
        return i < len(self.node.input) and self.node.input[i] != ""

    def _value(self, i: int) -> Value:
        if not self.has_input(i):
            raise self.error(f"missing input {i}")
        return self.importer.env[self.node.input[i]]

    def value(self, i: int) -> Value:
        """Input i as it is held at import time (a tensor, or a sequence's elements)."""
        return self._value(i)

    def sequence(self, i: int) -> list[Value]:
        """The elements of input i, a sequence."""
        items = self._value(i).items
        if items is None:
            raise self.error(f"input {i} ('{self.node.input[i]}') is a tensor, not a sequence")
        return items

    def input(self, i: int) -> SSAValue:
        """Input i as an SSA value."""
        value = self._value(i)
        if value.items is not None:
            raise self.error(f"input {i} ('{self.node.input[i]}') is a sequence, not a tensor")
        return self.ssa(value)

    def ssa(self, value: Value) -> SSAValue:
        """A tensor value as an SSA value (a known array is materialized once)."""
        if value.items is not None:
            raise self.error("a sequence where a tensor is expected")
        if self.fold:
            return self.constant(to_storage(value.array))
        if value.ssa is None:
            value.ssa = self.importer.materialize(value.array, self.location)
        return value.ssa

    def optional_input(self, i: int) -> SSAValue | None:
        return self.input(i) if self.has_input(i) else None

    def inputs(self) -> list[SSAValue]:
        return [self.input(i) for i in range(self.n_inputs) if self.has_input(i)]

    def narrow(self, i: int) -> np.dtype | None:
        """Input i's narrow ONNX type (bfloat16, float8, int4, ...: its IR type is the
        storage), or None."""
        return self._value(i).logical if self.has_input(i) else None

    def is_const(self, i: int) -> bool:
        return self.has_input(i) and self._value(i).array is not None

    def const(self, i: int, default: Any = _REQUIRED) -> np.ndarray:
        """Input i's value known at import time (initializer, Constant, folded shape math)."""
        if not self.has_input(i):
            if default is _REQUIRED:
                raise self.error(f"missing input {i}")
            return default
        value = self._value(i)
        if value.array is None:
            raise self.unsupported(
                f"input {i} ('{self.input_names[i]}') computed at run time: it must be a "
                "constant at import time"
            )
        return value.array

    def type(self, i: int) -> TensorType:
        value = self._value(i)
        if value.items is not None:
            raise self.error(f"input {i} ('{self.node.input[i]}') is a sequence, not a tensor")
        return self.type_of(value)

    def type_of(self, value: Value) -> TensorType:
        """The IR type of a tensor value (a narrow type's storage)."""
        if value.items is not None:
            raise self.error("a sequence where a tensor is expected")
        if value.array is not None:
            return tensor_type(value.array.shape, storage_dtype(value.array.dtype))
        assert value.ssa is not None
        t = value.ssa.type
        assert isinstance(t, TensorType)
        return t

    def shape(self, i: int) -> tuple[Any, ...]:
        """Input i's dimensions: ints, and sympy expressions for dynamic ones."""
        return shape_of(self.type(i))

    def rank(self, i: int) -> int:
        return len(self.shape(i))

    def dtype(self, i: int) -> np.dtype:
        return numpy_dtype(self.type(i).element_type)

    # --- building ------------------------------------------------------------------------

    def emit(self, op: Operation) -> Any:
        """Add `op` at the node's location; returns its result (or the op if it has several)."""
        op.location = self.location
        if self.fold:
            from xrelay.reference import evaluate_op

            for res, array in zip(
                op.results, evaluate_op(op, [self.known[v] for v in op.operands])
            ):
                self.known[res] = array
        else:
            self.importer.block.add_op(op)
        return op.results[0] if len(op.results) == 1 else op

    def constant(self, array: Any, dtype: Any = None) -> SSAValue:
        """A constant SSA value (scalars too: `b.constant(1.0, b.dtype(0))`)."""
        array = np.asarray(array, dtype=dtype)
        if self.fold:
            ssa = _detached_constant(array)
            self.known[ssa] = array
            return ssa
        return self.importer.materialize(array, self.location)

    def filled(self, value: Any, dtype: Any, shape: Sequence[Any]) -> np.ndarray | SSAValue:
        """A tensor of `shape` holding `value` everywhere: a numpy array (a broadcast view)
        when the shape is static, else a scalar broadcast to the symbolic shape in the IR."""
        scalar = np.asarray(value, dtype=dtype).reshape(())
        if all(isinstance(d, int) for d in shape):
            return np.broadcast_to(scalar, tuple(shape))
        return self.emit(relay.BroadcastToOp(self.constant(scalar), shape=list(shape)))

    def static_shape(self, i: int, what: str) -> tuple[int, ...]:
        """Input i's dimensions, which must all be static for `what` (else a clear error)."""
        shape = self.shape(i)
        if not all(isinstance(d, int) for d in shape):
            raise self.unsupported(f"{what} of input {i} with dynamic shape {fmt_dims(shape)}")
        return shape

    def outputs_known(self, results: Sequence[Any]) -> list[Any]:
        """In fold mode, replace SSA results by their computed arrays."""
        if not self.fold:
            return list(results)
        return [self.known[r] if isinstance(r, SSAValue) else r for r in results]

    def wrap(self, e: Exception) -> Error:
        if isinstance(e, ShapeError):
            return self.error(str(e))
        return self.error(f"{type(e).__name__}: {e}")


def _detached_constant(array: np.ndarray) -> SSAValue:
    """An SSA value of the array's type that lives in no block (fold mode only)."""
    return Block(arg_types=[tensor_type(array.shape, array.dtype)]).args[0]
