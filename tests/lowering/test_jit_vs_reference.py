"""Every relay op through the JIT against the reference executor, on random inputs of
several shapes (broadcasting, strides, padding, dilation, groups, odd sizes)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerType, Signedness, f16, f32, f64, i1, i8, i32, i64
from xrelay.dialects import relay

from .jit_check import check_jit

ui8 = IntegerType(8, Signedness.UNSIGNED)

F = "float32"


@pytest.mark.parametrize("cls", relay.elementwise.BINARY_OPS, ids=lambda c: c.name)
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 1, 5), (4, 1)), ((3,), ())])
def test_binary_float(cls, shapes):
    check_jit([(shapes[0], F), (shapes[1], F)], lambda a, b: cls(a, b), rtol=1e-4)


@pytest.mark.parametrize(
    "cls",
    [
        relay.AddOp,
        relay.SubtractOp,
        relay.MultiplyOp,
        relay.DivideOp,
        relay.MaximumOp,
        relay.MinimumOp,
        relay.FloorDivideOp,
        relay.FloorModOp,
        relay.ModOp,
    ],
    ids=lambda c: c.name,
)
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_binary_int(cls, dtype):
    check_jit([((3, 4), dtype), ((4,), dtype)], lambda a, b: cls(a, b))


@pytest.mark.parametrize("cls", relay.elementwise.COMPARE_OPS, ids=lambda c: c.name)
def test_compare(cls):
    check_jit([((2, 3), F), ((3,), F)], lambda a, b: cls(a, b))


@pytest.mark.parametrize("cls", [relay.LogicalAndOp, relay.LogicalOrOp, relay.LogicalXorOp])
def test_logical(cls):
    check_jit([((2, 3), "bool"), ((1, 3), "bool")], lambda a, b: cls(a, b))


def test_logical_not_where_isnan():
    check_jit([((5,), "bool")], lambda a: relay.LogicalNotOp(a))
    check_jit([((2, 1), "bool"), ((1, 3), F), ((), F)], lambda c, a, b: relay.WhereOp(c, a, b))
    check_jit([((4,), F)], lambda a: relay.IsNanOp(a))


@pytest.mark.parametrize("cls", relay.elementwise.UNARY_OPS, ids=lambda c: c.name)
def test_unary(cls):
    def body(x):
        if cls in (relay.LogOp, relay.SqrtOp, relay.RsqrtOp):
            a = relay.AbsOp(x)
            return [a, cls(a)]
        return cls(x)

    check_jit([((3, 7), F)], body, rtol=1e-5, atol=1e-6)


def test_unary_float64_and_int():
    check_jit([((5,), "float64")], lambda x: relay.TanhOp(x))
    check_jit([((5,), "int32")], lambda x: relay.AbsOp(x))
    check_jit([((5,), "int64")], lambda x: relay.NegativeOp(x))
    check_jit([((5,), "int64")], lambda x: relay.SignOp(x))


def test_activations():
    check_jit([((2, 3, 4), F)], lambda x: relay.ReluOp(x))
    check_jit([((2, 3, 4), F)], lambda x: relay.LeakyReluOp(x, alpha=0.2))
    check_jit([((2, 3, 4), F), ((3,), F)], lambda x, a: relay.PReluOp(x, a))
    check_jit([((2, 3, 4), F)], lambda x: relay.ClipOp(x, a_min=-0.5, a_max=0.7))
    check_jit([((6,), "int32")], lambda x: relay.ClipOp(x, a_min=-2.0, a_max=float("inf")))


@pytest.mark.parametrize(
    "src, dst",
    [
        (F, i32),
        (F, i64),
        (F, f64),
        ("float64", f16),
        ("int64", f16),
        ("int32", i64),
        ("int64", i32),
        (F, i1),
        ("bool", f64),
        ("bool", i32),
    ],
)
def test_cast(src, dst):
    check_jit([((7,), src)], lambda x: relay.CastOp(x, dtype=dst))


@pytest.mark.parametrize(
    "data, weight, attrs",
    [
        ((1, 3, 8, 8), (4, 3, 3, 3), {}),
        ((2, 3, 9, 7), (5, 3, 3, 2), {"strides": (2, 1), "padding": (1, 0, 2, 1)}),
        ((1, 4, 9, 9), (4, 2, 3, 3), {"groups": 2, "dilation": (2, 2), "padding": (1, 1, 1, 1)}),
        ((1, 4, 6, 6), (4, 1, 3, 3), {"groups": 4, "padding": (1, 1, 1, 1), "strides": (2, 2)}),
        # stride 2 along rows with few products: columns read from the even and odd halves
        # of the padded input (odd padded widths get a column more; 5-wide and 2-wide
        # windows, stride 1 down, dilation down, a batch of 2)
        ((2, 3, 7, 9), (3, 1, 3, 5), {"groups": 3, "padding": (1, 2, 0, 1), "strides": (1, 2)}),
        ((1, 6, 8, 8), (6, 1, 2, 2), {"groups": 6, "strides": (2, 2), "dilation": (2, 1)}),
        ((1, 2, 5, 9), (4, 1, 3, 3), {"groups": 2, "padding": (1, 1, 1, 1), "strides": (2, 2)}),
    ],
)
def test_conv2d(data, weight, attrs):
    check_jit(
        [(data, F), (weight, F)], lambda x, w: relay.Conv2DOp(x, w, **attrs), rtol=1e-4, atol=1e-5
    )


@pytest.mark.parametrize(
    "data, weight, attrs",
    [
        ((1, 3, 8, 8), (4, 3, 3, 3), {"padding": (1, 1, 1, 1)}),
        ((1, 4, 9, 7), (6, 2, 3, 2), {"groups": 2, "strides": (2, 1), "dilation": (1, 2)}),
    ],
)
def test_conv2d_bias(data, weight, attrs):
    bias = ((weight[0],), F)
    check_jit(
        [(data, F), (weight, F), bias],
        lambda x, w, b: relay.Conv2DBiasOp(x, w, b, **attrs),
        rtol=1e-4,
        atol=1e-5,
    )


def test_conv1d_conv3d():
    check_jit(
        [((2, 3, 11), F), ((4, 3, 3), F)],
        lambda x, w: relay.Conv1DOp(x, w, strides=(2,), padding=(1, 2)),
        rtol=1e-4,
        atol=1e-5,
    )
    check_jit(
        [((1, 2, 4, 5, 6), F), ((3, 2, 2, 2, 2), F)],
        lambda x, w: relay.Conv3DOp(x, w),
        rtol=1e-4,
        atol=1e-5,
    )


@pytest.mark.parametrize(
    "attrs",
    [
        {},
        {"strides": (2, 2), "padding": (1, 1, 1, 1), "output_padding": (1, 1)},
        {"strides": (2, 3), "dilation": (2, 1), "groups": 2},
    ],
)
def test_conv2d_transpose(attrs):
    check_jit(
        [((1, 4, 5, 4), F), ((4, 3, 3, 3), F)],
        lambda x, w: relay.Conv2DTransposeOp(x, w, **attrs),
        rtol=1e-4,
        atol=1e-5,
    )


def test_dense_matmul_batch_matmul():
    check_jit(
        [((5, 7, 16), F), ((4, 16), F)], lambda x, w: relay.DenseOp(x, w), rtol=1e-4, atol=1e-5
    )
    check_jit([((8, 16), F), ((16, 4), F)], lambda a, b: relay.MatmulOp(a, b), rtol=1e-4, atol=1e-5)
    check_jit(
        [((16, 8), F), ((4, 16), F)],
        lambda a, b: relay.MatmulOp(a, b, transpose_a=True, transpose_b=True),
        rtol=1e-4,
        atol=1e-5,
    )
    check_jit(
        [((1, 8, 16), F), ((3, 16, 4), F)],
        lambda a, b: relay.BatchMatmulOp(a, b),
        rtol=1e-4,
        atol=1e-5,
    )
    check_jit(
        [((3, 16, 8), F), ((3, 4, 16), F)],
        lambda a, b: relay.BatchMatmulOp(a, b, transpose_a=True, transpose_b=True),
        rtol=1e-4,
        atol=1e-5,
    )


def test_normalizations():
    check_jit([((2, 4, 3, 3), F), ((4,), F)], lambda x, b: relay.BiasAddOp(x, b))
    check_jit(
        [((2, 4, 3, 3), F)] + [((4,), F)] * 4,
        lambda x, g, b, m, v: [a := relay.AbsOp(v), relay.BatchNormOp(x, g, b, m, a)],
        rtol=1e-4,
        atol=1e-5,
    )
    check_jit(
        [((2, 3, 8), F), ((8,), F), ((8,), F)],
        lambda x, g, b: relay.LayerNormOp(x, g, b),
        rtol=1e-4,
        atol=1e-5,
    )
    check_jit(
        [((2, 3, 4, 2), F), ((4, 2), F), ((4, 2), F)],
        lambda x, g, b: relay.LayerNormOp(x, g, b, axis=2),
        rtol=1e-4,
        atol=1e-5,
    )
    check_jit(
        [((1, 7, 3, 3), F)],
        lambda x: relay.LRNOp(x, size=3, alpha=0.1, beta=0.75, bias=2.0),
        rtol=1e-4,
        atol=1e-5,
    )


@pytest.mark.parametrize(
    "attrs",
    [
        {"pool_size": (2, 2), "strides": (2, 2)},
        {"pool_size": (3, 3), "strides": (2, 2), "ceil_mode": True},
        {"pool_size": (3, 2), "padding": (1, 0, 1, 1), "dilation": (2, 1)},
        # padding after only, on rows and columns (ceil mode adds cells): border slabs
        # that start at 0 on an axis they do not fill
        {"pool_size": (3, 3), "strides": (2, 1), "padding": (0, 2, 1, 0), "ceil_mode": True},
        {"pool_size": (1, 3), "strides": (1, 2), "padding": (2, 0, 0, 1)},
    ],
)
def test_pools(attrs):
    check_jit([((1, 3, 9, 8), F)], lambda x: relay.MaxPool2DOp(x, **attrs))
    check_jit([((1, 3, 9, 8), F)], lambda x: relay.AvgPool2DOp(x, **attrs), rtol=1e-5)
    check_jit(
        [((1, 3, 9, 8), F)],
        lambda x: relay.AvgPool2DOp(x, count_include_pad=True, **attrs),
        rtol=1e-5,
    )


def test_pools_1d_3d_and_global():
    check_jit(
        [((2, 3, 10), F)],
        lambda x: relay.MaxPool1DOp(x, pool_size=(3,), strides=(2,), padding=(1, 1)),
    )
    check_jit(
        [((1, 2, 5, 6, 7), F)],
        lambda x: relay.AvgPool3DOp(x, pool_size=(2, 2, 3), strides=(1, 2, 2)),
    )
    check_jit(
        [((1, 2, 5, 6, 7), F)],
        lambda x: relay.MaxPool3DOp(x, pool_size=(2, 3, 2), padding=(1, 0, 1, 0, 2, 1)),
    )
    check_jit([((2, 3, 5, 7), F)], lambda x: relay.GlobalAvgPool2DOp(x))
    check_jit([((2, 3, 5, 7), F)], lambda x: relay.GlobalMaxPool2DOp(x))


def test_softmax_pad_dropout():
    check_jit([((3, 10), F)], lambda x: relay.SoftmaxOp(x), rtol=1e-5)
    check_jit([((2, 5, 3), F)], lambda x: relay.LogSoftmaxOp(x, axis=1), rtol=1e-5)
    for mode in ("constant", "edge", "reflect"):
        check_jit(
            [((3, 4), F)],
            lambda x, mode=mode: relay.PadOp(
                x, pad_width=(1, 2, 2, 1), pad_mode=mode, pad_value=1.5
            ),
        )
    check_jit([((3, 4), F)], lambda x: relay.PadOp(x, pad_width=(-1, 2, 0, -2)))
    # constant padding as a border fill and a copy: a middle axis only, the leading axis
    # only, the trailing axes of a 4-d tensor
    for widths in ((0, 0, 1, 2, 0, 0), (2, 1, 0, 0, 0, 0), (0, 0, 0, 0, 3, 0, 1, 2)):
        shape = (2, 3, 4) if len(widths) == 6 else (2, 3, 4, 5)
        check_jit(
            [(shape, F)],
            lambda x, widths=widths: relay.PadOp(x, pad_width=widths, pad_value=-2.5),
        )
    check_jit([((3, 4), F)], lambda x: relay.DropoutOp(x))


def test_tensor_ops():
    check_jit([((2, 3, 4), F)], lambda x: relay.ReshapeOp(x, newshape=(4, -1)))
    check_jit([((2, 3, 4), F)], lambda x: relay.TransposeOp(x, axes=(2, 0, 1)))
    check_jit([((2, 1, 4), F), ((2, 3, 4), F)], lambda a, b: relay.ConcatenateOp(a, b, a, axis=1))
    check_jit([((2, 6, 3), F)], lambda x: relay.SplitOp(x, indices=(1, 4), axis=1))
    check_jit([((1, 3, 1), F)], lambda x: relay.SqueezeOp(x))
    check_jit([((3,), F)], lambda x: relay.ExpandDimsOp(x, axis=0, num_newaxis=2))
    check_jit([((2, 3, 4), F)], lambda x: relay.BatchFlattenOp(x))
    check_jit([((3, 1), F)], lambda x: relay.BroadcastToOp(x, shape=(2, 3, 5)))
    check_jit(
        [((5, 6), F)], lambda x: relay.StridedSliceOp(x, begin=(4, 1), end=(0, 6), strides=(-2, 2))
    )
    check_jit([((2, 3), F)], lambda x: relay.TileOp(x, reps=(2, 1, 3)))
    check_jit([((2, 3), F)], lambda x: relay.ShapeOfOp(x))
    check_jit([((5,), F)], lambda x: relay.ArangeOp(5, dtype=f32))
    check_jit([((2,), F)], lambda x: relay.ArangeOp(7))


def test_gathers():
    import numpy as np

    data = np.arange(15, dtype=np.float32).reshape(5, 3)
    idx = np.array([[0, -1], [4, 9]], dtype=np.int64)
    for mode in ("clip", "wrap"):
        check_jit(
            [((5, 3), F), ((2, 2), "int64")],
            lambda x, i, mode=mode: relay.TakeOp(x, i, axis=0, mode=mode),
            inputs=[data, idx],
        )
    check_jit(
        [((5, 3), F), ((2, 2), "int64")],
        lambda x, i: relay.TakeOp(x, i, axis=1),
        inputs=[data, idx],
    )
    gidx = np.array([[0, 2, -1], [1, 0, 0]], dtype=np.int32)
    check_jit(
        [((2, 3), F), ((2, 3), "int32")],
        lambda x, i: relay.GatherOp(x, i, axis=1),
        inputs=[data[:2], gidx],
    )
    ndidx = np.array([[0, 1], [4, 2]], dtype=np.int64)
    check_jit(
        [((5, 3), F), ((2, 2), "int64")], lambda x, i: relay.GatherNDOp(x, i), inputs=[data, ndidx]
    )


@pytest.mark.parametrize("cls", [relay.SumOp, relay.MeanOp, relay.MaxOp, relay.MinOp, relay.ProdOp])
def test_reductions(cls):
    check_jit([((2, 3, 4), F)], lambda x: cls(x, axis=(1,)), rtol=1e-5)
    check_jit([((2, 3, 4), F)], lambda x: cls(x, axis=(0, 2), keepdims=True), rtol=1e-5)
    check_jit([((2, 3, 4), F)], lambda x: cls(x), rtol=1e-4)
    check_jit([((3, 4), "int32")], lambda x: cls(x, axis=(1,)))


@pytest.mark.parametrize("cls", [relay.ArgmaxOp, relay.ArgminOp])
def test_arg_reductions(cls):
    import numpy as np

    x = np.array([[1, 3, 3, 0], [2, 2, 1, 1]], dtype=np.float32)
    for last in (False, True):
        check_jit(
            [((2, 4), F)], lambda v, last=last: cls(v, axis=1, select_last_index=last), inputs=[x]
        )
    check_jit([((2, 4), F)], lambda v: cls(v, axis=0, keepdims=True))
    check_jit([((5,), "int64")], lambda v: cls(v, axis=0))


def test_constant():
    import numpy as np

    c = np.arange(6, dtype=np.float32).reshape(2, 3)
    check_jit([((2, 3), F)], lambda x: [k := relay.ConstantOp(c), relay.AddOp(x, k)])


def test_half_precision_accumulates_in_f32():
    H = "float16"
    check_jit([((4, 64), H), ((8, 64), H)], lambda x, w: relay.DenseOp(x, w), rtol=2e-3, atol=2e-3)
    check_jit([((8, 64), H), ((64, 4), H)], lambda a, b: relay.MatmulOp(a, b), rtol=2e-3, atol=2e-3)
    check_jit([((3, 100), H)], lambda x: relay.SumOp(x, axis=(1,)), rtol=2e-3, atol=2e-2)
    check_jit(
        [((1, 3, 6, 6), H), ((2, 3, 3, 3), H)],
        lambda x, w: relay.Conv2DOp(x, w),
        rtol=2e-3,
        atol=2e-3,
    )


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64"])
def test_unsigned_arithmetic_and_compares(dtype):
    """Unsigned division, remainder, min/max and compares pick the unsigned arith ops (a
    value >= 2**(bits-1) would come out wrong from the signed ones)."""
    top = np.iinfo(dtype).max
    a = np.array([top, top - 7, 3, 0, 200, 9], dtype)
    b = np.array([3, top, 0, 5, 7, top // 2 + 2], dtype)
    specs = [((6,), dtype), ((6,), dtype)]
    for cls in (relay.DivideOp, relay.FloorModOp, relay.MaximumOp, relay.MinimumOp, relay.LessOp):
        check_jit(specs, lambda x, y, cls=cls: cls(x, y), inputs=[a, b])


@pytest.mark.parametrize("dtype", ["uint8", "int8", "uint32", "int64"])
def test_shifts_by_any_amount(dtype):
    """Amounts of the bit width or more (and negative ones) are defined: 0, or the sign."""
    bits = np.dtype(dtype).itemsize * 8
    lo = -3 if np.issubdtype(np.dtype(dtype), np.signedinteger) else 0
    a = np.array([1, 5, lo, 7, 100, 3, 1, lo], dtype)
    b = np.array([0, 1, 2, bits - 1, bits, bits + 3, 3, 1], dtype)
    if lo < 0:
        b[7] = -1
    for cls in (relay.LeftShiftOp, relay.RightShiftOp):
        check_jit([((8,), dtype), ((8,), dtype)], lambda x, y, cls=cls: cls(x, y), inputs=[a, b])


@pytest.mark.parametrize("dtype", ["uint8", "int16", "uint64"])
def test_bitwise(dtype):
    top = np.iinfo(dtype).max
    a = np.array([0, 1, top, 5, top // 3], dtype)
    b = np.array([3, 3, 1, top, 7], dtype)
    specs = [((5,), dtype), ((5,), dtype)]
    for cls in (relay.BitwiseAndOp, relay.BitwiseOrOp, relay.BitwiseXorOp):
        check_jit(specs, lambda x, y, cls=cls: cls(x, y), inputs=[a, b])
    check_jit(specs[:1], lambda x: relay.BitwiseNotOp(x), inputs=[a])


@pytest.mark.parametrize("src, dst", [("uint8", f32), ("uint8", i32), (F, ui8), ("uint16", i8)])
def test_unsigned_casts(src, dst):
    x = np.array([0, 1, 127, 128, 200, 255], np.uint8).astype(src)
    check_jit([((6,), src)], lambda v: relay.CastOp(v, dtype=dst), inputs=[x])
