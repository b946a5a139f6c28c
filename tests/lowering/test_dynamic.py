"""Compiling a module with dynamic dimensions once and running it on many shapes
(lowering/dynamic.py), and the errors for shapes that break the model's rules."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from xrelay.dialects.dims import shape_of
from xrelay.signature import FunctionSignature, main_function

ENCODER = """
func.func @main(%x: tensor<?x?x8xf32, #relay.dims<"batch", "seq">> {xrelay.name = "x"},
                %m: tensor<?x?xf32, #relay.dims<"batch", "seq">> {xrelay.name = "mask"},
                %w: tensor<16x8xf32> {xrelay.name = "w", xrelay.param})
    -> tensor<?x?x16xf32, #relay.dims<"batch", "seq">>
    attributes {xrelay.dim_ranges = {seq = array<i64: 1, 64>}} {
  %r = relay.reshape %x {newshape = array<i64: -1, 8>} : (tensor<?x?x8xf32, #relay.dims<"batch", "seq">>) -> tensor<?x8xf32, #relay.dims<"batch*seq">>
  %d = relay.nn.dense %r, %w : (tensor<?x8xf32, #relay.dims<"batch*seq">>, tensor<16x8xf32>) -> tensor<?x16xf32, #relay.dims<"batch*seq">>
  %b = relay.reshape %d {newshape = array<i64: -2, -2, 16>, dims = #relay.dims<"batch", "seq">} : (tensor<?x16xf32, #relay.dims<"batch*seq">>) -> tensor<?x?x16xf32, #relay.dims<"batch", "seq">>
  %e = relay.expand_dims %m {axis = -1 : i64} : (tensor<?x?xf32, #relay.dims<"batch", "seq">>) -> tensor<?x?x1xf32, #relay.dims<"batch", "seq">>
  %y = relay.multiply %b, %e : (tensor<?x?x16xf32, #relay.dims<"batch", "seq">>, tensor<?x?x1xf32, #relay.dims<"batch", "seq">>) -> tensor<?x?x16xf32, #relay.dims<"batch", "seq">>
  %s = relay.nn.softmax %y {axis = 1 : i64} : (tensor<?x?x16xf32, #relay.dims<"batch", "seq">>) -> tensor<?x?x16xf32, #relay.dims<"batch", "seq">>
  func.return %s : tensor<?x?x16xf32, #relay.dims<"batch", "seq">>
}
"""

rng = np.random.default_rng(0)
W = rng.standard_normal((16, 8)).astype(np.float32)


def expected(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    y = (x @ W.T) * mask[..., None]
    e = np.exp(y - y.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.fixture(scope="module")
def lib():
    return xrelay.build(xrelay.parse_module(ENCODER), {"w": W})


def test_signature_keeps_symbols():
    sig = FunctionSignature.of(main_function(xrelay.parse_module(ENCODER)))
    assert sig.is_dynamic
    assert [str(d) for d in sig.inputs[0].shape] == ["batch", "seq", "8"]
    assert sig.dim_ranges == (("seq", 1, 64),)


def test_one_build_runs_every_shape(lib):
    shapes = [(1, 1), (2, 7), (4, 33), (2, 7)]
    for batch, seq in shapes:
        x = rng.standard_normal((batch, seq, 8)).astype(np.float32)
        mask = (rng.random((batch, seq)) < 0.7).astype(np.float32)
        (y,) = lib.run(x=x, mask=mask)
        assert y.shape == (batch, seq, 16)
        np.testing.assert_allclose(y, expected(x, mask), rtol=1e-5, atol=1e-6)
    assert lib.native is not None and lib.compiles == 1  # one build for every shape


@pytest.mark.parametrize(
    ("x_shape", "mask_shape", "message"),
    [
        ((2, 3, 9), (2, 3), "input 'x' axis 2 has size 9, but the model fixes it to 8"),
        (
            (2, 3, 8),
            (2, 4),
            (
                "input 'mask' axis 1 has size 4, but dimension 'seq' is 3 from input 'x' "
                "axis 1: both are 'seq'"
            ),
        ),
        ((2, 65, 8), (2, 65), r"outside the range \[1, 64\] declared for dimension 'seq'"),
        ((2, 3), (2, 3), r"input 'x' expects float32\[batch, seq, 8\], got float32\[2, 3\]"),
    ],
)
def test_shape_errors_name_input_axis_and_rule(lib, x_shape, mask_shape, message):
    compiles = lib.compiles
    with pytest.raises(xrelay.Error, match=message):
        lib.run(x=np.zeros(x_shape, np.float32), mask=np.zeros(mask_shape, np.float32))
    assert lib.compiles == compiles  # refused before anything compiled or ran


def test_derived_dimension_rule():
    module = xrelay.parse_module("""
func.func @main(%a: tensor<?xf32, #relay.dims<"n">> {xrelay.name = "a"},
                %b: tensor<?xf32, #relay.dims<"2*n">> {xrelay.name = "b"})
    -> tensor<?xf32, #relay.dims<"3*n">> {
  %c = relay.concatenate %a, %b {axis = 0 : i64} : (tensor<?xf32, #relay.dims<"n">>, tensor<?xf32, #relay.dims<"2*n">>) -> tensor<?xf32, #relay.dims<"3*n">>
  func.return %c : tensor<?xf32, #relay.dims<"3*n">>
}""")
    lib = xrelay.build(module)
    a, b = np.arange(2, dtype=np.float32), np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(lib.run(a=a, b=b)[0], np.concatenate([a, b]))
    with pytest.raises(
        xrelay.Error, match=r"input 'b' axis 0 has size 5, but the model requires 2\*n = 4"
    ):
        lib.run(a=a, b=np.zeros(5, np.float32))


def test_debug_executor_runs_dynamic_modules(lib):
    executor = xrelay.create_executor("debug", xrelay.parse_module(ENCODER), {"w": W})
    x = rng.standard_normal((3, 5, 8)).astype(np.float32)
    mask = np.ones((3, 5), np.float32)
    np.testing.assert_allclose(executor.run(x=x, mask=mask)[0], expected(x, mask), rtol=1e-5)
    with pytest.raises(xrelay.Error, match="input 'x' axis 2 has size 9"):
        executor.run(x=np.zeros((3, 5, 9), np.float32), mask=mask)


def test_static_module_builds_as_before():
    module = xrelay.parse_module("""
func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = relay.nn.relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}""")
    lib = xrelay.build(module)
    assert type(lib).__name__ == "Library"
    assert shape_of(main_function(module).args[0].type) == (2, 3)
