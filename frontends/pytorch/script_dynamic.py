"""TorchScript modules with dynamic dimensions: `from_pytorch(m, [("x", (None, 3, 224, 224))])`.

A dimension given as None, -1 or a name (`"batch"`) in `input_infos` is dynamic: a symbol
(the name given, else `<input>_<axis>`). The module is first imported as it is, its inputs
typed with the symbols: `x.size(d)` of a dynamic dimension is a 0-d int64 tensor computed at
run time (so `range(x.shape[0])` is a run-time trip count: frontends/pytorch/script_control.py),
and only the converters in RUNTIME_SHAPE_OPS, which read ranks and dtypes but no sizes, may
see a tensor of run-time shape. That module serves every size with one build.

Where that fails (another op meets such a tensor), the converters read static sizes, so the
module is imported as one `relay.deferred` node (source "torchscript") over @main's
arguments: the data inputs typed with symbols (the name given,
else `<input>_<axis>`), the parameters as usual. At run time the library binds the symbols
from the input shapes and the node is expanded: the script module is converted for those
sizes (`from_pytorch` with them) and its @main inlined in place of the node; each distinct
set of sizes compiles once.

The results' types come from two trial conversions at import (the sizes the module was
traced with, or 2 where it records none, then those plus one): a dimension equal in both is
static, one that follows a single input symbol is that symbol, any other is unknown (`?`).
The module itself stays in this process (`SCRIPTS`): a printed module parsed in another
process has the node but not the module, and expanding it there is an error saying so.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import numpy as np
import torch
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, NameLoc, NoneAttr, StringAttr
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xrelay.dialects.dims import make_tensor, shape_of, symbol, symbol_name, unknown
from xrelay.dialects.dtypes import tensor_type
from xrelay.dialects.relay.deferred import EXPANDERS, DeferredOp
from xrelay.errors import Error
from xrelay.frontends.pytorch.call import np_dtype
from xrelay.signature import NAME_ATTR, arg_attrs, main_function

SOURCE = "torchscript"
SCRIPTS: dict[str, tuple[Any, list[tuple[str, tuple[Any, ...], Any]], dict[str, Any]]] = {}

DynamicInfo = tuple[str, tuple[Any, ...], Any]  # (name, dims: ints and symbol names, dtype)

# Op kinds (functional, "aten::add" for add_ too) whose converters may see tensors whose
# shape is decided at run time: each reads only ranks and dtypes of its tensor arguments
# and builds relay ops whose shape rules take symbolic dimensions. Another converter given
# such a tensor is an error (the import is then deferred). Add a kind only after reading
# its converter: one that reads `c.shape()` or `.get_shape()` would see -1 for a dynamic
# dimension.
_ELEMENTWISE = (
    "add sub mul div rsub maximum minimum remainder fmod pow floor_divide "
    "eq ne lt le gt ge logical_and logical_or logical_xor logical_not bitwise_not "
    "__and__ __or__ __xor__ bitwise_and bitwise_or bitwise_xor where masked_fill "
    "exp log sqrt rsqrt reciprocal tanh sigmoid erf sin cos tan log1p log2 log10 expm1 "
    "neg abs sign relu floor ceil trunc "
    "to type_as float double long int bool clone contiguous detach dropout"
)
RUNTIME_SHAPE_OPS = frozenset(
    f"aten::{name}"
    for name in (*_ELEMENTWISE.split(), "sum", "mean", "prod", "amax", "amin", "select", "cat")
)


def is_dynamic_dim(d: Any) -> bool:
    return d is None or isinstance(d, str) or (isinstance(d, int) and d == -1)


def symbolic_dims(name: str, shape: tuple[Any, ...]) -> tuple[Any, ...]:
    """The shape with its dynamic entries made symbol names (the name given, or
    `<input>_<axis>`)."""
    return tuple(
        symbol_name(d if isinstance(d, str) else f"{name}_{axis}") if is_dynamic_dim(d) else d
        for axis, d in enumerate(shape)
    )


def _traced_sizes(script_module: Any) -> list[list[int | None] | None]:
    """The sizes each graph input was traced with (None where the graph records none)."""
    inputs = list(script_module.graph.inputs())
    if isinstance(script_module, torch.jit.ScriptModule):
        inputs = inputs[1:]
    out = []
    for value in inputs:
        t = value.type()
        sizes = t.sizes() if isinstance(t, torch._C.TensorType) else None
        out.append(list(sizes) if sizes is not None else None)
    return out


def _concrete(infos: list[DynamicInfo], binding: dict[str, int]) -> list[tuple[str, Any]]:
    return [
        (name, ([binding[d] if isinstance(d, str) else d for d in dims], dtype))
        for name, dims, dtype in infos
    ]


def _probe_binding(script_module: Any, infos: list[DynamicInfo]) -> dict[str, int]:
    traced = _traced_sizes(script_module)
    binding: dict[str, int] = {}
    for (_, dims, _), sizes in zip(infos, traced):
        for axis, d in enumerate(dims):
            if isinstance(d, str):
                size = sizes[axis] if sizes and axis < len(sizes) else None
                binding.setdefault(d, size if isinstance(size, int) and size > 0 else 2)
    return binding


def deferred_script(
    script_module: Any, infos: list[DynamicInfo], options: dict[str, Any]
) -> tuple[ModuleOp, dict[str, Any]]:
    """@main of one `relay.deferred` node that converts `script_module` at run time."""
    from xrelay.frontends.pytorch.torchscript import from_pytorch

    first = _probe_binding(script_module, infos)
    try:
        probe, params = from_pytorch(script_module, _concrete(infos, first), **options)
    except Error as e:
        raise Error(
            f"converting the module for the sizes {first} (to learn its results): {e}"
        ) from None
    second_binding = {name: size + 1 for name, size in first.items()}
    try:
        second, _ = from_pytorch(script_module, _concrete(infos, second_binding), **options)
        second_types = [t for t in main_function(second).function_type.outputs.data]
    except Error:
        second_types = None  # the module takes no other sizes than these: results unknown
    fn_probe = main_function(probe)
    block = Block()
    names = [name for name, _, _ in infos]
    for name, dims, dtype in infos:
        elem = tensor_type((), np_dtype(dtype)).element_type
        shape = [symbol(d) if isinstance(d, str) else d for d in dims]
        block.insert_arg(make_tensor(elem, shape), len(block.args))
    num_data = len(names)
    param_names = [
        entry.data[NAME_ATTR].data
        for entry in fn_probe.arg_attrs.data[num_data:]  # type: ignore[union-attr]
    ]
    for arg in fn_probe.args[num_data:]:
        block.insert_arg(arg.type, len(block.args))
    names += param_names
    result_types = []
    for i, t in enumerate(fn_probe.function_type.outputs.data):
        other = second_types[i] if second_types is not None else None
        dims = []
        for axis, size in enumerate(shape_of(t)):
            later = shape_of(other)[axis] if other is not None else None
            if not isinstance(size, int) or not isinstance(later, int):
                dims.append(unknown())  # decided at run time (a run-time if or loop)
                continue
            if later == size:
                dims.append(size)
                continue
            followed = [
                s
                for s in first
                if later is not None and (first[s], second_binding[s]) == (size, later)
            ]
            dims.append(symbol(followed[0]) if len(followed) == 1 else unknown())
        result_types.append(make_tensor(t.element_type, dims))
    key = uuid.uuid4().hex
    SCRIPTS[key] = (script_module, infos, options)
    payload = json.dumps({"key": key, "names": names}).encode()
    op = DeferredOp(SOURCE, "script", payload, list(block.args), [], result_types)
    op.location = NameLoc(StringAttr("script_module"), NoneAttr())
    block.add_op(op)
    block.add_op(func.ReturnOp(*op.outputs))
    for arg, name in zip(block.args, names):
        arg.name_hint = symbol_name(name)
    fn = func.FuncOp(
        "main",
        FunctionType.from_lists([a.type for a in block.args], result_types),
        Region(block),
        arg_attrs=arg_attrs(names, num_data),
    )
    return ModuleOp([fn]), params


def expand(op: DeferredOp, values: dict[int, np.ndarray]) -> list[SSAValue]:
    """Convert the script module for the sizes of `op`'s operands and inline its @main."""
    from xrelay.frontends.pytorch.torchscript import from_pytorch

    spec = json.loads(op.node_bytes.decode())
    if spec["key"] not in SCRIPTS:
        raise Error(
            "this module's TorchScript module lives in the process that imported it: import "
            "it again here (xrelay.from_pytorch)"
        )
    script_module, infos, options = SCRIPTS[spec["key"]]
    operands = dict(zip(spec["names"], op.inputs))
    concrete = [(name, (list(operands[name].type.get_shape()), dtype)) for name, _, dtype in infos]
    module, _ = from_pytorch(script_module, concrete, **options)
    fn = main_function(module)
    body = fn.body.block
    for arg, entry in zip(body.args, fn.arg_attrs.data):  # type: ignore[union-attr]
        name = entry.data[NAME_ATTR].data
        if name not in operands:
            raise Error(f"the module converted for these sizes reads '{name}', which @main lacks")
        arg.replace_all_uses_with(operands[name])
    ret = body.last_op
    assert isinstance(ret, func.ReturnOp)
    results = list(ret.arguments)
    Rewriter.erase_op(ret)
    for new in list(body.ops):
        new.detach()
        Rewriter.insert_op(new, InsertPoint.before(op))
    return results


EXPANDERS[SOURCE] = expand
