"""Sizes checked before anything is allocated or compiled: no tensor of a module may hold
more than `max_tensor_bytes()` (XRELAY_MAX_TENSOR_BYTES, default half of this machine's
memory). A larger one is an `xrelay.Error` naming the op and the size, instead of an abort
inside LLVM (section memory) or a failed allocation at run time."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp, TensorType
from xrelay.dialects.dims import is_dynamic
from xrelay.dialects.limits import over_limit
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
