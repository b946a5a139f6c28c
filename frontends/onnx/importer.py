"""ONNX ModelProto -> a builtin.module with `func.func @main` of relay ops, plus params.

Imports: onnx, numpy, the relay dialect, the reference executor (to fold values known at
import time). A dynamic input dimension becomes a symbol (its dim_param, else
`<input>_<axis>`); `shape=` specializes it. Shape arithmetic on such dimensions is done on
expressions at import time (frontends/onnx/symbolic.py).
Produces: `@main(data inputs in model order..., parameters in initializer order...)`, each
argument named in its `xrelay.name` attribute, each op located by a NameLoc of its node.

The walk: check every node has a converter (all missing ones reported at once), then convert
node by node. A node whose inputs are all known at import time (Constant nodes, Shape of a
static shape, small integer initializers, frozen initializers, results of earlier folds) is
evaluated with the reference executor instead of emitted, so shape arithmetic never reaches
the IR. Other initializers become parameters; a converter may still read their values.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.external_data_helper import load_external_data_for_tensor, uses_external_data
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    FunctionType,
    LocationAttr,
    ModuleOp,
    NameLoc,
    NoneAttr,
    StringAttr,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xrelay.dialects.dims import symbol, symbol_name
from xrelay.dialects.dtypes import (
    from_storage,
    narrow_dtype,
    storage_dtype,
    tensor_type,
    to_storage,
)
from xrelay.dialects.limits import bytes_over_limit
from xrelay.dialects.relay.optional import OptionalType
from xrelay.dialects.relay.sequence import SequenceType
from xrelay.errors import Error, UnsupportedOpsError
from xrelay.frontends.common import dims_tensor, emit_constant
from xrelay.frontends.onnx import deferred, symbolic
from xrelay.frontends.onnx.binder import Node, RunTimeValue, Value
from xrelay.frontends.onnx.registry import STRUCTURED, lookup
from xrelay.frontends.onnx.symbolic import is_symbolic
from xrelay.frontends.onnx.validate import validate
from xrelay.ir import verify_module
from xrelay.signature import DIM_RANGES_ATTR, arg_attrs, dim_ranges_attr, res_attrs

ShapeArg = Mapping[str, tuple[int, ...] | list[int]] | None
DtypeArg = str | Mapping[str, str]


def load_model(model: onnx.ModelProto | str | Path) -> tuple[onnx.ModelProto, Path | None]:
    """A ModelProto from itself or a path, and the folder of a loaded file (None for a
    proto). The external data of a file's top-level initializers is left for
    `GraphImporter.build` to read one tensor at a time (`initializer_array`), so a large
    model's weights are never held twice; that of other tensors is loaded here. One with no
    graph or no nodes is an error."""
    base = None
    if isinstance(model, onnx.ModelProto):
        proto = model
        where = "the ONNX model"
    elif isinstance(model, str | Path):
        path = Path(model)
        if not path.is_file():
            raise Error(f"no ONNX model at {path}")
        base = path.parent
        try:
            proto = onnx.load(str(path), load_external_data=False)
            for tensor in _all_tensors(proto.graph, initializers=False):
                if uses_external_data(tensor):
                    load_external_data_for_tensor(tensor, str(base))
        except Exception as e:  # noqa: BLE001 - protobuf DecodeError, missing external data, ...
            raise Error(f"cannot load ONNX model {path}: {type(e).__name__}: {e}") from None
        where = f"ONNX model {path}"
    else:
        raise Error(f"from_onnx expects an onnx.ModelProto or a path, got {type(model).__name__}")
    if not proto.HasField("graph"):
        raise Error(f"{where} has no graph (an empty or truncated file?)")
    if not proto.graph.node and not proto.graph.output:
        raise Error(f"{where} has an empty graph")
    return proto, base


def _all_tensors(graph: onnx.GraphProto, initializers: bool = True):
    """Every TensorProto of `graph`: its initializers (when `initializers`) and node
    attributes, subgraphs (and their initializers) included."""
    if initializers:
        yield from graph.initializer
    for node in graph.node:
        for attr in node.attribute:
            if attr.HasField("t"):
                yield attr.t
            yield from attr.tensors
            for g in (*([attr.g] if attr.HasField("g") else []), *attr.graphs):
                yield from _all_tensors(g)


def _read_external(tensor: onnx.TensorProto, base: Path) -> np.ndarray | None:
    """A numeric tensor's external data read straight into its array (no copy through the
    proto); None where onnx's own reader is needed (other dtypes, odd entries)."""
    info = {e.key: e.value for e in tensor.external_data}
    kinds = onnx.TensorProto
    plain = {kinds.FLOAT, kinds.DOUBLE, kinds.INT8, kinds.UINT8, kinds.INT16, kinds.UINT16,
             kinds.INT32, kinds.UINT32, kinds.INT64, kinds.UINT64, kinds.FLOAT16}  # fmt: skip
    if tensor.data_type not in plain or "location" not in info or any(d < 0 for d in tensor.dims):
        return None
    dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type)).newbyteorder("<")
    count = int(np.prod(tensor.dims, dtype=np.int64))
    path = (base / info["location"]).resolve()
    if base.resolve() not in path.parents:
        raise Error(f"initializer '{tensor.name}': external data outside the model's folder")
    offset = int(info.get("offset", 0))
    if "length" in info and int(info["length"]) != count * dtype.itemsize:
        raise Error(
            f"initializer '{tensor.name}' declares {info['length']} bytes of external data "
            f"for its {list(tensor.dims)} values"
        )
    try:
        array = np.fromfile(path, dtype, count, offset=offset)
    except OSError as e:
        raise Error(f"initializer '{tensor.name}': cannot read {path}: {e}") from None
    if array.size != count:
        raise Error(
            f"initializer '{tensor.name}': {path} holds {array.size} of its "
            f"{list(tensor.dims)} values"
        )
    return array.astype(dtype.newbyteorder("="), copy=False).reshape(tuple(tensor.dims))


def initializer_array(tensor: onnx.TensorProto, base: Path | None) -> np.ndarray:
    """A top-level initializer as numpy; one stored beside a loaded file is read from there
    and its bytes dropped from the proto again (it stays an external reference, as
    shape inference expects)."""
    if base is None or not uses_external_data(tensor):
        return tensor_array(tensor, "initializer")
    direct = _read_external(tensor, base)
    if direct is not None:
        return direct
    try:
        load_external_data_for_tensor(tensor, str(base))
    except Exception as e:  # noqa: BLE001 - a missing or short data file
        raise Error(
            f"initializer '{tensor.name}': cannot read its external data ({type(e).__name__}: {e})"
        ) from None
    try:
        return tensor_array(tensor, "initializer")
    finally:
        tensor.ClearField("raw_data")
        tensor.data_location = onnx.TensorProto.EXTERNAL


def tensor_array(tensor: onnx.TensorProto, what: str) -> np.ndarray:
    """An initializer or tensor attribute as numpy; a malformed one (an unknown data type,
    negative dims, data shorter than its dims) is an error naming it."""
    if tensor.data_type not in onnx.TensorProto.DataType.values() or tensor.data_type == 0:
        raise Error(f"{what} '{tensor.name}' has an unknown data type {tensor.data_type}")
    if any(d < 0 for d in tensor.dims):
        raise Error(f"{what} '{tensor.name}' has negative dimensions {list(tensor.dims)}")
    try:
        return numpy_helper.to_array(tensor)
    except Exception as e:  # noqa: BLE001 - numpy or onnx's own complaint, named
        raise Error(
            f"{what} '{tensor.name}' does not hold the {list(tensor.dims)} values it declares "
            f"({type(e).__name__}: {e})"
        ) from None


# Ops never evaluated at import: Constant has no inputs to fold, and a dequantized weight
# must stay an integer tensor for `qdq-to-qnn` to find it.
NO_FOLD = ("Constant", "DequantizeLinear")

# Ops whose converters handle narrow-typed inputs themselves (frontends/onnx/narrow.py), and
# ops that only move elements: their output has the narrow type of their first input.
NARROW_AWARE = ("Cast", "CastLike", "QuantizeLinear", "DequantizeLinear")
NARROW_MOVES = ("Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose")


def default_opset(model: onnx.ModelProto) -> int:
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return entry.version
    return 1


def _missing(graph: onnx.GraphProto, opset: int, domains: Mapping[str, int], missing: Counter[str]):
    for node in graph.node:
        version = opset if node.domain in ("", "ai.onnx") else domains.get(node.domain, 1)
        if lookup(node.op_type, version, node.domain) is None:
            label = (
                node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"
            )
            missing[label] += 1
        for attr in node.attribute:  # the bodies of If, Loop, Scan, ...
            for sub in [attr.g] if attr.HasField("g") else list(attr.graphs):
                _missing(sub, opset, domains, missing)


def check_supported(graph: onnx.GraphProto, opset: int, domains: Mapping[str, int]) -> None:
    """Raise one UnsupportedOpsError naming every op type without a converter (subgraphs
    included)."""
    missing: Counter[str] = Counter()
    _missing(graph, opset, domains, missing)
    if missing:
        items = ", ".join(f"{op} x{n}" for op, n in sorted(missing.items()))
        total = sum(missing.values())
        raise UnsupportedOpsError(
            f"{total} unsupported ONNX operator{'s' if total > 1 else ''} (opset {opset}): {items}"
        )


def _input_dims(value: onnx.ValueInfoProto) -> tuple[Any, ...] | None:
    """An input's dimensions: ints, and a symbol for each dynamic one (named after its
    dim_param, else `<input>_<axis>`); None when the rank is unknown."""
    t = value.type.tensor_type
    if not t.HasField("shape"):
        return None
    dims: list[Any] = []
    for axis, d in enumerate(t.shape.dim):
        if d.HasField("dim_value") and d.dim_value >= 0:
            dims.append(d.dim_value)
        else:
            param = d.dim_param if d.HasField("dim_param") else f"{value.name}_{axis}"
            dims.append(symbol(symbol_name(param)))
    return tuple(dims)


SHAPE_LIKE_MAX_ELEMENTS = 1024
UNBOUNDED = 2**62  # the upper end of a symbol's range that only has a lower bound


def is_shape_like(array: np.ndarray) -> bool:
    """Small integer initializers hold shapes, axes and indices, not weights: they are
    constants at import time (folded, or embedded where used) rather than parameters."""
    return array.dtype.kind in "iub" and array.size <= SHAPE_LIKE_MAX_ELEMENTS


class GraphImporter:
    def __init__(
        self,
        model: onnx.ModelProto,
        shape: ShapeArg,
        dtype: DtypeArg,
        opset: int | None,
        freeze_params: bool,
        const_inputs: Mapping[str, np.ndarray] | None = None,
        base: Path | None = None,
    ) -> None:
        self.model = model
        self.base = base  # the folder of a loaded file: its initializers' external data
        self.graph = model.graph
        self.opset = opset or default_opset(model)
        self.domains = {e.domain: e.version for e in model.opset_import}
        self.shape = dict(shape or {})
        self.dtype = dtype
        self.freeze_params = freeze_params
        self.const_inputs = {k: np.asarray(v) for k, v in (const_inputs or {}).items()}
        self.env: dict[str, Value] = {}
        self.block = Block()
        self.main_block = self.block  # @main's; `block` is a region's while one converts
        self.input_dtypes: dict[str, np.dtype] = {}  # data inputs of narrow types
        self.dim_ranges: dict[str, tuple[int, int]] = {}  # symbols' [min, max], if bounded
        self._value_types: dict[str, onnx.TypeProto] | None = None  # shape inference's
        self._fresh: set[str] = set()  # symbols made for deferred nodes' results

    def inferred_value_types(self) -> dict[str, onnx.TypeProto]:
        """Every value's type as ONNX shape inference sees it (computed once; empty where
        inference fails)."""
        if self._value_types is None:
            try:
                inferred = onnx.shape_inference.infer_shapes(self.model).graph
            except Exception:  # noqa: BLE001 - a model inference rejects just gives no types
                inferred = self.graph
            self._value_types = {
                v.name: v.type for v in (*inferred.input, *inferred.value_info, *inferred.output)
            }
        return self._value_types

    def fresh_symbol(self, name: str) -> str:
        """`name` (made a valid symbol name), or `name_<k>`, not yet used by an input or
        another fresh symbol."""
        name = symbol_name(name)
        taken = self._fresh | {
            s
            for v in self.graph.input
            for d in (_input_dims(v) or ())
            if not isinstance(d, int)
            for s in (d.name,)
        }
        chosen, k = name, 1
        while chosen in taken:
            chosen, k = f"{name}_{k}", k + 1
        self._fresh.add(chosen)
        return chosen

    # --- the pieces of @main -------------------------------------------------------------

    def _input_type(self, value: onnx.ValueInfoProto):
        name = value.name
        kind = value.type.WhichOneof("value")
        if kind == "optional_type":  # None, or a value of the inner type
            inner = onnx.ValueInfoProto(name=name, type=value.type.optional_type.elem_type)
            return OptionalType(self._input_type(inner))
        if kind == "sequence_type":
            from xrelay.frontends.onnx.sequence import element_type

            element = element_type(value.type)
            if element is None:
                raise UnsupportedOpsError(
                    f"input '{name}' is a sequence of undeclared element type or rank"
                )
            return SequenceType(element)
        if kind not in (None, "tensor_type"):
            raise UnsupportedOpsError(
                f"input '{name}' is a {kind.removesuffix('_type')}: inputs must be tensors"
            )
        elem = value.type.tensor_type.elem_type
        if isinstance(self.dtype, Mapping) and name in self.dtype:
            np_dtype = np.dtype(self.dtype[name])
        elif elem in onnx.helper.get_all_tensor_dtypes() and elem != 0:
            try:
                np_dtype = onnx.helper.tensor_dtype_to_np_dtype(elem)
            except (KeyError, TypeError, ValueError):
                raise UnsupportedOpsError(
                    f"input '{name}' has element type {onnx.TensorProto.DataType.Name(elem)}, "
                    "which xrelay does not compute with"
                ) from None
        elif elem != 0:
            raise Error(f"input '{name}' has an unknown element type {elem}")
        elif isinstance(self.dtype, str):  # undeclared: the dtype= default
            np_dtype = np.dtype(self.dtype)
        else:
            raise Error(f"input '{name}' declares no element type: pass dtype={{'{name}': ...}}")
        declared = _input_dims(value)
        dims = self.shape.get(name, declared)
        if name in self.shape and declared is not None and len(dims) != len(declared):
            raise Error(
                f"shape= gives input '{name}' rank {len(dims)} {list(dims)}, but the model "
                f"declares rank {len(declared)}"
            )
        if dims is None:
            raise Error(f"input '{name}' has an unknown rank; pass shape={{'{name}': (...)}}")
        if narrow_dtype(np_dtype) is not None:
            self.input_dtypes[name] = np_dtype
        return tensor_type(tuple(dims), storage_dtype(np_dtype))

    def materialize(self, array: np.ndarray, loc: LocationAttr) -> SSAValue:
        return emit_constant(self.block, to_storage(array), loc)

    def _widened(self, node: onnx.NodeProto, index: int, narrow: dict[int, np.dtype]):
        """A copy of `node` reading its bfloat16 inputs decoded to f32 (the decoding is
        emitted now), and the type to round its float results back to."""
        from xrelay.frontends.onnx import narrow as codec

        b = Node(self, node, index, False)
        bad = sorted({d.name for d in narrow.values() if d.name != "bfloat16"})
        if bad:
            raise b.unsupported(
                f"{bad[0]} input: only Cast, CastLike, QuantizeLinear, DequantizeLinear and "
                f"{', '.join(NARROW_MOVES)} take the 8-, 4- and 2-bit types"
            )
        copy = onnx.NodeProto()
        copy.CopyFrom(node)
        for i, dtype in narrow.items():
            wide = f"{node.input[i]} (as f32)"
            known = self.env[node.input[i]]
            if known.array is not None and not known.is_param:  # exact: decoded now
                self.env[wide] = Value(array=known.array.astype(np.float32))
            else:
                self.env[wide] = Value(ssa=codec.decode(b, b.input(i), dtype))
            copy.input[i] = wide
        return copy, next(iter(narrow.values()))

    def _rounded(self, node: onnx.NodeProto, index: int, result: SSAValue, dtype: np.dtype):
        from xrelay.frontends.onnx import narrow as codec

        if codec.dtype_of(result) != np.float32:
            return Value(ssa=result)
        b = Node(self, node, index, False)
        return Value(ssa=codec.encode(b, result, dtype, saturate=False), narrow=dtype)

    def convert_node(self, node: onnx.NodeProto, index: int) -> None:
        for name in node.input:
            if name and name not in self.env:
                label = node.name or f"{node.op_type}_{index}"
                raise Error(f"ONNX node '{label}' ({node.op_type}): input '{name}' is not defined")
        narrow = {i: self.env[n].logical for i, n in enumerate(node.input) if n}
        narrow = {i: d for i, d in narrow.items() if d is not None}
        # CastLike reads only the type of its second input
        read = node.input[:1] if node.op_type == "CastLike" else node.input
        fold = all(self.env[n].foldable for n in read if n)
        fold = fold and node.op_type not in NO_FOLD and node.op_type not in STRUCTURED
        fold = fold and any(n for n in node.input)
        fold = fold and (not narrow or node.op_type in NARROW_AWARE + NARROW_MOVES)
        if fold and any(is_symbolic(self.env[n].array) for n in node.input if n):
            if self._evaluate_symbolic(node, index):
                return
            fold = False  # converted into IR: its converter reads the expressions
        widened_to = None
        if narrow and node.op_type not in NARROW_AWARE + NARROW_MOVES:
            original = node
            node, widened_to = self._widened(node, index, narrow)
        version = self.opset if node.domain in ("", "ai.onnx") else self.domains.get(node.domain, 1)
        converter = lookup(node.op_type, version, node.domain)
        assert converter is not None  # check_supported ran first
        b = Node(self, node, index, fold)
        if widened_to is not None:
            b.input_names = list(original.input)  # messages name the model's values
        mark = self.block.last_op
        try:
            out = converter(b)
            outs = list(out) if isinstance(out, list | tuple) else [out]
            outs = b.outputs_known(outs)
        except RunTimeValue as e:  # a shape-determining graph input: convert at run time
            deferred.drop_partial(self, mark)
            if widened_to is None and not fold and deferred.defer(self, node, index, b, e):
                return
            raise
        except Error as e:
            if str(e).startswith("ONNX node"):
                raise
            raise b.wrap(e) from None
        except Exception as e:  # noqa: BLE001 - a converter bug must still name the node
            raise b.wrap(e) from None
        if widened_to is not None:  # the decoded inputs were for this node only
            for i in narrow:
                self.env.pop(node.input[i], None)  # an input may be read twice
        for i, (name, result) in enumerate(zip(node.output, outs)):
            if not name or result is None:
                continue
            if isinstance(result, Value):  # a sequence, or an element of one
                self.env[name] = result
            elif isinstance(result, SSAValue):
                value = Value(ssa=result, narrow=b.narrow_outputs.get(i))
                if widened_to is not None:
                    value = self._rounded(original, index, result, widened_to)
                elif node.op_type in NARROW_MOVES and 0 in narrow:
                    value.narrow = narrow[0]
                self.env[name] = value
            else:
                array = np.asarray(result)
                why = bytes_over_limit(array.nbytes)  # a broadcast view may be huge
                if why is not None:
                    raise b.error(f"its result {name!r} of shape {list(array.shape)} is {why}")
                dtype = b.narrow_outputs.get(i)
                if dtype is None and node.op_type in NARROW_MOVES:
                    dtype = narrow.get(0)
                # a folded narrow result is its storage: back to the narrow type
                if dtype is not None and narrow_dtype(array.dtype) is None:
                    array = from_storage(array, dtype)
                if widened_to is not None and array.dtype == np.float32:  # rounded back
                    array = array.astype(widened_to)
                self.env[name] = Value(array=array)

    def _evaluate_symbolic(self, node: onnx.NodeProto, index: int) -> bool:
        """Shape arithmetic on dynamic dimensions (frontends/onnx/symbolic.py): True if the
        node was evaluated, False if it is to be converted into IR instead (its result's
        length is an expression, e.g. a Range up to `seq`)."""
        inputs = [self.env[n].array if n else None for n in node.input]
        label = node.name or f"{node.op_type}_{index}"
        try:
            out = symbolic.evaluate(node, inputs)
        except Exception as e:  # noqa: BLE001 - malformed shape arithmetic must name the node
            raise Error(f"ONNX node '{label}' ({node.op_type}): {type(e).__name__}: {e}") from None
        if out is not None:
            self.env[node.output[0]] = Value(array=out)
            return True
        if symbolic.convertible(node, inputs):
            return False
        raise Error(
            f"ONNX node '{label}' ({node.op_type}): computes with dynamic dimensions "
            f"({', '.join(n for n in node.input if n and is_symbolic(self.env[n].array))}), "
            "which is not supported for this op yet"
        )

    def bound_symbol(self, name: str, lo: int | None = None, hi: int | None = None) -> None:
        """Declare that symbol `name` lies in [lo, hi] (@main's xrelay.dim_ranges): a run
        with a value outside is refused, naming the input."""
        old_lo, old_hi = self.dim_ranges.get(name, (1, UNBOUNDED))
        new = (max(old_lo, lo or 1), min(old_hi, UNBOUNDED if hi is None else hi))
        if new != (1, UNBOUNDED):
            self.dim_ranges[name] = new

    def convert_graph(self, graph: onnx.GraphProto, bindings: Mapping[str, Value]) -> list[Value]:
        """Convert a subgraph (a branch or loop body) in place, its inputs bound to
        `bindings`; the outer graph's values are visible, its own names do not leak out.
        Returns its outputs."""
        saved = self.env
        self.env = dict(saved)
        try:
            self._convert_body(graph, bindings)
            missing = [o.name for o in graph.output if o.name not in self.env]
            if missing:
                raise Error(f"subgraph '{graph.name}' output '{missing[0]}' is not produced")
            return [self.env[o.name] for o in graph.output]
        finally:
            self.env = saved

    def _convert_body(self, graph: onnx.GraphProto, bindings: Mapping[str, Value]) -> None:
        """A subgraph's nodes, its inputs bound to `bindings`, into the current value table."""
        self.env.update(bindings)
        for init in graph.initializer:
            self.env[init.name] = Value(array=tensor_array(init, "initializer"))
        for index, node in enumerate(graph.node):
            self.convert_node(node, index)

    def _lift(self, value: Value, out: onnx.ValueInfoProto, block: Block) -> SSAValue:
        """A sequence held at import (`value.items`) as a run-time sequence, built in `block`."""
        from xrelay.frontends.onnx.sequence import element_type, lift

        node = onnx.helper.make_node("SequenceConstruct", [], [out.name], name=out.name)
        saved, self.block = self.block, block
        try:
            return lift(Node(self, node, 0, False), value, element_type(out.type))
        finally:
            self.block = saved

    def _declared(self, value: Value, out: onnx.ValueInfoProto) -> Value:
        """A graph output as its declared kind: an optional where a tensor or sequence is
        declared gives its value (a loop that carries an optional into a sequence)."""
        from xrelay.frontends.onnx.optional import get

        kind = out.type.WhichOneof("value")
        declared = kind in ("tensor_type", "sequence_type")
        if declared and value.ssa is not None and isinstance(value.ssa.type, OptionalType):
            node = onnx.helper.make_node("OptionalGetElement", [], [out.name], name=out.name)
            return get(Node(self, node, 0, False), value)
        return value

    def convert_region(
        self, graph: onnx.GraphProto, block: Block, bindings: Mapping[str, Value]
    ) -> list[SSAValue]:
        """Convert a subgraph into `block` (a branch or loop body of a region op), its inputs
        bound to `bindings`; it reads the outer graph's values directly, and its outputs are
        returned as SSA values of `block` (known values materialized in it). Values known at
        import that the outer graph materializes later are not tied to `block`."""
        saved_block, saved_env = self.block, self.env
        self.block = block
        self.env = {k: dataclasses.replace(v) for k, v in saved_env.items()}
        try:
            self._convert_body(graph, bindings)
            results = []
            for out in graph.output:
                if out.name not in self.env:
                    raise Error(f"subgraph '{graph.name}' output '{out.name}' is not produced")
                value = self.env[out.name]
                if value.items is not None:
                    value = Value(ssa=self._lift(value, out, block))
                if value.ssa is None and is_symbolic(value.array):
                    value.ssa = dims_tensor(_Appender(block, _name_loc(out.name)), value.array)
                if value.ssa is None:
                    value.ssa = self.materialize(value.array, _name_loc(out.name))
                results.append(value.ssa)
            return results
        finally:
            self.block, self.env = saved_block, saved_env

    def build(self) -> tuple[ModuleOp, dict[str, np.ndarray]]:
        initializers = {t.name: initializer_array(t, self.base) for t in self.graph.initializer}
        unknown = sorted(set(self.shape) - {v.name for v in self.graph.input})
        if unknown:
            real = [v.name for v in self.graph.input if v.name not in initializers]
            raise Error(f"shape override names unknown input '{unknown[0]}'; the inputs are {real}")
        data_inputs = [v for v in self.graph.input if v.name not in initializers]
        unknown = sorted(set(self.const_inputs) - {v.name for v in data_inputs})
        if unknown:
            raise Error(f"const_inputs names '{unknown[0]}', which is not a graph input")
        for value in data_inputs:
            t = self._input_type(value)
            if value.name in self.const_inputs:
                array = self.const_inputs[value.name]
                if tensor_type(array.shape, storage_dtype(array.dtype)) != t:
                    raise Error(
                        f"const_inputs['{value.name}'] is {array.dtype}{list(array.shape)}, "
                        f"but the input is {t}"
                    )
                self.env[value.name] = Value(array=array)
                continue
            arg = self.block.insert_arg(t, len(self.block.args))
            self.env[value.name] = Value(ssa=arg, narrow=self.input_dtypes.get(value.name))
        param_args: dict[str, SSAValue] = {}
        for name, array in initializers.items():
            if self.freeze_params or is_shape_like(array):
                self.env[name] = Value(array=array)
                continue
            # a narrow-typed parameter is passed as its storage
            arg = self.block.insert_arg(
                tensor_type(array.shape, storage_dtype(array.dtype)), len(self.block.args)
            )
            param_args[name] = arg
            self.env[name] = Value(ssa=arg, array=array, is_param=True)
        for index, node in enumerate(self.graph.node):
            self.convert_node(node, index)

        results, result_dtypes = [], []
        for out in self.graph.output:
            if out.name not in self.env:
                raise Error(f"graph output '{out.name}' is not produced by any node")
            value = self.env[out.name]
            if value.items is not None:  # returned as a list
                value = Value(ssa=self._lift(value, out, self.block))
            value = self._declared(value, out)
            if value.ssa is None and is_symbolic(value.array):  # Shape of a dynamic tensor
                value.ssa = dims_tensor(_Appender(self.block, _name_loc(out.name)), value.array)
            if value.ssa is None:
                value.ssa = self.materialize(value.array, _name_loc(out.name))
            results.append(value.ssa)
            result_dtypes.append(value.logical)
        self.block.add_op(func.ReturnOp(*results))

        # Parameters whose values were only read at import time (shapes, axes) are dropped.
        params: dict[str, np.ndarray] = {}
        for name, arg in param_args.items():
            if arg.uses:
                params[name] = to_storage(initializers[name])
            else:
                self.block.erase_arg(arg)
        inputs = [v.name for v in data_inputs if v.name not in self.const_inputs]
        names = inputs + list(params)
        for arg, name in zip(self.block.args, names):
            arg.name_hint = _ssa_name(name)
        fn = func.FuncOp(
            "main",
            FunctionType.from_lists([a.type for a in self.block.args], [r.type for r in results]),
            Region(self.block),
            arg_attrs=arg_attrs(names, len(inputs), self.input_dtypes),
            res_attrs=res_attrs(result_dtypes),
        )
        if self.dim_ranges:
            fn.attributes[DIM_RANGES_ATTR] = dim_ranges_attr(self.dim_ranges)
        return ModuleOp([fn]), params


class _Appender:
    """Emits ops at the end of a block, at one location (frontends/common.py's Emitter)."""

    def __init__(self, block: Block, loc: LocationAttr) -> None:
        self.block, self.loc = block, loc

    def emit(self, op: Operation) -> Any:
        op.location = self.loc
        self.block.add_op(op)
        return op.results[0] if len(op.results) == 1 else op


def _name_loc(name: str) -> LocationAttr:
    return NameLoc(StringAttr(name), NoneAttr())


def _ssa_name(name: str) -> str | None:
    cleaned = "".join(c if c.isalnum() or c in "_." else "_" for c in name)
    if not cleaned or cleaned[0].isdigit():
        cleaned = "v" + cleaned
    return cleaned


def from_onnx(
    model: onnx.ModelProto | str | Path,
    shape: ShapeArg = None,
    dtype: DtypeArg = "float32",
    opset: int | None = None,
    freeze_params: bool = False,
    const_inputs: Mapping[str, np.ndarray] | None = None,
) -> tuple[ModuleOp, dict[str, np.ndarray]]:
    """Import an ONNX model: `(module, params)`. See the module docstring. QDQ groups stay
    dequantize -> float op -> quantize (`xrelay.from_onnx` folds them into qnn ops).
    `const_inputs` binds graph inputs to values at import time (inputs that determine
    shapes, such as reduction axes or a Reshape target, which static shapes need known);
    they are no longer inputs of @main."""
    proto, base = load_model(model)
    validate(proto)
    importer = GraphImporter(proto, shape, dtype, opset, freeze_params, const_inputs, base)
    check_supported(proto.graph, importer.opset, importer.domains)
    module, params = importer.build()
    verify_module(module)
    return module, params
