"""ONNX nodes whose shape-determining inputs are graph inputs: kept as `relay.deferred`
(dialects/relay/deferred.py) and converted when a run gives those inputs' values.

`defer` is the importer's fallback when a converter reads an input as a value known at
import (`b.const`) and that input is a graph input: a Reshape target, reduction axes, Slice
bounds, TopK's k, Pad widths, Resize sizes... The node is kept whole (a one-node model
holding it and the opsets, so that the conversion later sees what the importer saw), its
results typed from ONNX shape inference: their element types and ranks, with a fresh symbol
per dimension. `expand` is that later conversion: the same converter, on the node's
operands, with the values given.

The value operands are the input the converter asked for, and every other small input
computed at run time (a converter stops at the first it cannot read, so its other shape
inputs are taken too). A value operand must be computed from small graph inputs and
constants only (a few ops of shape arithmetic at most): a run's values then give it before
any native code runs. An input computed from the model's data stays an import error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import onnx
from onnx import helper
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xrelay.dialects import relay
from xrelay.dialects.constants import constant_value
from xrelay.dialects.dims import is_dynamic, make_tensor, symbol, symbol_name
from xrelay.dialects.dtypes import storage_dtype, tensor_type
from xrelay.dialects.relay.deferred import EXPANDERS, DeferredOp
from xrelay.errors import Error
from xrelay.frontends.onnx.binder import Node, RunTimeValue, Value

if TYPE_CHECKING:
    from xrelay.frontends.onnx.importer import GraphImporter

# a run-time input of at most this many integers may be a value operand
MAX_VALUE_ELEMENTS = 64


def _is_small(value: Value) -> bool:
    """A run-time tensor of at most MAX_VALUE_ELEMENTS numbers, statically shaped."""
    if value.ssa is None or value.array is not None or value.items is not None:
        return False
    t = value.ssa.type
    return (
        isinstance(t, TensorType)
        and not is_dynamic(t)
        and t.get_num_dims() <= 1
        and int(np.prod(t.get_shape())) <= MAX_VALUE_ELEMENTS
    )


def _computable(importer: GraphImporter, ssa: SSAValue, budget: int = 64) -> bool:
    """Whether `ssa` is computed from small graph inputs and constants only, by at most
    `budget` ops (so a run's values give it before any native code runs)."""
    seen: set[Operation] = set()
    stack = [ssa]
    while stack:
        value = stack.pop()
        if isinstance(value, BlockArgument):
            if value.block is not importer.main_block or not _small_type(value.type):
                return False
            continue
        op = value.owner
        if not isinstance(op, Operation) or op in seen:
            continue
        if op.regions or isinstance(op, DeferredOp) or not _small_type(value.type):
            return False
        seen.add(op)
        if len(seen) > budget:
            return False
        if not isinstance(op, relay.ShapeOfOp):  # a shape needs its operand's type only
            stack.extend(op.operands)
    return True


def deferrable(importer: GraphImporter, value: Value) -> bool:
    """Whether a run's inputs give `value` before any native code runs (so a node reading
    it may be deferred)."""
    return _is_small(value) and _computable(importer, value.ssa)


def _small_type(t: object) -> bool:
    return (
        isinstance(t, TensorType)
        and not is_dynamic(t)
        and int(np.prod(t.get_shape())) <= MAX_VALUE_ELEMENTS
    )


def defer(
    importer: GraphImporter, node: onnx.NodeProto, index: int, b: Node, error: RunTimeValue
) -> bool:
    """Emit `node` as a `relay.deferred` and bind its outputs; False (the caller raises
    `error`) when it cannot be deferred."""
    present = [j for j, name in enumerate(node.input) if name]
    env = importer.env
    asked = node.input[error.index] if error.index < len(node.input) else ""
    if not asked or not _is_small(env[asked]) or not _computable(importer, env[asked].ssa):
        return False
    value_operands = []
    for k, j in enumerate(present):
        value = env[node.input[j]]
        if value.logical is not None:
            return False  # narrow types are decoded around converters: not deferred
        if j == error.index or (j > 0 and _is_small(value) and _computable(importer, value.ssa)):
            value_operands.append(k)
    types = _result_types(importer, node)
    if types is None:
        return False
    operands = [b.input(j) for j in present]
    payload = _one_node_model(importer, node).SerializeToString()
    op = DeferredOp("onnx", node.op_type, payload, operands, value_operands, types)
    b.emit(op)
    for name, result in zip(node.output, op.outputs):
        if name:
            env[name] = Value(ssa=result)
    return True


def _result_types(importer: GraphImporter, node: onnx.NodeProto) -> list[TensorType] | None:
    """Each output's element type and rank from ONNX shape inference, with a fresh symbol
    per dimension; None if one is unknown."""
    known = importer.inferred_value_types()
    types = []
    for i, name in enumerate(node.output):
        if not name:
            return None  # an absent optional output: the converter decides its count
        proto = known.get(name)
        tt = proto.tensor_type if proto is not None and proto.HasField("tensor_type") else None
        if tt is not None and tt.elem_type and tt.HasField("shape"):
            dtype = storage_dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type))
            rank = len(tt.shape.dim)
        else:
            found = _rank_rule(importer, node) if i == 0 else None
            if found is None:
                return None
            dtype, rank = found
        elem = tensor_type((), dtype).element_type
        dims = [
            symbol(importer.fresh_symbol(symbol_name(f"{name}_{axis}"))) for axis in range(rank)
        ]
        types.append(make_tensor(elem, dims))
    return types


def _rank_rule(importer: GraphImporter, node: onnx.NodeProto) -> tuple[np.dtype, int] | None:
    """The first output's storage dtype and rank where ONNX inference leaves the rank open
    (axes given at run time, keepdims=0): it follows from the axes' count."""
    env = importer.env
    first = env[node.input[0]] if node.input and node.input[0] else None
    axes = env[node.input[1]] if len(node.input) > 1 and node.input[1] else None
    if first is None or first.ssa is None or axes is None or axes.ssa is None:
        return None
    data, count = first.ssa.type, axes.ssa.type
    if not isinstance(data, TensorType) or not isinstance(count, TensorType) or is_dynamic(count):
        return None
    rank, n = data.get_num_dims(), int(np.prod(count.get_shape()))
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if node.op_type.startswith("Reduce"):
        if n == 0 and attrs.get("noop_with_empty_axes", 0):
            out = rank
        else:
            out = rank if attrs.get("keepdims", 1) else (rank - n if n else 0)
    elif node.op_type == "Squeeze":
        out = rank - n
    elif node.op_type == "Unsqueeze":
        out = rank + n
    else:
        return None
    from xrelay.dialects.dtypes import numpy_dtype

    return numpy_dtype(data.element_type), out


def _one_node_model(importer: GraphImporter, node: onnx.NodeProto) -> onnx.ModelProto:
    graph = helper.make_graph([node], "deferred", [], [])
    model = helper.make_model(graph, opset_imports=list(importer.model.opset_import))
    model.ir_version = importer.model.ir_version
    return model


def expand(op: DeferredOp, values: dict[int, np.ndarray]) -> Sequence[SSAValue]:
    """Convert `op`'s node with its value operands' `values`; the ops go before `op`."""
    from xrelay.frontends.onnx.importer import GraphImporter

    model = onnx.ModelProto.FromString(op.node_bytes)
    (node,) = model.graph.node
    importer = GraphImporter(model, None, "float32", None, False)
    present = [j for j, name in enumerate(node.input) if name]
    if len(present) != len(op.inputs):
        raise Error(
            f"'{op.name}' ({node.op_type}): {len(op.inputs)} operands for {len(present)} inputs"
        )
    for k, j in enumerate(present):
        operand = op.inputs[k]
        if k in values:
            array = np.asarray(values[k])
            importer.env[node.input[j]] = Value(array=array.astype(_np_dtype(operand)))
            continue
        array = constant_value(operand)
        importer.env[node.input[j]] = Value(ssa=operand, array=array)
    block = Block()
    importer.block = block
    try:
        importer.convert_node(node, 0)
    except RunTimeValue as e:
        raise Error(f"{e} (deferred: its value operands were {sorted(values)})") from None
    results = []
    for name in node.output:
        value = importer.env[name]
        if value.ssa is None:
            value.ssa = importer.materialize(value.array, op.location)
        results.append(value.ssa)
    for new in list(block.ops):
        new.detach()
        Rewriter.insert_op(new, InsertPoint.before(op))
    return results


def _np_dtype(value: SSAValue) -> np.dtype:
    from xrelay.dialects.dtypes import numpy_dtype

    t = value.type
    assert isinstance(t, TensorType)
    return numpy_dtype(t.element_type)


def drop_partial(importer: GraphImporter, mark: Operation | None) -> None:
    """Erase the ops a converter emitted after `mark` before it stopped (unused ones; a
    cached materialization of a known value is forgotten so it is emitted again)."""
    added = []
    op = mark.next_op if mark is not None else importer.block.first_op
    while op is not None:
        added.append(op)
        op = op.next_op
    owners = set(added)
    for value in importer.env.values():
        if value.ssa is not None and value.ssa.owner in owners and value.array is not None:
            value.ssa = None
    for op in reversed(added):
        if all(not r.uses for r in op.results) and not _referenced(importer, op):
            op.detach()
            op.erase()


def _referenced(importer: GraphImporter, op: Operation) -> bool:
    return any(v.ssa is not None and v.ssa.owner is op for v in importer.env.values())


EXPANDERS["onnx"] = expand
