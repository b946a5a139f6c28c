"""The binder every TFLite converter opens with: reads an operator's inputs (SSA values,
or numpy arrays known at import time) and options, emits relay ops at its location, and
raises errors naming the operator.

Layout: TFLite is channels-last (NHWC); relay's convolutions and pools are lowered in
NCHW. A 4-d value may be held in either layout or both (`Value.ssa` as the model lays it
out, `Value.nchw` transposed): convolutions and pools read `input_nchw` and return
`NCHW(result)`, elementwise ops keep whichever layout their inputs have, and anything else
reads `input`, which transposes back once. So a chain of convolutions transposes only at
its edges.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import NameLoc, NoneAttr, StringAttr
from xdsl.ir import Operation, SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dims import shape_of
from xrelay.dialects.dtypes import numpy_dtype
from xrelay.errors import Error
from xrelay.frontends.common import checked_axis
from xrelay.frontends.tflite.model import OperatorRecord, QParams, Tensor

if TYPE_CHECKING:
    from xrelay.frontends.tflite.importer import GraphImporter

TO_NCHW = (0, 3, 1, 2)
TO_NHWC = (0, 2, 3, 1)
_REQUIRED = object()


@dataclass
class Value:
    """A TFLite tensor during import: SSA values in the model's layout and/or transposed to
    NCHW (4-d only), or a numpy array known at import time."""

    ssa: SSAValue | None = None
    nchw: SSAValue | None = None
    array: np.ndarray | None = None


@dataclass
class NCHW:
    """A converter's 4-d result held channels-first."""

    value: SSAValue


class Operator:
    """One TFLite operator being converted."""

    def __init__(self, importer: GraphImporter, record: OperatorRecord) -> None:
        self.importer = importer
        self.record = record
        self.code = record.code
        self.options = record.options
        self.float_mode = False  # set while a quantized operator computes in float
        out = importer.model.tensors[record.outputs[0]].name if record.outputs else "-"
        self.location = NameLoc(StringAttr(out), NoneAttr())

    # --- errors --------------------------------------------------------------------------

    @property
    def label(self) -> str:
        """How errors name this operator: index, builtin and first output tensor."""
        out = (
            self.importer.model.tensors[self.record.outputs[0]].name if self.record.outputs else ""
        )
        return f"TFLite operator {self.record.index} ({self.code}, output '{out}')"

    def error(self, message: str) -> Error:
        return Error(f"{self.label}: {message}")

    def unsupported(self, what: str) -> Error:
        return self.error(f"unsupported {what}")

    def axis(self, value: Any, rank: int, what: str = "axis") -> int:
        """`value`, an axis of a rank-`rank` tensor, checked (`checked_axis`)."""
        return checked_axis(value, rank, self.error, what)

    # --- options -------------------------------------------------------------------------

    def option(self, name: str, default: Any = _REQUIRED) -> Any:
        """An option of the builtin's options table (`StrideH`, `Padding`, ...)."""
        if self.options is None or not hasattr(self.options, name):
            if default is _REQUIRED:
                raise self.error(f"has no option {name}")
            return default
        return getattr(self.options, name)()

    # --- inputs --------------------------------------------------------------------------

    @property
    def n_inputs(self) -> int:
        return len(self.record.inputs)

    def has_input(self, i: int) -> bool:
        return i < len(self.record.inputs) and self.record.inputs[i] >= 0

    def tensor(self, i: int) -> Tensor:
        if not self.has_input(i):
            raise self.error(f"missing input {i}")
        return self.importer.model.tensors[self.record.inputs[i]]

    def out_tensor(self, j: int = 0) -> Tensor:
        return self.importer.model.tensors[self.record.outputs[j]]

    def value(self, i: int) -> Value:
        return self.importer.env[self.record.inputs[i]]

    def is_const(self, i: int) -> bool:
        return self.has_input(i) and self.value(i).array is not None

    def all_known(self) -> bool:
        return all(self.is_const(i) for i in range(self.n_inputs) if self.has_input(i))

    def const(self, i: int) -> np.ndarray:
        """Input `i`'s value, which must be known at import time."""
        array = self.value(i).array if self.has_input(i) else None
        if array is None:
            raise self.unsupported(
                f"input {i} ('{self.tensor(i).name}') computed at run time: it must be a constant"
            )
        return array

    def any_dynamic(self) -> bool:
        """An input has a dynamic dimension, or holds expressions of one (SHAPE's result)."""
        for i in range(self.n_inputs):
            if not self.has_input(i):
                continue
            v = self.value(i)
            if v.array is not None and v.array.dtype == object:
                return True
            if any(not isinstance(d, int) for d in self.shape(i)):
                return True
        return False

    def is_nchw(self, i: int) -> bool:
        """Input `i` is held channels-first only (a transpose would be needed for `input`)."""
        v = self.value(i)
        return v.nchw is not None and v.ssa is None

    def input(self, i: int) -> SSAValue:
        """Input `i` in the model's layout."""
        v = self.value(i)
        if v.ssa is None and v.nchw is not None:
            v.ssa = self.emit(relay.TransposeOp(v.nchw, axes=TO_NHWC))
        if v.ssa is None and v.array.dtype == object:
            raise self.unsupported(
                f"input {i} ('{self.tensor(i).name}'): a shape of the dynamic batch used as "
                "data; pin the batch with shape="
            )
        if v.ssa is None:
            v.ssa = self.importer.materialize(v.array, self.tensor(i).name, self.location)
        return v.ssa

    def input_nchw(self, i: int) -> SSAValue:
        """4-d input `i` transposed to NCHW (once per tensor)."""
        v = self.value(i)
        if v.nchw is not None:
            return v.nchw
        if v.array is not None:
            name = f"{self.tensor(i).name}:nchw"
            return self.importer.materialize(v.array.transpose(TO_NCHW), name, self.location)
        if len(shape_of(self.input(i).type)) != 4:
            raise self.error(f"input {i} has rank {self.rank(i)}, expected a 4-d NHWC tensor")
        v.nchw = self.emit(relay.TransposeOp(self.input(i), axes=TO_NCHW))
        return v.nchw

    def weight(self, i: int, array: np.ndarray, suffix: str = "") -> SSAValue:
        """A parameter holding `array`, derived (e.g. transposed) from constant input `i`."""
        return self.importer.materialize(array, self.tensor(i).name + suffix, self.location)

    def shape(self, i: int) -> tuple[int, ...]:
        """Input `i`'s shape in the model's layout (from the converted graph, not the file)."""
        v = self.value(i)
        if v.array is not None:
            return tuple(v.array.shape)
        if v.ssa is not None:
            return tuple(shape_of(v.ssa.type))
        n, c, h, w = shape_of(v.nchw.type)
        return (n, h, w, c)

    def rank(self, i: int) -> int:
        return len(self.shape(i))

    def dtype(self, i: int) -> np.dtype:
        v = self.value(i)
        if v.array is not None:
            return v.array.dtype
        return numpy_dtype((v.ssa or v.nchw).type.element_type)

    def quant(self, i: int) -> QParams | None:
        """Input `i`'s quantization, if it is a quantized integer tensor."""
        t = self.tensor(i)
        if self.float_mode or t.quant is None or np.dtype(t.dtype).kind not in "iu":
            return None
        return t.quant

    def out_quant(self, j: int = 0) -> QParams | None:
        t = self.out_tensor(j)
        if self.float_mode or t.quant is None or np.dtype(t.dtype).kind not in "iu":
            return None
        return t.quant

    # --- emitting ------------------------------------------------------------------------

    def emit(self, op: Operation) -> Any:
        """Add `op` at the operator's location; returns its result."""
        op.location = self.location
        self.importer.block.add_op(op)
        return op.results[0] if len(op.results) == 1 else op

    def constant(self, array: Any, dtype: Any = None) -> SSAValue:
        """A constant embedded in the IR."""
        from xrelay.frontends.common import const

        return const(self, array, dtype)

    def activation(self, y: SSAValue) -> SSAValue:
        """The operator's fused activation (float) applied to `y`."""
        act = self.option("FusedActivationFunction", 0)
        if act == 0:
            return y
        if act == 1:
            return self.emit(relay.ReluOp(y))
        if act == 2:
            return self.emit(relay.ClipOp(y, a_min=-1.0, a_max=1.0))
        if act == 3:
            return self.emit(relay.ClipOp(y, a_min=0.0, a_max=6.0))
        if act == 4:
            return self.emit(relay.TanhOp(y))
        raise self.unsupported(f"fused activation {act}")


def operands(b: Operator) -> tuple[list[SSAValue], bool]:
    """The inputs, channels-first if one of them is held so and the others can follow (they
    are held channels-first too, or are constants of rank <= 4); else as the model has them."""
    indices = [i for i in range(b.n_inputs) if b.has_input(i)]
    nchw = any(b.is_nchw(i) for i in indices) and all(
        b.value(i).nchw is not None or (b.is_const(i) and b.const(i).ndim <= 4) for i in indices
    )
    if not nchw:
        return [b.input(i) for i in indices], False
    values = []
    for i in indices:
        if b.value(i).nchw is not None:
            values.append(b.value(i).nchw)
            continue
        array = b.const(i)
        array = array.reshape((1,) * (4 - array.ndim) + array.shape).transpose(TO_NCHW)
        values.append(b.weight(i, array, ":nchw"))
    return values, True
