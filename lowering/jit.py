"""LLVM IR -> native code: linked with the runtime and compiled (O2 for the host CPU) in
worker processes (lowering/compile_worker.py), the object code linked into this process
by lowering/object_loader.py (LLVM's MCJIT where it cannot), and `Library`, the object that
owns the linked code for as long as it lives (so the garbage collector never unmaps code
that may still be called). This process itself never loads LLVM to build or run a model.

Calling convention of the compiled `main`: one pointer per argument of the relay-level
`@main` (data inputs, then parameters), then one pointer per result buffer, which the
caller allocates. Inputs are checked (names, shapes, dtypes) before any native call.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import operator
import os
import threading
import time
import zlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from llvmlite import ir
from xrelay.errors import Error
from xrelay.lowering import compile_worker, host, object_loader
from xrelay.lowering.compile_worker import CompileError, object_codes
from xrelay.signature import FunctionSignature, bind_dims, check_inputs

if TYPE_CHECKING:
    import llvmlite.binding as llvm
    from xdsl.dialects.builtin import ModuleOp

_initialized = False
_gomp = False
RUNTIME_ATTR = "xrelay.runtime"  # module attribute: the runtime's LLVM IR (emit-runtime)


def _init() -> None:
    """The libraries compiled code calls, loaded so the linker finds their symbols: libm,
    and libgomp, whose thread pool runs the runtime kernels on several cores."""
    global _initialized, _gomp
    if _initialized:
        return
    object_loader.load_library("m")
    _gomp = object_loader.load_library("gomp")
    _initialized = True


def _mcjit() -> Any:
    """llvmlite's binding, set up for MCJIT (objects the object loader does not take)."""
    import llvmlite.binding as llvm

    _init()
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    for name in ("m", "gomp"):
        path = ctypes.util.find_library(name)
        if path:
            llvm.load_library_permanently(path)
    return llvm


def threads_available() -> bool:
    """Can compiled code use a thread pool (libgomp found)?"""
    _init()
    return _gomp


def num_threads() -> int:
    """Threads for the runtime kernels: XRELAY_NUM_THREADS, else the CPUs this process may
    run on."""
    value = os.environ.get("XRELAY_NUM_THREADS", "")
    if value.strip():
        try:
            return max(1, int(value))
        except ValueError:
            raise Error(f"XRELAY_NUM_THREADS must be an integer, not '{value}'") from None
    return max(1, len(os.sched_getaffinity(0)))


# the portable x86-64 levels `build(target_cpu=...)` accepts besides the host, with the
# CPU features each requires (LLVM's feature names)
X86_LEVELS = {
    "x86-64": (),
    "x86-64-v2": ("cx16", "popcnt", "sse3", "sse4.1", "sse4.2", "ssse3"),
    "x86-64-v3": (
        "cx16", "popcnt", "sse3", "sse4.1", "sse4.2", "ssse3",
        "avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe",
    ),
    "x86-64-v4": (
        "cx16", "popcnt", "sse3", "sse4.1", "sse4.2", "ssse3",
        "avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe",
        "avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl",
    ),
}  # fmt: skip


def host_features() -> list[str]:
    """The host CPU's enabled features (LLVM's names)."""
    flat = host.describe()["llvm_features"]
    return sorted(f[1:] for f in flat.split(",") if f[:1] == "+")


def resolve_target(target_cpu: str | None) -> dict[str, Any]:
    """The target code is compiled for: `None`/"host" is this CPU with all its features;
    an x86-64 level (`x86-64-v3`) runs on every CPU that has that level's features."""
    here = host.describe()
    if target_cpu in (None, "host"):
        return {
            "triple": here["triple"],
            "cpu": here["cpu"],
            "features": host_features(),
            "llvm_features": here["llvm_features"],
        }
    if target_cpu not in X86_LEVELS:
        raise Error(
            f"target_cpu '{target_cpu}' is not supported: use 'host' or one of "
            f"{', '.join(X86_LEVELS)}"
        )
    features = list(X86_LEVELS[target_cpu])
    return {
        "triple": here["triple"],
        "cpu": target_cpu,
        "features": features,
        "llvm_features": ",".join(f"+{f}" for f in features),
    }


def vector_width(target: dict[str, Any] | None = None) -> int:
    """Floats per vector register the kernels use for `target` (the host by default):
    16 with AVX-512 (F and DQ: the max pools' vrangeps; every AVX-512 CPU but Xeon Phi
    has both), else 8."""
    features = (target or resolve_target(None))["features"]
    return 16 if {"avx512f", "avx512dq"} <= set(features) else 8


def int_group(target: dict[str, Any] | None = None, vw: int | None = None) -> int:
    """8-bit values per 32-bit word of the 8-bit GEMM for `target` (the host by default): 4
    with AVX-512 VNNI at vector width 16 (`vpdpbusd`), else 2 (i16 pairs, `vpmaddwd`)."""
    target = target or resolve_target(None)
    vw = vw if vw is not None else vector_width(target)
    have = set(target["features"])
    return 4 if vw == 16 and {"avx512vnni", "avx512bw"} <= have else 2


AMX_FEATURES = {"amx-int8", "amx-tile", "avx512vnni", "avx512bw", "avx512f"}


def amx_tiles(target: dict[str, Any] | None = None) -> bool:
    """Does the 8-bit GEMM run on AMX tiles for `target` (the host by default;
    lowering/kernels/amx.py)? When the target has AMX-INT8 (an x86-64 level has not), this
    process may use the tile data (Linux grants it on request: the runtime asks again in
    every process it runs in), and XRELAY_AMX is not 0."""
    target = target or resolve_target(None)
    if os.environ.get("XRELAY_AMX", "") == "0" or not AMX_FEATURES <= set(target["features"]):
        return False
    return _amx_permitted()


@functools.cache
def _amx_permitted() -> bool:
    from xrelay.lowering.kernels.amx import ARCH_PRCTL, REQ_XCOMP_PERM, XTILEDATA

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.syscall(ARCH_PRCTL, REQ_XCOMP_PERM, XTILEDATA) == 0
    except (OSError, AttributeError):
        return False


def missing_features(target: dict[str, Any]) -> list[str]:
    """The features code for `target` needs that this CPU lacks."""
    have = set(host_features())
    return [f for f in target["features"] if f not in have]


def target_machine(target: dict[str, Any] | None = None) -> llvm.TargetMachine:
    return compile_worker.target_machine(target or resolve_target(None))


def llvm_module(module: ModuleOp) -> str:
    """The LLVM IR (as LLVM prints it) of an llvm-dialect module, linked with the runtime it
    carries (`xrelay.runtime`, emit-runtime); the linking and verifying run in a compile
    worker (compile_worker.linked_text). Every function but `main` is a kernel: it is never
    inlined (LLVM would otherwise fold every kernel called once back into main, whose size
    then makes optimizing it several times slower), and its buffer arguments are `noalias` (a kernel
    writes only fresh buffers no other argument reaches), so loops vectorize without
    run-time overlap checks. Raises `xrelay.Error` on a module not lowered to the llvm
    dialect, or one LLVM rejects."""
    from xdsl.backend.llvm.convert import convert_module
    from xdsl.dialects.builtin import StringAttr

    try:
        triple = host.describe()["default_triple"]  # what None would ask LLVM for here
        ir_module = convert_module(module, fallback_target_triple=triple)
    except NotImplementedError as e:  # an op that is not in the llvm dialect
        raise Error(f"cannot translate to LLVM IR (run lower-to-llvm first): {e}") from None
    main = None
    for fn in ir_module.functions:
        if fn.name == "main" and not fn.is_declaration:
            main = fn
        if fn.is_declaration or fn.name == "main":
            continue
        fn.attributes.add("noinline")
        for arg in fn.args:
            if isinstance(arg.type, ir.PointerType):
                arg.add_attribute("noalias")
    texts = [str(ir_module)]
    runtime = module.attributes.get(RUNTIME_ATTR)
    if isinstance(runtime, StringAttr):
        texts.append(runtime.data)
    if main is not None:
        texts.append(_packed_entry([str(a.type) for a in main.args]))
    try:
        return compile_worker.linked_text(texts)
    except CompileError as e:
        raise Error(f"LLVM rejected the module: {e}") from None


PACKED_ENTRY = "xr_main_packed"


def _packed_entry(types: list[str]) -> str:
    """`void xr_main_packed(ptr argv)`: main (of argument `types`) called with its arguments
    read from an array of
    8-byte slots, so a run passes one pointer (ctypes converts each argument of a call:
    21 us for ShuffleNet's 282). main is called through a volatile load of its address:
    with a direct call LLVM's interprocedural passes weighed main's one caller, and
    DenseNet-121's LLVM time went from 3.5 to 11 s."""
    lines = [
        f"declare void @main({', '.join(types)})",
        "@xr_main_ref = internal global ptr @main",
        f"define void @{PACKED_ENTRY}(ptr %argv) {{",
        "  %f = load volatile ptr, ptr @xr_main_ref",
    ]
    for k, t in enumerate(types):
        lines.append(f"  %p{k} = getelementptr inbounds i64, ptr %argv, i64 {k}")
        lines.append(f"  %a{k} = load {t}, ptr %p{k}")
    lines.append(f"  call void %f({', '.join(f'{t} %a{k}' for k, t in enumerate(types))})")
    lines += ["  ret void", "}"]
    return "\n".join(lines) + "\n"


def llvm_ir(module: ModuleOp) -> str:
    """The LLVM IR `build` compiles for an llvm-dialect module (what `-t llvm` prints)."""
    return llvm_module(module)


def _dynamic(shape: tuple[Any, ...]) -> int:
    """How many dynamic dimensions a signature shape has (each is a size argument of main)."""
    return sum(not isinstance(d, int) for d in shape)


def _sizes(declared: tuple[Any, ...], actual: tuple[int, ...]) -> list[int]:
    """The run-time sizes main takes after an array's pointer: its dynamic dimensions."""
    return [n for d, n in zip(declared, actual) if not isinstance(d, int)]


class _FastCall(NamedTuple):
    """A static build's call with its own parameters (Library._parameter_slots): main's
    argument slots (uint64) with the parameters' pointers filled in, the signature of the
    data inputs and their slots, the parameter arrays whose pointers were taken (by name:
    a replaced one makes it again), and the first of the results' slots (then the checks'
    bounds)."""

    argv: np.ndarray
    data_signature: FunctionSignature
    slots: list[int]
    held: dict[str, np.ndarray]
    results_at: int


class Library:
    """A compiled model: `lib.run(**inputs)` or `lib(*arrays)` -> list of numpy arrays.
    `lib.save(path)` writes it as an artifact (`xrelay.load` reads it back without
    compiling; lowering/artifact.py); a Library pickles as its artifact."""

    def __init__(
        self,
        module: str | None,
        signature: FunctionSignature,
        params: Mapping[str, np.ndarray],
        times: dict[str, float] | None = None,
        externals: Mapping[str, Any] | None = None,
        *,
        target: dict[str, Any] | None = None,
        objects: Sequence[bytes] | None = None,
        ir_z: bytes | None = None,
        meta: dict[str, Any] | None = None,
        unused_params: Sequence[str] = (),
    ) -> None:
        """`module`: what `llvm_module` returns, compiled to object code for `target` (the
        host by default) in parts that compile at once (`split_module`, one per worker
        process: compile_worker.jobs); or None and the `objects` of an earlier compile
        (an artifact's) with `ir_z`, the LLVM IR they came from (zlib; None in artifacts
        of format 1, whose one object is position-independent). `unused_params`: parameters
        the code never reads (weights replaced by their prepacked copies): they are not
        kept, and native code gets a null pointer for them."""
        self.signature = signature
        self._lock = threading.Lock()
        # external kernels (partitioned functions compiled by a target's codegen) must stay
        # alive as long as the compiled code can call them
        self.externals = dict(externals or {})
        self.unused_params = frozenset(unused_params)
        self.params = {
            k: np.asarray(v, order="C") for k, v in params.items() if k not in self.unused_params
        }
        self._read = [a.name not in self.unused_params for a in signature.args]
        self._call_signature = FunctionSignature(
            tuple(a for a, read in zip(signature.args, self._read) if read),
            signature.results,
            signature.result_dtypes,
            signature.dim_ranges,
        )
        self.times = dict(times or {})
        self.target = target or resolve_target(None)
        self.meta = dict(meta or {})
        # run-time index checks (lowering/expose_checks.py): main writes (min, max) pairs
        # into one extra buffer after the results
        self.checks = [tuple(c) for c in self.meta.get("checks", [])]
        if self.checks:  # (imported here: a library without checks never imports the pass)
            from xrelay.lowering.expose_checks import first_violation

            self._first_violation = first_violation
        self._size_check: Any = None  # dynamic builds: made on the first run
        self._result_dims: Any = None  # dynamic builds: the results' sizes from a binding
        self._plan: Any = None  # dynamic builds: the per-run buffer plan (plan-buffers)
        self._arena: np.ndarray | None = None  # its bytes, grown to the largest plan
        self._fast: Any = None  # static builds: a _FastCall, or False (none)
        start = time.perf_counter()
        if module is not None:
            text = str(module)
            # kept for export_library, which compiles it again as one position-independent
            # object (the JIT's objects use absolute addresses)
            ir_z = zlib.compress(text.encode(), 1)
            try:
                n = compile_worker.jobs()
            except CompileError as e:
                raise Error(str(e)) from None
            try:
                # more parts than workers: the workers take the next as they finish, so
                # one part that compiles slowly (the GEMM's) does not leave a core idle
                from xrelay.lowering.split_module import split_module

                parts = split_module(text, 2 * n if n > 1 else 1)
                objects = object_codes(parts, self.target)
            except CompileError as e:
                raise Error(f"LLVM could not compile the module: {e}") from None
            self.times["llvm"] = time.perf_counter() - start
            start = time.perf_counter()
        assert objects
        self.objects = list(objects)
        self.ir_z = ir_z  # the LLVM IR the objects came from, zlib-compressed (or None)
        self._engine: Any = None
        self._symbol: Any = None
        self._main = None
        self._packed: Any = None
        missing = missing_features(self.target)
        self.runnable_here = not missing and self.target["triple"] == host.describe()["triple"]
        if self.runnable_here:
            self._load()
        self.times["load"] = time.perf_counter() - start

    def _load(self) -> None:
        """Link the object code into this process (no compiler stage runs): with the
        object loader, or with LLVM's MCJIT for objects it does not take."""
        _init()
        externals = {symbol: code.address for symbol, code in self.externals.items()}
        try:
            linked = object_loader.LinkedCode(self.objects, externals)
            symbol = linked.address
        except object_loader.Unsupported:
            llvm = _mcjit()
            for name, address in externals.items():
                llvm.add_symbol(name, address)
            linked = llvm.create_mcjit_compiler(llvm.parse_assembly(""), target_machine())
            for code in self.objects:
                linked.add_object_file(llvm.ObjectFileRef.from_data(code))
            linked.finalize_object()
            symbol = linked.get_global_value_address
        except object_loader.LinkError as e:
            raise Error(f"cannot link the compiled code: {e}") from None
        slot = symbol("xr_num_threads")
        if slot:  # the runtime's thread count (lowering/kernels/parallel.py)
            ctypes.c_int32.from_address(slot).value = num_threads()
        address = symbol("main")
        if not address:
            raise Error("the compiled module has no main function")
        n_args = (
            sum(1 + _dynamic(a.shape) for a in self.signature.args)
            + sum(1 + _dynamic(shape) for shape, _ in self.signature.results)
            + bool(self.checks)
            + 3 * bool(self.meta.get("dynamic_plan"))
        )
        self._engine = linked  # owns the code
        self._symbol = symbol  # a global's address by name
        self._main = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * n_args)(address)
        packed = symbol(PACKED_ENTRY)  # absent in older artifacts
        self._packed = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(packed) if packed else None

    def run(self, *args: Any, **inputs: Any) -> list[np.ndarray]:
        if self._main is None:
            raise Error(
                f"this library was compiled for {self.target['cpu']}, which needs CPU features "
                f"this machine lacks ({', '.join(missing_features(self.target)) or 'another triple'}): "
                "save it and run it where they exist"
            )
        folded = sorted(self.unused_params & set(inputs))
        if folded:
            raise Error(
                f"parameter '{folded[0]}' was replaced by its prepacked copy when the model "
                "was compiled: build again with the new value"
            )
        fast = self._fast_arguments(inputs)
        argv = None  # the fast path: main's arguments as slots of one array
        if fast is not None:  # parameters' pointers taken once, only the data checked
            argv = fast.argv.copy()
            given = check_inputs(fast.data_signature, args, inputs, {})
            for slot, array in zip(fast.slots, given):
                argv[slot] = array.ctypes.data if array is not None else 0
            binding: dict[str, int] = {}
            shapes = [shape for shape, _ in self.signature.results]
        else:
            given = check_inputs(self._call_signature, args, inputs, self.params)
            if self.signature.is_dynamic:
                # compiled for every size: the symbols' values from the inputs (an Error
                # naming the input, the axis and the rule before native code runs), then
                # the results'
                binding = bind_dims(self._call_signature, given)
                if self._size_check is None:
                    from xrelay.lowering.limits import SizeCheck

                    self._size_check = SizeCheck(self.meta.get("dynamic_sizes", []))
                self._size_check.check(binding)
                if self._result_dims is None:  # every result dimension, compiled once
                    from xrelay.dialects.dims import products

                    self._result_dims = products(
                        [[d] for s, _ in self.signature.results for d in s]
                    )
                dims = iter(self._result_dims(binding))
                shapes = [tuple(next(dims) for _ in shape) for shape, _ in self.signature.results]
            else:
                binding = {}
                shapes = [shape for shape, _ in self.signature.results]
            arrays = iter(given)
            pointers = []
            for arg, read in zip(self.signature.args, self._read):
                array = next(arrays) if read else None
                pointers.append(array.ctypes.data if array is not None else None)
                if _dynamic(arg.shape):
                    assert array is not None
                    pointers += _sizes(arg.shape, array.shape)
        outputs = [
            np.empty(shape, dtype) for shape, (_, dtype) in zip(shapes, self.signature.results)
        ]
        if self.checks:
            bounds = np.zeros(2 * len(self.checks), np.int64)
        if argv is not None:  # static results: no size arguments
            assert fast is not None
            for k, out in enumerate(outputs):
                argv[fast.results_at + k] = out.ctypes.data
            if self.checks:
                argv[fast.results_at + len(outputs)] = bounds.ctypes.data
            with self._lock:  # temporaries live in one static arena (plan-buffers)
                self._packed(argv.ctypes.data)
        else:
            for (shape, _), out in zip(self.signature.results, outputs):
                pointers.append(out.ctypes.data)
                pointers += _sizes(shape, out.shape)
            if self.checks:
                pointers.append(bounds.ctypes.data)
            with self._lock:
                if self.meta.get("dynamic_plan"):
                    pointers += self._dynamic_arena(binding)
                self._main(*pointers)
        if self.checks:
            error = self._first_violation(self.checks, bounds, binding)
            if error is not None:
                raise error
        return self.signature.outputs(outputs)

    __call__ = run

    def _fast_arguments(self, inputs: Mapping[str, Any]) -> _FastCall | None:
        """For a static build run with its own parameters (the usual call):
        `_parameter_slots()`, made on the first such run and again once an array in
        `params` was replaced; None for the general path (dynamic builds, a parameter given
        as an input, sequence or optional parameters)."""
        if self.signature.is_dynamic or self.meta.get("dynamic_plan") or self._packed is None:
            return None
        fast = self._fast
        # a parameter array replaced in `params` since: take the pointers again
        if fast is None or (
            fast and not all(map(operator.is_, map(self.params.get, fast.held), fast.held.values()))
        ):
            fast = self._fast = self._parameter_slots() or False
        if not fast or any(name in fast.held for name in inputs):
            return None
        return fast

    def _parameter_slots(self) -> _FastCall | None:
        """main's argument slots with each parameter's pointer filled in (None when a
        parameter is a sequence or optional: the general path)."""
        template: list[Any] = []
        data, slots, held = [], [], {}
        for arg, read in zip(self.signature.args, self._read):
            if read and arg.is_param and arg.name in self.params:
                if arg.sequence or arg.optional:
                    return None
                held[arg.name] = self.params[arg.name]
                template.append(held[arg.name].ctypes.data)
                continue
            if read:  # a data input (or a missing parameter: check_inputs names it)
                data.append(arg)
                slots.append(len(template))
            template.append(None)
        signature = FunctionSignature(
            tuple(data), self.signature.results, self.signature.result_dtypes,
            self.signature.dim_ranges,
        )  # fmt: skip
        # then the results' slots and the checks' bounds
        slots_after = len(self.signature.results) + bool(self.checks)
        argv = np.array([p or 0 for p in template] + [0] * slots_after, np.uint64)
        return _FastCall(argv, signature, slots, held, len(template))

    def _dynamic_arena(self, binding: Mapping[str, int]) -> list[Any]:
        """main's last arguments in a dynamic build: the arena (64-byte aligned pointer,
        size) and the offsets of the buffers in it, planned for this binding."""
        if self._plan is None:
            from xrelay.lowering.plan_buffers import RuntimePlan

            self._plan = RuntimePlan(self.meta["dynamic_plan"])
        offsets, total = self._plan.offsets(dict(binding))
        if self._arena is None or self._arena.size < total + 64:
            self._arena = np.empty(total + 64, np.uint8)
        base = self._arena.ctypes.data
        return [(base + 63) // 64 * 64, total, offsets.ctypes.data]

    def profile(self, reset: bool = False) -> list[dict[str, Any]]:
        """Per call of main (a library built with `profile=True`): the callee, the model
        node it came from, total nanoseconds and calls since the last reset."""
        sites = self.meta.get("profile_sites")
        if not sites or self._engine is None:
            raise Error("this library was not built with profile=True")
        n = len(sites)
        ns = (ctypes.c_int64 * n).from_address(self._symbol("xr_prof_ns"))
        calls = (ctypes.c_int64 * n).from_address(self._symbol("xr_prof_calls"))
        out = []
        for k, site in enumerate(sites):
            kernel, _, node = site.partition("@")
            out.append({"kernel": kernel, "node": node, "ns": ns[k], "calls": calls[k]})
        if reset:
            ctypes.memset(ns, 0, ctypes.sizeof(ns))
            ctypes.memset(calls, 0, ctypes.sizeof(calls))
        return out

    def save(self, path: str | os.PathLike) -> None:
        """Write the artifact (lowering/artifact.py) to `path`."""
        from xrelay.lowering.artifact import save

        save(self, path)

    def export_library(self, path: str | os.PathLike, name: str | None = None) -> Any:
        """A shared library callable from C, and its header (lowering/export.py); returns
        the header's path."""
        from xrelay.lowering.export import export_library

        return export_library(self, path, name)

    def __reduce__(self) -> tuple[Any, ...]:
        from xrelay.lowering.artifact import dumps, loads

        return (loads, (dumps(self),))
