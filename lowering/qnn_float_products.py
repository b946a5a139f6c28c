"""`qnn-float-products`: 8-bit products computed exactly on the f32 GEMM.

qnn-legalize turns `qnn.dense` / `qnn.conv2d` into relay products on i32, which lower to
generic integer loops. This stage runs first and rewrites the products whose weight is a
parameter (or a constant) into f32 products, which `select-kernels` sends to the runtime
GEMM (packed weights, the vector micro-kernel, threads):

    (x - zx) . (w - zw)  =  sum over K chunks of  i32(f32(x - zx)[chunk] . f32(w - zw)[chunk])

Every operand is an integer of at most 9 bits, so a product and every partial sum of a
chunk are integers; a chunk is short enough that no partial sum exceeds 2^24 in magnitude
(`chunk_length`), so f32 holds each one exactly, in any summation order, and the i32 sum
of the chunks is the exact integer result: bit for bit what the i32 loops give. The bound
comes from the dtypes and the zero points (constants of the IR), never from the weight
values, so `xrelay-opt` and `build` produce the same IR; under `build` the f32 weight
chunks are computed once, at build time, and join the parameters like packed weights.

A data zero point computed at run time (dynamic quantization) is subtracted at run time and
bounds the chunks by the dtype's whole span. Left to qnn-legalize: products whose weight is
computed at run time, weight zero points that are not constants, grouped convolutions whose K exceeds one chunk, and batch_matmul.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ModuleOp,
    TensorType,
    f32,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xrelay.dialects import qnn, relay
from xrelay.dialects.constants import constant_value
from xrelay.dialects.dtypes import dense_from_numpy, numpy_dtype
from xrelay.lowering.context import BuildContext, add_parameter
from xrelay.signature import param_name

EXACT = 1 << 24  # f32 holds every integer up to this magnitude


def chunk_length(x_range: int, w_range: int) -> int:
    """The longest K whose partial sums of products stay within EXACT: the magnitudes of
    (x - zx) and (w - zw) are at most x_range and w_range."""
    return max(1, EXACT // max(1, x_range * w_range))


def centered_range(dtype: np.dtype, zero_point: np.ndarray) -> int:
    """The largest |q - zp| for q of an 8-bit dtype and the zero points given."""
    info = np.iinfo(dtype)
    zp = np.asarray(zero_point, np.int64)
    return int(max(np.max(np.abs(info.max - zp)), np.max(np.abs(info.min - zp))))


class Weights:
    """The parameters of @main and their arrays (under build), and the f32 chunks added."""

    def __init__(self, fn: func.FuncOp, ctx: Context) -> None:
        self.fn = fn
        self.ctx = ctx

    def add(self, name: str, shape: tuple[int, ...], make, elem: Attribute = f32) -> SSAValue:
        """A new parameter `name` of `shape` (f32, or `elem`); under build its array is
        `make()`."""
        return add_parameter(self.fn, self.ctx, name, TensorType(elem, list(shape)), make)

    def source(self, value: SSAValue):
        """(name, transposed, value array or None) of a weight that is a parameter, a
        parameter transposed [1, 0], or a constant; None for anything computed."""
        transposed = False
        owner = value.owner
        if isinstance(owner, relay.TransposeOp) and list(owner.attrs.axes or []) == [1, 0]:
            transposed, value = True, owner.data
        const = constant_value(value)
        if const is not None:
            return None, transposed, const
        name = param_name(self.fn, value)
        if name is None:
            return None
        array = self.ctx.params.get(name) if isinstance(self.ctx, BuildContext) else None
        return name, transposed, array


class Rewrite:
    def __init__(self, op: qnn.ProductOp, weights: Weights) -> None:
        self.op = op
        self.weights = weights

    def emit(self, new: Operation) -> SSAValue:
        new.location = self.op.location
        Rewriter.insert_op(new, InsertPoint.before(self.op))
        return new.results[0]

    def centered_data(self, zx: np.ndarray | None) -> SSAValue:
        """f32(x) - f32(zx), the zero point a constant or (None) the op's run-time one."""
        x = self.emit(relay.CastOp(self.op.data, dtype=f32))
        if zx is None:
            zero = self.emit(relay.CastOp(self.op.input_zero_point, dtype=f32))
        else:
            zero = self.emit(relay.ConstantOp(dense_from_numpy(np.asarray(zx, np.float32))))
        return self.emit(relay.SubtractOp(x, zero))

    def chunk(self, x: SSAValue, axis: int, lo: int, hi: int, length: int) -> SSAValue:
        if lo == 0 and hi == length:
            return x
        return self.emit(relay.StridedSliceOp(x, begin=[lo], end=[hi], strides=[1], axes=[axis]))

    def accumulate(self, parts: list[SSAValue]) -> SSAValue:
        total = None
        for part in parts:
            part = self.emit(relay.CastOp(part, dtype=i32))
            total = part if total is None else self.emit(relay.AddOp(total, part))
        assert total is not None
        return total


def _scalar_or_vector(value: SSAValue) -> np.ndarray | None:
    array = constant_value(value)
    if array is None or array.ndim > 1:
        return None
    return np.asarray(array, np.int64)


def rewrite_product(op: qnn.ProductOp, weights: Weights, serial: list[int]) -> bool:
    """Rewrite one qnn.dense / qnn.conv2d; False where it does not apply."""
    if not isinstance(op, (qnn.DenseOp, qnn.Conv2DOp)):
        return False
    x_dtype = numpy_dtype(op.data.type.element_type)
    w_dtype = numpy_dtype(op.weight.type.element_type)
    if x_dtype.itemsize != 1 or w_dtype.itemsize != 1 or x_dtype.kind not in "iu":
        return False
    zx, zw = _scalar_or_vector(op.input_zero_point), _scalar_or_vector(op.kernel_zero_point)
    if zw is None or (zx is not None and zx.ndim != 0):
        return False
    if zx is None and op.input_zero_point.type.get_shape() != ():
        return False
    # a data zero point computed at run time (dynamic quantization) may be anywhere in the
    # dtype's range: |x - zx| up to the whole span
    info = np.iinfo(x_dtype)
    x_range = centered_range(x_dtype, zx) if zx is not None else int(info.max) - int(info.min)
    found = weights.source(op.weight)
    if found is None:
        return False
    name, transposed, array = found
    limit = chunk_length(x_range, centered_range(w_dtype, zw))
    w_shape = tuple(op.weight.type.get_shape())

    def centered_weight(lo: int, hi: int) -> np.ndarray:
        """(w - zw)[:, lo:hi] in f32 (exact: 9-bit integers), made for that chunk alone
        (an int64 copy of the whole weight per chunk was the int8 build's peak)."""
        w = np.asarray(array)
        w = (w.T if transposed else w)[:, lo:hi]
        z = zw.reshape((-1,) + (1,) * (w.ndim - 1)) if zw.ndim else zw
        return w.astype(np.float32) - np.asarray(z, np.float32)

    if isinstance(op, qnn.Conv2DOp) and op.attrs.groups != 1:
        _, c, kh, kw = w_shape
        if c * kh * kw > limit:  # a group's channels cannot be split
            return False
    rw = Rewrite(op, weights)
    serial[0] += 1
    stem = f"{name or 'const'}.f32.{serial[0]}"
    x = rw.centered_data(zx)
    parts = []
    if isinstance(op, qnn.DenseOp):
        n, k = w_shape
        axis = len(op.data.type.get_shape()) - 1
        for lo in range(0, k, limit):
            hi = min(k, lo + limit)
            w = weights.add(
                f"{stem}.{lo}", (n, hi - lo), lambda lo=lo, hi=hi: centered_weight(lo, hi)
            )
            parts.append(rw.emit(relay.DenseOp(rw.chunk(x, axis, lo, hi, k), w)))
    else:
        a = op.attrs
        o, c, kh, kw = w_shape
        per_channel = kh * kw
        groups = a.groups
        step = c if groups != 1 else max(1, limit // per_channel)
        for lo in range(0, c, step):
            hi = min(c, lo + step)
            w = weights.add(
                f"{stem}.{lo}",
                (o, hi - lo, kh, kw),
                lambda lo=lo, hi=hi: centered_weight(lo, hi),
            )
            conv = relay.Conv2DOp(
                rw.chunk(x, 1, lo, hi, c),
                w,
                strides=a.strides,
                padding=a.padding,
                dilation=a.dilation,
                groups=groups,
            )
            parts.append(rw.emit(conv))
    result = rw.accumulate(parts)
    op.results[0].replace_all_uses_with(result)
    weight = op.weight.owner
    Rewriter.erase_op(op)
    if isinstance(weight, relay.TransposeOp) and not weight.results[0].uses:
        Rewriter.erase_op(weight)  # the int8 weight's transpose would still run every call
    return True


def float_products(module: ModuleOp, ctx: Context) -> int:
    """Rewrite the 8-bit products of every function; returns how many."""
    count, serial = 0, [0]
    for fn in [f for f in module.ops if isinstance(f, func.FuncOp) and f.body.blocks]:
        weights = Weights(fn, ctx)
        for op in [o for o in fn.walk() if isinstance(o, (qnn.DenseOp, qnn.Conv2DOp))]:
            count += rewrite_product(op, weights, serial)
    return count


@dataclass(frozen=True)
class QnnFloatProducts(ModulePass):
    """8-bit dense and conv2d with parameter weights -> exact f32 products in K chunks.
    Option: enabled (default true)."""

    name = "qnn-float-products"

    enabled: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.enabled:
            float_products(op, ctx)
