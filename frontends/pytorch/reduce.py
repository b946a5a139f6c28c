"""PyTorch reductions -> relay: sum, mean, prod, amax/amin, max/min (with indices), any/all,
argmax/argmin, var/std, cumsum/cumprod, logsumexp and vector norms."""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dtypes import numpy_dtype
from xrelay.frontends.common import matmul_nd
from xrelay.frontends.pytorch.call import Call
from xrelay.frontends.pytorch.elementwise import binary
from xrelay.frontends.pytorch.registry import aten_op

REDUCTIONS = {
    "sum": relay.SumOp,
    "mean": relay.MeanOp,
    "prod": relay.ProdOp,
    "amax": relay.MaxOp,
    "amin": relay.MinOp,
}


def _axes(c: Call, key: str = "dim") -> list[int]:
    """The reduced axes; absent, None or empty means all of them."""
    rank = c.rank(0)
    dims = c.value(key, None) if key in c.names else None
    if dims is None or dims == []:
        return list(range(rank))
    dims = [dims] if isinstance(dims, int) else list(dims)
    return sorted({d % max(rank, 1) for d in dims})


@aten_op(*REDUCTIONS)
def reduce(c: Call) -> SSAValue:
    name = c.name
    x = c.tensor(0)
    dtype = c.dtype_arg("dtype") if "dtype" in c.names else None
    if dtype is None and name in ("sum", "prod") and c.dtype(0).kind in "bi":
        dtype = np.dtype(np.int64)  # torch sums integers and bools in int64
    if dtype is not None:
        x = c.cast(x, dtype)
    keepdim = bool(c.value("keepdim", False))
    return c.emit(REDUCTIONS[name](x, axis=_axes(c), keepdims=keepdim))


@aten_op("max", "min")
def max_min(c: Call) -> object:
    is_max = c.kind.endswith("max")
    if "other" in c.names:
        return binary(c, relay.MaximumOp if is_max else relay.MinimumOp, c.raw(0), c.raw(1))
    cls = relay.MaxOp if is_max else relay.MinOp
    if "dim" not in c.names:
        return c.emit(cls(c.tensor(0), axis=list(range(c.rank(0))), keepdims=False))
    axis = c.int("dim") % c.rank(0)
    keepdim = bool(c.value("keepdim", False))
    values = c.emit(cls(c.tensor(0), axis=[axis], keepdims=keepdim))
    arg = relay.ArgmaxOp if is_max else relay.ArgminOp
    indices = c.emit(arg(c.tensor(0), axis=axis, keepdims=keepdim))
    return values, indices


@aten_op("argmax", "argmin")
def argmax(c: Call) -> SSAValue:
    cls = relay.ArgmaxOp if c.kind.endswith("argmax") else relay.ArgminOp
    x = c.tensor(0)
    keepdim = bool(c.value("keepdim", False))
    if c.value("dim", None) is None:
        flat = c.emit(relay.ReshapeOp(x, newshape=[int(np.prod(c.shape(0)))]))
        y = c.emit(cls(flat, axis=0, keepdims=False))
        if keepdim:
            y = c.emit(relay.ReshapeOp(y, newshape=[1] * c.rank(0)))
        return y
    return c.emit(cls(x, axis=c.int("dim") % c.rank(0), keepdims=keepdim))


@aten_op("any", "all")
def any_all(c: Call) -> SSAValue:
    x = c.tensor(0, np.bool_)
    as_int = c.cast(x, np.int32)
    cls = relay.MaxOp if c.kind.endswith("any") else relay.MinOp
    keepdim = bool(c.value("keepdim", False))
    y = c.emit(cls(as_int, axis=_axes(c), keepdims=keepdim))
    return c.cast(y, np.bool_)


@aten_op("var", "std")
def var_std(c: Call) -> SSAValue:
    x = c.tensor(0)
    axes = _axes(c)
    correction = c.value("correction", None) if "correction" in c.names else None
    if correction is None:
        correction = 1 if c.value("unbiased", True) else 0
    count = int(np.prod([c.shape(0)[a] for a in axes]))
    keepdim = bool(c.value("keepdim", False))
    mean = c.emit(relay.MeanOp(x, axis=axes, keepdims=True))
    centered = c.emit(relay.SubtractOp(x, mean))
    squares = c.emit(
        relay.SumOp(c.emit(relay.MultiplyOp(centered, centered)), axis=axes, keepdims=keepdim)
    )
    y = c.emit(relay.DivideOp(squares, c.constant(max(count - float(correction), 0.0), c.dtype(0))))
    return c.emit(relay.SqrtOp(y)) if c.kind.endswith("std") else y


@aten_op("cumsum")
def cumsum(c: Call) -> SSAValue:
    """A matrix product with a triangular 0/1 matrix along the axis."""
    rank = c.rank(0)
    axis = c.axis("dim", rank)
    dtype = c.dtype_arg("dtype") or (np.dtype(np.int64) if c.dtype(0).kind in "bi" else c.dtype(0))
    x = c.tensor(0, dtype)
    n = c.shape(0)[axis]
    i, j = np.indices((n, n))
    m = c.constant((i <= j).astype(dtype))
    perm = [d for d in range(rank) if d != axis] + [axis]
    if axis != rank - 1:
        x = c.emit(relay.TransposeOp(x, axes=perm))
    y = matmul_nd(c, x, m)
    if axis != rank - 1:
        y = c.emit(relay.TransposeOp(y, axes=[int(a) for a in np.argsort(perm)]))
    return y


@aten_op("cumprod")
def cumprod(c: Call) -> SSAValue:
    """out[i] = prod(x[j] for j <= i): the product over an [n, n] lower-triangular spread
    (ones above the diagonal) of the axis."""
    rank = c.rank(0)
    if rank == 0:
        return c.tensor(0)
    axis = c.axis("dim", rank)
    dtype = c.dtype_arg("dtype") or (np.dtype(np.int64) if c.dtype(0).kind in "bi" else c.dtype(0))
    x = c.tensor(0, dtype)
    n = c.shape(0)[axis]
    spread = c.emit(relay.ExpandDimsOp(x, axis=axis))  # [..., 1 (i), n (j), ...]
    shape = [1] * (rank + 1)
    shape[axis], shape[axis + 1] = n, n
    i, j = np.indices((n, n))
    keep = c.constant((j <= i).reshape(shape))
    picked = c.emit(relay.WhereOp(keep, spread, c.constant(1, dtype)))
    return c.emit(relay.ProdOp(picked, axis=[axis + 1]))


@aten_op("logsumexp")
def logsumexp(c: Call) -> SSAValue:
    """max + log(sum(exp(x - max))), the max taken as 0 where it is infinite."""
    x = c.tensor(0)
    if c.dtype(0).kind != "f":
        x = c.cast(x, np.float32)
    axes = _axes(c)
    keepdim = bool(c.value("keepdim", False))
    top = c.emit(relay.MaxOp(x, axis=axes, keepdims=True))
    infinite = c.emit(relay.EqualOp(c.emit(relay.AbsOp(top)), c.constant(np.inf, x_dtype(x))))
    top = c.emit(relay.WhereOp(infinite, c.constant(0, x_dtype(x)), top))
    total = c.emit(
        relay.SumOp(
            c.emit(relay.ExpOp(c.emit(relay.SubtractOp(x, top)))), axis=axes, keepdims=keepdim
        )
    )
    if not keepdim:
        top = c.emit(relay.ReshapeOp(top, newshape=list(total.type.get_shape())))
    return c.emit(relay.AddOp(c.emit(relay.LogOp(total)), top))


def x_dtype(x: SSAValue) -> np.dtype:
    return numpy_dtype(x.type.element_type)


@aten_op("linalg_vector_norm", "norm")
def vector_norm(c: Call) -> SSAValue:
    """(sum |x|**p)**(1/p) over the axes; p = inf / -inf: max / min of |x|; p = 0: the
    count of nonzero entries."""
    p = c.value("ord" if "ord" in c.names else "p", 2)
    if isinstance(p, str):
        raise c.unsupported(f"norm p='{p}'")
    p = 2.0 if p is None else float(p)
    dtype = c.dtype_arg("dtype") if "dtype" in c.names else None
    x = c.tensor(0)
    if dtype is not None:
        x = c.cast(x, dtype)
    elif c.dtype(0).kind != "f":
        raise c.error(f"norm of a {c.dtype(0)} tensor (torch requires a float input)")
    axes = _axes(c)
    keep = bool(c.value("keepdim", False))
    magnitude = c.emit(relay.AbsOp(x))
    like = x_dtype(x)
    if math.isinf(p):
        return c.emit((relay.MaxOp if p > 0 else relay.MinOp)(magnitude, axis=axes, keepdims=keep))
    if p == 0:
        nonzero = c.emit(relay.NotEqualOp(x, c.constant(0, like)))
        return c.emit(relay.SumOp(c.cast(nonzero, like), axis=axes, keepdims=keep))
    if p == 1:
        return c.emit(relay.SumOp(magnitude, axis=axes, keepdims=keep))
    if p == 2:
        squares = c.emit(relay.MultiplyOp(x, x))
        return c.emit(relay.SqrtOp(c.emit(relay.SumOp(squares, axis=axes, keepdims=keep))))
    powers = c.emit(relay.PowerOp(magnitude, c.constant(p, like)))
    total = c.emit(relay.SumOp(powers, axis=axes, keepdims=keep))
    return c.emit(relay.PowerOp(total, c.constant(1 / p, like)))
