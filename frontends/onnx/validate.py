"""Structural checks of an ONNX graph before anything is imported, by the rules of the
onnx package's operator schemas (what onnxruntime also refuses):

- every name is text (a corrupted file can hold bytes that are not UTF-8 there);
- the default domain's opset is one the installed onnx package knows;
- every value is assigned once: no two nodes write one name, and no node writes a graph
  input or an initializer;
- a node with a schema has as many inputs and outputs as the schema allows, only the
  attributes it declares, each of the declared type, and every required one.

Op-specific rules (axes within the rank, a kernel that matches its weight) are the
converters'. Each problem is one `xrelay.Error` naming the node. Ops without a schema (other
domains) are left to the converter registry."""

from __future__ import annotations

from collections.abc import Mapping

import onnx
from onnx import defs
from xrelay.errors import Error

DEFAULT_DOMAINS = ("", "ai.onnx")
# schema attribute types by AttributeProto type, and the names errors use
ATTR_NAMES = {v: k for k, v in onnx.AttributeProto.AttributeType.items()}


def _label(node: onnx.NodeProto, index: int) -> str:
    return f"ONNX node '{node.name or f'{node.op_type}_{index}'}' ({node.op_type})"


def check_opsets(model: onnx.ModelProto) -> None:
    newest = defs.onnx_opset_version()
    for entry in model.opset_import:
        if entry.domain in DEFAULT_DOMAINS and not 1 <= entry.version <= newest:
            raise Error(
                f"the model imports opset {entry.version} of the default ONNX domain; "
                f"this onnx package knows opsets 1 to {newest}"
            )


def _schema(node: onnx.NodeProto, versions: Mapping[str, int]) -> defs.OpSchema | None:
    domain = "" if node.domain == "ai.onnx" else node.domain
    version = versions.get(domain)
    if version is None:
        return None
    try:
        return defs.get_schema(node.op_type, version, domain)
    except (defs.SchemaError, TypeError):  # no such op; a name that is not UTF-8
        return None


def _check_node(node: onnx.NodeProto, index: int, schema: defs.OpSchema) -> None:
    label = _label(node, index)
    n_in = len(node.input)
    while n_in and not node.input[n_in - 1]:  # trailing optional inputs left out
        n_in -= 1
    if not schema.min_input <= n_in <= schema.max_input:
        raise Error(
            f"{label} has {n_in} inputs; the operator takes "
            f"{_range(schema.min_input, schema.max_input)}"
        )
    n_out = len(node.output)
    if not schema.min_output <= n_out <= schema.max_output:
        raise Error(
            f"{label} has {n_out} outputs; the operator makes "
            f"{_range(schema.min_output, schema.max_output)}"
        )
    declared = schema.attributes
    for attr in node.attribute:
        spec = declared.get(attr.name)
        if spec is None:
            known = ", ".join(sorted(declared)) or "none"
            raise Error(f"{label} has an unknown attribute '{attr.name}' (it takes: {known})")
        if attr.ref_attr_name:  # a function's attribute reference, resolved on call
            continue
        if attr.type != spec.type.value:
            raise Error(
                f"{label} attribute '{attr.name}' is {ATTR_NAMES.get(attr.type, attr.type)}; "
                f"the operator expects {ATTR_NAMES.get(spec.type.value, spec.type.value)}"
            )
    given = {a.name for a in node.attribute}
    for name, spec in declared.items():
        if spec.required and name not in given:
            raise Error(f"{label} lacks its required attribute '{name}'")


def _range(lo: int, hi: int) -> str:
    if hi >= 2**31 - 1:
        return f"at least {lo}"
    return f"{lo}" if lo == hi else f"{lo} to {hi}"


def _not_text(value: object) -> bool:
    """A string field protobuf could not decode: the file's bytes are not UTF-8 there (the
    onnx package's proto2 messages return them as bytes)."""
    return not isinstance(value, str)


def check_text(graph: onnx.GraphProto, where: str = "the graph") -> None:
    """Every name in `graph` (and the graphs in its nodes' attributes) is text: a name that
    is not UTF-8 (a corrupted file) is an error naming where it is, before any check or
    converter compares it with names that are."""
    for kind, values in (
        ("input", graph.input),
        ("output", graph.output),
        ("value_info", graph.value_info),
        ("initializer", graph.initializer),
    ):
        for i, value in enumerate(values):
            if _not_text(value.name):
                raise Error(
                    f"{where}'s {kind} #{i} has a name that is not UTF-8 text: {value.name!r}"
                )
            if kind == "initializer" or not value.type.HasField("tensor_type"):
                continue
            for axis, dim in enumerate(value.type.tensor_type.shape.dim):
                if _not_text(dim.dim_param):
                    raise Error(
                        f"{where}'s {kind} '{value.name}' names its dimension {axis} with "
                        f"bytes that are not UTF-8 text: {dim.dim_param!r}"
                    )
    for index, node in enumerate(graph.node):
        fields = [("op_type", node.op_type), ("domain", node.domain), ("name", node.name)]
        fields += [(f"input #{i}", name) for i, name in enumerate(node.input)]
        fields += [(f"output #{i}", name) for i, name in enumerate(node.output)]
        fields += [(f"attribute #{i}'s name", a.name) for i, a in enumerate(node.attribute)]
        for field, value in fields:
            if _not_text(value):
                raise Error(
                    f"ONNX node #{index} of {where}: its {field} is not UTF-8 text: {value!r}"
                )
        for attr in node.attribute:
            for sub in [attr.g] if attr.HasField("g") else list(attr.graphs):
                check_text(sub, f"the graph in node #{index}'s attribute '{attr.name}'")


def check_graph(graph: onnx.GraphProto, versions: Mapping[str, int]) -> None:
    """The rules above for `graph` and the graphs in its nodes' attributes (each graph's
    own names assigned once)."""
    written: dict[str, str] = {}
    for value in graph.input:
        written[value.name] = f"graph input '{value.name}'"
    for tensor in graph.initializer:
        written.setdefault(tensor.name, f"initializer '{tensor.name}'")
    for index, node in enumerate(graph.node):
        label = _label(node, index)
        for name in node.output:
            if not name:
                continue
            earlier = written.get(name)
            if earlier is not None:
                raise Error(
                    f"{label} writes '{name}', which {earlier} already defines (every value "
                    "is assigned once)"
                )
            written[name] = label
        schema = _schema(node, versions)
        if schema is not None:
            _check_node(node, index, schema)
        for attr in node.attribute:
            for sub in [attr.g] if attr.HasField("g") else list(attr.graphs):
                check_graph(sub, versions)


def validate(model: onnx.ModelProto) -> None:
    """Every check above; raises the first problem as an `xrelay.Error`."""
    for entry in model.opset_import:
        if _not_text(entry.domain):
            raise Error(
                f"the model imports an opset whose domain is not UTF-8 text: {entry.domain!r}"
            )
    check_text(model.graph)
    check_opsets(model)
    versions = {("" if e.domain == "ai.onnx" else e.domain): e.version for e in model.opset_import}
    versions.setdefault("", 1)
    check_graph(model.graph, versions)
