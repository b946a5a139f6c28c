"""Building relay ops from Python: result-type inference, attribute conversion, errors."""

from __future__ import annotations

import pytest
import xrelay
from xdsl.dialects.builtin import TensorType, f16, f32, i1, i32, i64
from xrelay.dialects import relay
from xrelay.dialects.dtypes import tensor_type


def shape_of(op) -> tuple[int, ...]:
    return op.results[0].type.get_shape()


def test_binary_broadcasts_and_keeps_element_type(args):
    a, b = args(((2, 1, 3), "float32"), ((4, 1), "float32"))
    for cls in relay.elementwise.BINARY_OPS:
        op = cls(a, b)
        assert op.results[0].type == TensorType(f32, [2, 4, 3]), cls.name
        op.verify()


def test_comparisons_give_bool(args):
    a, b = args(((3,), "int64"), ((3,), "int64"))
    for cls in relay.elementwise.COMPARE_OPS:
        assert cls(a, b).results[0].type == TensorType(i1, [3])


def test_broadcast_mismatch_names_op_and_shapes(args):
    a, b = args(((2, 3), "float32"), ((4,), "float32"))
    with pytest.raises(
        xrelay.ShapeError,
        match=r"'relay.add' operand shapes are not broadcastable: tensor<2x3xf32>, tensor<4xf32>",
    ):
        relay.AddOp(a, b)


def test_element_type_mismatch(args):
    a, b = args(((3,), "float32"), ((3,), "float16"))
    with pytest.raises(xrelay.ShapeError, match="differ in element type"):
        relay.MultiplyOp(a, b)


def test_where_broadcasts_three_ways(args):
    c, x, y = args(((2, 1), "bool"), ((1, 3), "float32"), ((), "float32"))
    assert shape_of(relay.WhereOp(c, x, y)) == (2, 3)


def test_unary_float_only(args):
    (x,) = args(((3,), "int32"))
    with pytest.raises(xrelay.ShapeError, match="expects a floating-point tensor"):
        relay.ExpOp(x)
    assert relay.AbsOp(x).results[0].type == TensorType(i32, [3])


def test_cast_and_clip(args):
    (x,) = args(((2, 2), "float32"))
    assert relay.CastOp(x, dtype=f16).results[0].type == TensorType(f16, [2, 2])
    clip = relay.ClipOp(x, a_min=0.0, a_max=6.0)
    assert clip.attrs.a_min == 0.0 and clip.attrs.a_max == 6.0
    with pytest.raises(xrelay.ShapeError, match="a_min 6.0 above a_max 0.0"):
        relay.ClipOp(x, a_min=6.0, a_max=0.0)


@pytest.mark.parametrize(
    "data, weight, attrs, expected",
    [
        ((1, 3, 8, 8), (4, 3, 3, 3), {}, (1, 4, 6, 6)),
        ((1, 3, 8, 8), (4, 3, 3, 3), {"strides": (2, 2), "padding": (1, 1, 1, 1)}, (1, 4, 4, 4)),
        ((1, 3, 9, 9), (4, 3, 3, 3), {"dilation": (2, 2)}, (1, 4, 5, 5)),
        ((1, 4, 8, 8), (8, 1, 3, 3), {"groups": 4, "padding": (1, 1, 1, 1)}, (1, 8, 8, 8)),
        ((1, 3, 7, 6), (2, 3, 2, 3), {"padding": (0, 1, 1, 0), "strides": (2, 1)}, (1, 2, 4, 5)),
        (
            (2, 8, 8, 3),
            (3, 3, 3, 5),
            {"data_layout": "NHWC", "kernel_layout": "HWIO"},
            (2, 6, 6, 5),
        ),
    ],
)
def test_conv2d_shapes(args, data, weight, attrs, expected):
    x, w = args((data, "float32"), (weight, "float32"))
    op = relay.Conv2DOp(x, w, **attrs)
    assert shape_of(op) == expected
    op.verify()


def test_conv_channel_mismatch(args):
    x, w = args(((1, 3, 8, 8), "float32"), ((4, 2, 3, 3), "float32"))
    with pytest.raises(xrelay.ShapeError, match=r"channels do not match.*groups 1"):
        relay.Conv2DOp(x, w)


def test_conv1d_conv3d_and_transpose(args):
    x1, w1 = args(((2, 3, 10), "float32"), ((4, 3, 3), "float32"))
    assert shape_of(relay.Conv1DOp(x1, w1, strides=(2,))) == (2, 4, 4)
    x3, w3 = args(((1, 2, 4, 5, 6), "float32"), ((3, 2, 2, 2, 2), "float32"))
    assert shape_of(relay.Conv3DOp(x3, w3)) == (1, 3, 3, 4, 5)
    # torch.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1) on 9x9 -> 18x18
    xt, wt = args(((1, 4, 9, 9), "float32"), ((4, 2, 3, 3), "float32"))
    op = relay.Conv2DTransposeOp(
        xt, wt, strides=(2, 2), padding=(1, 1, 1, 1), output_padding=(1, 1)
    )
    assert shape_of(op) == (1, 2, 18, 18)


def test_pool_ceil_mode_matches_torch(args):
    # torch.nn.MaxPool2d(3, stride=2, ceil_mode=True) on 8x8 gives 4x4, on 7x7 gives 3x3
    (x8, x7) = args(((1, 1, 8, 8), "float32"), ((1, 1, 7, 7), "float32"))
    kw = {"pool_size": (3, 3), "strides": (2, 2), "ceil_mode": True}
    assert shape_of(relay.MaxPool2DOp(x8, **kw)) == (1, 1, 4, 4)
    assert shape_of(relay.MaxPool2DOp(x7, **kw)) == (1, 1, 3, 3)
    # with padding 1: the last window would start in the end padding and is dropped
    assert shape_of(relay.MaxPool2DOp(x7, padding=(1, 1, 1, 1), **kw)) == (1, 1, 4, 4)


def test_dense_matmul_batch_matmul(args):
    x, w, a, b = args(
        ((5, 7, 16), "float32"),
        ((4, 16), "float32"),
        ((1, 8, 16), "float32"),
        ((3, 4, 16), "float32"),
    )
    assert shape_of(relay.DenseOp(x, w)) == (5, 7, 4)
    assert shape_of(relay.BatchMatmulOp(a, b, transpose_b=True)) == (3, 8, 4)
    with pytest.raises(xrelay.ShapeError, match="shapes do not match"):
        relay.MatmulOp(w, w)
    assert shape_of(relay.MatmulOp(w, w, transpose_b=True)) == (4, 4)


def test_norms_and_softmax(args):
    x, v, g = args(((2, 4, 3, 3), "float32"), ((4,), "float32"), ((3, 3), "float32"))
    assert shape_of(relay.BatchNormOp(x, v, v, v, v, epsilon=1e-3)) == (2, 4, 3, 3)
    assert shape_of(relay.LayerNormOp(x, g, g, axis=2)) == (2, 4, 3, 3)
    with pytest.raises(xrelay.ShapeError, match="trailing shape"):
        relay.LayerNormOp(x, v, v)
    assert shape_of(relay.SoftmaxOp(x, axis=1)) == (2, 4, 3, 3)


def test_tensor_ops(args):
    (x,) = args(((2, 3, 4), "float32"))
    assert shape_of(relay.ReshapeOp(x, newshape=(4, -1))) == (4, 6)
    assert shape_of(relay.TransposeOp(x)) == (4, 3, 2)
    assert shape_of(relay.TransposeOp(x, axes=(1, 0, 2))) == (3, 2, 4)
    assert shape_of(relay.ExpandDimsOp(x, axis=-1)) == (2, 3, 4, 1)
    assert shape_of(relay.StridedSliceOp(x, begin=(-1,), end=(0,), strides=(-1,), axes=(2,))) == (
        2,
        3,
        3,
    )
    assert shape_of(relay.TileOp(x, reps=(2,))) == (2, 3, 8)
    assert relay.ShapeOfOp(x).results[0].type == TensorType(i64, [3])
    parts = relay.SplitOp(x, indices=(1, 3), axis=2)
    assert [r.type.get_shape() for r in parts.results] == [(2, 3, 1), (2, 3, 2), (2, 3, 1)]
    cat = relay.ConcatenateOp(*parts.results, axis=2)
    assert shape_of(cat) == (2, 3, 4)
    with pytest.raises(xrelay.ShapeError, match=r"cannot reshape tensor<2x3x4xf32> to \[5, -1\]"):
        relay.ReshapeOp(x, newshape=(5, -1))


def test_take_shapes(args):
    x, i = args(((5, 3), "float32"), ((2, 2), "int64"))
    assert shape_of(relay.TakeOp(x, i, axis=0)) == (2, 2, 3)
    assert shape_of(relay.TakeOp(x, i, axis=1)) == (5, 2, 2)


def test_reductions(args):
    (x,) = args(((2, 3, 4), "float32"))
    assert shape_of(relay.SumOp(x, axis=(1,))) == (2, 4)
    assert shape_of(relay.MeanOp(x, axis=(0, -1), keepdims=True)) == (1, 3, 1)
    assert shape_of(relay.MaxOp(x)) == ()
    argmax = relay.ArgmaxOp(x, axis=1)
    assert argmax.results[0].type == TensorType(i64, [2, 4])


def test_constant_from_numpy():
    import numpy as np

    op = relay.ConstantOp(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert op.results[0].type == tensor_type((2, 3), "float32")


def test_attrs_view_has_defaults(args):
    x, w = args(((1, 3, 8, 8), "float32"), ((4, 3, 3, 3), "float32"))
    op = relay.Conv2DOp(x, w, strides=(2, 2))
    assert op.attrs.strides == (2, 2)
    assert op.attrs.padding == (0, 0, 0, 0)
    assert op.attrs.groups == 1
    assert op.attrs.data_layout == "NCHW"


def test_every_op_is_in_the_dialect():
    names = {op.name for op in relay.ALL_OPS}
    required = [
        "add",
        "subtract",
        "multiply",
        "divide",
        "power",
        "maximum",
        "minimum",
        "floor_divide",
        "floor_mod",
        "equal",
        "less",
        "greater",
        "logical_and",
        "logical_or",
        "logical_not",
        "logical_xor",
        "where",
        "negative",
        "abs",
        "exp",
        "log",
        "sqrt",
        "rsqrt",
        "tanh",
        "sigmoid",
        "erf",
        "floor",
        "ceil",
        "round",
        "sign",
        "sin",
        "cos",
        "asin",
        "acos",
        "atan",
        "asinh",
        "acosh",
        "atanh",
        "nn.relu",
        "nn.leaky_relu",
        "clip",
        "cast",
        "reinterpret",
        "nn.conv1d",
        "nn.conv2d",
        "nn.conv3d",
        "nn.conv2d_transpose",
        "nn.dense",
        "nn.matmul",
        "nn.batch_matmul",
        "nn.bias_add",
        "nn.batch_norm",
        "nn.layer_norm",
        "nn.max_pool2d",
        "nn.avg_pool2d",
        "nn.global_avg_pool2d",
        "nn.global_max_pool2d",
        "nn.softmax",
        "nn.log_softmax",
        "nn.pad",
        "nn.lrn",
        "nn.dropout",
        "reshape",
        "transpose",
        "concatenate",
        "split",
        "squeeze",
        "expand_dims",
        "nn.batch_flatten",
        "broadcast_to",
        "strided_slice",
        "take",
        "tile",
        "shape_of",
        "constant",
        "sum",
        "mean",
        "max",
        "min",
        "prod",
        "argmax",
        "argmin",
    ]
    assert {f"relay.{n}" for n in required} <= names
    assert len(names) == len(relay.ALL_OPS)
