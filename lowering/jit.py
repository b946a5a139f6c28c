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
import time
from collections.abc import Mapping
from typing import Any

import llvmlite.binding as llvm
import numpy as np
from xdsl.backend.llvm.convert import convert_module
from xdsl.dialects.builtin import ModuleOp
from xrelay.errors import Error
from xrelay.signature import FunctionSignature, check_inputs

_initialized = False


def _init() -> None:
    global _initialized
    if _initialized:
        return
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    libm = ctypes.util.find_library("m")
    if libm:
        llvm.load_library_permanently(libm)
    _initialized = True


def target_machine() -> llvm.TargetMachine:
    _init()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=3
    )


def llvm_ir(module: ModuleOp) -> str:
    """Textual LLVM IR of an llvm-dialect module."""
    return str(convert_module(module, fallback_target_triple=None))


class Library:
    """A compiled model: `lib.run(**inputs)` or `lib(*arrays)` -> list of numpy arrays."""

    def __init__(
        self,
        ir_text: str,
        signature: FunctionSignature,
        params: Mapping[str, np.ndarray],
        times: dict[str, float] | None = None,
        externals: Mapping[str, Any] | None = None,
    ) -> None:
        self.signature = signature
        # external kernels (partitioned functions compiled by a target's codegen) must stay
        # alive as long as the compiled code can call them
        self.externals = dict(externals or {})
        self.params = {k: np.asarray(v, order="C") for k, v in params.items()}
        self.times = dict(times or {})
        start = time.perf_counter()
        self.target_machine = target_machine()
        self.module = llvm.parse_assembly(ir_text)
        self.module.verify()
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
        self._main(*pointers)
        return self.signature.outputs(outputs)

    __call__ = run
