"""A TFLite flatbuffer read into plain Python records: tensors (name, type, shape, constant
data, quantization) and operators (builtin name, inputs, outputs, options) of subgraph 0.

Imports: the `tflite` package (flatbuffer accessors), numpy. Reading everything up front
keeps the flatbuffer's failure modes (a truncated or garbage file raises struct.error,
IndexError, ... deep inside the accessors) in one place, where they become xrelay.Error.
Options tables are read later, by the converters, through `Operator.option`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import numpy as np
from xrelay.errors import Error

# TensorType enum value -> numpy dtype (the types the importer computes with)
DTYPES = {
    0: np.float32, 1: np.float16, 2: np.int32, 3: np.uint8, 4: np.int64, 6: np.bool_,
    7: np.int16, 9: np.int8, 10: np.float64, 12: np.uint64, 15: np.uint32, 16: np.uint16,
}  # fmt: skip

BAD_FLATBUFFER = (struct.error, IndexError, ValueError, TypeError, UnicodeDecodeError)


@dataclass
class QParams:
    """Quantization of a tensor: real = scale * (q - zero_point); per channel along `axis`
    when `scale` has more than one entry."""

    scale: np.ndarray  # f32, shape (1,) or (C,)
    zero_point: np.ndarray  # i64, same length
    axis: int

    @property
    def per_channel(self) -> bool:
        return self.scale.size > 1


@dataclass
class Tensor:
    index: int
    name: str
    dtype: np.dtype
    type_name: str
    shape: tuple[int, ...]
    signature: tuple[int, ...] | None  # -1 marks a dynamic dimension
    data: np.ndarray | None  # constant contents
    quant: QParams | None


@dataclass
class OperatorRecord:
    index: int
    code: str  # builtin name ("CONV_2D") or "CUSTOM"
    custom_code: str | None
    inputs: list[int]  # tensor indices, -1 for an absent optional input
    outputs: list[int]
    options: Any  # the builtin's options table (tflite.Conv2DOptions, ...) or None


@dataclass
class Model:
    tensors: list[Tensor]
    operators: list[OperatorRecord]
    inputs: list[int]
    outputs: list[int]
    subgraphs: int


def read_model(data: bytes, where: str) -> Model:
    """Parse `data`; any malformed content is an Error naming `where`."""
    if len(data) < 8 or data[4:8] != b"TFL3":
        raise Error(f"{where} is not a TFLite flatbuffer (no 'TFL3' identifier)")
    progress = ["the model header"]
    try:
        return _read(data, progress)
    except Error:
        raise
    except BAD_FLATBUFFER as e:
        raise Error(
            f"{where} is a malformed TFLite flatbuffer (truncated?): reading {progress[0]} "
            f"failed ({e})"
        ) from None


def _enum_names(enum: type) -> dict[int, str]:
    return {v: k for k, v in vars(enum).items() if not k.startswith("_")}


def _read(data: bytes, progress: list[str]) -> Model:
    """The model; `progress[0]` names what is being read (for errors)."""
    import tflite

    model = tflite.Model.GetRootAsModel(data, 0)
    if model.SubgraphsLength() < 1:
        raise Error("the TFLite model has no subgraph")
    graph = model.Subgraphs(0)
    builtins = _enum_names(tflite.BuiltinOperator)
    type_names = _enum_names(tflite.TensorType)
    option_names = _enum_names(tflite.BuiltinOptions)
    tensors = []
    for i in range(graph.TensorsLength()):
        progress[0] = f"tensor {i}"
        tensors.append(_tensor(model, graph.Tensors(i), i, type_names, data, progress))
    operators = []
    for i in range(graph.OperatorsLength()):
        progress[0] = f"operator {i}"
        op = graph.Operators(i)
        if op.OpcodeIndex() >= model.OperatorCodesLength():
            raise Error(f"TFLite operator {i} has opcode index {op.OpcodeIndex()} out of range")
        oc = model.OperatorCodes(op.OpcodeIndex())
        number = max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode())
        code = builtins.get(number, f"builtin #{number}")
        custom = oc.CustomCode().decode() if code == "CUSTOM" and oc.CustomCode() else None
        inputs = [int(t) for t in op.InputsAsNumpy()] if op.InputsLength() else []
        outputs = [int(t) for t in op.OutputsAsNumpy()] if op.OutputsLength() else []
        for t in inputs + outputs:
            if t >= len(tensors) or t < -1:
                raise Error(f"TFLite operator {i} ({code}) names tensor {t}, which does not exist")
        options = None
        table = op.BuiltinOptions()
        cls = getattr(tflite, option_names.get(op.BuiltinOptionsType(), "NONE"), None)
        if table is not None and cls is not None:
            options = cls()
            options.Init(table.Bytes, table.Pos)
        progress[0] = f"operator {i} ({code}, output '{_first_output(tensors, outputs)}')"
        if table is not None and cls is not None:
            _touch_options(options)
        operators.append(OperatorRecord(i, code, custom, inputs, outputs, options))
    progress[0] = "the graph's inputs and outputs"
    inputs = [int(t) for t in graph.InputsAsNumpy()] if graph.InputsLength() else []
    outputs = [int(t) for t in graph.OutputsAsNumpy()] if graph.OutputsLength() else []
    for t in inputs + outputs:
        if not 0 <= t < len(tensors):
            raise Error(f"the TFLite graph names tensor {t} as an input or output; it has none")
    return Model(tensors, operators, inputs, outputs, model.SubgraphsLength())


def _first_output(tensors: list[Tensor], outputs: list[int]) -> str:
    return tensors[outputs[0]].name if outputs and outputs[0] >= 0 else "-"


def _touch_options(options: Any) -> None:
    """Read every field of an options table now, so a truncated table fails while the
    operator is named (converters read them later)."""
    for name in dir(options):
        if not name[0].isupper() or name.startswith(("GetRootAs", "Init")):
            continue
        if name.endswith(("BufferHasIdentifier", "IsNone", "Length")):
            continue
        try:
            getattr(options, name)()
        except TypeError:  # a vector's element accessor (it takes an index)
            continue


def _tensor(
    model, t, index: int, type_names: dict[int, str], data: bytes, progress: list[str]
) -> Tensor:
    name = t.Name().decode() if t.Name() else f"tensor_{index}"
    progress[0] = f"tensor {index} '{name}'"
    type_name = type_names.get(t.Type(), f"type #{t.Type()}")
    dtype = DTYPES.get(t.Type())
    shape = tuple(int(d) for d in t.ShapeAsNumpy()) if t.ShapeLength() else ()
    signature = None
    if t.ShapeSignatureLength():
        signature = tuple(int(d) for d in t.ShapeSignatureAsNumpy())
    contents = None
    if 0 < t.Buffer() < model.BuffersLength():
        raw = _buffer_bytes(model.Buffers(t.Buffer()), data)
        if raw is not None and dtype is not None:
            contents = _array(raw, np.dtype(dtype), shape, name)
    quant = None
    q = t.Quantization()
    if q is not None and q.ScaleLength() > 0:
        scale = q.ScaleAsNumpy().astype(np.float32)
        zp = (
            q.ZeroPointAsNumpy().astype(np.int64)
            if q.ZeroPointLength()
            else np.zeros(scale.shape, np.int64)
        )
        if zp.size != scale.size:
            zp = np.broadcast_to(zp, scale.shape).copy()
        quant = QParams(scale, zp, int(q.QuantizedDimension()))
    return Tensor(index, name, dtype, type_name, shape, signature, contents, quant)


def _buffer_bytes(buffer, data: bytes) -> bytes | None:
    offset, size = buffer.Offset(), buffer.Size()
    if offset > 1:  # a model over 2 GB keeps its buffers after the flatbuffer
        if offset + size > len(data):
            raise Error("a TFLite buffer lies beyond the end of the file (truncated?)")
        return data[offset : offset + size]
    if buffer.DataLength() == 0:
        return None
    return buffer.DataAsNumpy().tobytes()


def _array(raw: bytes, dtype: np.dtype, shape: tuple[int, ...], name: str) -> np.ndarray:
    count = int(np.prod(shape, dtype=np.int64))
    if len(raw) != count * dtype.itemsize:
        raise Error(
            f"TFLite tensor '{name}' holds {len(raw)} bytes, but {dtype}{list(shape)} needs "
            f"{count * dtype.itemsize}"
        )
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
