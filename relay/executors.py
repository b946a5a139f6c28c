"""The executors of `relay.create_executor(kind, mod, device, target, params)`:

    debug   xrelay's reference executor (numpy, one implementation per op; nothing compiled)
    graph   relay.build's library: the PassContext's passes, then xrelay.build (static shapes)
    vm      the same, for any shapes: a module with dynamic dimensions compiles once per
            distinct set of input shapes (xrelay's DynamicLibrary)
    aot     the static library saved as an artifact (.xrl) and loaded back with xrelay.load:
            what a deployment without the compiler runs

`executor.evaluate()` compiles (under the PassContext active then) and returns the model's
function: positional inputs in the model's order, named inputs and parameters by name;
it returns an NDArray for one output, a list of NDArrays for several. Weights left out of
`create_executor` and passed to the call (`evaluate()(x, **params)`, as TVM's tutorials
do) are compiled in at the first call; a parameter passed later with other values compiles
the module again with them.
"""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import xrelay
from xdsl.dialects.builtin import ModuleOp
from xrelay.errors import Error
from xrelay.relay.lower import compile_model, results, run
from xrelay.relay.nd import NDArray, check_device, numpy_params, to_numpy
from xrelay.relay.transform import module_of
from xrelay.relay.unsupported import unsupported
from xrelay.signature import main_function, param_name


class Executor:
    """An executor of one module; `evaluate()` returns its callable."""

    kind = ""

    def __init__(
        self, mod: Any, device: Any, target: Any, params: Mapping[str, Any] | None
    ) -> None:
        self.where = f"create_executor('{self.kind}')"
        if mod is None:
            raise Error(f"{self.where}: mod is required (xrelay has no global module)")
        check_device(device, self.where)
        self.module = module_of(mod, self.where)
        self.target = target
        self.params = numpy_params(params)

    def evaluate(
        self, expr: Any = None, binds: Mapping[str, Any] | None = None
    ) -> Callable[..., NDArray | list[NDArray]]:
        """The callable running @main (`expr` may be None, the module or its @main)."""
        if expr is not None and module_of(expr, f"{self.where}.evaluate") is not self.module:
            raise Error(f"{self.where}.evaluate: expr must be the executor's module or its @main")
        if binds:
            raise Error(f"{self.where}.evaluate: binds is not supported; pass inputs by name")
        # Relay scripts may leave the weights out of create_executor and pass them to every
        # call (`evaluate()(x, **params)`): then the first call compiles with them
        lib = self.compile() if self.param_names <= set(self.params) else None

        # holds the executor (and what it keeps alive, the AOT artifact's folder) as long
        # as the function lives
        def main(*args: Any, **named: Any) -> NDArray | list[NDArray]:
            nonlocal lib
            if self.bind(named) or lib is None:
                lib = self.compile()
            return results(run(lib, self.params, args, named))

        return main

    @functools.cached_property
    def param_names(self) -> set[str]:
        """The names of @main's parameters (read once: every call checks against them)."""
        fn = main_function(self.module)
        return {name for arg in fn.body.block.args if (name := param_name(fn, arg)) is not None}

    def bind(self, named: Mapping[str, Any]) -> bool:
        """Take the parameters among a call's named values; True if one is new or differs
        from what the executor holds (the module is then compiled again with them: a
        compiled library keeps its weights)."""
        changed = False
        for name, value in named.items():
            if name not in self.param_names:
                continue
            array = to_numpy(value)
            held = self.params.get(name)
            if held is None or not (array is held or np.array_equal(array, held)):
                self.params[name] = array
                changed = True
        return changed

    def compile(self) -> Any:
        """What runs the module: an object with `run(*arrays, **named_arrays)`."""
        raise NotImplementedError

    def __getattr__(self, name: str) -> Any:
        raise unsupported(f"create_executor('{self.kind}')", name, ["evaluate"])


class DebugExecutor(Executor):
    kind = "debug"

    def compile(self) -> Any:
        return xrelay.create_executor("debug", self.module, self.params)


class GraphExecutor(Executor):
    kind = "graph"

    def compile(self) -> Any:
        return compile_model(self.module, self.target, self.params, self.where, static=True)


class VMExecutor(Executor):
    kind = "vm"

    def compile(self) -> Any:
        return compile_model(self.module, self.target, self.params, self.where, static=False)


class AotExecutor(Executor):
    kind = "aot"

    def compile(self) -> Any:
        lib = compile_model(self.module, self.target, self.params, self.where, static=True)
        # the folder lives as long as the executor (and the function evaluate returns): the
        # loaded library maps its parameters from the file
        self._folder = tempfile.TemporaryDirectory(prefix="xrelay-aot-")
        path = Path(self._folder.name) / "model.xrl"
        lib.save(path)
        return xrelay.load(path)


EXECUTORS: dict[str, type[Executor]] = {
    cls.kind: cls for cls in (DebugExecutor, GraphExecutor, VMExecutor, AotExecutor)
}


def create_executor(
    kind: str = "debug",
    mod: ModuleOp | None = None,
    device: Any = None,
    target: Any = "llvm",
    params: Mapping[str, np.ndarray | NDArray] | None = None,
) -> Executor:
    """Relay's `create_executor`: `kind` is "debug", "graph", "vm" or "aot" (see the module
    docstring); `device` None or relay.cpu(); `target` "llvm" ("llvm -mcpu=..."); `params`
    the weights by name (NDArrays or numpy arrays)."""
    if kind not in EXECUTORS:
        raise Error(f"create_executor: unknown kind '{kind}'; xrelay has {sorted(EXECUTORS)}")
    return EXECUTORS[kind](mod, device, target, params)
