"""The parameters a build adds (packed weights, Winograd's transformed ones, hoisted
constants) start on a 64-byte boundary (lowering/context.py, ALIGNMENT): numpy's large
arrays start 16 bytes past one, and every 64-byte vector load of a packed weight then read
two cache lines. The packing and Winograd's transform write straight into aligned arrays,
so no weight is copied to align it (a copy beside the original raised Inception v1's build
peak by 7 MB). After a build, the heap pages it freed go back to the system
(lowering/build.py, trimmed_heap)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import xrelay
from onnx import TensorProto, helper, numpy_helper
from xrelay.lowering import context, winograd_convs

BUILD = sys.modules["xrelay.lowering.build"]  # xrelay.lowering.build is the function


@pytest.mark.parametrize("size", [1, 15, 1000, 1 << 20])
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.int64])
def test_aligned_empty_starts_on_the_boundary(size, dtype):
    a = context.aligned_empty(size, dtype)
    assert a.ctypes.data % context.ALIGNMENT == 0
    assert a.shape == (size,) and a.dtype == dtype and a.flags.c_contiguous


def test_aligned_copies_only_a_misaligned_array():
    raw = np.arange(1001, dtype=np.float32)
    start = 1 if raw.ctypes.data % context.ALIGNMENT == 0 else 0  # misaligned on purpose
    off = raw[start : start + 1000].reshape(10, 100)
    assert off.ctypes.data % context.ALIGNMENT != 0
    fixed = context.aligned(off)
    assert fixed.ctypes.data % context.ALIGNMENT == 0
    np.testing.assert_array_equal(fixed, off)
    assert context.aligned(fixed) is fixed


def _model():
    """A 3x3 convolution (Winograd), a grouped one (packed per group) and a dense layer."""
    rng = np.random.default_rng(0)

    def init(name, shape):
        w = rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))
        return numpy_helper.from_array(w.astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["a", "w2"], ["b"], group=2),
        helper.make_node("Flatten", ["b"], ["f"]),
        helper.make_node("Gemm", ["f", "w3"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 12, 12])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 40])],
        [init("w1", (64, 64, 3, 3)), init("w2", (64, 32, 1, 1)), init("w3", (40, 64 * 144))],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_added_parameters_are_aligned_and_none_is_copied(monkeypatch):
    for name, value in [("MIN_TILES", 1), ("THIN_MIN_TILES", 0)]:
        monkeypatch.setattr(winograd_convs, name, value)
    copied = []
    real = context.aligned

    def aligned(array):
        if array.ctypes.data % context.ALIGNMENT:
            copied.append(array.shape)
        return real(array)

    monkeypatch.setattr(context, "aligned", aligned)
    module, params = xrelay.from_onnx(_model())
    given = set(params)
    lib = xrelay.build(module, dict(params), cache=False)
    added = {n: a for n, a in lib.params.items() if n not in given}
    assert any("winograd" in n for n in added) and any("packed" in n for n in added)
    assert {n: a.ctypes.data % context.ALIGNMENT for n, a in added.items()} == dict.fromkeys(
        added, 0
    )
    assert copied == []
    x = np.random.default_rng(1).standard_normal((1, 64, 12, 12)).astype(np.float32)
    want = xrelay.build(module, params, cache=False, kernels=False).run(x)[0]
    got = lib.run(x)[0]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * np.abs(want).max())


def test_a_build_hands_its_freed_pages_back(monkeypatch):
    calls = []
    monkeypatch.setattr(BUILD, "_TRIM", lambda pad: calls.append(pad) or 1)
    module, params = xrelay.from_onnx(_model())
    xrelay.build(module, params, cache=False)
    assert calls == [0]


def test_a_build_without_malloc_trim_still_builds(monkeypatch):
    monkeypatch.setattr(BUILD, "_TRIM", None)
    module, params = xrelay.from_onnx(_model())
    x = np.ones((1, 64, 12, 12), np.float32)
    assert xrelay.build(module, params, cache=False).run(x)[0].shape == (1, 40)
