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
from xdsl.dialects.builtin import NameLoc, NoneAttr, StringAttr, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dims import Dim, fmt_dims, normalize, shape_of
from xrelay.dialects.dtypes import (
    narrow_dtype,
    numpy_dtype,
    storage_dtype,
    tensor_type,
    to_storage,
)
from xrelay.errors import Error, ShapeError
from xrelay.frontends.common import checked_axis, dims_tensor
from xrelay.frontends.onnx.symbolic import is_symbolic

if TYPE_CHECKING:
    from xrelay.frontends.onnx.importer import GraphImporter

_REQUIRED = object()

# integer attributes the ONNX spec allows only 0 or 1 for
FLAGS = frozenset(
    {
        "keepdims", "noop_with_empty_axes", "select_last_index", "transA", "transB",
        "ceil_mode", "count_include_pad", "largest", "sorted", "exclusive", "reverse",
        "upper", "detect_negative", "detect_positive", "center_point_box",
    }
)  # fmt: skip


class RunTimeValue(Error):
    """A converter read input `index` as a value known at import, but it is computed at run
    time (the importer may defer the node: frontends/onnx/deferred.py)."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index


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

    @property
    def label(self) -> str:
        """How errors name this node: `ONNX node 'name' (OpType)`."""
        return f"ONNX node '{self.name}' ({self.op_type})"

    def error(self, message: str) -> Error:
        return Error(f"{self.label}: {message}")

    def unsupported(self, what: str) -> Error:
        return self.error(f"unsupported {what}")

    def axis(self, value: Any, rank: int, what: str = "axis") -> int:
        """`value`, an axis of a rank-`rank` tensor, checked (`checked_axis`)."""
        return checked_axis(value, rank, self.error, what)

    # --- attributes ----------------------------------------------------------------------

    def attr(self, name: str, default: Any = _REQUIRED) -> Any:
        """An attribute as a Python value (ints, floats, strings, lists, tensors as numpy).
        The 0/1 flags of the ONNX spec (keepdims, transA, ...) must be 0 or 1."""
        proto = self._attrs.get(name)
        if proto is None:
            if default is _REQUIRED:
                raise self.error(f"missing required attribute '{name}'")
            return default
        value = onnx.helper.get_attribute_value(proto)
        if name in FLAGS and value not in (0, 1):
            raise self.error(f"attribute '{name}' must be 0 or 1, got {value!r}")
        if isinstance(value, bytes):
            return value.decode()
        if isinstance(value, onnx.TensorProto):
            from xrelay.frontends.onnx.importer import tensor_array

            try:
                return tensor_array(value, f"attribute '{name}' tensor")
            except Error as e:
                raise self.error(str(e)) from None
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
        if value.ssa is None and is_symbolic(value.array):  # dimension values: run time
            value.ssa = dims_tensor(self, value.array)
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
            raise RunTimeValue(
                str(
                    self.unsupported(
                        f"input {i} ('{self.input_names[i]}') computed at run time: it must "
                        "be a constant at import time"
                    )
                ),
                i,
            )
        return value.array

    def dims_const(self, i: int) -> list[Dim]:
        """Input i (a shape, bounds, repeats: known at import) as a list of dimensions:
        ints, and expressions where it holds dynamic dimensions."""
        array = np.asarray(self.const(i)).reshape(-1)
        if is_symbolic(array):
            return [normalize(v) for v in array]
        return [int(v) for v in array]

    def type(self, i: int) -> TensorType:
        value = self._value(i)
        if value.items is not None:
            raise self.error(f"input {i} ('{self.node.input[i]}') is a sequence, not a tensor")
        return self.type_of(value)

    def type_of(self, value: Value) -> TensorType:
        """The IR type of a tensor value (a narrow type's storage)."""
        if value.items is not None:
            raise self.error("a sequence where a tensor is expected")
        if is_symbolic(value.array):  # dimension expressions: int64 at run time
            return tensor_type(value.array.shape, np.int64)
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

    def full(self, value: Any, dtype: Any, shape: Sequence[Dim]) -> SSAValue:
        """A tensor of `shape` (dimensions may be expressions) holding `value` everywhere."""
        scalar = np.asarray(value, dtype=dtype).reshape(())
        if all(isinstance(d, int) for d in shape):
            return self.constant(np.broadcast_to(scalar, tuple(shape)))
        return self.emit(relay.BroadcastToOp(self.constant(scalar), shape=list(shape)))

    def filled(self, value: Any, dtype: Any, shape: Sequence[Dim]) -> np.ndarray | SSAValue:
        """`full`, but a numpy array (a broadcast view, known at import) when the shape is
        static."""
        if all(isinstance(d, int) for d in shape):
            return np.broadcast_to(np.asarray(value, dtype=dtype).reshape(()), tuple(shape))
        return self.full(value, dtype, shape)

    # --- dynamic dimensions --------------------------------------------------------------

    def static_shape(self, i: int, what: str) -> tuple[int, ...]:
        """Input i's dimensions, which must all be static for `what` (else a clear error)."""
        return self.static_dims(self.shape(i), f"{what} of input {i} ('{self.input_names[i]}')")

    def static_dims(self, dims: Sequence[Dim], what: str) -> tuple[int, ...]:
        """`dims`, which must all be ints (not dimension expressions) for `what`."""
        if not all(isinstance(d, int) for d in dims):
            raise self.unsupported(f"{what} with dynamic dimensions {fmt_dims(dims)}")
        return tuple(dims)

    def clamp(self, v: Dim, lo: Dim, hi: Dim, assume: bool = False) -> Dim:
        """v clamped to [lo, hi] (`at_least` of `at_most`)."""
        return self.at_least(self.at_most(v, hi, assume), lo, assume)

    def at_most(self, v: Dim, hi: Dim, assume: bool = False) -> Dim:
        """min(v, hi) of dimensions: `Min(v, hi)` when the expressions leave it open. With
        `assume` (`v` is a bound the model computes, such as the `seq` of `table[:seq]`
        against a table of 512), `v` is taken to fit instead, and its symbol is bounded
        (@main's xrelay.dim_ranges) so that a run where it does not is refused."""
        return self._pick(v, hi, normalize(hi - v), "Min", assume)

    def at_least(self, v: Dim, lo: Dim, assume: bool = False) -> Dim:
        """max(v, lo) of dimensions, as `at_most`."""
        return self._pick(v, lo, normalize(v - lo), "Max", assume)

    def _pick(self, v: Dim, other: Dim, slack: Dim, kind: str, assume: bool) -> Dim:
        known = sign(slack)
        if known is not None:
            return v if known >= 0 else other
        if assume and self._require_nonnegative(slack):
            return v
        import sympy

        return normalize(getattr(sympy, kind)(v, other))

    def _require_nonnegative(self, d: Dim) -> bool:
        """Bound the one symbol s of `d` = a * s + c (integers a, c) so that d >= 0; False
        if `d` is not of that form."""
        import sympy

        (sym, *more) = list(d.free_symbols) or [None]
        if sym is None or more or not d.is_polynomial(sym) or sympy.degree(d, sym) != 1:
            return False
        a, c = d.coeff(sym, 1), d.coeff(sym, 0)
        if not (a.is_Integer and c.is_Integer):
            return False
        a, c = int(a), int(c)
        if a > 0:
            self.importer.bound_symbol(sym.name, lo=-(c // a))  # s >= ceil(-c / a)
        else:
            self.importer.bound_symbol(sym.name, hi=c // -a)  # s <= floor(c / -a)
        return True

    def outputs_known(self, results: Sequence[Any]) -> list[Any]:
        """In fold mode, replace SSA results by their computed arrays."""
        if not self.fold:
            return list(results)
        return [self.known[r] if isinstance(r, SSAValue) else r for r in results]

    def wrap(self, e: Exception) -> Error:
        if isinstance(e, ShapeError):
            return self.error(str(e))
        dynamic = self._dynamic_inputs()
        if isinstance(e, TypeError) and dynamic:  # a converter computing with ints only
            return self.unsupported(f"dynamic dimensions ({'; '.join(dynamic)}) here: {e}")
        return self.error(f"{type(e).__name__}: {e}")

    def _dynamic_inputs(self) -> list[str]:
        """The inputs with dynamic dimensions (or holding expressions), described."""
        found = []
        for i in range(self.n_inputs):
            value = self.importer.env.get(self.node.input[i]) if self.has_input(i) else None
            if value is None or value.items is not None:
                continue
            if value.ssa is not None and not isinstance(value.ssa.type, TensorType):
                continue  # a run-time sequence
            name = self.input_names[i]
            if is_symbolic(value.array):
                found.append(f"'{name}' holds {fmt_dims(list(value.array.flat))}")
            elif value.array is None and not all(isinstance(d, int) for d in self.shape(i)):
                found.append(f"'{name}' is {fmt_dims(self.shape(i))}")
        return found


def sign(d: Dim) -> int | None:
    """The sign of a difference of dimensions, -1, 0 or 1 (symbols are positive integers;
    1 may also mean 0 for an expression: "not negative"), or None when it is open."""
    if isinstance(d, int):
        return (d > 0) - (d < 0)
    if d.is_nonnegative:
        return 1
    if d.is_negative:
        return -1
    return None


def _detached_constant(array: np.ndarray) -> SSAValue:
    """An SSA value of the array's type that lives in no block (fold mode only)."""
    return Block(arg_types=[tensor_type(array.shape, array.dtype)]).args[0]
