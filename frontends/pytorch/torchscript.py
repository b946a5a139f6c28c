"""TorchScript (torch.jit.trace / torch.jit.script) -> a builtin.module with `func.func @main`
of relay ops, plus params.

Imports: torch, the shared op table and binder. Assumes: the shapes in `input_infos` are
static, or dynamic (None, -1 or a name: frontends/pytorch/script_dynamic.py). Control flow
whose condition and trip count are known at import time is inlined or unrolled; the rest
becomes `relay.if` / `relay.loop` (frontends/pytorch/script_control.py). Produces: `@main(data inputs in input_infos order..., parameters named by their
state_dict key...)`, ops located by a NameLoc "kind_n" (or "module.path/kind_n" with
`preserve_pytorch_scopes`).

The walk: copy the graph and inline calls; collect every op kind that runs at run time and has
no converter (inside prim::If / prim::Loop blocks too) and report them all at once; then
convert node by node. Values known at import time (constants, attributes, sizes of static
shapes, arithmetic on them) are evaluated with torch, so shape arithmetic never reaches the IR.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import torch
from xdsl.dialects.builtin import ModuleOp, NameLoc, NoneAttr, StringAttr
from xdsl.ir import Block, SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dims import is_dynamic, make_tensor, shape_of, symbol, symbols_of
from xrelay.dialects.dtypes import tensor_type
from xrelay.dialects.relay.base import fmt_type
from xrelay.errors import Error
from xrelay.frontends.pytorch.call import (
    GraphBuilder,
    dtype_code,
    has_ssa,
    np_dtype,
    to_numpy,
    torch_dtype,
    torch_dtype_of,
)
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
from xrelay.frontends.pytorch.quantized import quantized_converter
from xrelay.frontends.pytorch.registry import Converter, functional_kind, is_inplace, lookup
from xrelay.frontends.pytorch.script_control import (
    At,
    is_scalar_conversion,
    runtime_if,
    runtime_loop,
    scalar_of,
)
from xrelay.frontends.pytorch.script_dynamic import (
    RUNTIME_SHAPE_OPS,
    deferred_script,
    is_dynamic_dim,
    symbolic_dims,
)

# prim ops the walk itself handles (containers, attributes, constants, control flow).
PRIM_HANDLED = {
    "prim::Constant",
    "prim::GetAttr",
    "prim::ListConstruct",
    "prim::TupleConstruct",
    "prim::DictConstruct",
    "prim::ListUnpack",
    "prim::TupleUnpack",
    "prim::TupleIndex",
    "prim::NumToTensor",
    "prim::If",
    "prim::Loop",
    "prim::dtype",
    "prim::device",
    "prim::unchecked_cast",
    "aten::__getitem__",
    "aten::len",
    "aten::warn",
    "aten::append",
    "aten::__is__",
    "aten::__isnot__",
    "aten::__not__",
    "aten::list",
    # Python numbers of one-element tensors (0-d tensors when computed at run time)
    "aten::Bool",
    "aten::Int",
    "aten::Float",
    "aten::item",
    "aten::ScalarImplicit",
}
# Ops whose result aliases their first argument: an in-place op on such a value would also
# change the tensor it views, which a functional rewrite cannot follow.
VIEW_KINDS = {
    "aten::view",
    "aten::reshape",
    "aten::select",
    "aten::slice",
    "aten::transpose",
    "aten::permute",
    "aten::unsqueeze",
    "aten::squeeze",
    "aten::expand",
    "aten::narrow",
    "aten::t",
    "aten::flatten",
    "aten::unflatten",
    "aten::as_strided",
    "aten::detach",
    "aten::__getitem__",
}
MAX_UNROLL = 4096

CustomConvertMap = Mapping[str, Callable[..., Any]]


class ModuleRef:
    """A submodule reached by prim::GetAttr: its state_dict path and the module object."""

    def __init__(self, path: str, module: Any) -> None:
        self.path = path
        self.module = module


def _scope_path(node: torch._C.Node) -> str:
    """The module path of a node: '__module.a/__module.a.b' and 'M::/T::a/T::b' -> 'a.b'."""
    segments = [s for s in node.scopeName().split("/") if s]
    if not segments:
        return ""
    last = segments[-1]
    if last.startswith("__module."):
        return last[len("__module.") :]
    return ".".join(p for p in (s.rsplit("::", 1)[-1] for s in segments) if p)


def _schema(node: torch._C.Node) -> Any:
    text = node.schema()
    return None if text == "(no schema)" else torch._C.parse_schema(text)


def _constant(node: torch._C.Node) -> Any:
    out = node.output()
    if out.type().kind() == "NoneType":
        return None
    return out.toIValue()


def _resolve_overload(schema: Any) -> Any:
    ns, name = schema.name.split("::")
    packet = getattr(getattr(torch.ops, ns), name)
    return getattr(packet, schema.overload_name or "default", packet)


class ScriptImporter:
    def __init__(
        self,
        module: Any,
        graph: torch._C.Graph,
        custom: CustomConvertMap,
        parser_friendly: bool,
        preserve_scopes: bool,
    ) -> None:
        self.module = module
        self.graph = graph
        self.custom = dict(custom)
        self.parser_friendly = parser_friendly
        self.preserve_scopes = preserve_scopes
        self.builder = GraphBuilder()
        self.env: dict[int, Any] = {}
        self.producer: dict[int, str] = {}
        self.params: dict[str, Any] = {}
        self.param_args: dict[str, SSAValue] = {}
        self.param_tensors: dict[str, torch.Tensor] = {}
        self.used_params: set[str] = set()
        self.counts: Counter[str] = Counter()
        self.symbols: set[str] = set()  # the inputs' dimension symbols and the fresh ones
        # while converting a region: the values defined in it (an in-place update or an
        # append must not reach a value from outside it)
        self.local: set[int] | None = None

    # --- inputs --------------------------------------------------------------------------

    def bind_inputs(self, infos: list[tuple[str, tuple[int, ...], Any]]) -> list[str]:
        inputs = list(self.graph.inputs())
        if self.module is not None:
            self.env[inputs[0].unique()] = ModuleRef("", self.module)
            inputs = inputs[1:]
        if len(infos) != len(inputs):
            names = [v.debugName() for v in inputs]
            raise Error(
                f"input_infos gives {len(infos)} input(s) but the graph takes {len(inputs)}: {names}"
            )
        for value, (name, shape, dtype) in zip(inputs, infos):
            _check_input(value, name, shape, dtype)
            elem = tensor_type((), np_dtype(dtype)).element_type
            t = make_tensor(elem, [symbol(d) if isinstance(d, str) else d for d in shape])
            self.symbols |= symbols_of(t)
            arg = self.builder.block.insert_arg(t, len(self.builder.block.args))
            self.env[value.unique()] = arg
        return [name for name, _, _ in infos]

    def fresh_symbol(self, name: str) -> str:
        """`name`, or `name_<k>`, not yet a symbol of this import (then taken)."""
        chosen, k = name, 1
        while chosen in self.symbols:
            chosen, k = f"{name}_{k}", k + 1
        self.symbols.add(chosen)
        return chosen

    def _key(self, path: str) -> str:
        return path.replace(".", "_") if self.parser_friendly else path

    def _attribute(self, owner: ModuleRef, name: str, create: bool = True) -> Any:
        """A submodule (ModuleRef), a parameter (its SSA argument; its key when not
        `create`), an index-table buffer (a tensor) or another attribute value."""
        path = f"{owner.path}.{name}" if owner.path else name
        obj = getattr(owner.module, name)
        if isinstance(obj, torch.jit.ScriptModule | torch.nn.Module):
            return ModuleRef(path, obj)
        if not isinstance(obj, torch.Tensor):
            return obj
        tensor = obj.detach()
        if is_index_table(tensor):
            return tensor
        key = self._key(path)
        if not create:
            self.param_tensors[key] = tensor
            return key
        return self.param_args[key]

    # --- analysis ------------------------------------------------------------------------

    def check_supported(self) -> None:
        """Report every run-time op without a converter, in all blocks, at once."""
        runtime = {i for i, v in self.env.items() if isinstance(v, SSAValue)}
        missing: Counter[str] = Counter()
        modules = {i: v for i, v in self.env.items() if isinstance(v, ModuleRef)}
        self._scan(self.graph.nodes(), runtime, missing, modules)
        raise_missing(missing, "TorchScript")
        self._bind_params()

    def _bind_params(self) -> None:
        """Parameter arguments in state_dict order (then any others in use order)."""
        order = list(self.module.state_dict()) if self.module is not None else []
        rank = {self._key(k): i for i, k in enumerate(order)}
        for key in sorted(self.used_params, key=lambda k: rank.get(k, len(rank))):
            tensor = self.param_tensors[key]
            t = tensor_type(tuple(tensor.shape), np_dtype(tensor.dtype))
            self.param_args[key] = self.builder.block.insert_arg(t, len(self.builder.block.args))
            self.params[key] = to_numpy(tensor)

    def _scan_attribute(self, node: torch._C.Node, modules: dict[int, ModuleRef]) -> bool:
        """Whether a prim::GetAttr gives a parameter (a run-time value); records submodules
        and the parameters used."""
        owner = modules.get(next(node.inputs()).unique())
        if owner is None:
            return False
        value = self._attribute(owner, node.s("name"), create=False)
        if isinstance(value, ModuleRef):
            modules[node.output().unique()] = value
        if isinstance(value, str):
            self.used_params.add(value)
            return True
        return False

    def _scan(
        self, nodes: Any, runtime: set[int], missing: Counter[str], modules: dict[int, Any]
    ) -> None:
        for node in nodes:
            kind = node.kind()
            ids = [v.unique() for v in node.inputs()]
            is_runtime = any(i in runtime for i in ids)
            if kind == "prim::GetAttr":
                is_runtime = self._scan_attribute(node, modules)
            if kind in SHAPE_ONLY or kind in ("prim::dtype", "prim::device", "aten::len"):
                is_runtime = False
            if is_runtime:
                runtime.update(o.unique() for o in node.outputs())
                known = kind in PRIM_HANDLED or kind in self.custom or lookup(kind) is not None
                if not known:
                    missing[kind] += 1
            for block in node.blocks():
                if is_runtime:
                    runtime.update(v.unique() for v in block.inputs())
                self._scan(block.nodes(), runtime, missing, modules)
                if any(v.unique() in runtime for v in block.outputs()):
                    runtime.update(o.unique() for o in node.outputs())

    # --- conversion ----------------------------------------------------------------------

    def _label(self, node: torch._C.Node) -> str:
        scope = _scope_path(node)
        where = f", in '{scope}'" if scope else ""
        return f"'{node.kind()}' (#{self.counts[node.kind()]}{where})"

    def _loc(self, node: torch._C.Node) -> NameLoc:
        name = f"{node.kind()}_{self.counts[node.kind()]}"
        scope = _scope_path(node)
        if self.preserve_scopes and scope:
            name = f"{scope}/{name}"
        return NameLoc(StringAttr(name), NoneAttr())

    def get(self, value: torch._C.Value) -> Any:
        return self.env[value.unique()]

    @contextmanager
    def in_block(self, block: Block) -> Iterator[None]:
        """Emit into `block` (a region's) for the duration."""
        saved, self.builder.block = self.builder.block, block
        try:
            yield
        finally:
            self.builder.block = saved

    def convert_region(
        self, body: torch._C.Block, block: Block, bindings: dict[int, Any]
    ) -> list[Any]:
        """Convert the nodes of `body` into `block` (a branch or loop body of a `relay.if` or
        `relay.loop`), its inputs bound by `bindings` (value id -> value); the nodes read
        outer values directly. Returns the outputs as converted: SSA values (of `block` or
        from outside) or values known at import, which the caller materializes in `block`.
        What the region defines (and any constant it makes) stays in it."""
        saved = (self.env, self.local)
        self.env, self.local = {**self.env, **bindings}, set(bindings)
        try:
            with self.in_block(block):
                self.run_block(body.nodes())
            return [self.get(v) for v in body.outputs()]
        finally:
            self.env, self.local = saved

    def _check_local(self, node: torch._C.Node, what: str) -> None:
        """Inside a region, `node` may not change a value defined outside it."""
        target = next(node.inputs()).unique()
        if self.local is not None and target not in self.local:
            raise Error(
                f"PyTorch op {self._label(node)}: unsupported {what} of a value defined "
                "outside a run-time if or loop (assign the result instead)"
            )

    def run_block(self, nodes: Any) -> None:
        for node in nodes:
            self.counts[node.kind()] += 1
            outs = list(node.outputs())
            if self.local is not None:
                self.local.update(out.unique() for out in outs)
            results = self.convert_node(node)
            if len(outs) == 1:
                results = [results]
            elif not isinstance(results, list | tuple) or len(results) != len(outs):
                raise Error(f"PyTorch op {self._label(node)}: expected {len(outs)} results")
            for out, result in zip(outs, results):
                self.env[out.unique()] = result
                self.producer[out.unique()] = node.kind()

    def convert_node(self, node: torch._C.Node) -> Any:
        kind = node.kind()
        inputs = [self.get(v) for v in node.inputs()]
        prim = self._prim(node, kind, inputs)
        if prim is not _NOT_PRIM:
            return prim
        schema = _schema(node)
        if not has_ssa(inputs) or kind in SHAPE_ONLY:
            return self._fold(node, schema, inputs)
        if functional_kind(kind) not in RUNTIME_SHAPE_OPS:
            self._check_static(node, inputs)
        converter: Converter | None = (
            self.custom.get(kind) or quantized_converter(self.builder, kind, inputs) or lookup(kind)
        )
        assert converter is not None  # check_supported ran first
        if is_inplace(kind) and self.producer.get(next(node.inputs()).unique()) in VIEW_KINDS:
            raise Error(f"PyTorch op {self._label(node)}: unsupported in-place update of a view")
        if is_inplace(kind):
            self._check_local(node, "in-place update")
        names = [a.name for a in schema.arguments] if schema is not None else []
        names += [f"arg{i}" for i in range(len(names), len(inputs))]
        overload = schema.overload_name if schema is not None else ""
        out = convert(
            self.builder,
            converter,
            functional_kind(kind),
            overload,
            names,
            inputs,
            self._label(node),
            self._loc(node),
        )
        if is_inplace(kind):
            self.env[next(node.inputs()).unique()] = out
        return out

    def _check_static(self, node: torch._C.Node, inputs: list[Any]) -> None:
        """Converters outside RUNTIME_SHAPE_OPS read static sizes: a tensor whose shape is
        decided at run time (a dynamic input, a run-time if or loop's result) is an error."""
        for value in _ssa_values(inputs):
            if is_dynamic(value.type):
                raise Error(
                    f"PyTorch op {self._label(node)}: unsupported on a tensor whose shape is "
                    f"decided at run time ({fmt_type(value.type)})"
                )

    def _fold(self, node: torch._C.Node, schema: Any, inputs: list[Any]) -> Any:
        if node.kind() in SHAPE_ONLY:
            self._check_static(node, inputs)
        if schema is None:
            raise Error(f"PyTorch op {self._label(node)}: no schema to evaluate it with")
        op = _resolve_overload(schema)
        if is_nondeterministic(op):
            raise Error(f"PyTorch op {self._label(node)}: random ops are not supported")
        args, kwargs = [], {}
        for a, value in zip(schema.arguments, shape_proxy(inputs)):
            if is_inplace(node.kind()) and isinstance(value, torch.Tensor) and not args:
                value = value.clone()  # never mutate the module's own tensors
            if a.kwarg_only:
                kwargs[a.name] = value
            else:
                args.append(value)
        return fold(self._label(node), op, args, kwargs)

    def _prim(self, node: torch._C.Node, kind: str, inputs: list[Any]) -> Any:
        if kind == "prim::Constant":
            return _constant(node)
        if kind == "prim::GetAttr":
            owner = inputs[0]
            if not isinstance(owner, ModuleRef):
                raise Error(f"PyTorch op {self._label(node)}: attribute of a non-module value")
            return self._attribute(owner, node.s("name"))
        if kind == "prim::ListConstruct":
            return list(inputs)
        if kind == "prim::TupleConstruct":
            return tuple(inputs)
        if kind == "prim::DictConstruct":
            return dict(zip(inputs[0::2], inputs[1::2]))
        if kind in ("prim::ListUnpack", "prim::TupleUnpack"):
            return list(inputs[0])
        if kind == "prim::TupleIndex" or kind == "aten::__getitem__":
            return inputs[0][inputs[1]]
        if kind == "aten::len" and isinstance(inputs[0], SSAValue):
            return self._sizes(node, inputs[0], 0)
        if kind == "aten::len":
            return len(inputs[0])
        if kind == "aten::append":
            self._check_local(node, "append")
            inputs[0].append(inputs[1])  # TorchScript lists are mutable and shared
            return inputs[0]
        if kind == "aten::list":
            return list(inputs[0])
        if kind in ("aten::__is__", "aten::__isnot__"):
            a, b = inputs
            same = (a is None and b is None) if a is None or b is None else a is b
            return same if kind == "aten::__is__" else not same
        if kind == "aten::__not__" and not has_ssa(inputs[0]):
            return not inputs[0]
        if kind == "aten::__not__":
            at = At(self, self._loc(node))
            truth = scalar_of(at, inputs[0], "aten::Bool", self._label(node))
            return at.emit(relay.LogicalNotOp(truth))
        if is_scalar_conversion(kind) and isinstance(inputs[0], SSAValue):
            return scalar_of(At(self, self._loc(node)), inputs[0], kind, self._label(node))
        if kind in ("aten::size", "aten::sym_size") and _dynamic_tensor(inputs[0]):
            return self._sizes(node, inputs[0], inputs[1] if len(inputs) > 1 else None)
        if kind == "aten::dim" and _dynamic_tensor(inputs[0]):
            return inputs[0].type.get_num_dims()
        if kind == "prim::NumToTensor":
            return inputs[0] if isinstance(inputs[0], SSAValue) else torch.tensor(inputs[0])
        if kind == "prim::unchecked_cast":
            return inputs[0]
        if kind == "prim::dtype":
            return _dtype_code(inputs[0])
        if kind == "prim::device":
            return torch.device("cpu")
        if kind == "aten::warn":
            return None
        if kind == "prim::RaiseException" and self.local is not None:
            raise Error(
                f"PyTorch op {self._label(node)}: unsupported exception raised inside a run-time "
                "if or loop (a check of the data)"
            )
        if kind == "prim::If":
            return self._if(node, inputs[0])
        if kind == "prim::Loop":
            return self._loop(node, inputs)
        return _NOT_PRIM

    def _sizes(self, node: torch._C.Node, x: SSAValue, dim: Any) -> Any:
        """`x.size()` (or `x.size(dim)` when `dim` is not None) of a tensor whose shape may
        hold dimensions decided at run time: those are 0-d int64 tensors, read from `x`
        itself (relay.shape_of), so whatever computes them reads `x`."""
        if has_ssa(dim):
            raise Error(f"PyTorch op {self._label(node)}: the dimension must be known at import")
        dims = list(shape_of(x.type))
        axes = list(range(len(dims)))
        if dim is not None:
            if not -len(dims) <= dim < len(dims):
                raise Error(f"PyTorch op {self._label(node)}: dimension {dim} is out of range")
            axes = [dim % len(dims)]
        at = At(self, self._loc(node))
        shape = None
        sizes: list[Any] = []
        for axis in axes:
            if isinstance(dims[axis], int):
                sizes.append(dims[axis])
                continue
            shape = shape if shape is not None else at.emit(relay.ShapeOfOp(x))
            one = at.emit(relay.StridedSliceOp(shape, begin=[axis], end=[axis + 1], axes=[0]))
            sizes.append(at.emit(relay.ReshapeOp(one, newshape=[])))
        return sizes[0] if dim is not None else sizes

    def _if(self, node: torch._C.Node, condition: Any) -> list[Any]:
        if has_ssa(condition):
            results = runtime_if(self, node, condition)
            return results if len(results) != 1 else results[0]
        then_block, else_block = list(node.blocks())
        block = then_block if bool(condition) else else_block
        self.run_block(block.nodes())
        results = [self.get(v) for v in block.outputs()]
        return results if len(results) != 1 else results[0]

    def _loop(self, node: torch._C.Node, inputs: list[Any]) -> Any:
        """Unrolled while the trip count and every condition are known at import (at most
        MAX_UNROLL iterations), else a `relay.loop` (what an attempt emitted is dropped)."""
        trips, condition, carried = inputs[0], inputs[1], list(inputs[2:])
        if not has_ssa(trips) and not has_ssa(condition):
            mark = self.builder.block.last_op
            saved = (dict(self.env), Counter(self.counts), set(self.local or ()))
            try:
                return self._unrolled(node, int(trips), condition, carried)
            except _NotUnrolled:
                _drop_after(self.builder.block, mark)
                self.env, self.counts = saved[0], saved[1]
                self.local = saved[2] if self.local is not None else None
        results = runtime_loop(self, node, trips, condition, carried)
        return results if len(results) != 1 else results[0]

    def _unrolled(self, node: torch._C.Node, trips: int, condition: Any, carried: list[Any]) -> Any:
        (body,) = list(node.blocks())
        block_inputs = list(body.inputs())
        if self.local is not None:
            self.local.update(v.unique() for v in block_inputs)
        for i in range(min(trips, MAX_UNROLL + 1)):
            if not bool(condition):
                break
            if i == MAX_UNROLL:
                raise _NotUnrolled
            self.env[block_inputs[0].unique()] = i
            for value, item in zip(block_inputs[1:], carried):
                self.env[value.unique()] = item
            self.run_block(body.nodes())
            outs = [self.get(v) for v in body.outputs()]
            condition, carried = outs[0], outs[1:]
            if has_ssa(condition):
                raise _NotUnrolled
        return carried if len(carried) != 1 else carried[0]


_NOT_PRIM = object()


class _NotUnrolled(Exception):
    """A loop's condition turned out to be computed at run time, or it runs too long."""


def _drop_after(block: Block, mark: Any) -> None:
    """Erase the ops of `block` after `mark` (all of them when `mark` is None)."""
    ops = list(block.ops)
    start = 0 if mark is None else ops.index(mark) + 1
    for op in reversed(ops[start:]):
        op.detach()
        op.erase(safe_erase=False)


def _ssa_values(value: Any) -> Iterator[SSAValue]:
    if isinstance(value, SSAValue):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _ssa_values(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _ssa_values(item)


def _dynamic_tensor(value: Any) -> bool:
    return isinstance(value, SSAValue) and is_dynamic(value.type)


def _dtype_code(value: Any) -> int:
    return dtype_code(torch_dtype_of(value) if isinstance(value, SSAValue) else value.dtype)


def _check_input(value: torch._C.Value, name: str, shape: tuple[int, ...], dtype: Any) -> None:
    """The graph's own record of an input (traced rank and dtype) must fit input_infos."""
    t = value.type()
    if not isinstance(t, torch._C.TensorType):
        raise Error(
            f"graph input '{value.debugName()}' ('{name}') is a {t}; only tensor inputs are supported"
        )
    rank = t.dim()
    if rank is not None and rank != len(shape):
        raise Error(
            f"input '{name}': input_infos gives rank {len(shape)} {list(shape)} but the graph "
            f"was captured with rank {rank} {t.sizes()}"
        )
    traced = t.dtype()
    if traced is not None and traced != torch_dtype(dtype):
        raise Error(
            f"input '{name}': input_infos gives {torch_dtype(dtype)} but the graph was captured "
            f"with {traced}"
        )


def _parse_input_infos(infos: Any, default_dtype: str) -> list[tuple[str, tuple[Any, ...], Any]]:
    """[(name, shape)] or [(name, (shape, dtype))] -> [(name, shape, dtype)], validated."""
    if not isinstance(infos, list | tuple):
        raise Error("input_infos must be a list of (name, shape) or (name, (shape, dtype))")
    parsed = []
    for i, entry in enumerate(infos):
        if not isinstance(entry, list | tuple) or len(entry) != 2 or not isinstance(entry[0], str):
            raise Error(
                f"input_infos[{i}] must be (name, shape) or (name, (shape, dtype)), got {entry!r}"
            )
        name, spec = entry
        dtype: Any = default_dtype
        if (
            isinstance(spec, list | tuple)
            and len(spec) == 2
            and isinstance(spec[0], list | tuple | torch.Size)
        ):
            spec, dtype = spec
        if not isinstance(spec, list | tuple | torch.Size) or not all(
            (isinstance(d, int) and not isinstance(d, bool) and d >= 0) or is_dynamic_dim(d)
            for d in spec
        ):
            raise Error(
                f"input '{name}': shape must be a list of non-negative ints (None, -1 or a "
                f"name for a dynamic dimension), got {spec!r}"
            )
        try:
            np_dtype(dtype)
        except Error as e:
            raise Error(f"input '{name}': {e}") from None
        parsed.append((name, symbolic_dims(name, tuple(spec)), dtype))
    names = [p[0] for p in parsed]
    if len(set(names)) != len(names):
        raise Error(f"input_infos names must be unique, got {names}")
    return parsed


def from_pytorch(
    script_module: Any,
    input_infos: Sequence[Any],
    custom_convert_map: CustomConvertMap | None = None,
    default_dtype: str = "float32",
    use_parser_friendly_name: bool = False,
    preserve_pytorch_scopes: bool = False,
    keep_quantized_weight: bool = False,
) -> tuple[ModuleOp, dict[str, Any]]:
    """Import a TorchScript module or function: `(module, params)`. See the module docstring.

    `input_infos` lists the data inputs in order as `(name, shape)` or `(name, (shape,
    dtype))`; `custom_convert_map` maps an op kind ("aten::foo", "mylib::bar") to a converter
    taking a `Call` and returning the op's result(s). For quantized models,
    `keep_quantized_weight` imports int8 weights and int32 biases as constants rather than
    float constants followed by qnn.quantize.
    """
    if isinstance(script_module, torch.jit.ScriptModule):
        module = script_module
    elif isinstance(script_module, torch.jit.ScriptFunction):
        module = None
    else:
        raise Error(
            f"from_pytorch expects a TorchScript module (torch.jit.trace or torch.jit.script), "
            f"got {type(script_module).__name__}; for torch.export programs use "
            "from_exported_program"
        )
    infos = _parse_input_infos(input_infos, default_dtype)
    options = {
        "custom_convert_map": custom_convert_map,
        "default_dtype": default_dtype,
        "use_parser_friendly_name": use_parser_friendly_name,
        "preserve_pytorch_scopes": preserve_pytorch_scopes,
        "keep_quantized_weight": keep_quantized_weight,
    }
    if any(isinstance(d, str) for _, shape, _ in infos for d in shape):
        # dynamic dimensions: one module for every size where each op it needs takes
        # run-time sizes (RUNTIME_SHAPE_OPS), else converted per set of sizes
        try:
            return _import(script_module, module, infos, options)
        except Error:
            return deferred_script(script_module, infos, options)
    return _import(script_module, module, infos, options)


def _import(
    script_module: Any, module: Any, infos: list[Any], options: dict[str, Any]
) -> tuple[ModuleOp, dict[str, Any]]:
    graph = script_module.graph.copy()
    torch._C._jit_pass_onnx_function_substitution(graph)
    torch._C._jit_pass_inline(graph)
    importer = ScriptImporter(
        module,
        graph,
        options["custom_convert_map"] or {},
        options["use_parser_friendly_name"],
        options["preserve_pytorch_scopes"],
    )
    importer.builder.keep_quantized_weight = options["keep_quantized_weight"]
    data_names = importer.bind_inputs(infos)
    importer.check_supported()
    importer.run_block(graph.nodes())
    outputs = flatten_outputs([importer.get(v) for v in graph.outputs()])
    names = data_names + list(importer.params)
    loc = NameLoc(StringAttr("output"), NoneAttr())
    return build_main(
        importer.builder, outputs, names, len(data_names), importer.params, loc
    ), importer.params
