"""Sizes checked before anything is allocated or compiled: no tensor of a module may hold
more than `max_tensor_bytes()` (XRELAY_MAX_TENSOR_BYTES, default half of this machine's
memory). A larger one is an `xrelay.Error` naming the op and the size, instead of an abort
inside LLVM (section memory) or a failed allocation at run time."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp, TensorType
from xrelay.dialects.dims import is_dynamic, products
from xrelay.dialects.limits import bytes_over_limit, over_limit
from xrelay.errors import Error
from xrelay.ir import location_str


def check_sizes(module: ModuleOp) -> None:
    """Raise if a value or argument of `module` (static shapes) is larger than the limit."""
    from xdsl.dialects import func
    from xrelay.signature import FunctionSignature

    def check(t: object, what: str) -> None:
        # a dynamic type is checked per run, for the sizes it is run with (Library.run)
        why = over_limit(t) if isinstance(t, TensorType) and not is_dynamic(t) else None
        if why is not None:
            raise Error(f"{what} is a {t} of {why}")

    for op in module.walk():
        if isinstance(op, func.FuncOp) and op.body.blocks:
            names = [a.name for a in FunctionSignature.of(op).args]
            for arg, name in zip(op.body.block.args, names):
                check(arg.type, f"input '{name}' of @{op.sym_name.data}")
        for result in op.results:
            check(result.type, f"{location_str(op)}: the result of '{op.name}'")


def dynamic_sizes(module: ModuleOp) -> list[list[str | int]]:
    """The byte sizes of the module's values with dynamic dimensions, as expressions of
    its symbols (one entry per distinct size: its factors, then the element size), for
    `SizeCheck` to evaluate per run."""
    from xrelay.dialects.dims import dim_str, shape_of
    from xrelay.dialects.dtypes import numpy_dtype

    seen: dict[tuple, None] = {}
    for op in module.walk():
        for value in op.results:
            t = value.type
            if isinstance(t, TensorType) and is_dynamic(t):
                try:
                    itemsize = numpy_dtype(t.element_type).itemsize
                except Error:
                    itemsize = 8
                seen[(*(dim_str(d) for d in shape_of(t)), itemsize)] = None
    return [list(key) for key in seen]


class SizeCheck:
    """Per run of a build for every size: the largest value the binding makes must be
    within the limit (`max_tensor_bytes`), checked before native code runs, so a huge
    binding is an Error and not a failed allocation inside the model."""

    def __init__(self, table: list[list[str | int]]) -> None:
        self.table = table  # per value: its dimensions, then its element size
        self._bytes = products(table)

    def check(self, binding: dict[str, int]) -> None:
        if not self.table:
            return
        values = self._bytes(binding)
        k = max(range(len(values)), key=lambda i: values[i])
        why = bytes_over_limit(values[k])
        if why is not None:
            shape = "x".join(str(f) for f in self.table[k][:-1])
            raise Error(f"with {dict(binding)}, a value of shape [{shape}] is {why}")
