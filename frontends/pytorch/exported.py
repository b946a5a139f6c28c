"""torch.export ExportedProgram -> a builtin.module with `func.func @main` of relay ops, plus
params.

Imports: torch, the shared op table and binder. Dynamic dimensions (`torch.export.Dim`)
go through frontends/pytorch/dynamic.py: the program is converted per set of sizes, with
torch's symbols evaluated under them (`binding`). Produces: `@main(user inputs in order..., parameters and float
buffers named by their state_dict key...)`, ops located by a NameLoc "module.path/node".

The walk: `run_decompositions()` to core ATen; a first pass marks which nodes are known at
import time (constants, index-table buffers, shape-only ops, ops on known values) and reports
every op kind that is neither known nor convertible in one error; the second pass folds the
known nodes with torch and converts the others. Each converted result's type is checked
against torch's own `meta["val"]`, so a converter bug is an error, never a wrong shape.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind
from torch.fx import Node
from xdsl.dialects.builtin import ModuleOp, NameLoc, NoneAttr, StringAttr, TensorType
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dtypes import tensor_type
from xrelay.errors import Error
from xrelay.frontends.pytorch.call import Call, GraphBuilder, has_ssa, np_dtype, to_numpy
from xrelay.frontends.pytorch.convert import (
    SHAPE_ONLY,
    build_main,
    convert,
    flatten_outputs,
    fold,
    is_index_table,
    is_nondeterministic,
    raise_missing,
    shape_proxy,
)
from xrelay.frontends.pytorch.registry import lookup

# Ops that only assert facts torch already checked at export time.
NO_OPS = {"aten::_assert_tensor_metadata", "aten::_assert_scalar", "aten::sym_constrain_range"}


def _kind(node: Node) -> str:
    schema = getattr(node.target, "_schema", None)
    return schema.name if schema is not None else str(node.target)


def _scope(node: Node) -> str:
    stack = node.meta.get("nn_module_stack") or {}
    return list(stack.values())[-1][0] if stack else ""


def _label(node: Node) -> str:
    scope = _scope(node)
    where = f", in '{scope}'" if scope else ""
    return f"'{node.target}' (node '{node.name}'{where})"


def _loc(node: Node) -> NameLoc:
    scope = _scope(node)
    return NameLoc(StringAttr(f"{scope}/{node.name}" if scope else node.name), NoneAttr())


def _map(value: Any, env: dict[Node, Any]) -> Any:
    if isinstance(value, Node):
        return env[value]
    if isinstance(value, list | tuple):
        return type(value)(_map(v, env) for v in value)
    if isinstance(value, dict):
        return {k: _map(v, env) for k, v in value.items()}
    return value


def _concrete(d: Any, binding: Mapping[str, int] | None, what: str) -> int:
    """A dimension of a fake tensor as an int: a SymInt is evaluated under `binding`
    (torch's symbol names -> sizes)."""
    if isinstance(d, int):
        return d
    if binding is None:
        raise Error(f"{what} is dynamic ({d}) where a static size is needed")
    expr = d.node.expr
    value = expr.subs({s: binding[str(s)] for s in expr.free_symbols if str(s) in binding})
    if not value.is_Integer:
        raise Error(f"{what}: the size {expr} is not known under {dict(binding)}")
    return int(value)


def _static_type(name: str, fake: Any, binding: Mapping[str, int] | None = None) -> TensorType:
    if not isinstance(fake, torch.Tensor):
        raise Error(f"input '{name}' is a {type(fake).__name__}; only tensor inputs are supported")
    shape = tuple(_concrete(d, binding, f"input '{name}' axis {a}") for a, d in enumerate(fake.shape))
    return tensor_type(shape, np_dtype(fake.dtype))


class ProgramImporter:
    def __init__(
        self,
        ep: ExportedProgram,
        keep_params_as_inputs: bool,
        binding: Mapping[str, int] | None = None,
        operands: Sequence[SSAValue] | None = None,
    ) -> None:
        """`binding` (torch symbol -> size) and `operands` (the arguments, in @main's
        order) when a dynamic program is converted for one set of sizes
        (frontends/pytorch/dynamic.py)."""
        self.ep = ep
        self.graph = ep.graph_module.graph
        self.keep_params = keep_params_as_inputs
        self.binding = binding
        self.operands = list(operands) if operands is not None else None
        self._next_operand = 0
        self.builder = GraphBuilder()
        self.env: dict[Node, Any] = {}
        self.params: dict[str, Any] = {}
        self.names: list[str] = []

    # --- inputs --------------------------------------------------------------------------

    def _state(self, target: str) -> torch.Tensor:
        if target in self.ep.state_dict:
            return self.ep.state_dict[target]
        return self.ep.constants[target]

    def bind_inputs(self) -> int:
        """Bind every placeholder; returns the number of data inputs."""
        specs = {s.arg.name: s for s in self.ep.graph_signature.input_specs}
        placeholders = [n for n in self.graph.nodes if n.op == "placeholder"]
        param_nodes = []
        for node in placeholders:
            spec = specs[node.name]
            if spec.kind == InputKind.USER_INPUT:
                t = _static_type(node.name, node.meta.get("val"), self.binding)
                self.env[node] = self._argument(t, node.name)
                self.names.append(node.name)
            elif spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
                param_nodes.append((node, spec))
            else:
                raise Error(f"input '{node.name}' of kind {spec.kind.name} is not supported")
        num_data = len(self.names)
        for node, spec in param_nodes:
            tensor = self._state(spec.target).detach()
            as_param = spec.kind != InputKind.CONSTANT_TENSOR and not is_index_table(tensor)
            if not (self.keep_params and as_param):
                self.env[node] = tensor
                continue
            t = tensor_type(tuple(tensor.shape), np_dtype(tensor.dtype))
            self.env[node] = self._argument(t, spec.target)
            self.names.append(spec.target)
            self.params[spec.target] = to_numpy(tensor)
        return num_data

    def _argument(self, t: TensorType, name: str) -> SSAValue:
        """A new @main argument, or the next given operand (which must have type t)."""
        if self.operands is None:
            return self.builder.block.insert_arg(t, len(self.builder.block.args))
        operand = self.operands[self._next_operand]
        self._next_operand += 1
        if operand.type != t:
            raise Error(f"input '{name}' is {operand.type}, the program needs {t}")
        return operand

    # --- analysis ------------------------------------------------------------------------

    def check_supported(self) -> None:
        """Report every op that runs at run time and has no converter, all at once."""
        runtime = {n for n, v in self.env.items() if isinstance(v, SSAValue)}
        missing: Counter[str] = Counter()
        self._scan(self.graph, runtime, missing)
        raise_missing(missing, "exported program")

    def _scan(self, graph: Any, runtime: set[Node], missing: Counter[str]) -> None:
        for node in graph.nodes:
            if node.op != "call_function":
                continue
            kind = _kind(node)
            inputs = [i for i in node.all_input_nodes if i in runtime]
            if not inputs or kind in SHAPE_ONLY | NO_OPS:
                continue
            runtime.add(node)
            if node.target is torch.ops.higher_order.cond:
                self._scan_branches(node, runtime, missing)
            elif node.target is not operator.getitem and lookup(kind) is None:
                missing[kind] += 1

    def _scan_branches(self, node: Node, runtime: set[Node], missing: Counter[str]) -> None:
        operands = node.args[3]
        for branch in node.args[1:3]:
            graph = getattr(self.ep.graph_module, branch.target).graph
            params = [n for n in graph.nodes if n.op == "placeholder"]
            runtime.update(p for p, o in zip(params, operands) if o in runtime)
            self._scan(graph, runtime, missing)

    # --- conversion ----------------------------------------------------------------------

    def convert_node(self, node: Node, env: dict[Node, Any]) -> Any:
        kind = _kind(node)
        args, kwargs = _map(node.args, env), _map(node.kwargs, env)
        if kind in NO_OPS:
            return None
        if node.target is operator.getitem:
            return args[0][args[1]]
        if node.target is torch.ops.higher_order.cond:
            return self._cond(node, *args)
        runtime = has_ssa(args) or has_ssa(kwargs)
        if not runtime or kind in SHAPE_ONLY:
            if is_nondeterministic(node.target):
                raise Error(f"PyTorch op {_label(node)}: random ops are not supported")
            return fold(_label(node), node.target, shape_proxy(args), shape_proxy(kwargs))
        converter = lookup(kind)
        assert converter is not None  # check_supported ran first
        schema = node.target._schema
        names, values = _normalize(schema, args, kwargs)
        out = convert(
            self.builder,
            converter,
            kind,
            schema.overload_name,
            names,
            values,
            _label(node),
            _loc(node),
        )
        _check_against_meta(node, out, self.binding)
        return out

    def run_graph(self, graph: Any, env: dict[Node, Any]) -> list[Any]:
        """Convert a graph's nodes in order; returns its output values."""
        for node in graph.nodes:
            if node.op == "call_function":
                env[node] = self.convert_node(node, env)
            elif node.op == "get_attr":
                env[node] = getattr(self.ep.graph_module, node.target)
            elif node.op == "output":
                return list(node.args[0])
        raise Error("the exported graph has no output node")

    def _cond(self, node: Node, pred: Any, true_gm: Any, false_gm: Any, operands: Any) -> Any:
        """torch.cond: a known predicate inlines its branch; a run-time one computes both
        branches (they are pure) and selects each output with relay.where."""

        def run(gm: Any) -> list[Any]:
            params = [n for n in gm.graph.nodes if n.op == "placeholder"]
            env = dict(zip(params, operands))
            return [_map(v, env) for v in self.run_graph(gm.graph, env)]

        if not has_ssa(pred):
            return run(true_gm if bool(pred) else false_gm)
        outs = [run(true_gm), run(false_gm)]
        c = Call(self.builder, "higher_order::cond", "", [], [], _label(node), _loc(node))
        keep = c.as_tensor(pred, np.bool_)
        return [c.emit(relay.WhereOp(keep, c.as_tensor(t), c.as_tensor(f))) for t, f in zip(*outs)]

    def build(self) -> tuple[ModuleOp, dict[str, Any]]:
        num_data = self.bind_inputs()
        self.check_supported()
        outputs = self._outputs(self.run_graph(self.graph, self.env))
        loc = NameLoc(StringAttr("output"), NoneAttr())
        module = build_main(self.builder, outputs, self.names, num_data, self.params, loc)
        return module, self.params

    def _outputs(self, values: list[Any]) -> list[Any]:
        specs = self.ep.graph_signature.output_specs
        kept = []
        for spec, value in zip(specs, values):
            if spec.kind != OutputKind.USER_OUTPUT:
                raise Error(
                    f"the program's output '{spec.arg.name}' is a {spec.kind.name} (state "
                    "mutation), which xrelay does not support: export the model in eval mode"
                )
            kept.extend(flatten_outputs(_map(value, self.env)))
        return kept


def _normalize(schema: Any, args: tuple, kwargs: dict) -> tuple[list[str], list[Any]]:
    """The schema's arguments in order, from positional args, kwargs and defaults."""
    names, values = [], []
    for i, a in enumerate(schema.arguments):
        names.append(a.name)
        if i < len(args) and not a.kwarg_only:
            values.append(args[i])
        elif a.name in kwargs:
            values.append(kwargs[a.name])
        elif a.has_default_value():
            values.append(a.default_value)
        else:
            values.append(None)
    return names, values


def _check_against_meta(node: Node, out: Any, binding: Mapping[str, int] | None = None) -> None:
    """Compare converted results with torch's fake tensors: any difference is a bug."""
    fake = node.meta.get("val")
    if fake is None:
        return
    pairs = (
        zip(out, fake)
        if isinstance(out, list | tuple) and isinstance(fake, list | tuple)
        else [(out, fake)]
    )
    for value, expected in pairs:
        if not isinstance(value, SSAValue) or not isinstance(expected, torch.Tensor):
            continue
        shape = tuple(_concrete(d, binding, f"PyTorch op {_label(node)}") for d in expected.shape)
        want = tensor_type(shape, np_dtype(expected.dtype))
        if value.type != want:
            raise Error(
                f"PyTorch op {_label(node)}: converted to {value.type} but torch computes {want} "
                "(a converter bug: please report it)"
            )


def from_exported_program(
    exported_program: ExportedProgram, keep_params_as_inputs: bool = True
) -> tuple[ModuleOp, dict[str, Any]]:
    """Import a `torch.export` program: `(module, params)`. See the module docstring. A
    PT2E-quantized program's dequantize -> op -> quantize groups stay as they are
    (`xrelay.from_exported_program` folds them into qnn ops)."""
    if not isinstance(exported_program, ExportedProgram):
        raise Error(
            f"from_exported_program expects a torch.export.ExportedProgram, got "
            f"{type(exported_program).__name__} (call torch.export.export(model, args) first)"
        )
    try:
        ep = exported_program.run_decompositions()
    except Exception as e:  # noqa: BLE001 - torch decomposition failures of any kind
        raise Error(f"decomposing the exported program to core ATen failed: {e}") from None
    from xrelay.frontends.pytorch import dynamic

    if dynamic.has_dynamic_inputs(ep):
        return dynamic.deferred_program(exported_program, ep, keep_params_as_inputs)
    return ProgramImporter(ep, keep_params_as_inputs).build()
