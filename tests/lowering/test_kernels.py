"""The runtime GEMM path (select-kernels + lowering/kernels): products and convolutions
with their epilogue chains, through the JIT against the reference executor. Weights given
as parameters are packed at build time; given as inputs they are packed at run time, so
both paths are compared."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Block, Region
from xrelay.dialects import relay
from xrelay.dialects.dtypes import tensor_type
from xrelay.dialects.kernel import GemmSpec
from xrelay.errors import Error
from xrelay.lowering import select_kernels
from xrelay.lowering.kernels.wrappers import batch_split
from xrelay.lowering.pipeline import lower
from xrelay.lowering.select_kernels import KERNEL_ATTR
from xrelay.signature import arg_attrs

from .jit_check import random_inputs

# K over several blocks of the f32 GEMM (conftest.small_k_blocks)
pytestmark = pytest.mark.usefixtures("small_k_blocks")

F = "float32"


def module(shapes, n_inputs, body) -> ModuleOp:
    block = Block(arg_types=[tensor_type(s, F) for s in shapes])
    ops = body(*block.args)
    for op in ops:
        if op.parent is None:
            block.add_op(op)
    out = ops[-1].results[0]
    block.add_op(func.ReturnOp(out))
    names = [f"x{i}" for i in range(len(shapes))]
    fn = func.FuncOp(
        "main",
        FunctionType.from_lists([a.type for a in block.args], [out.type]),
        Region(block),
        arg_attrs=arg_attrs(names, n_inputs),
    )
    return ModuleOp([fn])


def check(
    shapes, body, params_from=None, rtol=2e-4, atol=2e-4, seed=0, kernels=True, target_cpu=None
):
    """Compare the JIT with the reference; arguments from index `params_from` on are
    parameters (packed at build time where they are weights)."""
    n_inputs = len(shapes) if params_from is None else params_from
    mod = module(shapes, n_inputs, body)
    arrays = random_inputs([(s, F) for s in shapes], seed)
    inputs = arrays[:n_inputs]
    params = {f"x{i}": a for i, a in enumerate(arrays) if i >= n_inputs}
    want = xrelay.create_executor("debug", mod, params=params).run(*inputs)
    got = xrelay.build(mod, params, kernels=kernels, target_cpu=target_cpu, cache=False).run(
        *inputs
    )
    np.testing.assert_allclose(got[0], want[0], rtol=rtol, atol=atol)
    return mod


def specs_after_selection(mod: ModuleOp) -> list[GemmSpec]:
    work = mod.clone()
    lower(work, stop_after="prepack-weights")
    return [
        op.attributes[KERNEL_ATTR].data
        for op in work.ops
        if isinstance(op, func.FuncOp) and KERNEL_ATTR in op.attributes
    ]


CONVS = [
    # data, weight, strides, padding, dilation, groups
    ((1, 8, 9, 9), (16, 8, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    ((2, 6, 10, 7), (13, 6, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
    ((1, 3, 17, 15), (8, 3, 7, 7), (2, 2), (3, 2, 3, 1), (1, 1), 1),
    ((1, 8, 12, 12), (16, 2, 3, 3), (2, 1), (1, 0, 2, 1), (2, 1), 4),
    ((1, 12, 5, 5), (20, 3, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 4),
    ((1, 4, 6, 6), (7, 4, 2, 2), (2, 2), (0, 0, 0, 0), (1, 1), 1),
]


@pytest.mark.parametrize("conv", CONVS, ids=lambda c: "x".join(map(str, c[1])))
@pytest.mark.parametrize("weights", ["input", "param"])
def test_conv_bias_relu(conv, weights, monkeypatch):
    monkeypatch.setattr(select_kernels, "NARROW", False)  # (few input channels: GEMMs here)
    x, w, strides, padding, dilation, groups = conv

    def body(xv, wv, bv):
        c = relay.Conv2DOp(
            xv, wv, strides=strides, padding=padding, dilation=dilation, groups=groups
        )
        b = relay.BiasAddOp(c, bv, axis=1)
        return [c, b, relay.ReluOp(b)]

    mod = check([x, w, (w[0],)], body, params_from=1 if weights == "param" else None)
    (spec,) = specs_after_selection(mod)
    assert spec.per_row and spec.shift and spec.relu and not spec.scale
    assert spec.a_packed == (weights == "param")


def test_conv_batch_norm_residual_relu():
    """conv -> batch_norm -> add(residual) -> relu: one call, residual and relu fused."""

    def body(x, r, w, g, b, m, v):
        c = relay.Conv2DOp(x, w, padding=(1, 1, 1, 1))
        bn = relay.BatchNormOp(c, g, b, m, relay.AbsOp(v), epsilon=1e-3)
        s = relay.AddOp(r, bn)
        return [c, bn.operands[4].owner, bn, s, relay.ReluOp(s)]

    shapes = [(1, 5, 8, 8), (1, 10, 8, 8), (10, 5, 3, 3), (10,), (10,), (10,), (10,)]
    mod = check(shapes, body, params_from=2)
    (spec,) = specs_after_selection(mod)
    assert (spec.scale, spec.shift, spec.residual, spec.relu) == (True, True, True, True)


def test_channel_vector_multiply_add_subtract():
    def body(x, w, s, t, u):
        c = relay.Conv2DOp(x, w)
        m = relay.MultiplyOp(c, s)
        a = relay.AddOp(t, m)
        return [c, m, a, relay.SubtractOp(a, u)]

    shapes = [(2, 4, 6, 6), (8, 4, 1, 1), (1, 8, 1, 1), (8, 1, 1), (8, 1, 1)]
    mod = check(shapes, body)
    (spec,) = specs_after_selection(mod)
    assert spec.scale and spec.shift and not spec.relu


def test_chain_stops_at_a_shared_value():
    """The product's result is used twice: nothing after it is fused."""

    def body(x, w):
        d = relay.DenseOp(x, w)
        r = relay.ReluOp(d)
        return [d, r, relay.AddOp(d, r)]

    mod = check([(7, 5), (9, 5)], body)
    (spec,) = specs_after_selection(mod)
    assert not spec.relu and not spec.residual


def test_vector_minus_product_is_not_fused():
    def body(x, w, v):
        d = relay.DenseOp(x, w)
        return [d, relay.SubtractOp(v, d)]

    mod = check([(7, 5), (9, 5), (9,)], body)
    (spec,) = specs_after_selection(mod)
    assert not spec.shift


@pytest.mark.parametrize("m", [1, 2, 3, 4, 7, 40, 300])
@pytest.mark.parametrize("weights", ["input", "param"])
def test_dense_bias_relu(m, weights):
    def body(x, w, b):
        d = relay.DenseOp(x, w)
        a = relay.AddOp(d, b)
        return [d, a, relay.ReluOp(a)]

    mod = check([(m, 70), (37, 70), (37,)], body, params_from=1 if weights == "param" else None)
    (spec,) = specs_after_selection(mod)
    assert spec.b_packed == (weights == "param" and m > 3)


@pytest.mark.parametrize("target", ["x86-64-v3", "x86-64-v4"])
@pytest.mark.parametrize("weights", ["input", "param"])
def test_both_vector_widths(target, weights):
    """The micro-kernel at 8 floats (AVX2: 6x16 tiles, B panels of 16) and at 16 (AVX-512:
    6x32 tiles, B panels of 32), on shapes with edge tiles in both directions; run where
    the host has the features."""
    from xrelay.lowering.jit import missing_features, resolve_target, vector_width

    chosen = resolve_target(target)
    if missing_features(chosen):
        pytest.skip(f"this CPU lacks {target}'s features")
    assert vector_width(chosen) == (16 if target == "x86-64-v4" else 8)
    params_from = 1 if weights == "param" else None

    def dense(x, w, b):
        d = relay.DenseOp(x, w)
        a = relay.AddOp(d, b)
        return [d, a, relay.ReluOp(a)]

    check([(45, 70), (67, 70), (67,)], dense, params_from=params_from, target_cpu=target)
    data, weight, strides, padding, dilation, groups = CONVS[1]

    def conv(x, w):
        return [
            relay.Conv2DOp(x, w, strides=strides, padding=padding, dilation=dilation, groups=groups)
        ]

    check([data, weight], conv, params_from=params_from, target_cpu=target)


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("weights", ["input", "param"])
def test_matmul_transposes(ta, tb, weights):
    m, k, n = 9, 300, 33
    a = (k, m) if ta else (m, k)
    b = (n, k) if tb else (k, n)
    check(
        [a, b],
        lambda x, y: [relay.MatmulOp(x, y, transpose_a=ta, transpose_b=tb)],
        params_from=1 if weights == "param" else None,
        rtol=1e-3,
        atol=1e-3,
    )


@pytest.mark.parametrize("target", [None, "x86-64-v3"], ids=["host", "avx2"])
@pytest.mark.parametrize("k", [64, 37])
def test_b_stored_n_by_k_packs_by_8_x_8_blocks(target, k):
    """B given as [N, K] (attention's q k^T): its full panels (32 or 16 columns) are packed
    as 8 x 8 blocks transposed in registers, the K past a multiple of 8 and the last,
    partial panel value by value; a batch of 12 heads as BERT's."""
    check(
        [(12, 40, k), (12, 70, k)],
        lambda x, y: [relay.BatchMatmulOp(x, y, transpose_b=True)],
        target_cpu=target,
        rtol=1e-4,
        atol=1e-4,
    )


def test_dense_of_a_3d_input_with_residual():
    def body(x, w, r):
        d = relay.DenseOp(x, w)
        return [d, relay.AddOp(d, r)]

    check([(2, 6, 20), (18, 20), (2, 6, 18)], body, params_from=None)


def _ops_after_selection(mod, kind):
    work = mod.clone()
    lower(work, stop_after="select-kernels")
    return [op for op in work.walk() if isinstance(op, kind)]


@pytest.mark.parametrize("scale", ["param", "constant", None])
def test_attention_heads_are_read_in_place(scale):
    """BERT's attention: q = x + y as [s, h * d] -> [1, s, h, d] -> heads first -> times a
    scalar -> [h, s, d]; k the same, then [h, d, s]; batch_matmul(q, k) reads x + y and
    x - z at the views' strides (no transposes left), the two scalars as its epilogue's
    scale; P @ v reads y + z the same way."""
    s, h, d = 10, 3, 8

    def body(x, y, z, c):
        ops = []

        def emit(op):
            ops.append(op)
            return op.results[0]

        factor = c if scale == "param" else None
        if scale == "constant":
            factor = emit(relay.ConstantOp(np.array(0.35, np.float32)))

        def heads(v, last, scaled):
            r = emit(relay.ReshapeOp(v, newshape=[1, s, h, d]))
            t = emit(relay.TransposeOp(r, axes=[0, 2, 3, 1] if last else [0, 2, 1, 3]))
            if scaled and factor is not None:
                t = emit(relay.MultiplyOp(t, factor))
            return emit(relay.ReshapeOp(t, newshape=[h, d, s] if last else [h, s, d]))

        q = heads(emit(relay.AddOp(x, y)), False, True)
        k = heads(emit(relay.SubtractOp(x, z)), True, True)
        scores = emit(relay.BatchMatmulOp(q, k))
        v = heads(emit(relay.AddOp(y, z)), False, False)
        emit(relay.BatchMatmulOp(scores, v))
        return ops

    mod = check([(s, h * d), (s, h * d), (s, h * d), ()], body, params_from=3)
    assert not _ops_after_selection(mod, relay.TransposeOp)
    first, second = specs_after_selection(mod)
    assert (first.rsa, first.csa, first.rsb, first.csb) == (h * d, 1, 1, h * d)
    assert first.batch[0][:3] == (h, d, d) and first.scale == (scale is not None)
    assert (second.rsb, second.csb) == (h * d, 1) and second.batch[0][2] == d


def test_a_view_that_would_copy_keeps_its_transpose():
    """[4, 6] -> transposed [6, 4] -> [3, 8]: the merged rows are not contiguous in x, so
    the product reads the transpose's result."""

    def body(x, y, w):
        t = relay.TransposeOp(relay.AddOp(x, y), axes=[1, 0])
        r = relay.ReshapeOp(t, newshape=[3, 8])
        return [t.operands[0].owner, t, r, relay.MatmulOp(r, w)]

    mod = check([(4, 6), (4, 6), (8, 5)], body, params_from=2)
    assert _ops_after_selection(mod, relay.TransposeOp)


@pytest.mark.parametrize(
    "shapes", [((3, 8, 20), (3, 20, 17)), ((1, 8, 20), (4, 20, 17)), ((4, 8, 20), (1, 20, 17))]
)
@pytest.mark.parametrize("tb", [False, True])
def test_batch_matmul_broadcast(shapes, tb):
    a, b = shapes
    if tb:
        b = (b[0], b[2], b[1])
    check([a, b], lambda x, y: [relay.BatchMatmulOp(x, y, transpose_b=tb)])


def test_large_product_runs_on_threads(monkeypatch):
    """A product big enough to be split over the pool, with one thread and with three."""

    def body(x, w, b):
        d = relay.MatmulOp(x, w)
        return [d, relay.AddOp(d, b)]

    shapes = [(100, 300), (300, 130), (130,)]
    for threads in ("1", "3"):
        monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
        check(shapes, body, params_from=1, rtol=1e-3, atol=1e-3)
    monkeypatch.setenv("XRELAY_NUM_THREADS", "two")
    with pytest.raises(Error, match="XRELAY_NUM_THREADS"):
        xrelay.build(module(shapes, 3, body))


def test_kernels_can_be_disabled():
    mod = check([(7, 5), (9, 5)], lambda x, w: [relay.DenseOp(x, w)], kernels=False)
    work = mod.clone()
    lower(work, stop_after="prepack-weights", options={"select-kernels": {"enabled": False}})
    assert not any(KERNEL_ATTR in op.attributes for op in work.ops)
    assert specs_after_selection(mod) != []


@pytest.mark.parametrize("n", [1, 2, 5])
@pytest.mark.parametrize("k", [7, 40, 70])
def test_a_pointwise_conv_of_one_pixel_is_a_matrix_vector_product(n, k):
    """A 1x1 convolution over a 1x1 input (a classifier after global pooling) runs in the
    dense layout: images as rows, the weight's rows as contiguous dot products (K not a
    multiple of 32 or 8: the dot product's tails), with its bias, residual and relu."""

    def body(x, w, b, r):
        c = relay.Conv2DOp(x, w)
        y = relay.BiasAddOp(c, b, axis=1)
        z = relay.AddOp(y, r)
        return [c, y, z, relay.ReluOp(z)]

    shapes = [(n, k, 1, 1), (n, 30, 1, 1), (30, k, 1, 1), (30,)]  # inputs, then parameters
    mod = check(shapes, lambda x, r, w, b: body(x, w, b, r), params_from=2)
    (spec,) = specs_after_selection(mod)
    assert (spec.m, spec.n, spec.k, spec.rsb, spec.csb) == (n, 30, k, 1, k)
    assert not spec.per_row and spec.shift and spec.relu
    assert spec.residual == (n > 1)  # one image's residual is a channel vector: a shift


def batch_norm(x, g, b, m, v):
    return relay.BatchNormOp(x, g, b, m, v, epsilon=1e-3)


def normalize(kind: str, xv, g, b, m, v) -> list:
    """The ops before the relu: a batch_norm, Caffe's batch_norm then scale (multiply and
    add by [C, 1, 1] vectors), a subtraction and bias_add, or none."""
    c = xv.type.get_shape()[1]
    if kind == "none":
        return []
    if kind == "bn":
        return [batch_norm(xv, g, b, m, v)]
    if kind == "bn_scale":
        bn = batch_norm(xv, g, b, m, v)
        gs, bs = (relay.ReshapeOp(t, newshape=[c, 1, 1]) for t in (g, b))
        mul = relay.MultiplyOp(bn, gs)
        return [bn, gs, bs, mul, relay.AddOp(mul, bs)]
    ms = relay.ReshapeOp(m, newshape=[c, 1, 1])
    sub = relay.SubtractOp(xv, ms)
    return [ms, sub, relay.BiasAddOp(sub, b, axis=1)]


@pytest.mark.parametrize("kind", ["bn", "bn_scale", "sub_bias", "none"])
@pytest.mark.parametrize(
    "x, k",
    [
        ((1, 24, 5, 7), 16),  # 35 pixels: a full panel and an edge (value by value)
        ((2, 300, 8, 8), 40),  # K over one block (the vectors from each block's k), 2 images
        ((1, 8, 3, 3), 8),  # fewer pixels than a panel
    ],
    ids=["edge", "blocks", "small"],
)
def test_channel_affine_ops_and_relu_before_a_pointwise_conv_are_its_prologue(x, k, kind):
    """DenseNet's layer: batch_norm (and scale), relu, 1x1 convolution. The GEMM packs
    max(x * g + h, 0) from the first op's input; none of the ops is left."""
    c = x[1]

    def body(xv, w, g, b, m, v, bias):
        pre = normalize(kind, xv, g, b, m, v)
        r = relay.ReluOp(pre[-1] if pre else xv)
        conv = relay.Conv2DOp(r, w)
        return [*pre, r, conv, relay.BiasAddOp(conv, bias, axis=1)]

    shapes = [x, (k, c, 1, 1), (c,), (c,), (c,), (c,), (k,)]
    mod = module(shapes, 1, body)
    arrays = random_inputs([(s, F) for s in shapes], 0)
    arrays[5] = np.abs(arrays[5]) + 0.5  # variances
    params = {f"x{i}": a for i, a in enumerate(arrays) if i >= 1}
    want = xrelay.create_executor("debug", mod, params=params).run(arrays[0])[0]
    got = xrelay.build(mod, params, cache=False).run(arrays[0])[0]
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4)
    (spec,) = specs_after_selection(mod)
    assert spec.prologue and spec.shift
    work = mod.clone()
    lower(work, stop_after="select-kernels")
    # what is left on whole feature maps: nothing (the vectors' ops remain)
    assert not [
        op
        for op in work.walk()
        if op.name.startswith("relay.") and op.results and len(op.results[0].type.get_shape()) == 4
    ]


def test_a_batch_norm_read_twice_or_a_windowed_conv_keeps_it():
    """The prologue needs the relu read by the convolution alone, and B read as a matrix
    (a 3x3 window packs im2col panels)."""

    def twice(xv, w, g, b, m, v):
        bn = batch_norm(xv, g, b, m, v)
        r = relay.ReluOp(bn)
        conv = relay.Conv2DOp(r, w)
        return [bn, r, conv, relay.AddOp(conv, r)]

    def window(xv, w, g, b, m, v):
        bn = batch_norm(xv, g, b, m, v)
        r = relay.ReluOp(bn)
        return [bn, r, relay.Conv2DOp(r, w, padding=(1, 1, 1, 1))]

    for body, w in ((twice, (8, 8, 1, 1)), (window, (8, 8, 3, 3))):
        shapes = [(1, 8, 6, 6), w, (8,), (8,), (8,), (8,)]
        mod = module(shapes, 1, body)
        arrays = random_inputs([(s, F) for s in shapes], 0)
        arrays[5] = np.abs(arrays[5]) + 0.5
        params = {f"x{i}": a for i, a in enumerate(arrays) if i >= 1}
        want = xrelay.create_executor("debug", mod, params=params).run(arrays[0])[0]
        got = xrelay.build(mod, params, cache=False).run(arrays[0])[0]
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4)
        assert not any(spec.prologue for spec in specs_after_selection(mod))


def test_depthwise_conv_is_no_gemm():
    """A depthwise convolution is the runtime's narrow convolution (test_narrow_conv),
    not a GEMM of 9-long products."""

    def body(x, w):
        return [relay.Conv2DOp(x, w, padding=(1, 1, 1, 1), groups=6)]

    mod = check([(1, 6, 7, 7), (6, 1, 3, 3)], body)
    specs = specs_after_selection(mod)
    assert len(specs) == 1 and not isinstance(specs[0], GemmSpec)


def shuffled(value, groups: int) -> list:
    """ShuffleNet's channel shuffle of an [N, C, H, W] value: reshape, transpose, reshape."""
    n, c, h, w = value.type.get_shape()
    split = relay.ReshapeOp(value, newshape=[n, groups, c // groups, h, w])
    swap = relay.TransposeOp(split, axes=[0, 2, 1, 3, 4])
    return [split, swap, relay.ReshapeOp(swap, newshape=[n, c, h, w])]


@pytest.mark.parametrize(
    "x, w, padding",
    [
        ((1, 12, 5, 5), (20, 3, 1, 1), (0, 0, 0, 0)),  # pointwise, B read in place
        ((2, 8, 7, 6), (16, 2, 3, 3), (1, 1, 1, 1)),  # window, a batch of 2
    ],
)
def test_grouped_conv_writes_its_channel_shuffle(x, w, padding, monkeypatch):
    """conv(groups=4) -> bias -> relu -> channel shuffle over the 4 groups: the GEMM writes
    the shuffled channels itself (group C stride H*W, row stride 4*H*W); no transpose left."""
    monkeypatch.setattr(select_kernels, "NARROW", False)  # (few input channels: GEMMs here)

    def body(xv, wv, bv):
        c = relay.Conv2DOp(xv, wv, padding=padding, groups=4)
        b = relay.BiasAddOp(c, bv, axis=1)
        r = relay.ReluOp(b)
        return [c, b, r, *shuffled(r.results[0], 4)]

    mod = check([x, w, (w[0],)], body, params_from=1)
    (spec,) = specs_after_selection(mod)
    _, _, oh, ow = mod.body.block.first_op.function_type.outputs.data[0].get_shape()
    assert spec.ldc == 4 * oh * ow and spec.batch[-1][3] == oh * ow
    work = mod.clone()
    lower(work, stop_after="select-kernels")
    assert "relay.transpose" not in str(work)


@pytest.mark.parametrize("threads", ["1", "2", "3", "4"])
@pytest.mark.parametrize("groups", [2, 3, 4, 5])
def test_grouped_conv_groups_split_over_threads(monkeypatch, threads, groups):
    """A few groups: threads take whole groups when the team divides their count, else
    every group's product is split; both give the reference's result."""
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)

    def body(xv, wv):
        return [relay.Conv2DOp(xv, wv, padding=(1, 1, 1, 1), groups=groups)]

    # 32 x 144 x 144 multiply-adds per group: over the serial threshold, so each product
    # splits when the groups do not
    x, w = (1, 16 * groups, 12, 12), (32 * groups, 16, 3, 3)
    mod = check([x, w], body, params_from=1)
    (spec,) = specs_after_selection(mod)
    assert batch_split(spec, True) and spec.batch[0][0] == groups


def test_channel_shuffle_over_other_groups_or_after_a_residual_stays(monkeypatch):
    """A shuffle over a count other than the convolution's groups, or after a residual add
    (read in C's layout), stays a transpose after the call."""
    monkeypatch.setattr(select_kernels, "NARROW", False)

    def other_groups(xv, wv):
        c = relay.Conv2DOp(xv, wv, groups=4)
        return [c, *shuffled(c.results[0], 2)]

    def residual(xv, rv, wv):
        c = relay.Conv2DOp(xv, wv, groups=4)
        s = relay.AddOp(c, rv)
        return [c, s, *shuffled(s.results[0], 4)]

    for shapes, body in (
        ([(1, 12, 5, 5), (20, 3, 1, 1)], other_groups),
        ([(1, 12, 5, 5), (1, 20, 5, 5), (20, 3, 1, 1)], residual),
    ):
        mod = check(shapes, body, params_from=len(shapes) - 1)
        (spec,) = specs_after_selection(mod)
        assert spec.ldc == 25
        work = mod.clone()
        lower(work, stop_after="select-kernels")
        assert "relay.transpose" in str(work)
