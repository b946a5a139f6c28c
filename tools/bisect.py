"""`xrelay bisect`: find the first op whose compiled result diverges from the reference.

Every value a relay or qnn op of `@main` computes becomes an extra result of a copy of the
module; the copy is compiled once (the JIT) and evaluated once (the numpy reference
executor) on the same inputs, and the values are compared in program order. The first op
whose value differs beyond `rtol`/`atol` (relative to the reference's largest magnitude),
or whose NaNs or shape differ, is the one reported, with its location (the ONNX node or
PyTorch op it came from) and both values' errors. Exposing every value keeps ops from
being fused across them, so a fault that only shows in a fused kernel may not reproduce.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xrelay.dialects.dims import is_dynamic
from xrelay.dialects.relay.base import RelayOp
from xrelay.errors import Error
from xrelay.ir import location_str
from xrelay.signature import FunctionSignature, main_function


@dataclass
class Divergence:
    op: Operation
    location: str
    max_abs: float
    max_rel: float
    detail: str

    def __str__(self) -> str:
        return (
            f"{self.location}: '{self.op.name}' diverges: {self.detail} (max abs error "
            f"{self.max_abs:.3g}, max relative error {self.max_rel:.3g})"
        )


@dataclass
class Report:
    checked: int  # values compared
    first: Divergence | None


def _watched(fn: func.FuncOp) -> list[tuple[Operation, SSAValue]]:
    """The values relay and qnn ops compute (qnn ops are RelayOps too), constants aside."""
    out = []
    for op in fn.body.block.ops:
        if isinstance(op, RelayOp) and op.name != "relay.constant":
            for result in op.results:
                if isinstance(result.type, TensorType):
                    out.append((op, result))
    return out


def _compare(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> str | None:
    if got.shape != want.shape:
        return f"shape {list(got.shape)}, the reference {list(want.shape)}"
    if got.size == 0:
        return None
    if want.dtype.kind not in "fc":
        bad = got != want
        return f"{int(bad.sum())} of {got.size} elements differ" if bad.any() else None
    g, w = got.astype(np.float64), want.astype(np.float64)
    nan = np.isnan(g) != np.isnan(w)
    if nan.any():
        return f"{int(nan.sum())} of {got.size} elements are NaN in one only"
    finite = np.isfinite(w)
    scale = float(np.abs(w[finite]).max()) if finite.any() else 1.0
    tolerance = atol * max(scale, 1e-6) + rtol * np.abs(w)
    both = ~np.isnan(w)
    bad = both & ~(np.abs(g - w) <= tolerance) & ~(g == w)
    return f"{int(bad.sum())} of {got.size} elements beyond tolerance" if bad.any() else None


def bisect(
    module: ModuleOp,
    params: Mapping[str, np.ndarray],
    inputs: Mapping[str, np.ndarray],
    rtol: float = 1e-3,
    atol: float = 1e-4,
) -> Report:
    """Compile and evaluate every intermediate value of `module` on `inputs`; the first
    divergence (see the module docstring)."""
    from xrelay.lowering.build import build
    from xrelay.reference import create_executor

    sig = FunctionSignature.of(main_function(module))
    if sig.is_dynamic:
        raise Error("bisect runs static shapes: pin the inputs' shapes (--shape) first")
    work = module.clone()
    fn = main_function(work)
    watched = _watched(fn)
    if not watched:
        raise Error("@main computes nothing to compare")
    ret = fn.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    if any(is_dynamic(v.type) for _, v in watched):
        raise Error("bisect runs static shapes: a value has a dynamic shape")
    new_ret = func.ReturnOp(*ret.arguments, *[v for _, v in watched])
    ret.detach()
    ret.erase()
    fn.body.block.add_op(new_ret)
    fn.function_type = FunctionType.from_lists(
        list(fn.function_type.inputs), [v.type for v in new_ret.arguments]
    )
    fn.res_attrs = None
    n = len(new_ret.arguments) - len(watched)
    compiled = build(work, params, cache=False).run(**inputs)[n:]
    reference = create_executor("debug", work, params).run(**inputs)[n:]
    for (op, _), got, want in zip(watched, compiled, reference):
        detail = _compare(np.asarray(got), np.asarray(want), rtol, atol)
        if detail is not None:
            g, w = np.asarray(got, np.float64), np.asarray(want, np.float64)
            same_shape = g.shape == w.shape
            diff = np.abs(g - w) if same_shape else np.array([np.inf])
            finite = diff[np.isfinite(diff)]
            max_abs = float(finite.max()) if finite.size else float("inf")
            rel = diff / np.maximum(np.abs(w), 1e-30) if same_shape else diff
            finite_rel = rel[np.isfinite(rel)]
            max_rel = float(finite_rel.max()) if finite_rel.size else float("inf")
            return Report(len(watched), Divergence(op, location_str(op), max_abs, max_rel, detail))
    return Report(len(watched), None)
