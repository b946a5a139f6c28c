"""The parts of import both capture paths share: running a converter on one op, folding ops
whose arguments are all known at import time with torch itself, the single missing-ops error,
and assembling `@main`.

Folding is how shape arithmetic, masks built from `arange`/`full`, and other values that do
not depend on the inputs' contents stay out of the IR. Ops listed in SHAPE_ONLY read only the
shape and dtype of their tensor arguments (`size`, `zeros_like`, ...), so they fold even when
those tensors are computed at run time.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, LocationAttr, ModuleOp
from xdsl.ir import Region, SSAValue
from xrelay.errors import Error, ShapeError, UnsupportedOpsError
from xrelay.frontends.pytorch.call import Call, GraphBuilder, Unavailable, torch_dtype_of
from xrelay.frontends.pytorch.registry import Converter
from xrelay.ir import verify_module
from xrelay.signature import arg_attrs

SHAPE_ONLY = {
    "aten::size",
    "aten::sym_size",
    "aten::dim",
    "aten::numel",
    "aten::sym_numel",
    "aten::zeros_like",
    "aten::ones_like",
    "aten::full_like",
    "aten::empty_like",
    "aten::new_zeros",
    "aten::new_ones",
    "aten::new_full",
    "aten::new_empty",
    "aten::_shape_as_tensor",
}

# Small integer and bool buffers hold positions and index tables, not weights: they are
# constants at import time (so the shape arithmetic on them folds), not parameters.
SMALL_INT_BUFFER_ELEMENTS = 1024


def is_index_table(tensor: torch.Tensor) -> bool:
    return not tensor.is_floating_point() and tensor.numel() <= SMALL_INT_BUFFER_ELEMENTS


def shape_proxy(value: Any) -> Any:
    """For SHAPE_ONLY folding: SSA tensors become zero tensors of their shape and dtype."""
    if isinstance(value, SSAValue):
        return torch.zeros(value.type.get_shape(), dtype=torch_dtype_of(value))
    if isinstance(value, list | tuple):
        return type(value)(shape_proxy(v) for v in value)
    return value


def is_nondeterministic(op: Any) -> bool:
    tags = getattr(op, "tags", ())
    return torch.Tag.nondeterministic_seeded in tags


def fold(label: str, fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    """Evaluate an op on values known at import time with torch."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, Unavailable):
            raise Error(f"PyTorch op {label}: unsupported use of {value.what}")
    try:
        with torch.no_grad():
            return fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - torch raises many kinds; name the op
        raise Error(f"PyTorch op {label}: evaluating at import time failed: {e}") from None


def convert(
    builder: GraphBuilder,
    converter: Converter,
    kind: str,
    overload: str,
    names: Sequence[str],
    values: Sequence[Any],
    label: str,
    loc: LocationAttr,
) -> Any:
    """Run one converter; any failure becomes an Error naming the op."""
    c = Call(builder, kind, overload, names, values, label, loc)
    try:
        return converter(c)
    except Error as e:
        if str(e).startswith("PyTorch op"):
            raise
        raise c.error(str(e)) from None
    except ShapeError as e:
        raise c.error(str(e)) from None
    except Exception as e:  # noqa: BLE001 - a converter bug must still name the op
        raise c.error(f"{type(e).__name__}: {e}") from None


def raise_missing(missing: Counter[str], source: str) -> None:
    """One UnsupportedOpsError naming every op kind without a converter, with counts."""
    if not missing:
        return
    total = sum(missing.values())
    items = ", ".join(f"{kind} x{n}" for kind, n in sorted(missing.items()))
    raise UnsupportedOpsError(
        f"{total} unsupported PyTorch operator{'s' if total > 1 else ''} ({source}): {items}"
    )


def flatten_outputs(value: Any) -> list[Any]:
    """A model's outputs in order: tuples, lists and dicts (ModelOutput) flattened."""
    if isinstance(value, dict):
        return [v for item in value.values() for v in flatten_outputs(item)]
    if isinstance(value, list | tuple):
        return [v for item in value for v in flatten_outputs(item)]
    return [value]


def build_main(
    builder: GraphBuilder,
    outputs: Sequence[Any],
    names: Sequence[str],
    num_data: int,
    params: dict[str, Any],
    loc: LocationAttr,
) -> ModuleOp:
    """Finish `@main`: return `outputs` (known tensors materialized), name the arguments,
    and drop parameters no op uses (from `params` too)."""
    results = []
    for i, value in enumerate(outputs):
        if isinstance(value, Unavailable):
            raise Error(f"output {i} is {value.what}, which xrelay does not compute")
        if isinstance(value, torch.Tensor | np.ndarray):
            value = builder.constant(value, loc)
        if not isinstance(value, SSAValue):
            raise Error(f"output {i} is a {type(value).__name__}, not a tensor")
        results.append(value)
    builder.block.add_op(func.ReturnOp(*results))
    block = builder.block
    names = list(names)
    for i in reversed(range(num_data, len(block.args))):
        if not block.args[i].uses:
            block.erase_arg(block.args[i])
            params.pop(names.pop(i), None)
    for arg, name in zip(block.args, names):
        arg.name_hint = _ssa_name(name)
    fn = func.FuncOp(
        "main",
        FunctionType.from_lists([a.type for a in block.args], [r.type for r in results]),
        Region(block),
        arg_attrs=arg_attrs(list(names), num_data),
    )
    module = ModuleOp([fn])
    verify_module(module)
    return module


def _ssa_name(name: str) -> str:
    cleaned = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)
    return cleaned if cleaned and not cleaned[0].isdigit() else "v" + cleaned
