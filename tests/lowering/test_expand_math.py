"""expand-math: the compiled f32 exp, erf and tanh (arith polynomials) against numpy in
f64, over their whole f32 range and at the special values."""

from __future__ import annotations

import math

import numpy as np
import pytest
import xrelay
from onnx import TensorProto, helper

F = TensorProto.FLOAT
SPECIAL = [0.0, -0.0, 1e-30, -1e-30, 1e-8, 1.0, -1.0, np.inf, -np.inf, np.nan, 3.4e38, -3.4e38]


def _compiled(op: str, n: int):
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", F, [n])],
        [helper.make_tensor_value_info("y", F, [n])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    return xrelay.build(*xrelay.from_onnx(model))


CASES = {
    # op: (reference in f64, range of x, relative error bound)
    "Exp": (np.exp, (-104.0, 89.0), 2e-7),
    "Erf": (np.vectorize(math.erf), (-6.0, 6.0), 5e-7),
    "Tanh": (np.tanh, (-12.0, 12.0), 6e-7),
}


@pytest.mark.parametrize("op", sorted(CASES))
def test_polynomials_match_f64_over_the_range(op):
    ref, (lo, hi), bound = CASES[op]
    rng = np.random.default_rng(0)
    x = np.concatenate(
        [
            np.linspace(lo, hi, 200_000),
            rng.uniform(lo, hi, 50_000),
            np.geomspace(1e-7, 1.0, 5_000),
            -np.geomspace(1e-7, 1.0, 5_000),
        ]
    ).astype(np.float32)
    got = _compiled(op, x.size).run(x=x)[0].astype(np.float64)
    want = ref(x.astype(np.float64))
    if op == "Exp":  # under the smallest normal f32 the expansion flushes to 0
        small = want < np.finfo(np.float32).tiny
        assert np.all(got[small] < np.finfo(np.float32).tiny)
        got, want = got[~small], want[~small]
        big = want > np.finfo(np.float32).max
        assert np.all(np.isinf(got[big]))
        got, want = got[~big], want[~big]
    error = np.abs(got - want) / np.maximum(np.abs(want), np.finfo(np.float32).tiny)
    assert error.max() < bound, (op, float(error.max()), float(x[np.argmax(error)]))


@pytest.mark.parametrize("op", sorted(CASES))
def test_special_values(op):
    ref = CASES[op][0]
    x = np.array(SPECIAL, np.float32)
    got = _compiled(op, x.size).run(x=x)[0]
    with np.errstate(over="ignore"):
        want = ref(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=5e-7, atol=0)
    assert np.array_equal(np.signbit(got[:2]), np.signbit(want[:2]))


def test_no_scalar_math_call_is_left_in_an_elementwise_loop():
    """GELU (erf), softmax (exp) and tanh lower to arith: the LLVM IR calls no libm
    function and no llvm.exp intrinsic, so LLVM can vectorize their loops."""
    from xrelay.lowering.jit import llvm_module
    from xrelay.lowering.pipeline import lower

    graph = helper.make_graph(
        [
            helper.make_node("Erf", ["x"], ["a"]),
            helper.make_node("Softmax", ["a"], ["b"]),
            helper.make_node("Tanh", ["b"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", F, [4, 64])],
        [helper.make_tensor_value_info("y", F, [4, 64])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    module, _ = xrelay.from_onnx(model)
    work = module.clone()
    lower(work)
    text = str(llvm_module(work))
    for name in ("@erff", "@expf", "@tanhf", "@llvm.exp.f32", "@llvm.tanh.f32"):
        assert name not in text, name
