"""qnn-float-products: 8-bit dense and conv2d on the f32 GEMM in K chunks give exactly the
integers of the i32 loops (the stage switched off) and of the reference executor, also on
the data and weights that make the partial sums largest; with chunks longer than the bound
the same cases go wrong, so the bound is what keeps them exact. (qnn-int-products, which
runs first, is switched off here.)"""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from xrelay.lowering import qnn_float_products, qnn_int_products

rng = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _no_int_products(monkeypatch):
    """The 8-bit GEMM (qnn-int-products, tested in test_qnn_int_products.py) takes most of
    these products first; this file tests the f32 path they would otherwise take."""
    monkeypatch.setattr(qnn_int_products, "int_products", lambda *args: 0)


def dense_module(m: int, k: int, n: int, xt: str, wt: str, zx: int, zw: str) -> str:
    return f"""
func.func @main(%x: tensor<{m}x{k}x{xt}> {{xrelay.name = "x"}}, %w: tensor<{k}x{n}x{wt}> {{xrelay.name = "w", xrelay.param}}) -> tensor<{m}x{n}xi32> {{
  %zx = relay.constant dense<{zx}> : tensor<i32>
  %zw = relay.constant {zw}
  %sx = relay.constant dense<0.5> : tensor<f32>
  %sw = relay.constant dense<0.25> : tensor<f32>
  %wt = relay.transpose %w {{axes = array<i64: 1, 0>}} : (tensor<{k}x{n}x{wt}>) -> tensor<{n}x{k}x{wt}>
  %y = qnn.dense %x, %wt, %zx, %zw, %sx, %sw : (tensor<{m}x{k}x{xt}>, tensor<{n}x{k}x{wt}>, tensor<i32>, {zw.split(": ")[1]}, tensor<f32>, tensor<f32>) -> tensor<{m}x{n}xi32>
  func.return %y : tensor<{m}x{n}xi32>
}}"""


def conv_module(c: int, o: int, groups: int, stride: int, zx: int) -> str:
    cg = c // groups
    return f"""
func.func @main(%x: tensor<1x{c}x7x7xui8> {{xrelay.name = "x"}}, %w: tensor<{o}x{cg}x3x3xi8> {{xrelay.name = "w", xrelay.param}}) -> tensor<1x{o}x{(7 + 2 - 3) // stride + 1}x{(7 + 2 - 3) // stride + 1}xi32> {{
  %zx = relay.constant dense<{zx}> : tensor<i32>
  %zw = relay.constant dense<0> : tensor<i32>
  %sx = relay.constant dense<0.5> : tensor<f32>
  %sw = relay.constant dense<0.25> : tensor<f32>
  %y = qnn.conv2d %x, %w, %zx, %zw, %sx, %sw {{padding = array<i64: 1, 1, 1, 1>, strides = array<i64: {stride}, {stride}>, groups = {groups} : i64}} : (tensor<1x{c}x7x7xui8>, tensor<{o}x{cg}x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<1x{o}x{(7 + 2 - 3) // stride + 1}x{(7 + 2 - 3) // stride + 1}xi32>
  func.return %y : tensor<1x{o}x{(7 + 2 - 3) // stride + 1}x{(7 + 2 - 3) // stride + 1}xi32>
}}"""


def run(text: str, params: dict, inputs: dict, enabled: bool = True) -> np.ndarray:
    module = xrelay.parse_module(text)
    if not enabled:
        original = qnn_float_products.float_products
        qnn_float_products.float_products = lambda module, ctx: 0
        try:
            lib = xrelay.build(module, params, cache=False)
        finally:
            qnn_float_products.float_products = original
    else:
        lib = xrelay.build(module, params, cache=False)
    (out,) = lib.run(**inputs)
    return out


def extreme_dense(k: int) -> tuple[np.ndarray, np.ndarray]:
    """x = 255 (|x - 0| largest) and w = -128 on most entries: every partial sum grows by
    the largest product, past 2^24 when K is long."""
    x = np.full((3, k), 255, np.uint8)
    x[1] = rng.integers(0, 256, k)
    w = np.full((k, 5), -128, np.int8)
    w[:, 1] = rng.integers(-128, 128, k)
    w[::7, 2] = 127
    return x, w


@pytest.mark.parametrize("k", [7, 1024, 1025, 3001])
def test_dense_is_exact(k):
    x, w = extreme_dense(k)
    text = dense_module(3, k, 5, "ui8", "i8", 0, "dense<0> : tensor<i32>")
    got = run(text, {"w": w}, {"x": x})
    want = x.astype(np.int64) @ w.astype(np.int64)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, run(text, {"w": w}, {"x": x}, enabled=False))


def test_per_channel_weight_zero_points_and_signed_data():
    k, n = 1500, 4
    x = rng.integers(-128, 128, (2, k)).astype(np.int8)
    w = rng.integers(0, 256, (k, n)).astype(np.uint8)
    zw = np.array([0, 255, 17, 128], np.int32)
    text = dense_module(2, k, n, "i8", "ui8", -3, f"dense<{zw.tolist()}> : tensor<4xi32>")
    got = run(text, {"w": w}, {"x": x})
    want = (x.astype(np.int64) + 3) @ (w.astype(np.int64) - zw)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("c", "o", "groups", "stride"), [(300, 6, 1, 1), (200, 4, 1, 2), (16, 16, 16, 1), (24, 8, 2, 1)]
)
def test_conv_is_exact(c, o, groups, stride):
    x = rng.integers(0, 256, (1, c, 7, 7)).astype(np.uint8)
    x[0, ::2] = 255
    w = rng.integers(-128, 128, (o, c // groups, 3, 3)).astype(np.int8)
    w[::2] = -128
    text = conv_module(c, o, groups, stride, 0)
    got = run(text, {"w": w}, {"x": x})
    module = xrelay.parse_module(text)
    (want,) = xrelay.create_executor("debug", module, {"w": w}).run(x=x)
    np.testing.assert_array_equal(got, want)


def test_chunks_past_the_bound_are_not_exact(monkeypatch):
    """The same extreme case with the f32 bound lifted (one chunk for all of K) loses the
    low bits: the bound is what the exactness rests on."""
    k = 3001
    x, w = extreme_dense(k)
    text = dense_module(3, k, 5, "ui8", "i8", 0, "dense<0> : tensor<i32>")
    monkeypatch.setattr(qnn_float_products, "EXACT", 1 << 40)
    got = run(text, {"w": w}, {"x": x})
    want = x.astype(np.int64) @ w.astype(np.int64)
    assert not np.array_equal(got, want)


def test_the_products_run_on_the_gemm():
    _, w = extreme_dense(64)
    module = xrelay.parse_module(dense_module(3, 64, 5, "ui8", "i8", 0, "dense<0> : tensor<i32>"))
    from xrelay.lowering.context import BuildContext
    from xrelay.lowering.pipeline import lower

    ctx = BuildContext(params={"w": w})
    lower(module, ctx=ctx, stop_after="select-kernels")
    text = str(module)
    assert "qnn." not in text and "xr_gemm" in text.replace("@xr_", "xr_")
    assert ctx.params["w.f32.1.0"].dtype == np.float32


@pytest.mark.parametrize("zero", [0, 255, 77])
def test_a_run_time_data_zero_point_is_exact(zero):
    """Dynamic quantization: the data zero point is an input; the chunks are bounded by the
    dtype's whole span."""
    k = 3001
    x, w = extreme_dense(k)
    text = f"""
func.func @main(%x: tensor<3x{k}xui8> {{xrelay.name = "x"}}, %zx: tensor<i32> {{xrelay.name = "zx"}}, %w: tensor<{k}x5xi8> {{xrelay.name = "w", xrelay.param}}) -> tensor<3x5xi32> {{
  %zw = relay.constant dense<0> : tensor<i32>
  %sx = relay.constant dense<0.5> : tensor<f32>
  %sw = relay.constant dense<0.25> : tensor<f32>
  %wt = relay.transpose %w {{axes = array<i64: 1, 0>}} : (tensor<{k}x5xi8>) -> tensor<5x{k}xi8>
  %y = qnn.dense %x, %wt, %zx, %zw, %sx, %sw : (tensor<3x{k}xui8>, tensor<5x{k}xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<3x5xi32>
  func.return %y : tensor<3x5xi32>
}}"""
    inputs = {"x": x, "zx": np.array(zero, np.int32)}
    got = run(text, {"w": w}, inputs)
    np.testing.assert_array_equal(got, (x.astype(np.int64) - zero) @ w.astype(np.int64))
    assert "relay.nn.dense" in lowered(text, {"w": w})


def lowered(text: str, params: dict) -> str:
    from xrelay.lowering.context import BuildContext
    from xrelay.lowering.pipeline import lower

    module = xrelay.parse_module(text)
    lower(module, ctx=BuildContext(params=dict(params)), stop_after="qnn-float-products")
    return str(module)


def test_chunks_are_made_one_at_a_time_in_f32():
    """Each f32 chunk is centered on its own slice: the stage made an int64 copy of the
    whole weight for every chunk (resnet50_int8's build peaked 21 MB higher, mlp_int8's
    46 MB). numpy's allocations are traced."""
    import tracemalloc

    from xrelay.lowering.context import BuildContext
    from xrelay.lowering.pipeline import lower

    k, n = 2048, 512  # 1 MiB of int8 weight, 4 chunks
    module = xrelay.parse_module(dense_module(2, k, n, "ui8", "i8", 0, "dense<0> : tensor<i32>"))
    w = rng.integers(-128, 128, (k, n), dtype=np.int8)
    ctx = BuildContext(params={"w": w})
    tracemalloc.start()
    try:
        lower(module, stop_after="qnn-float-products", ctx=ctx)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    chunks = [v for name, v in ctx.params.items() if ".f32." in name]
    assert len(chunks) == 4
    assert np.array_equal(np.concatenate(chunks, axis=1), w.T.astype(np.float32))
    # the chunks themselves are 4 bytes per weight; one chunk more in flight: 5 (it was 23)
    assert peak < 8 * w.size, f"{peak / w.size:.1f} bytes per weight"
