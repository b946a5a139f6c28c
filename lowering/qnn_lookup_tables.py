"""`qnn-lookup-tables`: a chain of unary ops from 8-bit values to 8-bit values -> one
table lookup (lowering/kernels/lut.py).

An 8-bit tensor holds one of 256 values per element, so a chain of ops that each read only
the previous one's result and parameters known at build time (scalars, or vectors along
one axis) is a function of the value and the index along that axis. Computed at build time
for the 256 values of each index, it is a table [C, 256] of bytes, and the chain becomes a
call of the runtime's lookup: two `vpermi2b` and a select per 64 bytes (AVX512-VBMI)
instead of the chain's arithmetic. The ops a chain may hold:

    qnn.dequantize, qnn.quantize, qnn.requantize (half to even), relay.nn.batch_norm,
    relay.nn.relu, relay.clip

A chain becomes a table when it ends in 8-bit values and has a batch_norm or a
(re)quantization that is not the identity; a lone requantization is one too. A
qnn.concatenate is first split into a qnn.requantize of each input whose parameters are
not the result's and a relay.concatenate (what qnn-legalize would make of it), so those
inputs go through tables and then straight into their slice of the result (SqueezeNet
int8's fire modules: 14 us of float arithmetic per 193,600 bytes -> 7 us). QDQ models
where batch normalization was not folded before quantization run every convolution's
bytes through dequantize -> batch_norm -> quantize: about 20 vector instructions and a
divide per 16 values in the fused loop (QDQ ResNet-50: the chains were about a quarter of
its time), where the lookup is one pass over the bytes.

The table holds what the compiled chain computes, bit for bit: each op is evaluated in
numpy with the operations and f32 roundings of its lowering (qnn-legalize's arithmetic;
batch_norm's 1 / sqrt(var + eps) factor applied before gamma), one IEEE operation at a
time as LLVM emits them (no contraction). A chain where any value is NaN (the compiled
casts leave NaN to the hardware) stays as it is. The data must have static sizes; the
axis splits it into planes (outer x channels x plane bytes), of at least MIN_PLANE bytes
with per-channel tables; data under one table is cut into planes of at most SHARED_PLANE
bytes, which the threads share.

Under `build` the parameters' arrays are read from the build context and the tables
computed; under a plain Context (xrelay-opt) the IR changes in the same way and the
tables are parameters without values. Option `enabled` (build: where the target has
AVX512-VBMI).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerType, ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xrelay.dialects import qnn, relay
from xrelay.dialects.constants import constant_value, equal_constants
from xrelay.dialects.dtypes import numpy_dtype
from xrelay.dialects.kernel import LutAttr, LutSpec
from xrelay.dialects.qnn.base import dtype_range
from xrelay.lowering.context import BuildContext, add_parameter
from xrelay.lowering.relay_to_linalg.builder import is_unsigned
from xrelay.lowering.relay_to_linalg.elementwise import clip_bounds
from xrelay.lowering.select_kernels import KERNEL_ATTR, single_user
from xrelay.signature import param_name

# bytes per channel from which per-channel tables pay for loading their rows: QDQ ResNet-50
# (same-process A/B, 81 runs) 7.82 ms with tables everywhere, 7.50 from 128 (not its 7 x 7
# stage), 7.72 from 256, 7.85 from 512
MIN_PLANE = 128
SHARED_PLANE = 4096  # a table shared by all the data: planes of at most this many bytes
CHAIN_OPS = (
    qnn.DequantizeOp,
    qnn.QuantizeOp,
    qnn.RequantizeOp,
    relay.BatchNormOp,
    relay.ReluOp,
    relay.ClipOp,
)


def _elem(value: SSAValue):
    assert isinstance(value.type, TensorType)
    return value.type.element_type


def _is_8bit(value: SSAValue) -> bool:
    e = _elem(value)
    return isinstance(e, IntegerType) and e.width.data == 8


class Known:
    """Values known at build time: constants, parameters of the function, and
    dequantizations of those (a batch_norm's gamma and beta in QDQ models). `array`
    gives the value under build, None under a plain Context."""

    def __init__(self, fn: func.FuncOp, ctx: Context) -> None:
        self.fn = fn
        self.ctx = ctx

    def known(self, value: SSAValue) -> bool:
        if constant_value(value) is not None or param_name(self.fn, value) is not None:
            return True
        op = value.owner
        return isinstance(op, qnn.DequantizeOp) and all(self.known(v) for v in op.operands)

    def array(self, value: SSAValue) -> np.ndarray | None:
        const = constant_value(value)
        if const is not None:
            return np.asarray(const)
        name = param_name(self.fn, value)
        if name is not None:
            params = self.ctx.params if isinstance(self.ctx, BuildContext) else {}
            return params.get(name)
        op = value.owner
        assert isinstance(op, qnn.DequantizeOp)
        q, scale, zp = (self.array(v) for v in op.operands)
        if q is None or scale is None or zp is None:
            return None
        rank = q.ndim
        return _dequantize(q, _along(scale, rank, op.attrs.axis), _along(zp, rank, op.attrs.axis))


def _along(param: np.ndarray, rank: int, axis: int) -> np.ndarray:
    """A per-channel parameter shaped to broadcast along `axis` of a rank-`rank` value."""
    param = np.asarray(param)
    if param.ndim == 0:
        return param
    shape = [1] * rank
    shape[axis % rank] = param.shape[0]
    return param.reshape(shape)


# --- each op as its lowering computes it (qnn-legalize, relay-to-linalg) -------------------


def _dequantize(q: np.ndarray, scale: np.ndarray, zp: np.ndarray) -> np.ndarray:
    centered = q.astype(np.int32) - zp.astype(np.int32)
    return centered.astype(np.float32) * scale.astype(np.float32)


def _maximum(x: np.ndarray, c) -> np.ndarray:
    """arith.maximumf / maxsi / maxui: for floats -0 < +0 (numpy may keep either zero)."""
    r = np.maximum(x, c)
    if x.dtype.kind != "f":
        return r
    negative = np.signbit(x) & np.signbit(np.asarray(c, x.dtype))
    return np.where(r == 0, np.where(negative, x.dtype.type(-0.0), x.dtype.type(0)), r)


def _minimum(x: np.ndarray, c) -> np.ndarray:
    r = np.minimum(x, c)
    if x.dtype.kind != "f":
        return r
    negative = np.signbit(x) | np.signbit(np.asarray(c, x.dtype))
    return np.where(r == 0, np.where(negative, x.dtype.type(-0.0), x.dtype.type(0)), r)


def _saturate(x: np.ndarray, zp: np.ndarray, dtype) -> np.ndarray:
    lo, hi = dtype_range(dtype)
    shifted = np.rint(x) + zp.astype(np.int32).astype(np.float32)
    clipped = _minimum(_maximum(shifted, np.float32(lo)), np.float32(hi))
    return clipped.astype(numpy_dtype(dtype))


def _vector_axis(op: Operation, rank: int) -> int | None:
    """The axis op's vector parameters run along (None: it has none)."""
    axis = getattr(op.attrs, "axis", 1) % rank
    params = op.operands[1:]
    return axis if any(len(v.type.get_shape()) == 1 for v in params) else None


Apply = Callable[[np.ndarray, list[np.ndarray]], np.ndarray]


def _step(op: Operation) -> Apply:
    """`op` in numpy on the chain's values [rows, 256], given its parameters (vectors along
    the chain's axis as [rows, 1] columns): the operations and roundings of its lowering."""
    if isinstance(op, qnn.DequantizeOp):
        return lambda x, p: _dequantize(x, p[0], p[1])
    if isinstance(op, qnn.QuantizeOp):
        dtype = op.attrs.out_dtype
        return lambda x, p: _saturate(x / p[0].astype(np.float32), p[1], dtype)
    if isinstance(op, qnn.RequantizeOp):  # (half to even: chain_from)
        dtype = op.attrs.out_dtype

        def requantize(x, p):
            in_scale, in_zp, out_scale, out_zp = p
            multiplier = in_scale.astype(np.float32) / out_scale.astype(np.float32)
            return _saturate(_dequantize(x, multiplier, in_zp), out_zp, dtype)

        return requantize
    if isinstance(op, relay.BatchNormOp):
        eps = np.float32(op.attrs.epsilon)

        def batch_norm(x, p):
            gamma, beta, mean, var = (v.astype(np.float32) for v in p)
            inv = np.float32(1) / np.sqrt(var + eps)
            return (x - mean) * inv * gamma + beta

        return batch_norm
    if isinstance(op, relay.ReluOp):
        return lambda x, p: _maximum(x, x.dtype.type(0))
    assert isinstance(op, relay.ClipOp)

    def clip(x, p):
        lo, hi = clip_bounds(op, _elem(op.results[0]))
        return _minimum(_maximum(x, x.dtype.type(lo)), x.dtype.type(hi))

    return clip


def _same_parameters(value: SSAValue, scale: SSAValue, zp: SSAValue, out_scale: SSAValue,
                    out_zp: SSAValue, dtype) -> bool:  # fmt: skip
    """Does requantizing `value` to (out_scale, out_zp, dtype) keep it as it is?"""
    return (
        _elem(value) == dtype and equal_constants(scale, out_scale) and equal_constants(zp, out_zp)
    )


def _identity_requantize(op: Operation) -> bool:
    return isinstance(op, qnn.RequantizeOp) and _same_parameters(
        op.data, op.input_scale, op.input_zero_point, op.output_scale, op.output_zero_point,
        op.attrs.out_dtype,
    )  # fmt: skip


def _worth_a_table(ops: list[Operation]) -> bool:
    """A chain (one op is enough: a lone requantization, such as a concatenation's input
    or a max pool's result) with a batch_norm or a (re)quantization that is not the
    identity."""
    return any(
        isinstance(op, (relay.BatchNormOp, qnn.QuantizeOp))
        or (isinstance(op, qnn.RequantizeOp) and not _identity_requantize(op))
        for op in ops
    )


def chain_from(value: SSAValue, known: Known) -> tuple[list[Operation], int | None] | None:
    """The longest chain of table-able ops starting at the 8-bit `value` that ends in an
    8-bit result and is worth a table, and the axis its vector parameters share
    (None: all scalars); None if there is none."""
    rank = len(value.type.get_shape())
    ops: list[Operation] = []
    best: list[Operation] = []
    axis: int | None = None
    best_axis: int | None = None
    current = value
    while True:
        op = single_user(current)
        if not isinstance(op, CHAIN_OPS) or op.operands[0] is not current:
            break
        if isinstance(op, qnn.RequantizeOp) and op.attrs.rounding != "half_to_even":
            break
        if not all(known.known(v) for v in op.operands[1:]):
            break
        if any(len(v.type.get_shape()) > 1 for v in op.operands[1:]):
            break
        op_axis = _vector_axis(op, rank)
        if op_axis is not None and axis is not None and op_axis != axis:
            break
        axis = op_axis if op_axis is not None else axis
        ops.append(op)
        current = op.results[0]
        if _is_8bit(current) and _worth_a_table(ops):
            best, best_axis = list(ops), axis
    if not best:
        return None
    return best, best_axis


def table(value: SSAValue, ops: list[Operation], axis: int | None, rows: int, known: Known):
    """The chain's results for every 8-bit value, [rows, 256] (None where a value is NaN
    or a parameter's array is not available)."""
    dtype = numpy_dtype(_elem(value))
    info = np.iinfo(dtype)
    x = np.broadcast_to(np.arange(info.min, info.max + 1).astype(dtype), (rows, 256))

    with np.errstate(all="ignore"):
        for op in ops:
            params = [known.array(v) for v in op.operands[1:]]
            if any(p is None for p in params):
                return None
            # a vector along the chain's axis becomes a column of the [rows, 256] values
            x = _step(op)(
                x,
                [
                    np.asarray(p).reshape(-1, 1) if np.ndim(p) == 1 else np.asarray(p)
                    for p in params
                ],
            )
            if x.dtype.kind == "f" and np.isnan(x).any():
                return None
    return np.ascontiguousarray(x)


def _planes(shape: tuple[int, ...]) -> tuple[int, int]:
    """(planes, bytes each) of data under one table: the trailing axes of at most
    SHARED_PLANE bytes (at least MIN_PLANE: a plane's last vector is masked), so that
    split_planes has planes to share between the threads (one plane of SqueezeNet int8's
    64 x 55 x 55 took 11-14 us on one thread)."""
    cut = 0
    while cut < len(shape) and int(np.prod(shape[cut:])) > SHARED_PLANE:
        cut += 1
    while cut > 0 and int(np.prod(shape[cut:])) < MIN_PLANE:
        cut -= 1
    return int(np.prod(shape[:cut])), int(np.prod(shape[cut:]))


def rewrite_chain(
    value: SSAValue, module: ModuleOp, fn: func.FuncOp, ctx: Context, known: Known,
    names: list[int],
) -> bool:  # fmt: skip
    found = chain_from(value, known)
    if found is None:
        return False
    ops, axis = found
    shape = value.type.get_shape()
    rows = 1 if axis is None else shape[axis]
    if axis is not None and int(np.prod(shape[axis + 1 :])) < MIN_PLANE:
        return False  # each plane loads its row's 256 bytes of table
    last = ops[-1].results[0]
    out_elem = _elem(last)
    under_build = isinstance(ctx, BuildContext)
    values = table(value, ops, axis, rows, known) if under_build else None
    if under_build and values is None:
        return False
    names[0] += 1
    arg = add_parameter(
        fn, ctx, f"table.{names[0]}", TensorType(out_elem, [rows, 256]), lambda: values
    )
    if axis is not None:
        outer, channels = int(np.prod(shape[:axis])), int(shape[axis])
        plane = int(np.prod(shape[axis + 1 :]))
    else:  # one table: the data in planes the threads can share (split_planes' unit)
        (outer, plane), channels = _planes(shape), 1
    spec = LutSpec(
        outer=outer,
        channels=channels,
        plane=plane,
        per_channel=axis is not None,
        flip=0 if is_unsigned(_elem(value)) else 0x80,
    )
    decl = func.FuncOp.external(f"xr_lut_{names[0]}", [value.type, arg.type], [last.type])
    decl.attributes[KERNEL_ATTR] = LutAttr(spec)
    module.body.block.add_op(decl)
    call = func.CallOp(decl.sym_name.data, [value, arg], [last.type])
    call.location = ops[-1].location
    Rewriter.insert_op(call, InsertPoint.before(ops[-1]))
    last.replace_all_uses_with(call.results[0])
    for op in reversed(ops):
        Rewriter.erase_op(op)
    return True


def split_concatenations(fn: func.FuncOp) -> None:
    """Each qnn.concatenate -> a qnn.requantize of every input whose parameters are not
    the output's, and a relay.concatenate: what qnn-legalize makes of it (its
    `concatenate`), with the requantizations where a chain can take them."""
    for op in [o for o in fn.walk() if isinstance(o, qnn.ConcatenateOp)]:
        values = list(op.operands)
        n = (len(values) - 2) // 3
        out_scale, out_zp = values[3 * n :]
        dtype = _elem(op.results[0])
        parts: list[SSAValue] = []
        for i in range(n):
            value, scale, zp = values[i], values[n + i], values[2 * n + i]
            if _same_parameters(value, scale, zp, out_scale, out_zp, dtype):
                parts.append(value)  # as qnn-legalize: the input itself
                continue
            requantize = qnn.RequantizeOp(value, scale, zp, out_scale, out_zp, out_dtype=dtype)
            requantize.location = op.location
            Rewriter.insert_op(requantize, InsertPoint.before(op))
            parts.append(requantize.results[0])
        concatenate = relay.ConcatenateOp(*parts, axis=op.attrs.axis)
        concatenate.location = op.location
        Rewriter.replace_op(op, concatenate)


def lookup_tables(module: ModuleOp, ctx: Context) -> int:
    count, names = 0, [0]
    for fn in [f for f in module.ops if isinstance(f, func.FuncOp) and f.body.blocks]:
        if fn.arg_attrs is None:
            continue
        split_concatenations(fn)
        known = Known(fn, ctx)
        starts = [a for a in fn.body.block.args if isinstance(a.type, TensorType)]
        starts += [r for op in fn.walk() for r in op.results if isinstance(r.type, TensorType)]
        for value in starts:
            if _is_8bit(value) and value.uses and all(d >= 0 for d in value.type.get_shape()):
                count += rewrite_chain(value, module, fn, ctx, known, names)
    return count


@dataclass(frozen=True)
class QnnLookupTables(ModulePass):
    """Chains of unary ops from 8-bit to 8-bit values -> table lookups (module
    docstring). Option: enabled (default true)."""

    name = "qnn-lookup-tables"

    enabled: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.enabled:
            lookup_tables(op, ctx)
