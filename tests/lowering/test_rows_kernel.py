"""The runtime's f32 layer norm, softmax, log-softmax and global pools along contiguous
rows (lowering/kernels/rows.py, chosen by select-kernels): against a float64 reference and the
linalg lowering on rows shorter than a vector, of whole vectors, with a tail, longer than
WIDE_SUM_COUNT, and over several trailing axes; a batch of rows split over 1-3 threads;
8- and 16-float vectors; NaN, infinities and rows of -inf (the lowering's NaN); which ops
it takes."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from xrelay.dialects import relay
from xrelay.dialects.kernel import RowAttr
from xrelay.lowering import select_kernels
from xrelay.lowering.jit import missing_features, resolve_target
from xrelay.lowering.pipeline import lower
from xrelay.lowering.select_kernels import KERNEL_ATTR, row_spec

from .test_kernels import F, module

SHAPES = [(3, 5), (4, 16), (2, 3, 37), (128, 768), (2, 1100), (12, 128, 128)]


def build(shapes, body, kernel: bool, target_cpu=None):
    mod = module(shapes, len(shapes), body)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(select_kernels, "ROWS", kernel)
        lib = xrelay.build(mod, {}, cache=False, target_cpu=target_cpu)
    return mod, lib


def both(shapes, body, args, target_cpu=None):
    """(the row kernel's result, the linalg lowering's); the first build calls a row
    kernel."""
    mod, rows = build(shapes, body, True, target_cpu)
    work = mod.clone()
    lower(work, stop_after="select-kernels")
    assert any(isinstance(op.attributes.get(KERNEL_ATTR), RowAttr) for op in work.ops)
    _, plain = build(shapes, body, False, target_cpu)
    return rows.run(*args)[0], plain.run(*args)[0]


def layer_norm_ref(x, g, b, axes, eps):
    x = x.astype(np.float64)
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * g + b


def softmax_ref(x, log):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(-1, keepdims=True))
    y = e / e.sum(-1, keepdims=True)
    return np.log(y) if log else y


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_layer_norm(shape):
    rng = np.random.default_rng(0)
    n = shape[-1]
    x = (rng.standard_normal(shape) * 3 + 1).astype(F)
    g, b = rng.standard_normal(n).astype(F), rng.standard_normal(n).astype(F)
    got, plain = both(
        [shape, (n,), (n,)], lambda x, g, b: [relay.LayerNormOp(x, g, b, epsilon=1e-5)], [x, g, b]
    )
    want = layer_norm_ref(x, g, b, -1, 1e-5)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-5)
    np.testing.assert_allclose(got, plain, rtol=1e-5, atol=2e-5)


def test_layer_norm_over_trailing_axes():
    """Normalized over the last two axes: rows of 4 * 9 values, gamma and beta [4, 9]."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 4, 9)).astype(F)
    g, b = rng.standard_normal((4, 9)).astype(F), rng.standard_normal((4, 9)).astype(F)
    shapes = [x.shape, g.shape, b.shape]
    got, _ = both(
        shapes, lambda x, g, b: [relay.LayerNormOp(x, g, b, axis=2, epsilon=1e-3)], [x, g, b]
    )
    np.testing.assert_allclose(got, layer_norm_ref(x, g, b, (2, 3), 1e-3), rtol=1e-5, atol=2e-5)


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_softmax(shape, log):
    x = (np.random.default_rng(2).standard_normal(shape) * 4).astype(F)
    op = relay.LogSoftmaxOp if log else relay.SoftmaxOp
    got, plain = both([shape], lambda x: [op(x, axis=-1)], [x])
    want = softmax_ref(x, log)
    atol = 1e-5 if log else 2e-6  # (x - max) - log(sum): the ulp of values near -20
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=atol)
    np.testing.assert_allclose(got, plain, rtol=2e-6, atol=atol)


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_softmax_exp_of_at_most_zero_is_the_full_exp(log, monkeypatch):
    """The softmax's exp leaves out what only changes x > 0 (x - max is at most 0 or NaN):
    the same bits as the full polynomial, special values and a row's masked tail
    included (21 values: 16 + 5)."""
    from xrelay.lowering.kernels import rows

    x = (np.random.default_rng(5).standard_normal((7, 21)) * 40).astype(F)
    x[0, 4], x[1, 20], x[2, ::3], x[3, :], x[4] = np.nan, np.inf, -np.inf, -np.inf, x[4] * 1e30
    x[5, :] = 0.0  # x - max = 0 everywhere
    op = relay.LogSoftmaxOp if log else relay.SoftmaxOp
    got = []
    for flag in (True, False):
        monkeypatch.setattr(rows, "EXP_AT_MOST_ZERO", flag)
        got.append(both([x.shape], lambda x: [op(x, axis=-1)], [x])[0])
    np.testing.assert_array_equal(got[0], got[1])


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_softmax_special_values(log):
    """Rows with NaN (all NaN), +inf (NaN: inf - inf), -inf entries (exp 0) and only -inf
    (NaN): as the linalg lowering; large values (no overflow: x - max <= 0)."""
    x = np.random.default_rng(3).standard_normal((6, 21)).astype(F)
    x[0, 4] = np.nan
    x[1, 20] = np.inf
    x[2, ::3] = -np.inf
    x[3, :] = -np.inf
    x[4] *= 1e30
    op = relay.LogSoftmaxOp if log else relay.SoftmaxOp
    got, plain = both([x.shape], lambda x: [op(x, axis=-1)], [x])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(plain))
    assert np.isnan(got[0]).all() and np.isnan(got[1]).all() and np.isnan(got[3]).all()
    np.testing.assert_allclose(got[[2, 4, 5]], plain[[2, 4, 5]], rtol=2e-6, atol=1e-5)
    if not log:
        assert (got[2, ::3] == 0).all()
        np.testing.assert_allclose(got[2].sum(), 1.0, rtol=1e-6)


@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_rows_split_over_threads(monkeypatch, threads):
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    x = np.random.default_rng(4).standard_normal((37, 700)).astype(F)
    g, b = np.ones(700, F), np.zeros(700, F)
    got, _ = both(
        [x.shape, (700,), (700,)], lambda x, g, b: [relay.LayerNormOp(x, g, b)], [x, g, b]
    )
    np.testing.assert_allclose(got, layer_norm_ref(x, g, b, -1, 1e-5), rtol=1e-5, atol=2e-5)
    got, _ = both([x.shape], lambda x: [relay.SoftmaxOp(x, axis=-1)], [x])
    np.testing.assert_allclose(got, softmax_ref(x, False), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("target", ["x86-64-v3", "x86-64-v4"])
def test_vector_widths(target):
    if missing_features(resolve_target(target)):
        pytest.skip(f"the host cannot run {target}")
    x = np.random.default_rng(5).standard_normal((5, 45)).astype(F)
    g, b = np.full(45, 2, F), np.full(45, 0.5, F)
    got, _ = both(
        [x.shape, (45,), (45,)], lambda x, g, b: [relay.LayerNormOp(x, g, b)], [x, g, b], target
    )
    np.testing.assert_allclose(got, layer_norm_ref(x, g, b, -1, 1e-5), rtol=1e-5, atol=2e-5)
    got, _ = both([x.shape], lambda x: [relay.LogSoftmaxOp(x, axis=-1)], [x], target)
    np.testing.assert_allclose(got, softmax_ref(x, True), rtol=2e-6, atol=1e-5)


def test_which_ops_it_takes():
    def softmax(shape, axis=-1):
        return module([shape], 1, lambda x: [relay.SoftmaxOp(x, axis=axis)])

    ops = {
        "last": softmax((4, 10)),
        "first": softmax((4, 10), 0),
        "long": softmax((2, select_kernels.MAX_ROW + 1)),
    }
    found = {
        name: row_spec(next(op for op in mod.walk() if isinstance(op, relay.SoftmaxOp)))
        for name, mod in ops.items()
    }
    assert found["last"] is not None and (found["last"].rows, found["last"].n) == (4, 10)
    assert found["first"] is None  # not contiguous rows
    assert found["long"] is None  # over MAX_ROW: the linalg lowering


@pytest.mark.parametrize(
    "shape", [(1, 1000, 13, 13), (2, 5, 7, 7), (1, 3, 4, 5), (1, 2, 40, 40)], ids=str
)
@pytest.mark.parametrize("kind", ["avg", "max"])
def test_global_pools(shape, kind):
    """NCHW global pools, each plane a row: planes of 169 (SqueezeNet's), 49, 20 (under a
    vector) and 1600 values (over WIDE_SUM_COUNT); a NaN in one plane wins its maximum."""
    x = np.random.default_rng(6).standard_normal(shape).astype(F)
    x[0, 0, 1, 2] = np.nan
    op = relay.GlobalAvgPool2DOp if kind == "avg" else relay.GlobalMaxPool2DOp
    got, plain = both([shape], lambda x: [op(x)], [x])
    if kind == "avg":
        ref = x.astype(np.float64).mean((2, 3), keepdims=True)
    else:
        ref = x.max((2, 3), keepdims=True)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(plain))
    assert np.isnan(got[0, 0]).all()
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    if kind == "max":
        np.testing.assert_array_equal(got, plain)


EXTREMES = [
    ((128, 768), None, False),  # dynamic quantization's range: per row, then over the rows
    ((128, 3072), None, True),
    ((37,), None, False),  # rank 1: one row
    ((4, 100), (1,), False),
    ((3, 5, 70), (1, 2), True),
    ((6, 33), (-1,), False),
]


@pytest.mark.parametrize("shape,axis,keepdims", EXTREMES, ids=str)
@pytest.mark.parametrize("kind", ["max", "min"])
def test_max_min_over_trailing_axes(shape, axis, keepdims, kind):
    """relay.max / relay.min over trailing axes on the row kernels, bit for bit the linalg
    lowering's (a NaN wins; -0 below +0): random values, a NaN, rows of signed zeros, an
    extreme value in the last lane."""
    op = relay.MaxOp if kind == "max" else relay.MinOp
    attrs = {"keepdims": keepdims} | ({"axis": list(axis)} if axis is not None else {})
    rng = np.random.default_rng(7)
    for trial in range(4):
        x = rng.standard_normal(shape).astype(F)
        if trial == 1:
            x.flat[rng.integers(x.size)] = np.nan
        if trial == 2:
            x[...] = 0.0
            x.flat[::3] = -0.0
        if trial == 3:
            x.flat[-1] = 1e30 if kind == "max" else -1e30
        got, plain = both([shape], lambda v: [op(v, **attrs)], [x])
        assert got.shape == plain.shape
        np.testing.assert_array_equal(got, plain)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(plain))
        want = (np.max if kind == "max" else np.min)(x, axis=axis, keepdims=keepdims)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


def test_extremes_it_leaves():
    """A maximum over leading axes (not contiguous rows) stays with linalg."""
    leading = module([(4, 10)], 1, lambda x: [relay.MaxOp(x, axis=[0])])
    assert row_spec(next(op for op in leading.walk() if isinstance(op, relay.MaxOp))) is None


def test_a_global_max_pool_of_one_plane():
    """A global max pool over a single plane (one row: ONNX's globalmaxpool_precomputed)
    stays one row kernel call, not the two-level whole-tensor maximum (which built a
    global_max_pool2d of the rows' results, rank 1)."""
    x = np.arange(9, dtype=F).reshape(1, 1, 3, 3)[:, :, ::-1].copy()
    got, plain = both([(1, 1, 3, 3)], lambda v: [relay.GlobalMaxPool2DOp(v)], [x])
    np.testing.assert_array_equal(got, plain)
    np.testing.assert_array_equal(got, x.max((2, 3), keepdims=True))
