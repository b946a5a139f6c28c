"""torch.export programs with dynamic dimensions (`torch.export.Dim`).

The converters read static sizes, so a program whose inputs have dynamic dimensions is
imported as one `relay.deferred` node (dialects/relay/deferred.py, source
"torch.export") over @main's arguments: the data inputs typed with symbols named after the
user's Dims (`batch`, `seq`; `<input>_<axis>` where torch kept no name), their ranges on
@main (`xrelay.dim_ranges`, from the program's range constraints), the parameters as
usual, and results typed with the same symbols (derived sizes, `batch*seq`, as
expressions). At run time the library binds the symbols from the input shapes and the
node is expanded: the exported program is converted for those sizes (every SymInt
evaluated under them; each converted op is still checked against torch's own shapes) and
compiled; each distinct set of sizes compiles once.

The program itself stays in this process (`PROGRAMS`, keyed by the node's payload): a
module printed and parsed in another process has the node but not the program, and
expanding it there is an error saying so.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, NameLoc, NoneAttr, StringAttr
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xrelay.dialects.dims import make_tensor, normalize, symbol, symbol_name
from xrelay.dialects.dtypes import tensor_type
from xrelay.dialects.relay.deferred import EXPANDERS, DeferredOp
from xrelay.errors import Error
from xrelay.frontends.pytorch.call import np_dtype, to_numpy
from xrelay.signature import DIM_RANGES_ATTR, arg_attrs, dim_ranges_attr

SOURCE = "torch.export"
PROGRAMS: dict[str, tuple[ExportedProgram, bool]] = {}
UNBOUNDED = 2**62


def _user_inputs(ep: ExportedProgram) -> list[Any]:
    specs = {s.arg.name: s for s in ep.graph_signature.input_specs}
    return [
        n
        for n in ep.graph.nodes
        if n.op == "placeholder" and specs[n.name].kind == InputKind.USER_INPUT
    ]


def has_dynamic_inputs(ep: ExportedProgram) -> bool:
    for node in _user_inputs(ep):
        fake = node.meta.get("val")
        if isinstance(fake, torch.Tensor) and any(not isinstance(d, int) for d in fake.shape):
            return True
    return False


def _dim_names(original: ExportedProgram, ep: ExportedProgram) -> dict[str, str]:
    """torch symbol -> the user's Dim name (made an identifier), else `<input>_<axis>`."""
    debug: dict[str, str] = {}
    for node in _user_inputs(original):
        fake = node.meta.get("val")
        env = getattr(getattr(fake, "fake_mode", None), "shape_env", None)
        if env is None:
            continue
        sources = getattr(env, "var_to_sources", {})
        names = getattr(env, "source_name_to_debug_name", {})
        for sym, srcs in sources.items():
            for src in srcs:
                if src.name in names:
                    debug.setdefault(str(sym), symbol_name(names[src.name]))
    out: dict[str, str] = {}
    for node in _user_inputs(ep):
        fake = node.meta.get("val")
        for axis, d in enumerate(getattr(fake, "shape", ())):
            if isinstance(d, int):
                continue
            for s in d.node.expr.free_symbols:
                out.setdefault(str(s), debug.get(str(s), symbol_name(f"{node.name}_{axis}")))
    return out


def _symbolic(shape: Sequence[Any], names: dict[str, str]) -> list[Any]:
    dims = []
    for d in shape:
        if isinstance(d, int):
            dims.append(d)
            continue
        expr = d.node.expr
        missing = [str(s) for s in expr.free_symbols if str(s) not in names]
        if missing:
            raise Error(f"a size depends on {missing}, which no input dimension gives")
        dims.append(normalize(expr.subs({s: symbol(names[str(s)]) for s in expr.free_symbols})))
    return dims


def deferred_program(
    original: ExportedProgram, ep: ExportedProgram, keep_params: bool
) -> tuple[ModuleOp, dict[str, Any]]:
    """@main of one `relay.deferred` node over the (decomposed) program `ep`."""
    from xrelay.frontends.pytorch.convert import is_index_table

    names = _dim_names(original, ep)
    specs = {s.arg.name: s for s in ep.graph_signature.input_specs}
    block = Block()
    arg_names: list[str] = []
    params: dict[str, np.ndarray] = {}
    for node in [n for n in ep.graph.nodes if n.op == "placeholder"]:
        spec = specs[node.name]
        fake = node.meta.get("val")
        if spec.kind == InputKind.USER_INPUT:
            if not isinstance(fake, torch.Tensor):
                raise Error(f"input '{node.name}' is a {type(fake).__name__}; only tensors")
            block.insert_arg(
                make_tensor(
                    tensor_type((), np_dtype(fake.dtype)).element_type, _symbolic(fake.shape, names)
                ),
                len(block.args),
            )
            arg_names.append(node.name)
    num_data = len(arg_names)
    for node in [n for n in ep.graph.nodes if n.op == "placeholder"]:
        spec = specs[node.name]
        if spec.kind not in (InputKind.PARAMETER, InputKind.BUFFER):
            continue
        tensor = (
            ep.state_dict.get(spec.target)
            if spec.target in ep.state_dict
            else ep.constants[spec.target]
        ).detach()
        if not keep_params or is_index_table(tensor):
            continue  # the program holds it; the conversion embeds it
        block.insert_arg(tensor_type(tuple(tensor.shape), np_dtype(tensor.dtype)), len(block.args))
        arg_names.append(spec.target)
        params[spec.target] = to_numpy(tensor)
    outputs = next(n for n in ep.graph.nodes if n.op == "output").args[0]
    result_types = []
    for i, value in enumerate(outputs):
        fake = value.meta.get("val") if hasattr(value, "meta") else None
        if not isinstance(fake, torch.Tensor):
            raise Error(f"output {i} of the program is not a tensor")
        elem = tensor_type((), np_dtype(fake.dtype)).element_type
        result_types.append(make_tensor(elem, _symbolic(fake.shape, names)))
    key = uuid.uuid4().hex
    PROGRAMS[key] = (ep, keep_params)
    op = DeferredOp(SOURCE, "program", key.encode(), list(block.args), [], result_types)
    op.location = NameLoc(StringAttr("exported_program"), NoneAttr())
    block.add_op(op)
    block.add_op(func.ReturnOp(*op.outputs))
    for arg, name in zip(block.args, arg_names):
        arg.name_hint = symbol_name(name)
    fn = func.FuncOp(
        "main",
        FunctionType.from_lists([a.type for a in block.args], result_types),
        Region(block),
        arg_attrs=arg_attrs(arg_names, num_data),
    )
    ranges = {}
    for sym, bound in ep.range_constraints.items():
        if str(sym) not in names:
            continue
        lo = max(int(bound.lower), 1) if bound.lower.is_Integer else 1
        hi = int(bound.upper) if bound.upper.is_Integer else UNBOUNDED  # int_oo: none
        if (lo, hi) != (1, UNBOUNDED):
            ranges[names[str(sym)]] = (lo, hi)
    if ranges:
        fn.attributes[DIM_RANGES_ATTR] = dim_ranges_attr(ranges)
    return ModuleOp([fn]), params


def expand(op: DeferredOp, values: dict[int, np.ndarray]) -> list[SSAValue]:
    """Convert the program for the sizes of `op`'s operands (static by now)."""
    from xrelay.frontends.pytorch.exported import ProgramImporter

    key = op.node_bytes.decode()
    if key not in PROGRAMS:
        raise Error(
            "this module's exported program lives in the process that imported it: import "
            "it again here (xrelay.from_exported_program)"
        )
    ep, keep_params = PROGRAMS[key]
    binding: dict[str, int] = {}
    user = _user_inputs(ep)
    for node, operand in zip(user, op.inputs):
        fake = node.meta.get("val")
        for axis, (d, size) in enumerate(zip(fake.shape, operand.type.get_shape())):
            if not isinstance(d, int) and d.node.expr.is_Symbol:
                binding[str(d.node.expr)] = size
    importer = ProgramImporter(ep, keep_params, binding, list(op.inputs))
    importer.bind_inputs()
    outputs = importer._outputs(importer.run_graph(importer.graph, importer.env))
    results = []
    for value in outputs:
        if not isinstance(value, SSAValue):
            value = importer.builder.constant(value, op.location)
        results.append(value)
    for new in list(importer.builder.block.ops):
        new.detach()
        Rewriter.insert_op(new, InsertPoint.before(op))
    return results


EXPANDERS[SOURCE] = expand
