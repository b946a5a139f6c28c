"""The runtime's f32 convolution for few input channels per group (lowering/kernels/
narrow_conv.py, chosen by select-kernels): against the reference and the linalg lowering,
on geometries that stress the padded buffer (padding on every side, odd left padding with
stride 2, dilation, row stride 3, rows narrower than a vector and wider than two), the
units (several outputs per input channel, blocks of 8 and 6 output channels, stems of 3
input channels, groups of 2 and 4, one input channel), a batch, the epilogues
(batch_norm and relu, bias, a residual) and units split over 1-3 threads; which
convolutions it takes."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from xrelay.dialects import relay
from xrelay.dialects.kernel import NarrowConvSpec
from xrelay.lowering import select_kernels
from xrelay.lowering.jit import missing_features, resolve_target

from .jit_check import random_inputs
from .test_kernels import F, module, specs_after_selection

CASES = [
    ((1, 8, 28, 28), (8, 1, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 8),  # ShuffleNet's
    ((2, 5, 13, 13), (5, 1, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 5),  # stride 2, a batch
    ((1, 4, 11, 40), (4, 1, 3, 3), (2, 2), (0, 0, 1, 1), (1, 1), 4),  # rows over 2 vectors
    ((1, 3, 9, 10), (3, 1, 5, 5), (1, 2), (2, 3, 2, 1), (1, 1), 3),  # odd left pad, stride 2
    ((1, 3, 12, 35), (3, 1, 3, 3), (3, 1), (2, 2, 2, 2), (2, 2), 3),  # dilation, row stride 3
    ((1, 6, 7, 7), (6, 1, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 6),  # 8-float rows
    ((1, 3, 8, 9), (12, 1, 3, 2), (1, 1), (0, 1, 2, 0), (1, 1), 3),  # 4 outputs per channel
    ((2, 1, 10, 19), (6, 1, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1),  # one input channel
    ((1, 3, 30, 29), (24, 3, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1),  # a stem: 3 blocks of 8
    ((1, 3, 23, 21), (8, 3, 7, 7), (2, 2), (3, 3, 3, 3), (1, 1), 1),  # ResNet's stem
    ((2, 6, 9, 33), (18, 2, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 3),  # 2 in, blocks of 6
    ((1, 8, 6, 17), (4, 4, 1, 1), (1, 2), (0, 0, 0, 0), (1, 1), 2),  # 4 in, 1x1
    ((1, 3, 5, 56), (8, 3, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),  # rows of 3.5 vectors
]


def conv(case, x, w):
    _, _, strides, padding, dilation, groups = case
    return relay.Conv2DOp(x, w, strides=strides, padding=padding, dilation=dilation, groups=groups)


def run(mod, params, inputs, kernel: bool):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(select_kernels, "NARROW", kernel)
        return xrelay.build(mod, params, cache=False).run(*inputs)[0]


def compare(mod, shapes, n_inputs, seed=0):
    arrays = random_inputs([(s, F) for s in shapes], seed)
    inputs = arrays[:n_inputs]
    params = {f"x{i}": a for i, a in enumerate(arrays) if i >= n_inputs}
    got = run(mod, params, inputs, True)
    want = xrelay.create_executor("debug", mod, params=params).run(*inputs)[0]
    atol = 1e-5 * max(1.0, float(np.abs(want).max()))  # sums of up to 147 products
    np.testing.assert_allclose(got, run(mod, params, inputs, False), rtol=1e-5, atol=atol)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=atol)


def narrow_specs(mod) -> list[NarrowConvSpec]:
    return [s for s in specs_after_selection(mod) if isinstance(s, NarrowConvSpec)]


@pytest.mark.parametrize("threads", ["1", "2", "3"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[0] + c[1][:1])))
def test_the_kernel_gives_the_lowering_s_values(case, threads, monkeypatch):
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    mod = module([case[0], case[1]], 1, lambda x, w: [conv(case, x, w)])
    compare(mod, [case[0], case[1]], 1)
    (spec,) = narrow_specs(mod)
    assert spec.n * spec.groups * spec.og == case[0][0] * case[1][0]
    assert not (spec.scale or spec.shift or spec.residual or spec.relu)


@pytest.mark.parametrize(
    "case", [CASES[0], CASES[1], CASES[6], CASES[9]], ids=["s1", "s2", "mult", "stem"]
)
def test_batch_norm_and_relu_are_its_epilogue(case):
    o = case[1][0]

    def body(x, w, g, b, m, v):
        c = conv(case, x, w)
        bn = relay.BatchNormOp(c, g, b, m, relay.AbsOp(v), epsilon=1e-3)
        return [c, bn.operands[4].owner, bn, relay.ReluOp(bn)]

    shapes = [case[0], case[1], (o,), (o,), (o,), (o,)]
    mod = module(shapes, 1, body)
    compare(mod, shapes, 1)
    (spec,) = narrow_specs(mod)
    assert spec.scale and spec.shift and spec.relu and not spec.residual
    assert "relay.nn.batch_norm" not in str(_selected(mod))


def test_bias_and_residual():
    case = CASES[0]

    def body(x, w, r, b):
        c = conv(case, x, w)
        a = relay.BiasAddOp(c, b, axis=1)
        return [c, a, relay.AddOp(a, r)]

    shapes = [case[0], case[1], case[0], (case[1][0],)]
    mod = module(shapes, 1, body)
    compare(mod, shapes, 1, seed=3)
    (spec,) = narrow_specs(mod)
    assert spec.shift and spec.residual and not spec.scale and not spec.relu


def test_weights_given_as_an_input():
    case = CASES[3]
    mod = module([case[0], case[1]], 2, lambda x, w: [conv(case, x, w)])
    compare(mod, [case[0], case[1]], 2)


def test_two_convolutions_of_one_geometry_share_a_declaration():
    case = CASES[0]
    mod = module(
        [case[0], case[1], case[1]],
        1,
        lambda x, w, v: [a := conv(case, x, w), conv(case, a, v)],
    )
    compare(mod, [case[0], case[1], case[1]], 1)
    assert str(_selected(mod)).count("#kernel.narrow_conv") == 1


def test_other_convolutions_keep_their_paths():
    """Convolutions with more than 4 input channels per group stay GEMMs or loops; a
    column stride of 3 stays linalg."""
    grouped = module(
        [(1, 10, 9, 9), (8, 5, 3, 3)], 1, lambda x, w: [relay.Conv2DOp(x, w, groups=2)]
    )
    strided = module(
        [(1, 4, 9, 9), (4, 1, 3, 3)],
        1,
        lambda x, w: [relay.Conv2DOp(x, w, strides=(1, 3), groups=4)],
    )
    for mod in (grouped, strided):
        assert narrow_specs(mod) == []


def _selected(mod):
    from xrelay.lowering.pipeline import lower

    work = mod.clone()
    lower(work, stop_after="select-kernels")
    return work


@pytest.mark.parametrize("case", [CASES[1], CASES[8], CASES[9]], ids=["dw-s2", "stem3", "stem7"])
def test_eight_float_vectors(case):
    """On an AVX2 target (8-float vectors: rows of 8, pairs of vectors within 16
    registers), against the reference."""
    target = "x86-64-v3"
    if missing_features(resolve_target(target)):
        pytest.skip(f"this CPU lacks {target}'s features")
    mod = module([case[0], case[1]], 1, lambda x, w: [conv(case, x, w)])
    x, w = random_inputs([(case[0], F), (case[1], F)], 0)
    got = xrelay.build(mod, {"x1": w}, target_cpu=target, cache=False).run(x)[0]
    want = xrelay.create_executor("debug", mod, params={"x1": w}).run(x)[0]
    atol = 1e-5 * max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=atol)
    assert narrow_specs(mod)


@pytest.mark.parametrize(("ow", "stores"), [(112, 3), (64, 2), (56, 4), (20, 2)])
def test_a_row_s_last_step_computes_only_the_vectors_left(ow, stores):
    """Rows go two vectors at a time, then the rest in one step of as many as are left:
    112 columns are 3 steps of 2 and one of 1 (a fourth step of 2 computed a masked
    vector for nothing), 64 two steps of 2, 56 one of 2 and one of 2, 20 one of 2. The
    stores of one output channel block (8 channels) in the kernel's text: 8 per vector of
    a step, each step emitted once."""
    from xrelay.lowering.kernels import narrow_conv

    spec = NarrowConvSpec(cg=3, og=8, h=ow, w=ow, oh=4, ow=ow, kh=3, kw=3, pt=1, pl=1)
    text = narrow_conv.runtime_ir({"c": spec}, threads=False, vw=16)
    body = text[text.index("@c.conv_part(") :]
    body = body[: body.index("\n}")]
    assert body.count("@llvm.masked.store") == 8 * stores
