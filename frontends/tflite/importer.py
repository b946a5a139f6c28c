"""TFLite flatbuffer -> a builtin.module with `func.func @main` of relay and qnn ops, plus
params.

Imports: the `tflite` package (through frontends/tflite/model.py), numpy, the relay and
qnn dialects. Assumes: subgraph 0 is the model; tensors' stored shapes may be stale, so
shapes come from the converted ops (the inputs' stored shapes, or `shape=`, seed them). A
dynamic batch (`shape_signature` -1 on axis 0, as Keras models have) stays dynamic as the
symbol `batch` unless `shape=` pins the input; other dynamic dimensions take their stored
size.
Produces: `@main(data inputs in model order..., parameters in first-use order...)`, each
argument named after its tensor, each op located by a NameLoc of its operator's first
output tensor. Constant tensors become parameters (weights converted to relay's layouts at
import time), except small integer ones (shapes, axes), which are embedded.

The walk: check every operator has a converter (all missing ones reported at once), then
convert operator by operator (frontends/tflite/binder.py for the layout handling).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, LocationAttr, ModuleOp
from xdsl.ir import Block, Region, SSAValue
from xrelay.dialects.dims import symbol
from xrelay.dialects.dtypes import tensor_type
from xrelay.errors import Error, UnsupportedOpsError
from xrelay.frontends.common import emit_constant
from xrelay.frontends.tflite.binder import NCHW, Operator, Value
from xrelay.frontends.tflite.model import BAD_FLATBUFFER, Model, read_model
from xrelay.frontends.tflite.registry import CONVERTERS
from xrelay.ir import verify_module
from xrelay.signature import arg_attrs, res_attrs

ShapeArg = Mapping[str, tuple[int, ...] | list[int]] | None

SHAPE_LIKE_MAX_ELEMENTS = 1024
BATCH = "batch"  # the symbol of a dynamic batch (shape_signature -1 on axis 0)


def load_bytes(model: bytes | bytearray | str | Path) -> tuple[bytes, str]:
    if isinstance(model, bytes | bytearray | memoryview):
        return bytes(model), "the TFLite model"
    if isinstance(model, str | Path):
        path = Path(model)
        if not path.is_file():
            raise Error(f"no TFLite model at {path}")
        return path.read_bytes(), f"TFLite model {path}"
    raise Error(f"from_tflite expects bytes or a path, got {type(model).__name__}")


def check_supported(model: Model) -> None:
    """Raise one UnsupportedOpsError naming every operator without a converter."""
    missing: list[str] = []
    counts: Counter[str] = Counter()
    for op in model.operators:
        if op.code in CONVERTERS:
            continue
        kind = f"custom '{op.custom_code}'" if op.code == "CUSTOM" else op.code
        out = model.tensors[op.outputs[0]].name if op.outputs else "-"
        missing.append(f"#{op.index} {kind} (output '{out}')")
        counts[kind] += 1
    if missing:
        summary = ", ".join(f"{k} x{n}" for k, n in sorted(counts.items()))
        raise UnsupportedOpsError(
            f"{len(missing)} unsupported TFLite operator{'s' if len(missing) > 1 else ''}: "
            f"{summary}; operators {', '.join(missing)}"
        )


def is_shape_like(array: np.ndarray) -> bool:
    """Scalars and small int32/int64/bool tensors (shapes, axes, indices, a small bias) are
    embedded; anything else (weights, quantized ones included) becomes a parameter."""
    small = array.size <= SHAPE_LIKE_MAX_ELEMENTS
    return array.size == 1 or small and array.dtype in (np.int32, np.int64, np.bool_)


class GraphImporter:
    def __init__(self, model: Model, shape: ShapeArg) -> None:
        self.model = model
        self.shape = dict(shape or {})
        self.block = Block()
        self.env: dict[int, Value] = {}
        self.params: dict[str, np.ndarray] = {}

    def materialize(self, array: np.ndarray, name: str, loc: LocationAttr) -> SSAValue:
        """`array` in the IR: embedded if small and integer, else a new parameter."""
        if is_shape_like(array):
            return emit_constant(self.block, array, loc)
        unique, n = name, 1
        while unique in self.params:
            n += 1
            unique = f"{name}_{n}"
        self.params[unique] = np.ascontiguousarray(array)
        arg = self.block.insert_arg(tensor_type(array.shape, array.dtype), len(self.block.args))
        arg.name_hint = _ssa_name(unique)
        return arg

    def _input_type(self, index: int) -> Any:
        t = self.model.tensors[index]
        if t.dtype is None:
            raise Error(f"input '{t.name}' has type {t.type_name}, which is not supported")
        dims = tuple(self.shape.get(t.name, t.shape))
        if t.name not in self.shape and t.signature and t.signature[0] == -1:
            dims = (symbol(BATCH), *dims[1:])  # Keras' dynamic batch stays dynamic
        if len(dims) != len(t.shape):
            raise Error(
                f"shape= gives input '{t.name}' rank {len(dims)} {list(dims)}, but the model "
                f"declares rank {len(t.shape)}"
            )
        return tensor_type(dims, np.dtype(t.dtype))

    def convert(self, record) -> None:
        b = Operator(self, record)
        for t in record.inputs:
            if t >= 0 and t not in self.env:
                raise b.error(f"input tensor '{self.model.tensors[t].name}' is not defined")
        try:
            out = CONVERTERS[record.code](b)
        except TypeError as e:  # int() of an expression: a converter needs a static size
            if not b.any_dynamic():
                raise
            raise b.error(
                f"needs a static size where the {BATCH} is dynamic ({e}); pin the input's "
                "shape with shape="
            ) from None
        except Error as e:
            if str(e).startswith("TFLite operator"):
                raise
            raise b.error(str(e)) from None
        except BAD_FLATBUFFER as e:  # options table of a malformed file
            raise b.error(f"malformed options: {type(e).__name__}: {e}") from None
        outs = list(out) if isinstance(out, list | tuple) else [out]
        if len(outs) != len(record.outputs):
            raise b.error(f"gives {len(outs)} results for {len(record.outputs)} outputs")
        for t, result in zip(record.outputs, outs):
            if isinstance(result, NCHW):
                self.env[t] = Value(nchw=result.value)
            elif isinstance(result, SSAValue):
                self.env[t] = Value(ssa=result)
            else:
                self.env[t] = Value(array=np.asarray(result))

    def build(self) -> tuple[ModuleOp, dict[str, np.ndarray]]:
        names = {self.model.tensors[i].name for i in self.model.inputs}
        unknown = sorted(set(self.shape) - names)
        if unknown:
            raise Error(
                f"shape= names unknown input '{unknown[0]}'; the inputs are {sorted(names)}"
            )
        for i in self.model.inputs:
            arg = self.block.insert_arg(self._input_type(i), len(self.block.args))
            arg.name_hint = _ssa_name(self.model.tensors[i].name)
            self.env[i] = Value(ssa=arg)
        for t in self.model.tensors:
            if t.data is not None and t.index not in self.env:
                self.env[t.index] = Value(array=t.data)
        for record in self.model.operators:
            self.convert(record)
        results = []
        for i in self.model.outputs:
            if i not in self.env:
                raise Error(f"graph output '{self.model.tensors[i].name}' is not produced")
            b = _OutputReader(self, i)
            results.append(b.input(0))
        self.block.add_op(func.ReturnOp(*results))
        inputs = [self.model.tensors[i].name for i in self.model.inputs]
        fn = func.FuncOp(
            "main",
            FunctionType.from_lists([a.type for a in self.block.args], [r.type for r in results]),
            Region(self.block),
            arg_attrs=arg_attrs(inputs + list(self.params), len(inputs), {}),
            res_attrs=res_attrs([None] * len(results)),
        )
        return ModuleOp([fn]), self.params


class _OutputReader(Operator):
    """Reads a graph output in the model's layout (a transpose back from NCHW if needed)."""

    def __init__(self, importer: GraphImporter, tensor: int) -> None:
        from xrelay.frontends.tflite.model import OperatorRecord

        super().__init__(importer, OperatorRecord(-1, "output", None, [tensor], [tensor], None))


def _ssa_name(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "_." else "_" for c in name)
    if not cleaned or cleaned[0].isdigit():
        cleaned = "v" + cleaned
    return cleaned


def from_tflite(
    model: bytes | str | Path, shape: ShapeArg = None
) -> tuple[ModuleOp, dict[str, np.ndarray]]:
    """Import a TFLite model (a path or the flatbuffer's bytes): `(module, params)`. See the
    module docstring; `shape` maps input tensor names to shapes (a dynamic batch, say)."""
    data, where = load_bytes(model)
    parsed = read_model(data, where)
    check_supported(parsed)
    importer = GraphImporter(parsed, shape)
    module, params = importer.build()
    verify_module(module)
    return module, params
