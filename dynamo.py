"""`torch.compile(model, backend="xrelay")`: a TorchDynamo backend.

Imports: torch (dynamo, export, fx), the PyTorch frontend's exported-program importer and
`xrelay.build` (imported when a graph is compiled): it joins a frontend and the lowering, so
it lives at the top of the package, beside the public API. Registered with torch through
the `torch_dynamo_backends` entry point (pyproject.toml), so `backend="xrelay"` works without
importing xrelay; importing this module registers the name too when that entry point is not
installed.

What happens to a graph dynamo hands over (`xrelay_backend(gm, example_inputs)`):
- Nothing is compiled yet: the returned `CompiledGraph` compiles on its first call for each
  input signature (shapes, dtypes, the values of integer inputs, and the identity and version
  of the model's parameters and buffers), so automatic-dynamic graphs (with SymInt inputs) are
  compiled per shape, at most `max_signatures` of them (least recently used dropped).
- Parameters and buffers dynamo lifts into graph inputs become the program's own state: they
  are passed to `xrelay.build` as parameters (weights stay where torch keeps them; an in-place
  update of a weight bumps its version and the graph is compiled again).
- The graph is captured with `torch.export` (non-strict) on a wrapper that holds that state,
  decomposed to core ATen and converted by `from_exported_program`: the same op table and
  checks as the torch.export path.
- A graph with ops xrelay does not convert is split (`split=True`, the default): the
  decomposed graph is partitioned by op support, each supported region is compiled with
  xrelay, the rest runs in eager torch; the split is logged as a warning. Any other failure
  to compile (a converter limit, an output that is not a tensor, an in-place update of an
  input) runs the whole graph in eager torch with a warning. `fallback=False` raises the
  xrelay.Error instead.
- xrelay compiles inference only: a call that requires gradients (grad mode on, and an input
  or a parameter of the graph requires grad: a model called outside `torch.no_grad()`) is an
  xrelay.Error asking for `torch.no_grad()` / `torch.inference_mode()`. With
  `grad_fallback=True` such calls run in eager torch instead (a warning, once per graph), so
  autograd sees the real ops; calls without gradients are compiled as usual.

Options (`torch.compile(..., backend="xrelay", options={...})`): `kernels`, `target_cpu`,
`cache` (passed to `xrelay.build`), `threads`, `fallback`, `grad_fallback`, `split`,
`max_signatures`, `report` (log the regions of every graph at INFO, not only split ones as a
warning).

`threads` (a positive int; default: XRELAY_NUM_THREADS, else the CPUs this process may run
on) is the thread count of this callable's compiled libraries. A library takes its thread
count from XRELAY_NUM_THREADS when its code is loaded (lowering/jit.py) and keeps it, so the
backend sets that variable, under a lock, for the duration of each `xrelay.build` and
restores it after; a library that loads more code while it runs (a VM or dynamic-shape
library compiling a specialization) gets the variable set for its runs too. While it is set
the variable is process-wide: another thread that loads an xrelay library at that moment
reads the same value. Torch's own threads (eager regions) are `torch.set_num_threads`'.
"""

from __future__ import annotations

import logging
import operator
import os
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any

import torch
from torch import fx, nn
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase
from torch.utils import _pytree as pytree
from xrelay.errors import Error, UnsupportedOpsError
from xrelay.frontends.pytorch.call import np_dtype, to_numpy
from xrelay.frontends.pytorch.convert import SHAPE_ONLY
from xrelay.frontends.pytorch.exported import NO_OPS, ProgramImporter, _kind
from xrelay.frontends.pytorch.registry import lookup

log = logging.getLogger(__name__)

BACKEND_NAME = "xrelay"

# Counts for tests and users: "graphs" (backend invocations), "builds" (xrelay.build calls),
# "eager" (graphs or signatures run in eager torch), "regions" (compiled regions of split
# graphs).
STATS: Counter[str] = Counter()


@dataclass(frozen=True)
class Options:
    kernels: bool = True
    target_cpu: str | None = None
    cache: bool = True
    threads: int | None = None
    fallback: bool = True
    grad_fallback: bool = False
    split: bool = True
    max_signatures: int = 8
    report: bool = False

    @classmethod
    def of(cls, options: dict[str, Any] | None) -> Options:
        options = dict(options or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise Error(
                f"torch.compile(backend='xrelay'): unknown option(s) {unknown}; "
                f"known: {sorted(known)}"
            )
        opts = cls(**options)
        if not isinstance(opts.max_signatures, int) or opts.max_signatures < 1:
            raise Error(
                f"torch.compile(backend='xrelay'): max_signatures must be a positive int, "
                f"got {opts.max_signatures!r}"
            )
        threads = opts.threads
        if threads is not None and (
            not isinstance(threads, int) or isinstance(threads, bool) or threads < 1
        ):
            raise Error(
                f"torch.compile(backend='xrelay'): threads must be a positive int, got {threads!r}"
            )
        return opts

    def build_options(self) -> dict[str, Any]:
        return {"kernels": self.kernels, "target_cpu": self.target_cpu, "cache": self.cache}


# held while XRELAY_NUM_THREADS is set for a compiled callable's `threads` (see the module
# docstring): the set and the restore of two callables do not interleave
_THREADS_LOCK = threading.RLock()
_THREADS_VAR = "XRELAY_NUM_THREADS"


@contextmanager
def _threads(count: int | None) -> Iterator[None]:
    """XRELAY_NUM_THREADS = `count` inside the block (nothing changes for None), restored
    after: libraries loaded inside it run `count` threads."""
    if count is None:
        yield
        return
    with _THREADS_LOCK:
        saved = os.environ.get(_THREADS_VAR)
        os.environ[_THREADS_VAR] = str(count)
        try:
            yield
        finally:
            if saved is None:
                del os.environ[_THREADS_VAR]
            else:
                os.environ[_THREADS_VAR] = saved


def xrelay_backend(
    gm: fx.GraphModule, example_inputs: Sequence[Any], options: dict[str, Any] | None = None
) -> Callable[..., Any]:
    """The dynamo backend: returns a callable with the graph's calling convention (flat
    tensors and ints in, the graph's outputs out). See the module docstring."""
    opts = Options.of(options)
    STATS["graphs"] += 1
    return CompiledGraph(gm, example_inputs, opts)


def _is_state(node: fx.Node, example: Any) -> bool:
    """Whether a graph input is a parameter or buffer of the model (dynamo lifts those of
    inlined nn.Modules into inputs)."""
    if isinstance(example, nn.Parameter):
        return True
    grapharg = node.meta.get("grapharg")
    source = getattr(grapharg, "source", None)
    if source is None:
        return False
    from torch._dynamo import source as sources

    check = getattr(sources, "is_from_unspecialized_param_buffer_source", None)
    return bool(check is not None and check(source))


class _Bound(nn.Module):
    """The dynamo graph as a module of its tensor data inputs only: the model's state is held
    as buffers (exported as parameters/buffers, not inputs) and integer inputs are fixed."""

    def __init__(
        self, gm: fx.GraphModule, args: Sequence[Any], state: Sequence[bool], names: list[str]
    ) -> None:
        super().__init__()
        self.gm = gm
        self.slots: list[tuple[str, Any]] = []  # ("data", None) | ("state", name) | ("const", v)
        for arg, is_state, name in zip(args, state, names):
            if isinstance(arg, torch.Tensor) and is_state:
                self.register_buffer(name, arg.detach())
                self.slots.append(("state", name))
            elif isinstance(arg, torch.Tensor):
                self.slots.append(("data", None))
            else:
                self.slots.append(("const", arg))

    def forward(self, *data: torch.Tensor) -> Any:
        it = iter(data)
        args = []
        for kind, value in self.slots:
            if kind == "data":
                args.append(next(it))
            elif kind == "state":
                args.append(getattr(self, value))
            else:
                args.append(value)
        return self.gm(*args)


class CompiledGraph:
    """One dynamo graph: xrelay libraries per input signature (see the module docstring)."""

    def __init__(self, gm: fx.GraphModule, example_inputs: Sequence[Any], opts: Options) -> None:
        self.gm = gm
        self.opts = opts
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        self.names = [_buffer_name(n.name, i) for i, n in enumerate(placeholders)]
        self.state = [_is_state(n, x) for n, x in zip(placeholders, example_inputs)]
        self.entries: OrderedDict[tuple, Callable[[Sequence[Any]], Any]] = OrderedDict()
        self.params = list(gm.parameters())  # held by the graph, not lifted into inputs
        self._warned: set[str] = set()

    def __call__(self, *args: Any) -> Any:
        if self._requires_grad(args):
            if not self.opts.grad_fallback:
                raise Error(
                    "torch.compile(backend='xrelay') compiles inference only, and this call "
                    "requires gradients (grad mode is on and an input or parameter requires "
                    "grad): call the model under torch.no_grad() or torch.inference_mode(), "
                    "or pass options={'grad_fallback': True} to run such calls in eager torch"
                )
            return self._eager(
                "gradients are required (grad mode is on and an input or parameter requires "
                "grad; grad_fallback=True); xrelay compiles inference only"
            )(args)
        key = self._key(args)
        run = self.entries.get(key)
        if run is None:
            run = self._compile(args)
            self.entries[key] = run
            while len(self.entries) > self.opts.max_signatures:
                self.entries.popitem(last=False)
        else:
            self.entries.move_to_end(key)
        return run(args)

    def _requires_grad(self, args: Sequence[Any]) -> bool:
        """Grad mode is on and a graph input (dynamo lifts the model's parameters into inputs)
        or a parameter the graph holds itself requires grad."""
        if not torch.is_grad_enabled():
            return False
        return any(isinstance(a, torch.Tensor) and a.requires_grad for a in args) or any(
            p.requires_grad for p in self.params
        )

    def _key(self, args: Sequence[Any]) -> tuple:
        key = []
        for a, is_state in zip(args, self.state):
            if isinstance(a, torch.Tensor):
                tensor_key = (tuple(a.shape), a.dtype, a.device.type)
                if is_state:
                    tensor_key += (id(a), a._version, a.data_ptr())
                key.append(tensor_key)
            else:
                key.append((type(a).__name__, int(a) if isinstance(a, torch.SymInt) else a))
        return tuple(key)

    # --- compile ---------------------------------------------------------------------------

    def _compile(self, args: Sequence[Any]) -> Callable[[Sequence[Any]], Any]:
        """A runner for this signature: xrelay-compiled, split, or eager (with a warning)."""
        try:
            _check_inputs(args)
            return self._lower(args)
        except Error as e:
            if not self.opts.fallback:
                raise
            return self._eager(str(e))

    def _lower(self, args: Sequence[Any]) -> Callable[[Sequence[Any]], Any]:
        args = [int(a) if isinstance(a, torch.SymInt) else a for a in args]
        bound = _Bound(self.gm, args, self.state, self.names)
        data = [a for a, (kind, _) in zip(args, bound.slots) if kind == "data"]
        positions = [i for i, (kind, _) in enumerate(bound.slots) if kind == "data"]
        ep = _export(bound, data)
        try:
            run = _compile_program(ep, self.opts)
        except UnsupportedOpsError as e:
            if not self.opts.split:
                raise
            run = _split(ep, data, self.opts, str(e))
        else:
            if self.opts.report:
                log.info("xrelay: graph of %d ops compiled whole", _count_ops(ep.graph))

        def runner(call_args: Sequence[Any]) -> Any:
            return run([call_args[i] for i in positions])

        return runner

    def _eager(self, reason: str) -> Callable[[Sequence[Any]], Any]:
        if reason not in self._warned:
            self._warned.add(reason)
            log.warning("xrelay: running a graph in eager torch: %s", reason)
            STATS["eager"] += 1
        gm = self.gm
        return lambda args: gm(*args)


def _buffer_name(name: str, index: int) -> str:
    cleaned = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)
    return f"s{index}_{cleaned}"


def _check_inputs(args: Sequence[Any]) -> None:
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor) and a.device.type != "cpu":
            raise Error(f"graph input {i} is on {a.device}; xrelay runs on the CPU")
        if isinstance(a, torch.Tensor):
            np_dtype(a.dtype)  # an Error for dtypes relay has no element type for
        elif not isinstance(a, bool | int | float | torch.SymInt) and a is not None:
            raise Error(f"graph input {i} is a {type(a).__name__}, not a tensor or number")


def _export(module: nn.Module, data: Sequence[torch.Tensor]) -> torch.export.ExportedProgram:
    """Capture with torch.export (non-strict: the graph is already dynamo's) and decompose to
    core ATen."""
    try:
        with torch.no_grad():
            ep = torch.export.export(module, tuple(data), strict=False)
        return ep.run_decompositions()
    except Exception as e:  # noqa: BLE001 - export fails in many ways; report, then eager
        raise Error(
            f"capturing the graph with torch.export failed: {type(e).__name__}: {e}"
        ) from None


def _count_ops(graph: fx.Graph) -> int:
    return sum(1 for n in graph.nodes if n.op == "call_function")


def _compile_program(
    ep: torch.export.ExportedProgram, opts: Options
) -> Callable[[Sequence[torch.Tensor]], Any]:
    """Import a decomposed program and build it; the runner takes its user inputs (tensors)
    and returns its outputs in the program's output structure. Raises UnsupportedOpsError
    before any IR is built when an op has no converter."""
    import xrelay
    from xrelay.lowering.jit import Library

    importer = ProgramImporter(ep, keep_params_as_inputs=True)
    importer.bind_inputs()
    importer.check_supported()  # the UnsupportedOpsError a split starts from
    module, params = xrelay.from_exported_program(ep)
    with _threads(opts.threads):
        lib = xrelay.build(module, params=params, **opts.build_options())
    STATS["builds"] += 1
    out_spec = ep.call_spec.out_spec
    # a static Library keeps the thread count it was loaded with; others may load code while
    # they run (VM segments, dynamic-shape specializations)
    run_threads = None if isinstance(lib, Library) else opts.threads

    def run(data: Sequence[torch.Tensor]) -> Any:
        with _threads(run_threads):
            outs = lib.run(*(to_numpy(x) for x in data))
        tensors = [torch.from_numpy(o) for o in outs]
        return pytree.tree_unflatten(tensors, out_spec) if out_spec is not None else tensors

    return run


# --- splitting a graph by op support ---------------------------------------------------------


def _convertible(node: fx.Node) -> bool:
    if node.op != "call_function":
        return False
    if node.target is operator.getitem:
        return True
    kind = _kind(node)
    return kind in SHAPE_ONLY or kind in NO_OPS or lookup(kind) is not None


class _Support(OperatorSupportBase):
    def is_node_supported(self, submodules: Any, node: fx.Node) -> bool:
        return _convertible(node)


class _Region(nn.Module):
    """A supported region of a split graph, compiled with xrelay."""

    def __init__(self, run: Callable[[Sequence[torch.Tensor]], Any]) -> None:
        super().__init__()
        self.run = run

    def forward(self, *data: torch.Tensor) -> Any:
        return self.run(data)


def _split(
    ep: torch.export.ExportedProgram,
    data: Sequence[torch.Tensor],
    opts: Options,
    unsupported: str,
) -> Callable[[Sequence[torch.Tensor]], Any]:
    """Partition the decomposed graph by op support: each region with a converted op is
    compiled with xrelay, the rest (and any region that fails to compile) runs in eager
    torch."""
    gm = ep.module()
    partitioner = CapabilityBasedPartitioner(gm, _Support(), allows_single_node_partition=True)
    partitions = [
        p
        for p in partitioner.propose_partitions()
        if any(n.target is not operator.getitem and _kind(n) not in NO_OPS for n in p.nodes)
    ]
    fused = partitioner.fuse_partitions(partitions, prefix="xrelay_region_")
    compiled = 0
    for node in list(fused.graph.nodes):
        if node.op != "call_module" or not str(node.target).startswith("xrelay_region_"):
            continue
        region = getattr(fused, node.target)
        try:
            run = _compile_region(region, node, opts)
        except Error as e:
            log.warning("xrelay: a region of %s runs in eager torch: %s", node.target, e)
            continue
        setattr(fused, node.target, _Region(run))
        compiled += 1
    STATS["regions"] += compiled
    eager = [n for n in fused.graph.nodes if n.op == "call_function" and not _convertible(n)]
    log.warning(
        "xrelay: %s; the graph is split: %d region(s) compiled, %d op(s) in eager torch (%s)",
        unsupported,
        compiled,
        len(eager),
        ", ".join(sorted({_kind(n) for n in eager})),
    )
    if compiled == 0:
        STATS["eager"] += 1

    def run(args: Sequence[torch.Tensor]) -> Any:
        with torch.no_grad():
            return fused(*args)

    return run


def _compile_region(
    region: fx.GraphModule, node: fx.Node, opts: Options
) -> Callable[[Sequence[torch.Tensor]], Any]:
    """Export one region (example inputs of the right shapes and dtypes from the graph's
    fake values) and build it."""
    examples = []
    for arg in node.args:
        fake = arg.meta.get("val") if isinstance(arg, fx.Node) else None
        if not isinstance(fake, torch.Tensor):
            raise Error(f"region input {arg} is not a tensor of known shape")
        examples.append(torch.zeros(tuple(int(d) for d in fake.shape), dtype=fake.dtype))
    ep = _export(region, examples)
    return _compile_program(ep, opts)


def register() -> None:
    """Register "xrelay" with dynamo when the entry point is not installed (torch loads the
    entry point itself, and a second registration of the name would be refused)."""
    from importlib.metadata import entry_points

    from torch._dynamo.backends import registry

    if any(ep.name == BACKEND_NAME for ep in entry_points(group="torch_dynamo_backends")):
        return
    if BACKEND_NAME not in registry._COMPILER_FNS:
        registry.register_backend(xrelay_backend, name=BACKEND_NAME)


register()
