"""`relay.graph_executor.GraphModule`: Relay's stateful runner of a built model.

    lib = relay.build(mod, target="llvm", params=params)
    m = graph_executor.GraphModule(lib["default"](relay.cpu(0)))
    m.set_input("input", x)          # by name or index; m.set_input(**params) too
    m.run()
    y = m.get_output(0).numpy()

Inputs are indexed like @main's arguments: the data inputs in the model's order, then the
parameters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from xrelay.errors import Error
from xrelay.relay.lower import CompiledModel, run
from xrelay.relay.nd import Device, NDArray, to_numpy
from xrelay.relay.unsupported import unsupported


class GraphRuntimeModule:
    """What `relay.build(...)["default"](dev)` returns: the compiled library with the
    parameters it was built with, for `GraphModule`."""

    def __init__(self, lib: CompiledModel, params: Mapping[str, np.ndarray], device: Device):
        self.lib = lib
        self.params = dict(params)
        self.device = device


class GraphModule:
    """Relay's graph executor module on an xrelay library."""

    def __init__(self, module: GraphRuntimeModule) -> None:
        if not isinstance(module, GraphRuntimeModule):
            raise Error(
                f"GraphModule: expected relay.build(...)['default'](dev), got "
                f"{type(module).__name__}"
            )
        self.module = module
        self.names = [a.name for a in module.lib.signature.args]
        self._inputs: dict[str, np.ndarray] = {}
        self._outputs: list[np.ndarray] | None = None

    def _name(self, key: Any, where: str) -> str:
        if isinstance(key, int) and not isinstance(key, bool):
            if not 0 <= key < len(self.names):
                raise Error(
                    f"GraphModule.{where}: input index {key} out of range 0..{len(self.names) - 1}"
                )
            return self.names[key]
        if isinstance(key, str) and key in self.names:
            return key
        raise Error(f"GraphModule.{where}: unknown input {key!r}; the inputs are {self.names}")

    def set_input(self, key: str | int | None = None, value: Any = None, **params: Any) -> None:
        """Set the input `key` (a name or an index) to `value`, and any inputs or
        parameters given by name. The values are copied."""
        if key is None and value is not None:
            raise Error("GraphModule.set_input: a value without a key")
        if key is not None:
            if value is None:
                raise Error(f"GraphModule.set_input: no value for {key!r}")
            self._inputs[self._name(key, "set_input")] = np.array(to_numpy(value))
        for name, v in params.items():
            self._inputs[self._name(name, "set_input")] = np.array(to_numpy(v))

    def run(self, **inputs: Any) -> None:
        """Run with the inputs set so far and `inputs` (set first, by name)."""
        if inputs:
            self.set_input(**inputs)
        self._outputs = run(self.module.lib, self.module.params, (), self._inputs)

    def get_output(self, index: int, out: NDArray | None = None) -> NDArray:
        """Output `index` of the last run; copied into `out` if given."""
        if self._outputs is None:
            raise Error("GraphModule.get_output: no outputs yet: call run() first")
        if not 0 <= index < len(self._outputs):
            raise Error(
                f"GraphModule.get_output: index {index} out of range; the model has "
                f"{len(self._outputs)} outputs"
            )
        if out is not None:
            return out.copyfrom(self._outputs[index])
        return NDArray(self._outputs[index])

    def get_num_outputs(self) -> int:
        return len(self.module.lib.signature.results)

    def get_num_inputs(self) -> int:
        """The number of data inputs (parameters not counted)."""
        return len(self.module.lib.signature.inputs)

    def get_input_index(self, name: str) -> int:
        return self.names.index(self._name(name, "get_input_index"))

    def get_input(self, key: str | int) -> NDArray:
        """The value input `key` (a name or an index) was set to, or a parameter's."""
        name = self._name(key, "get_input")
        if name in self._inputs:
            return NDArray(self._inputs[name])
        if name in self.module.params:
            return NDArray(self.module.params[name])
        raise Error(f"GraphModule.get_input: input '{name}' has not been set")

    def __getattr__(self, name: str) -> Any:
        raise unsupported("GraphModule", name, PROVIDED)


PROVIDED = [
    "get_input", "get_input_index", "get_num_inputs", "get_num_outputs", "get_output", "run",
    "set_input",
]  # fmt: skip


def __getattr__(name: str) -> Any:
    raise unsupported("relay.graph_executor", name, ["GraphModule"])
