"""Tensor-manipulation relay ops: constant, reshape, transpose, concatenate, split, squeeze,
expand_dims, batch_flatten, broadcast_to, strided_slice, take, tile, shape_of."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import AnyFloat, DenseIntOrFPElementsAttr, IntegerType, TensorType, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xrelay.dialects.dims import (
    DYNAMIC_ENTRY,
    Dim,
    DimsAttr,
    dim_str,
    equal,
    fmt_dims,
    normalize,
    parse_dim,
    prod,
    shape_of,
    simplify_ratio,
)
from xrelay.errors import Error, ShapeError

from .base import (
    Attrs,
    RelayOp,
    expect_count,
    fmt_type,
    int_prop,
    ints_prop,
    is_bool,
    is_float,
    norm_axes,
    norm_axis,
    opt_ints_prop,
    same_elem,
    str_prop,
    tensor,
    type_prop,
)


@irdl_op_definition
class ConstantOp(RelayOp):
    """A constant tensor.

    %c = relay.constant dense<[1.0, 2.0]> : tensor<2xf32>
    """

    name = "relay.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(TensorType)

    assembly_format = None

    def __init__(self, value: DenseIntOrFPElementsAttr | np.ndarray) -> None:
        if isinstance(value, np.ndarray):
            from xrelay.dialects.dtypes import dense_from_numpy

            value = dense_from_numpy(value)
        RelayOp.__init__(self, value=value)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        if types:
            raise ShapeError(f"'{name}' takes no operands")
        value = attrs.value
        if not isinstance(value, DenseIntOrFPElementsAttr):
            raise ShapeError(f"'{name}' needs a dense elements value")
        return [value.get_type()]

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.value)
        attrs = {k: v for k, v in self.attributes.items()}
        if attrs:
            printer.print_op_attributes(attrs)

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        pos = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr):
            parser.raise_error("relay.constant expects a dense<...> : tensor<...> value", pos)
        attrs = parser.parse_optional_attr_dict()
        op = cls(value)
        op.attributes.update(attrs)
        return op


def _static_numel(shape: tuple[Dim, ...] | list[Dim]) -> Dim:
    return prod(shape)


def split_target(shape: Sequence[Dim]) -> tuple[list[int], DimsAttr | None]:
    """A target shape as an ints property (DYNAMIC_ENTRY for each dynamic entry) and the
    `dims` property holding the dynamic entries' expressions (None when all are static)."""
    dims = [normalize(d) for d in shape]
    ints = [d if isinstance(d, int) else DYNAMIC_ENTRY for d in dims]
    exprs = tuple(dim_str(d) for d in dims if not isinstance(d, int))
    return ints, (DimsAttr(exprs) if exprs else None)


def join_target(name: str, ints: Sequence[int], dims: DimsAttr | None) -> list[Dim]:
    """The inverse of `split_target`: the DYNAMIC_ENTRY entries of `ints` filled from `dims`
    in order."""
    n = list(ints).count(DYNAMIC_ENTRY)
    if n != (0 if dims is None else len(dims.data)):
        given = 0 if dims is None else len(dims.data)
        raise ShapeError(f"'{name}' has {given} dims for {n} entries {DYNAMIC_ENTRY}")
    if dims is None:
        return list(ints)
    it = iter(dims.data)
    return [parse_dim(next(it)) if d == DYNAMIC_ENTRY else d for d in ints]


@irdl_op_definition
class ReshapeOp(RelayOp):
    """Reshape to `newshape` (one entry may be -1, inferred from the element count). A
    dynamic target lists its dynamic entries' expressions in `dims`, one per -2 entry.

    %y = relay.reshape %x {newshape = array<i64: 3, -1>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %y = relay.reshape %x {newshape = array<i64: -2, -1>, dims = #relay.dims<"batch">}
    """

    name = "relay.reshape"
    data = operand_def(TensorType)
    result = result_def(TensorType)
    newshape = ints_prop()
    dims = opt_prop_def(DimsAttr)

    def __init__(
        self, data: SSAValue | Operation, newshape: Sequence[Dim], dims: DimsAttr | None = None
    ) -> None:
        """`newshape` may hold expressions (split into -2 entries and `dims`), or be the
        ints property itself with its `dims` (as `op.attrs` gives them)."""
        if dims is None:
            newshape, dims = split_target(newshape)
        super().__init__(data, newshape=list(newshape), dims=dims)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        new = join_target(name, attrs.newshape, attrs.dims)
        total = _static_numel(shape_of(data))
        if new.count(-1) > 1 or any(isinstance(d, int) and d < -1 for d in new):  # -2 filled
            raise ShapeError(
                f"'{name}' newshape {new} may hold at most one -1 and no other negatives"
            )
        if -1 in new:
            known = _static_numel([d for d in new if not (isinstance(d, int) and d == -1)])
            inferred = _exact_quotient(total, known)
            if inferred is None:
                raise ShapeError(f"'{name}' cannot reshape {fmt_type(data)} to {new}")
            new[new.index(-1)] = inferred
        if not equal(_static_numel(new), total):
            raise ShapeError(f"'{name}' cannot reshape {fmt_type(data)} to {fmt_dims(new)}")
        return [tensor(new, data.element_type)]


def _exact_quotient(total: Dim, known: Dim) -> Dim | None:
    """total / known when it is provably a whole number, else None."""
    if isinstance(total, int) and isinstance(known, int):
        return None if known == 0 or total % known else total // known
    quotient = normalize(simplify_ratio(total, known))
    return quotient if isinstance(quotient, int) or quotient.is_integer else None


@irdl_op_definition
class TransposeOp(RelayOp):
    """Permute the axes (reversed when `axes` is absent).

    %y = relay.transpose %x {axes = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    """

    name = "relay.transpose"
    data = operand_def(TensorType)
    result = result_def(TensorType)
    axes = opt_ints_prop()

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        rank = data.get_num_dims()
        axes = norm_axes(name, attrs.axes, rank) if attrs.axes is not None else None
        if axes is None:
            axes = list(reversed(range(rank)))
        if sorted(axes) != list(range(rank)):
            raise ShapeError(
                f"'{name}' axes {list(attrs.axes)} are not a permutation of rank {rank}"
            )
        shape = shape_of(data)
        return [tensor([shape[a] for a in axes], data.element_type)]


@irdl_op_definition
class ConcatenateOp(RelayOp):
    """Join tensors along `axis`; the other dimensions must agree.

    %y = relay.concatenate %a, %b {axis = 1 : i64}
        : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
    """

    name = "relay.concatenate"
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    axis = int_prop(0)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        if not types:
            raise ShapeError(f"'{name}' needs at least one operand")
        ts = expect_count(name, types, len(types))
        elem = same_elem(name, ts)
        rank = ts[0].get_num_dims()
        axis = norm_axis(name, attrs.axis, rank)
        first = shape_of(ts[0])
        for t in ts:
            s = shape_of(t)
            if len(s) != rank or any(a != b for i, (a, b) in enumerate(zip(s, first)) if i != axis):
                raise ShapeError(
                    f"'{name}' operands differ off axis {axis}: "
                    + ", ".join(fmt_type(t) for t in ts)
                )
        shape = list(first)
        shape[axis] = sum(shape_of(t)[axis] for t in ts)
        return [tensor(shape, elem)]


@irdl_op_definition
class SplitOp(RelayOp):
    """Split along `axis` at the increasing positions `indices` (k positions -> k+1 parts).

    %a, %b = relay.split %x {indices = array<i64: 1>, axis = 1 : i64}
        : (tensor<2x3xf32>) -> (tensor<2x1xf32>, tensor<2x2xf32>)
    """

    name = "relay.split"
    data = operand_def(TensorType)
    outputs = var_result_def(TensorType)
    indices = ints_prop()
    axis = int_prop(0)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        axis = norm_axis(name, attrs.axis, data.get_num_dims())
        size = shape_of(data)[axis]
        bounds = [0, *attrs.indices, size]
        if any(b < a for a, b in itertools.pairwise(bounds)):
            raise ShapeError(
                f"'{name}' indices {list(attrs.indices)} must increase within 0..{size}"
            )
        results: list[Attribute] = []
        for begin, end in itertools.pairwise(bounds):
            shape = list(shape_of(data))
            shape[axis] = end - begin
            results.append(tensor(shape, data.element_type))
        return results


@irdl_op_definition
class SqueezeOp(RelayOp):
    """Drop the size-1 axes listed in `axis` (all size-1 axes when absent).

    %y = relay.squeeze %x {axis = array<i64: 0>} : (tensor<1x3xf32>) -> tensor<3xf32>
    """

    name = "relay.squeeze"
    data = operand_def(TensorType)
    result = result_def(TensorType)
    axis = opt_ints_prop()

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        shape = shape_of(data)
        if attrs.axis is None:
            drop = [i for i, d in enumerate(shape) if d == 1]
        else:
            drop = norm_axes(name, attrs.axis, len(shape))
        for a in drop:
            if shape[a] != 1:
                raise ShapeError(f"'{name}' cannot squeeze axis {a} of size {shape[a]}")
        return [tensor([d for i, d in enumerate(shape) if i not in drop], data.element_type)]


@irdl_op_definition
class ExpandDimsOp(RelayOp):
    """Insert `num_newaxis` size-1 axes at `axis` (which may be -rank-1 .. rank).

    %y = relay.expand_dims %x {axis = 0 : i64} : (tensor<3xf32>) -> tensor<1x3xf32>
    """

    name = "relay.expand_dims"
    data = operand_def(TensorType)
    result = result_def(TensorType)
    axis = int_prop()
    num_newaxis = int_prop(1)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        shape = list(shape_of(data))
        axis = norm_axis(name, attrs.axis, len(shape) + 1)
        if attrs.num_newaxis < 0:
            raise ShapeError(f"'{name}' num_newaxis must not be negative")
        return [tensor(shape[:axis] + [1] * attrs.num_newaxis + shape[axis:], data.element_type)]


@irdl_op_definition
class BatchFlattenOp(RelayOp):
    """Flatten all axes but the first: [N, d1, d2, ...] -> [N, d1*d2*...].

    %y = relay.nn.batch_flatten %x : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
    """

    name = "relay.nn.batch_flatten"
    data = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        shape = shape_of(data)
        if not shape:
            raise ShapeError(f"'{name}' needs a tensor of rank at least 1")
        return [tensor((shape[0], _static_numel(shape[1:])), data.element_type)]


@irdl_op_definition
class BroadcastToOp(RelayOp):
    """Broadcast (numpy rules) to exactly `shape`.

    %y = relay.broadcast_to %x {shape = array<i64: 2, 3>} : (tensor<3xf32>) -> tensor<2x3xf32>
    """

    name = "relay.broadcast_to"
    data = operand_def(TensorType)
    result = result_def(TensorType)
    shape = ints_prop()
    dims = opt_prop_def(DimsAttr)

    def __init__(
        self, data: SSAValue | Operation, shape: Sequence[Dim], dims: DimsAttr | None = None
    ) -> None:
        if dims is None:
            shape, dims = split_target(shape)
        super().__init__(data, shape=list(shape), dims=dims)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        src, dst = shape_of(data), tuple(join_target(name, attrs.shape, attrs.dims))
        ok = len(src) <= len(dst) and all(
            s == 1 or equal(s, d) for s, d in zip(reversed(src), reversed(dst))
        )
        if not ok or any(isinstance(d, int) and d < 0 for d in dst):
            raise ShapeError(f"'{name}' cannot broadcast {fmt_type(data)} to {fmt_dims(dst)}")
        return [tensor(dst, data.element_type)]


@irdl_op_definition
class StridedSliceOp(RelayOp):
    """numpy slicing `data[begin:end:strides]` along `axes` (all axes when absent); bounds
    are clamped, negatives count from the end.

    %y = relay.strided_slice %x {begin = array<i64: 1>, end = array<i64: 3>,
        strides = array<i64: 1>, axes = array<i64: 1>} : (tensor<2x4xf32>) -> tensor<2x2xf32>
    """

    name = "relay.strided_slice"
    data = operand_def(TensorType)
    result = result_def(TensorType)
    begin = ints_prop()
    end = ints_prop()
    strides = opt_ints_prop()
    axes = opt_ints_prop()

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        shape = list(shape_of(data))
        for axis, start, stop, step in slice_specs(name, shape, attrs):
            shape[axis] = len(range(*slice(start, stop, step).indices(shape[axis])))
        return [tensor(shape, data.element_type)]


def slice_specs(name: str, shape: list[int], attrs: Attrs) -> list[tuple[int, int, int, int]]:
    """(axis, begin, end, stride) per sliced axis of a strided_slice, validated."""
    axes = list(range(len(attrs.begin))) if attrs.axes is None else list(attrs.axes)
    strides = [1] * len(axes) if attrs.strides is None else list(attrs.strides)
    if not len(axes) == len(attrs.begin) == len(attrs.end) == len(strides):
        raise ShapeError(f"'{name}' begin, end, strides and axes differ in length")
    axes = norm_axes(name, axes, len(shape))
    if 0 in strides:
        raise ShapeError(f"'{name}' strides must not be 0")
    return list(zip(axes, attrs.begin, attrs.end, strides))


TAKE_MODES = ("clip", "wrap", "fast")


@irdl_op_definition
class TakeOp(RelayOp):
    """Gather slices of `data` along `axis` at integer `indices` (negative indices count
    from the end); `mode` says what out-of-range indices do: clip, wrap, or fast (undefined).

    %y = relay.take %x, %i {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
    """

    name = "relay.take"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    axis = int_prop(0)
    mode = str_prop("clip")

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        data, indices = expect_count(name, types, 2)
        _expect_int_indices(name, indices)
        if attrs.mode not in TAKE_MODES:
            raise ShapeError(f"'{name}' mode '{attrs.mode}' is not one of {TAKE_MODES}")
        shape = shape_of(data)
        axis = norm_axis(name, attrs.axis, len(shape))
        out = (*shape[:axis], *shape_of(indices), *shape[axis + 1 :])
        return [tensor(out, data.element_type)]


def _expect_int_indices(name: str, indices: TensorType) -> None:
    if is_float(indices.element_type) or is_bool(indices.element_type):
        raise ShapeError(f"'{name}' expects integer indices, got {fmt_type(indices)}")


@irdl_op_definition
class GatherOp(RelayOp):
    """Element gather along `axis` (ONNX GatherElements): out[i][j] = data[indices[i][j]][j]
    for axis 0; the result has the shape of `indices`, negative indices count from the end.

    %y = relay.gather %x, %i {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x2xi64>) -> tensor<2x2xf32>
    """

    name = "relay.gather"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    axis = int_prop(0)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        data, indices = expect_count(name, types, 2)
        _expect_int_indices(name, indices)
        if data.get_num_dims() != indices.get_num_dims():
            raise ShapeError(
                f"'{name}' data {fmt_type(data)} and indices {fmt_type(indices)} differ in rank"
            )
        norm_axis(name, attrs.axis, data.get_num_dims())
        return [tensor(shape_of(indices), data.element_type)]


@irdl_op_definition
class GatherNDOp(RelayOp):
    """Gather slices by index tuples (ONNX GatherND layout): the last axis of `indices`
    holds a position in the axes of `data` after the first `batch_dims`.

    %y = relay.gather_nd %x, %i : (tensor<2x3x4xf32>, tensor<5x2xi64>) -> tensor<5x4xf32>
    """

    name = "relay.gather_nd"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    batch_dims = int_prop(0)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        data, indices = expect_count(name, types, 2)
        _expect_int_indices(name, indices)
        d, i, b = shape_of(data), shape_of(indices), attrs.batch_dims
        if not i or b < 0 or b >= len(i) or d[:b] != i[:b] or b + i[-1] > len(d):
            raise ShapeError(
                f"'{name}' indices {fmt_type(indices)} do not index data {fmt_type(data)} "
                f"with batch_dims {b}"
            )
        return [tensor((*i[:-1], *d[b + i[-1] :]), data.element_type)]


def index_error(what: str, index: int, axis: int, size: int) -> Error:
    """The error of an index out of range (every executor and the frontends raise it)."""
    return Error(f"{what}: index {index} is out of range for axis {axis} of size {size}")


def check_index_values(
    what: str, indices: np.ndarray, shape: Sequence[int], axis: int, depth: int = 0
) -> None:
    """Raise `index_error` for the first element of `indices` out of range for `axis` of
    `shape` (component j for axis + j with `depth`; see CheckIndicesOp)."""
    parts = [(axis, indices)] if not depth else [(axis + j, indices[..., j]) for j in range(depth)]
    for ax, values in parts:
        values = np.asarray(values).astype(np.int64).ravel()
        bad = (values < -shape[ax]) | (values >= shape[ax])
        if bad.any():
            raise index_error(what, int(values[np.argmax(bad)]), ax, int(shape[ax]))


@irdl_op_definition
class CheckIndicesOp(RelayOp):
    """`indices` unchanged, once every element is known to index axis `axis` of `data`
    (-n to n - 1 for an axis of size n). With `depth` > 0 the last axis of `indices` has
    that length and component j indexes axis `axis + j` (gather_nd). An index out of range
    is an `xrelay.Error` that starts with `what` (the model node the indices feed) at run
    time: lowering/expose_checks.py makes the check a result of @main that the runtime
    reads; the reference executor raises at once.

    %j = relay.check_indices %i, %x {axis = 0 : i64, what = "node 'g' (Gather)"} : (tensor<2xi64>, tensor<5x3xf32>) -> tensor<2xi64>
    """

    name = "relay.check_indices"
    indices = operand_def(TensorType)
    data = operand_def(TensorType)
    result = result_def(TensorType)
    axis = int_prop(0)
    depth = int_prop(0)
    what = str_prop("")

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        indices, data = expect_count(name, types, 2)
        _expect_int_indices(name, indices)
        rank = data.get_num_dims()
        axis = norm_axis(name, attrs.axis, rank)
        if attrs.depth < 0 or axis + attrs.depth > rank:
            raise ShapeError(f"'{name}' depth {attrs.depth} from axis {axis} passes rank {rank}")
        last = shape_of(indices)[-1] if indices.get_num_dims() else None
        if attrs.depth and (last is None or (isinstance(last, int) and last != attrs.depth)):
            raise ShapeError(
                f"'{name}' indices {fmt_type(indices)} must end in an axis of {attrs.depth}"
            )
        return [indices]


@irdl_op_definition
class TileOp(RelayOp):
    """Repeat the tensor `reps[i]` times along axis i (numpy tile: the shorter of rank and
    reps is padded with leading 1s).

    %y = relay.tile %x {reps = array<i64: 2, 1>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
    """

    name = "relay.tile"
    data = operand_def(TensorType)
    result = result_def(TensorType)
    reps = ints_prop()

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        shape, reps = list(shape_of(data)), list(attrs.reps)
        if any(r < 0 for r in reps):
            raise ShapeError(f"'{name}' reps {reps} must not be negative")
        n = max(len(shape), len(reps))
        shape = [1] * (n - len(shape)) + shape
        reps = [1] * (n - len(reps)) + reps
        return [tensor([d * r for d, r in zip(shape, reps)], data.element_type)]


@irdl_op_definition
class ShapeOfOp(RelayOp):
    """The shape of a tensor as a 1-d i64 tensor.

    %s = relay.shape_of %x : (tensor<2x3xf32>) -> tensor<2xi64>
    """

    name = "relay.shape_of"
    data = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        return [tensor((data.get_num_dims(),), i64)]


@irdl_op_definition
class ArangeOp(RelayOp):
    """0, 1, ..., n - 1 as a 1-d tensor of `dtype`, n the one entry of `shape` (a dynamic
    length: -2, its expression in `dims`).

    %r = relay.arange {shape = array<i64: 4>} : () -> tensor<4xi64>
    %r = relay.arange {shape = array<i64: -2>, dims = #relay.dims<"seq">, dtype = f32}
        : () -> tensor<?xf32, #relay.dims<"seq">>
    """

    name = "relay.arange"
    assembly_format = "attr-dict `:` `(` `)` `->` type($result)"
    result = result_def(TensorType)
    shape = ints_prop()
    dims = opt_prop_def(DimsAttr)
    dtype = type_prop(i64)

    def __init__(
        self,
        shape: Sequence[Dim] | Dim,
        dtype: Attribute | None = None,
        dims: DimsAttr | None = None,
    ) -> None:
        """`shape`: the length, or a one-entry list of it (as `op.attrs` gives it)."""
        if not isinstance(shape, Sequence):
            shape = [shape]
        if dims is None:
            shape, dims = split_target(shape)
        super().__init__(shape=list(shape), dims=dims, dtype=dtype)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        expect_count(name, types, 0)
        length = join_target(name, attrs.shape, attrs.dims)
        if len(length) != 1 or (isinstance(length[0], int) and length[0] < 0):
            raise ShapeError(f"'{name}' shape must be one length, got {fmt_dims(length)}")
        if is_bool(attrs.dtype) or not isinstance(attrs.dtype, IntegerType | AnyFloat):
            raise ShapeError(f"'{name}' dtype must be an integer or float type, got {attrs.dtype}")
        return [tensor(length, attrs.dtype)]


TENSOR_OPS = [
    ConstantOp,
    ReshapeOp,
    TransposeOp,
    ConcatenateOp,
    SplitOp,
    SqueezeOp,
    ExpandDimsOp,
    BatchFlattenOp,
    BroadcastToOp,
    StridedSliceOp,
    TakeOp,
    GatherOp,
    GatherNDOp,
    CheckIndicesOp,
    TileOp,
    ShapeOfOp,
    ArangeOp,
]
