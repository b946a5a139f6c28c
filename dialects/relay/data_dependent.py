"""Relay ops whose result sizes depend on the data: nonzero, unique, non_max_suppression,
slice_indices, topk (a run-time k); and match_dims, which checks at run time that two such
sizes agree.

The size the data decides is a symbol the op names in its `size` property; the result
types carry it, so ops downstream infer their shapes from it as from any dynamic
dimension (dialects/dims.py). At run time the VM (lowering/vm.py) computes these ops
between compiled segments, and each segment binds the symbol from the array it receives.
A data-dependent size may be 0.

    %i = relay.nonzero %x {size = "nz"} : (tensor<3x4xf32>) -> tensor<2x?xi64, #relay.dims<"nz">>
"""

from __future__ import annotations

from xdsl.dialects.builtin import AnyFloat, IntegerAttr, StringAttr, TensorType, i64
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def
from xrelay.dialects.dims import shape_of, symbol
from xrelay.errors import ShapeError

from .base import Attrs, RelayOp, expect_count, fmt_type, int_prop, ints_prop, norm_axis, tensor


def _size(name: str, attrs: Attrs):
    text = attrs["size"]
    try:
        return symbol(text)
    except ShapeError:
        raise ShapeError(f"'{name}' size '{text}' is not a dimension name") from None


@irdl_op_definition
class NonZeroOp(RelayOp):
    """The indices of the nonzero elements of `data`, one row per axis, in row-major order
    (ONNX NonZero, numpy.nonzero stacked).

    %i = relay.nonzero %x {size = "nz"} : (tensor<3x4xf32>) -> tensor<2x?xi64, #relay.dims<"nz">>
    """

    name = "relay.nonzero"
    data = operand_def(TensorType)
    result = result_def(TensorType)
    size = prop_def(StringAttr)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        return [tensor((data.get_num_dims(), _size(name, attrs)), i64)]


@irdl_op_definition
class UniqueOp(RelayOp):
    """The distinct elements (or, with `axis`, the distinct slices along it) of `data`, and
    for each its first index, the inverse indices and the counts (ONNX Unique). `sorted`
    (default 1) sorts them ascending, else they keep the order of first occurrence; without
    `axis` the input is flattened.

    %y, %first, %inverse, %counts = relay.unique %x {size = "u"}
        : (tensor<6xf32>) -> (tensor<?xf32, #relay.dims<"u">>, tensor<?xi64, #relay.dims<"u">>,
                               tensor<6xi64>, tensor<?xi64, #relay.dims<"u">>)
    """

    name = "relay.unique"
    data = operand_def(TensorType)
    output = result_def(TensorType)
    indices = result_def(TensorType)
    inverse = result_def(TensorType)
    counts = result_def(TensorType)
    size = prop_def(StringAttr)
    sorted = int_prop(1)
    axis = opt_prop_def(IntegerAttr)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        (data,) = expect_count(name, types, 1)
        u = _size(name, attrs)
        shape = shape_of(data)
        if attrs["axis"] is None:
            n = 1
            for d in shape:
                n = n * d
            out = [u]
        else:
            axis = norm_axis(name, attrs["axis"], len(shape))
            n = shape[axis]
            out = [*shape[:axis], u, *shape[axis + 1 :]]
        return [
            tensor(out, data.element_type),
            tensor((u,), i64),
            tensor((n,), i64),
            tensor((u,), i64),
        ]


@irdl_op_definition
class NonMaxSuppressionOp(RelayOp):
    """ONNX NonMaxSuppression: per batch and class, boxes in descending score order whose
    score exceeds `score_threshold` and whose IoU with every box kept before is at most
    `iou_threshold`, at most `max_output` per class; rows (batch, class, box).
    `center_point_box` 0: boxes are [y1, x1, y2, x2] corners, 1: [x, y, w, h].

    %sel = relay.non_max_suppression %boxes, %scores, %max, %iou, %score {size = "n"}
        : (tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<i64>, tensor<f32>, tensor<f32>)
        -> tensor<?x3xi64, #relay.dims<"n">>
    """

    name = "relay.non_max_suppression"
    boxes = operand_def(TensorType)
    scores = operand_def(TensorType)
    max_output = operand_def(TensorType)
    iou_threshold = operand_def(TensorType)
    score_threshold = operand_def(TensorType)
    result = result_def(TensorType)
    size = prop_def(StringAttr)
    center_point_box = int_prop(0)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        boxes, scores, max_output, iou, score = expect_count(name, types, 5)
        b, s = shape_of(boxes), shape_of(scores)
        if len(b) != 3 or b[2] != 4:
            raise ShapeError(f"'{name}' boxes must be [batch, boxes, 4], got {fmt_type(boxes)}")
        if len(s) != 3 or s[0] != b[0] or s[2] != b[1]:
            raise ShapeError(
                f"'{name}' scores must be [batch, classes, boxes] for boxes {fmt_type(boxes)}, "
                f"got {fmt_type(scores)}"
            )
        if (
            not isinstance(boxes.element_type, AnyFloat)
            or scores.element_type != boxes.element_type
        ):
            raise ShapeError(f"'{name}' boxes and scores must be floats of one type")
        if max_output.get_shape() != () or max_output.element_type != i64:
            raise ShapeError(f"'{name}' max_output must be tensor<i64>, got {fmt_type(max_output)}")
        for t, what in ((iou, "iou_threshold"), (score, "score_threshold")):
            if t.get_shape() != () or t.element_type != boxes.element_type:
                raise ShapeError(f"'{name}' {what} must be a scalar of the boxes' type")
        if attrs["center_point_box"] not in (0, 1):
            raise ShapeError(f"'{name}' center_point_box must be 0 or 1")
        return [tensor((_size(name, attrs), 3), i64)]


@irdl_op_definition
class SliceIndicesOp(RelayOp):
    """The indices `data[start:end:step]` takes along `axis`, for bounds computed at run time
    (0-d i64 tensors): negative bounds count from the end, then both are clamped to the
    axis as Python and ONNX Slice clamp them. A `relay.take` of them is the slice.

    %i = relay.slice_indices %x, %start, %end {axis = 0 : i64, step = 1 : i64, size = "n"}
        : (tensor<5x3xf32>, tensor<i64>, tensor<i64>) -> tensor<?xi64, #relay.dims<"n">>
    """

    name = "relay.slice_indices"
    data = operand_def(TensorType)
    start = operand_def(TensorType)
    end = operand_def(TensorType)
    result = result_def(TensorType)
    size = prop_def(StringAttr)
    axis = int_prop(0)
    step = int_prop(1)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        data, start, end = expect_count(name, types, 3)
        norm_axis(name, attrs["axis"], data.get_num_dims())
        for t, what in ((start, "start"), (end, "end")):
            if t.get_shape() != () or t.element_type != i64:
                raise ShapeError(f"'{name}' {what} must be tensor<i64>, got {fmt_type(t)}")
        if attrs["step"] == 0:
            raise ShapeError(f"'{name}' step must not be 0")
        return [tensor((_size(name, attrs),), i64)]


@irdl_op_definition
class TopKOp(RelayOp):
    """The `k` largest (`largest` = 1) or smallest elements along `axis` and their indices,
    for a `k` computed at run time (a 0-d i64 tensor, 0 <= k <= the axis' size); sorted,
    equal values with the lower index first (ONNX TopK).

    %v, %i = relay.topk %x, %k {axis = 1 : i64, size = "k"}
        : (tensor<2x9xf32>, tensor<i64>) -> (tensor<2x?xf32, #relay.dims<"k">>, tensor<2x?xi64, #relay.dims<"k">>)
    """

    name = "relay.topk"
    data = operand_def(TensorType)
    k = operand_def(TensorType)
    values = result_def(TensorType)
    indices = result_def(TensorType)
    size = prop_def(StringAttr)
    axis = int_prop(-1)
    largest = int_prop(1)

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        data, k = expect_count(name, types, 2)
        if k.get_shape() != () or k.element_type != i64:
            raise ShapeError(f"'{name}' k must be tensor<i64>, got {fmt_type(k)}")
        shape = list(shape_of(data))
        shape[norm_axis(name, attrs["axis"], len(shape))] = _size(name, attrs)
        return [tensor(shape, data.element_type), tensor(shape, i64)]


@irdl_op_definition
class MatchDimsOp(RelayOp):
    """`data` with the dimensions `pairs` lists (data axis, ref axis, ...) made those of
    `ref`: each must equal ref's at run time, or be 1 and is then broadcast to it (any
    other size is an error). Frontends put it where a shape rule meets two sizes it cannot
    prove compatible (two data-dependent sizes an elementwise op broadcasts), so the rule
    then sees one symbol.

    %y = relay.match_dims %x, %r {pairs = array<i64: 0, 0>}
        : (tensor<?xf32, #relay.dims<"a">>, tensor<?xf32, #relay.dims<"b">>) -> tensor<?xf32, #relay.dims<"b">>
    """

    name = "relay.match_dims"
    data = operand_def(TensorType)
    ref = operand_def(TensorType)
    result = result_def(TensorType)
    pairs = ints_prop()

    @classmethod
    def infer(cls, types: list[Attribute], attrs: Attrs, name: str) -> list[Attribute]:
        data, ref = expect_count(name, types, 2)
        pairs = list(attrs["pairs"])
        if len(pairs) % 2:
            raise ShapeError(f"'{name}' pairs must list (data axis, ref axis) pairs")
        shape, other = list(shape_of(data)), shape_of(ref)
        for a, r in zip(pairs[::2], pairs[1::2]):
            shape[norm_axis(name, a, len(shape))] = other[norm_axis(name, r, len(other))]
        return [tensor(shape, data.element_type)]


DATA_DEPENDENT_OPS = [NonZeroOp, UniqueOp, NonMaxSuppressionOp, SliceIndicesOp, TopKOp, MatchDimsOp]
