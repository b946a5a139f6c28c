"""Running a module with dynamic dimensions: one native build for every size where the
lowering can (`native`: sizes are run-time values, lowering/dynamic_sizes.py), else the
native code specialized to the symbols' values, compiled per binding.

When every op of the module has a dynamic lowering and every symbol is the size of an
input's axis, `build` compiles the module once with its sizes as run-time values and
`DynamicLibrary.native` is that library: `run` checks the inputs (`bind_dims`, below) and
calls it, whatever the sizes; `save` writes it as an artifact. Otherwise `refused` says why
and each binding compiles as follows.

`DynamicLibrary.run` reads the symbols' values from the input shapes (`bind_dims`: a
dimension the model fixes, a symbol two inputs disagree on, a value outside its declared
range or a broken `2*seq`-style rule is an `xrelay.Error` naming the input and the axis,
before any native code runs), then calls the library compiled for that binding:
`specialize-shapes` on a copy of the module, then the static pipeline. Each distinct
binding compiles once per library (the `max_specializations` most recently used stay
compiled); a binding seen before runs at the static build's speed.

A module with `relay.deferred` nodes (graph inputs that decide shapes or semantics: a
Reshape target, reduction axes, TopK's k) specializes on those inputs' values too: the
binding then includes them, and each distinct set of values compiles once.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xrelay.dialects.specialize import deferred_inputs, has_deferred
from xrelay.errors import Error
from xrelay.signature import FunctionSignature, bind_dims, check_inputs, main_function
from xrelay.transforms.specialize_shapes import specialize_shapes

Binding = tuple[tuple[tuple[str, int], ...], tuple[tuple[int, str, tuple[int, ...], bytes], ...]]


class DynamicLibrary:
    """A compiled model whose inputs have dynamic dimensions: `lib.run(**inputs)` or
    `lib(*arrays)` -> list of numpy arrays, for any shapes the signature allows."""

    def __init__(
        self,
        module: ModuleOp,
        signature: FunctionSignature,
        params: Mapping[str, np.ndarray],
        build_options: Mapping[str, Any] | None = None,
        max_specializations: int = 16,
    ) -> None:
        """`build_options`: what `build` compiles each specialization with (kernels,
        target_cpu, cache)."""
        self.module = module.clone()
        self.signature = signature
        self.params = {k: np.asarray(v, order="C") for k, v in params.items()}
        self.build_options = dict(build_options or {})
        self._compiled: OrderedDict[Binding, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.max_specializations = max_specializations
        self.compiles = 0  # how many bindings were compiled (a binding seen before is not)
        self.times: dict[str, float] = {}
        # the @main arguments whose values relay.deferred nodes read
        self.value_inputs = deferred_inputs(main_function(self.module))
        self.native: Any = None  # one build for every size (set by build), or None
        self.refused = ""  # why there is no such build

    def compile_once(self, compile_fn: Any) -> None:
        """Try one native build for every size: `compile_fn()` returns it or raises
        DynamicUnsupported (kept in `refused`)."""
        from xrelay.lowering.dynamic_sizes import DynamicUnsupported

        if has_deferred(self.module):
            self.refused = (
                "relay.deferred nodes convert per binding (graph inputs that decide shapes, "
                "or a program converted for each set of sizes)"
            )
            return
        try:
            self.native = compile_fn()
        except DynamicUnsupported as e:
            self.refused = str(e)
            return
        self.compiles = 1
        self.times = dict(self.native.times)

    def specialization(
        self, binding: Mapping[str, int], values: Mapping[int, np.ndarray] | None = None
    ) -> Any:
        """The static library for `binding` and the deferred nodes' input `values` (by
        argument index), compiled on first use."""
        values = {i: np.asarray(v) for i, v in (values or {}).items()}
        key = (
            tuple(sorted(binding.items())),
            tuple((i, v.dtype.str, v.shape, v.tobytes()) for i, v in sorted(values.items())),
        )
        with self._lock:
            lib = self._compiled.get(key)
            if lib is None:
                start = time.perf_counter()
                work = self.module.clone()
                specialize_shapes(work, dict(binding), values)
                lib = self._build_static(work)
                self.compiles += 1
                self.times = dict(lib.times)
                self.times["specialize"] = time.perf_counter() - start
                self._compiled[key] = lib
                while len(self._compiled) > self.max_specializations:
                    self._compiled.popitem(last=False)
            else:
                self._compiled.move_to_end(key)
            return lib

    def _build_static(self, module: ModuleOp) -> Any:
        from xrelay.lowering.build import build

        return build(module, self.params, **self.build_options)

    def save(self, path: Any) -> None:
        if self.native is not None:  # an artifact that runs every size
            self.native.save(path)
            return
        raise Error(
            "an artifact (.xrl) holds one static build, and this library serves dynamic "
            "shapes: pin the inputs' shapes (from_onnx(shape=...), xrelay compile --shape), "
            "or pickle the library (it pickles with the specializations compiled so far)"
        )

    def export_library(self, path: Any, name: str | None = None) -> Any:
        raise Error(
            "a shared library (export_library) holds one static build, and this library "
            "serves dynamic shapes: pin the inputs' shapes (from_onnx(shape=...)) and build again"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        from xrelay.lowering.artifact import dumps

        compiled = [(key, dumps(lib)) for key, lib in self._compiled.items()]
        native = dumps(self.native) if self.native is not None else None
        state = (str(self.module), self.params, self.build_options, compiled)
        return (_restore, (*state, self.max_specializations, native, self.refused))

    def run(self, *args: Any, **inputs: Any) -> list[np.ndarray]:
        if self.native is not None:
            return self.native.run(*args, **inputs)
        arrays = check_inputs(self.signature, args, inputs, self.params)
        values = {i: arrays[i] for i in self.value_inputs}
        lib = self.specialization(bind_dims(self.signature, arrays), values)
        return lib.run(*args, **inputs)

    __call__ = run


def _restore(
    text: str,
    params: Mapping[str, np.ndarray],
    options: Mapping[str, Any],
    compiled: list[tuple[Binding, bytes]],
    max_specializations: int,
    native: bytes | None = None,
    refused: str = "",
) -> DynamicLibrary:
    """A pickled DynamicLibrary: its module, and the specializations it had compiled,
    loaded without compiling."""
    from xrelay.ir import parse_module
    from xrelay.lowering.artifact import loads

    module = parse_module(text)
    lib = DynamicLibrary(
        module, FunctionSignature.of(main_function(module)), params, options, max_specializations
    )
    for key, blob in compiled:
        lib._compiled[key] = loads(blob)
    lib.native = loads(native) if native is not None else None
    lib.refused = refused
    return lib
