"""LLVM IR -> native code with llvmlite: O3 for the host CPU, MCJIT, and `Library`, the
object that owns the engine, module and target machine for as long as it lives (so the
garbage collector never unmaps code that may still be called).

Calling convention of the compiled `main`: one pointer per argument of the relay-level
`@main` (data inputs, then parameters), then one pointer per result buffer, which the
caller allocates. Inputs are checked (names, shapes, dtypes) before any native call.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
import time
from collections.abc import Mapping
from typing import Any

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir
from xdsl.backend.llvm.convert import convert_module
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xrelay.errors import Error
from xrelay.signature import FunctionSignature, check_inputs

_initialized = False
_gomp = False
RUNTIME_ATTR = "xrelay.runtime"  # module attribute: the runtime's LLVM IR (emit-runtime)


def _init() -> None:
    global _initialized, _gomp
    if _initialized:
        return
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    libm = ctypes.util.find_library("m")
    if libm:
        llvm.load_library_permanently(libm)
    try:  # libgomp's thread pool runs the runtime GEMM on several cores
        llvm.load_library_permanently(ctypes.util.find_library("gomp") or "libgomp.so.1")
        _gomp = True
    except RuntimeError:
        _gomp = False
    _initialized = True


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


def target_machine() -> llvm.TargetMachine:
    _init()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=3
    )


def llvm_module(module: ModuleOp) -> llvm.ModuleRef:
    """The LLVM module of an llvm-dialect module, linked with the runtime it carries
    (`xrelay.runtime`, emit-runtime). Every function but `main` is a kernel: it is never
    inlined (LLVM would otherwise fold every kernel called once back into main, whose size
    then makes O3 several times slower), and its buffer arguments are `noalias` (a kernel
    writes only fresh buffers no other argument reaches), so loops vectorize without
    run-time overlap checks. Raises `xrelay.Error` on a module not lowered to the llvm
    dialect."""
    _init()
    try:
        ir_module = convert_module(module, fallback_target_triple=None)
    except NotImplementedError as e:  # an op that is not in the llvm dialect
        raise Error(f"cannot translate to LLVM IR (run lower-to-llvm first): {e}") from None
    for fn in ir_module.functions:
        if fn.is_declaration or fn.name == "main":
            continue
        fn.attributes.add("noinline")
        for arg in fn.args:
            if isinstance(arg.type, ir.PointerType):
                arg.add_attribute("noalias")
    linked = llvm.parse_assembly(str(ir_module))
    runtime = module.attributes.get(RUNTIME_ATTR)
    if isinstance(runtime, StringAttr):
        kernels = llvm.parse_assembly(runtime.data)
        kernels.verify()
        linked.link_in(kernels)
    linked.verify()
    return linked


def llvm_ir(module: ModuleOp) -> str:
    """The LLVM IR `build` compiles for an llvm-dialect module (what `-t llvm` prints)."""
    return str(llvm_module(module))


class Library:
    """A compiled model: `lib.run(**inputs)` or `lib(*arrays)` -> list of numpy arrays."""

    def __init__(
        self,
        module: llvm.ModuleRef,
        signature: FunctionSignature,
        params: Mapping[str, np.ndarray],
        times: dict[str, float] | None = None,
        externals: Mapping[str, Any] | None = None,
    ) -> None:
        """`module`: what `llvm_module` returns (consumed: it is optimized in place)."""
        self.signature = signature
        self._lock = threading.Lock()
        # external kernels (partitioned functions compiled by a target's codegen) must stay
        # alive as long as the compiled code can call them
        self.externals = dict(externals or {})
        self.params = {k: np.asarray(v, order="C") for k, v in params.items()}
        self.times = dict(times or {})
        start = time.perf_counter()
        self.target_machine = target_machine()
        self.module = module
        tuning = llvm.create_pipeline_tuning_options(speed_level=3)
        # full unrolling of the many constant-trip loops costs minutes of compile time
        tuning.loop_unrolling = False
        # kernels stay separate functions: inlining them into main rebuilds the one huge
        # function that outline-kernels exists to avoid
        tuning.inlining_threshold = 0
        builder = llvm.create_pass_builder(self.target_machine, tuning)
        builder.getModulePassManager().run(self.module, builder)
        for symbol, code in self.externals.items():
            llvm.add_symbol(symbol, code.address)
        self.engine = llvm.create_mcjit_compiler(self.module, self.target_machine)
        self.engine.finalize_object()
        slot = self.engine.get_global_value_address("xr_num_threads")
        if slot:  # the runtime's thread count (lowering/kernels/parallel.py)
            ctypes.c_int32.from_address(slot).value = num_threads()
        address = self.engine.get_function_address("main")
        if not address:
            raise Error("the compiled module has no main function")
        n_args = len(signature.args) + len(signature.results)
        self._main = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * n_args)(address)
        self.times["llvm"] = time.perf_counter() - start

    def run(self, *args: Any, **inputs: Any) -> list[np.ndarray]:
        arrays = check_inputs(self.signature, args, inputs, self.params)
        outputs = [np.empty(shape, dtype) for shape, dtype in self.signature.results]
        pointers = [a.ctypes.data for a in (*arrays, *outputs)]
        with self._lock:  # temporaries live in one static arena (plan-buffers)
            self._main(*pointers)
        return self.signature.outputs(outputs)

    __call__ = run
