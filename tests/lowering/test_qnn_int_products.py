"""qnn-int-products: 8-bit dense and conv2d on the 8-bit GEMM give exactly the integers of
the reference executor, on every word layout this machine can run (AMX tiles, G = 4 with
AVX-512 VNNI, G = 2 at vector widths 8 and 16), on the values that make the sums largest, with
u8 and s8 data, constant and run-time zero points, edges in every direction and a
run-time batch."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import xrelay
from xrelay.lowering.context import BuildContext
from xrelay.lowering.jit import X86_LEVELS, amx_tiles, host_features, int_group
from xrelay.lowering.kernels import igemm
from xrelay.lowering.pipeline import lower
from xrelay.tests.lowering.test_qnn_float_products import conv_module, dense_module

rng = np.random.default_rng(11)
build_module = importlib.import_module("xrelay.lowering.build")  # (the package exports build)

HOST = set(host_features())
# (target_cpu, group, AMX tiles): each word layout the host can run
LAYOUTS = [
    pytest.param(("x86-64-v3", 2, False), id="avx2-g2"),
    pytest.param(
        ("x86-64-v4", 2, False), id="avx512-g2",
        marks=pytest.mark.skipif(not set(X86_LEVELS["x86-64-v4"]) <= HOST, reason="no AVX-512"),
    ),
    pytest.param(
        ("host", 4, False), id="vnni-g4",
        marks=pytest.mark.skipif(int_group() != 4, reason="no AVX-512 VNNI on this CPU"),
    ),
    pytest.param(
        ("host", 4, True), id="amx",
        marks=pytest.mark.skipif(not amx_tiles(), reason="no AMX-INT8 on this CPU (or OS)"),
    ),
]  # fmt: skip


@pytest.fixture(params=LAYOUTS)
def layout(request, monkeypatch):
    target, group, tiles = request.param
    monkeypatch.setattr(build_module, "int_group", lambda _target: group)
    monkeypatch.setattr(build_module, "amx_tiles", lambda _target: tiles)
    return target


def run(text: str, params: dict, inputs: dict, target: str) -> np.ndarray:
    lib = xrelay.build(xrelay.parse_module(text), dict(params), cache=False, target_cpu=target)
    (out,) = lib.run(**inputs)
    return out


def reference(text: str, params: dict, inputs: dict) -> np.ndarray:
    (out,) = xrelay.create_executor("debug", xrelay.parse_module(text), params).run(**inputs)
    return out


@pytest.mark.parametrize(
    ("m", "k", "n", "xt", "zx"),
    [(3, 7, 5, "ui8", 0), (1, 64, 33, "i8", 0), (13, 1025, 40, "ui8", 3), (50, 300, 70, "i8", -5),
     (7, 3001, 65, "ui8", 255)],
)  # fmt: skip
def test_dense_is_exact(layout, m, k, n, xt, zx):
    signed = xt == "i8"
    lo, hi = (-128, 128) if signed else (0, 256)
    x = rng.integers(lo, hi, (m, k)).astype(np.int8 if signed else np.uint8)
    x[0] = lo if zx > 0 else hi - 1  # the largest |x - zx| against the largest |w|
    w = rng.integers(-128, 128, (k, n)).astype(np.int8)
    w[:, 0] = -128
    text = dense_module(m, k, n, xt, "i8", zx, "dense<0> : tensor<i32>")
    got = run(text, {"w": w}, {"x": x}, layout)
    np.testing.assert_array_equal(got, (x.astype(np.int64) - zx) @ w.astype(np.int64))


def test_u8_weights_with_zero_point_128(layout):
    k, n = 200, 9
    x = rng.integers(-128, 128, (4, k)).astype(np.int8)
    w = rng.integers(0, 256, (k, n)).astype(np.uint8)
    text = dense_module(4, k, n, "i8", "ui8", 2, "dense<128> : tensor<i32>")
    got = run(text, {"w": w}, {"x": x}, layout)
    np.testing.assert_array_equal(got, (x.astype(np.int64) - 2) @ (w.astype(np.int64) - 128))
    assert "xr_igemm" in stage_ir(text, {"w": w})


@pytest.mark.parametrize("xt", ["ui8", "i8"])
@pytest.mark.parametrize("zero", [0, 77, -100])
def test_a_run_time_data_zero_point_is_exact(layout, xt, zero):
    """Dynamic quantization: the data zero point is an input; the correction is computed
    at run time."""
    if xt == "ui8" and zero < 0:
        zero = 255
    k, m, n = 777, 5, 19
    signed = xt == "i8"
    x = rng.integers(-128 if signed else 0, 128 if signed else 256, (m, k))
    x = x.astype(np.int8 if signed else np.uint8)
    w = rng.integers(-128, 128, (k, n)).astype(np.int8)
    text = f"""
func.func @main(%x: tensor<{m}x{k}x{xt}> {{xrelay.name = "x"}}, %zx: tensor<i32> {{xrelay.name = "zx"}}, %w: tensor<{k}x{n}xi8> {{xrelay.name = "w", xrelay.param}}) -> tensor<{m}x{n}xi32> {{
  %zw = relay.constant dense<0> : tensor<i32>
  %sx = relay.constant dense<0.5> : tensor<f32>
  %sw = relay.constant dense<0.25> : tensor<f32>
  %wt = relay.transpose %w {{axes = array<i64: 1, 0>}} : (tensor<{k}x{n}xi8>) -> tensor<{n}x{k}xi8>
  %y = qnn.dense %x, %wt, %zx, %zw, %sx, %sw : (tensor<{m}x{k}x{xt}>, tensor<{n}x{k}xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<{m}x{n}xi32>
  func.return %y : tensor<{m}x{n}xi32>
}}"""
    inputs = {"x": x, "zx": np.array(zero, np.int32)}
    got = run(text, {"w": w}, inputs, layout)
    np.testing.assert_array_equal(got, (x.astype(np.int64) - zero) @ w.astype(np.int64))


def test_dense_with_a_run_time_batch(layout):
    k, n = 96, 40
    w = rng.integers(-128, 128, (k, n)).astype(np.int8)
    text = f"""
func.func @main(%x: tensor<?x{k}xui8, #relay.dims<"m">> {{xrelay.name = "x"}}, %w: tensor<{k}x{n}xi8> {{xrelay.name = "w", xrelay.param}}) -> tensor<?x{n}xi32, #relay.dims<"m">> {{
  %zx = relay.constant dense<9> : tensor<i32>
  %zw = relay.constant dense<0> : tensor<i32>
  %sx = relay.constant dense<0.5> : tensor<f32>
  %sw = relay.constant dense<0.25> : tensor<f32>
  %wt = relay.transpose %w {{axes = array<i64: 1, 0>}} : (tensor<{k}x{n}xi8>) -> tensor<{n}x{k}xi8>
  %y = qnn.dense %x, %wt, %zx, %zw, %sx, %sw : (tensor<?x{k}xui8, #relay.dims<"m">>, tensor<{n}x{k}xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<?x{n}xi32, #relay.dims<"m">>
  func.return %y : tensor<?x{n}xi32, #relay.dims<"m">>
}}"""
    lib = xrelay.build(xrelay.parse_module(text), {"w": w}, cache=False, target_cpu=layout)
    for m in (1, 6, 31):
        x = rng.integers(0, 256, (m, k)).astype(np.uint8)
        (got,) = lib.run(x=x)
        np.testing.assert_array_equal(got, (x.astype(np.int64) - 9) @ w.astype(np.int64))


@pytest.mark.parametrize(
    ("c", "o", "stride", "zx"),
    [(3, 8, 1, 0), (16, 20, 2, 7), (64, 64, 1, 128), (300, 6, 1, 255), (5, 70, 2, 1),
     (8, 12, 3, 9)],
)  # fmt: skip
def test_conv_is_exact(layout, c, o, stride, zx):
    """Padding by the zero point (where the window leaves the input), K tails (C x 9 not a
    multiple of 4), row and column edges of the register tile; the implicit im2col's unit
    stride (masked loads), stride 2 (even bytes of a double load) and stride 3 (gathers)."""
    x = rng.integers(0, 256, (1, c, 7, 7)).astype(np.uint8)
    x[0, ::2] = 255
    w = rng.integers(-128, 128, (o, c, 3, 3)).astype(np.int8)
    w[::2] = -128
    text = conv_module(c, o, 1, stride, zx)
    got = run(text, {"w": w}, {"x": x}, layout)
    np.testing.assert_array_equal(got, reference(text, {"w": w}, {"x": x}))


def conv_text(
    n: int | str, c: int, o: int, k: int, xt: str, zx: int, stride: int = 1, pad: int = 0
):
    size = (9 + 2 * pad - k) // stride + 1
    nn, dims = (n, "") if n != "?" else ("?", ', #relay.dims<"n">')
    return f"""
func.func @main(%x: tensor<{nn}x{c}x9x9x{xt}{dims}> {{xrelay.name = "x"}}, %w: tensor<{o}x{c}x{k}x{k}xi8> {{xrelay.name = "w", xrelay.param}}) -> tensor<{nn}x{o}x{size}x{size}xi32{dims}> {{
  %zx = relay.constant dense<{zx}> : tensor<i32>
  %zw = relay.constant dense<0> : tensor<i32>
  %sx = relay.constant dense<0.5> : tensor<f32>
  %sw = relay.constant dense<0.25> : tensor<f32>
  %y = qnn.conv2d %x, %w, %zx, %zw, %sx, %sw {{padding = array<i64: {pad}, {pad}, {pad}, {pad}>, strides = array<i64: {stride}, {stride}>}} : (tensor<{nn}x{c}x9x9x{xt}{dims}>, tensor<{o}x{c}x{k}x{k}xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<{nn}x{o}x{size}x{size}xi32{dims}>
  func.return %y : tensor<{nn}x{o}x{size}x{size}xi32{dims}>
}}"""


@pytest.mark.parametrize(
    ("n", "k", "xt", "zx", "stride", "pad"),
    [(2, 1, "ui8", 5, 1, 0), (2, 1, "i8", -7, 1, 0), (3, 3, "i8", 20, 2, 1), ("?", 3, "ui8", 40, 1, 1)],
)  # fmt: skip
def test_batched_pointwise_and_signed_convolutions(layout, n, k, xt, zx, stride, pad):
    c, o = 12, 10
    text = conv_text(n, c, o, k, xt, zx, stride, pad)
    signed = xt == "i8"
    w = rng.integers(-128, 128, (o, c, k, k)).astype(np.int8)
    lib = xrelay.build(xrelay.parse_module(text), {"w": w}, cache=False, target_cpu=layout)
    for batch in (2, 3) if n == "?" else (n,):
        x = rng.integers(-128 if signed else 0, 128 if signed else 256, (batch, c, 9, 9))
        x = x.astype(np.int8 if signed else np.uint8)
        (got,) = lib.run(x=x)
        want = reference(conv_text(batch, c, o, k, xt, zx, stride, pad), {"w": w}, {"x": x})
        np.testing.assert_array_equal(got, want)


def stage_ir(text: str, params: dict, options: dict | None = None) -> str:
    module = xrelay.parse_module(text)
    lower(module, ctx=BuildContext(params=dict(params)), stop_after="qnn-int-products",
          options={"qnn-int-products": options or {}})  # fmt: skip
    return str(module)


def test_what_the_stage_leaves():
    """Weight zero points that are not the s8 ones, grouped convolutions and weights
    computed at run time stay for qnn-float-products and qnn-legalize."""
    w = rng.integers(0, 256, (64, 5)).astype(np.uint8)
    text = dense_module(3, 64, 5, "ui8", "ui8", 0, "dense<3> : tensor<i32>")
    assert "qnn.dense" in stage_ir(text, {"w": w})
    grouped = conv_module(16, 16, 16, 1, 0)
    w = rng.integers(-128, 128, (16, 1, 3, 3)).astype(np.int8)
    assert "qnn.conv2d" in stage_ir(grouped, {"w": w})
    w = rng.integers(-128, 128, (64, 5)).astype(np.int8)
    text = dense_module(3, 64, 5, "ui8", "i8", 0, "dense<0> : tensor<i32>")
    ir = stage_ir(text, {"w": w})
    assert "qnn.dense" not in ir and "xr_igemm" in ir


def test_the_original_weight_is_released():
    w = rng.integers(-128, 128, (64, 5)).astype(np.int8)
    text = dense_module(3, 64, 5, "ui8", "i8", 0, "dense<0> : tensor<i32>")
    params = {"w": w}
    lib = xrelay.build(xrelay.parse_module(text), params, cache=False, release_params=True)
    assert "w" not in lib.params  # only its packed words are read
    assert any(".i8." in name for name in lib.params)
    x = rng.integers(0, 256, (3, 64)).astype(np.uint8)
    (got,) = lib.run(x=x)
    np.testing.assert_array_equal(got, x.astype(np.int64) @ w.astype(np.int64))


@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_conv_across_blocks_and_threads(layout, monkeypatch, threads):
    """More columns than one NC block (48 x 44 outputs), K over one KC block, split over
    threads along N, an asymmetric padding, dilation and s8 data padded with a negative
    zero point."""
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    c, o = 90, 8  # K = 810: two K blocks of 408 values (prepack.k_block)
    x = rng.integers(-128, 128, (1, c, 50, 46)).astype(np.int8)
    w = rng.integers(-128, 128, (o, c, 3, 3)).astype(np.int8)
    text = f"""
func.func @main(%x: tensor<1x{c}x50x46xi8> {{xrelay.name = "x"}}, %w: tensor<{o}x{c}x3x3xi8> {{xrelay.name = "w", xrelay.param}}) -> tensor<1x{o}x48x44xi32> {{
  %zx = relay.constant dense<-9> : tensor<i32>
  %zw = relay.constant dense<0> : tensor<i32>
  %sx = relay.constant dense<0.5> : tensor<f32>
  %sw = relay.constant dense<0.25> : tensor<f32>
  %y = qnn.conv2d %x, %w, %zx, %zw, %sx, %sw {{padding = array<i64: 1, 0, 1, 2>, dilation = array<i64: 2, 2>}} : (tensor<1x{c}x50x46xi8>, tensor<{o}x{c}x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<1x{o}x48x44xi32>
  func.return %y : tensor<1x{o}x48x44xi32>
}}"""
    got = run(text, {"w": w}, {"x": x}, layout)
    np.testing.assert_array_equal(got, reference(text, {"w": w}, {"x": x}))


def requantized_text(
    kind: str, c: int, o: int, xt: str, zx: int, out: str, clip: str, in_zp: int, size: int = 9
) -> str:
    """A qnn.conv2d (3x3, padding 1) or qnn.dense, a constant i32 bias, a per-channel
    requantize rounding half to even and (clip != "") a clip, as qdq-to-qnn leaves them."""
    bias = ", ".join(str(v) for v in rng.integers(-3000, 3000, o))
    # multipliers of 0.5 and 0.25 make ties (odd sums), the others arbitrary f32 values
    scales = ", ".join(repr(float(v)) for v in [0.125, 0.0625, *rng.uniform(0.001, 0.05, o - 2)])
    if kind == "conv":
        x_t, y_t = f"tensor<1x{c}x{size}x{size}x{xt}>", f"tensor<1x{o}x{size}x{size}xi32>"
        w_t, axis = f"tensor<{o}x{c}x3x3xi8>", 1
        product = f"qnn.conv2d %x, %w, %zx, %zw, %sx, %sw {{padding = array<i64: 1, 1, 1, 1>}} : ({x_t}, {w_t}, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> {y_t}"
    else:
        x_t, y_t = f"tensor<{size}x{c}x{xt}>", f"tensor<{size}x{o}xi32>"
        w_t, axis = f"tensor<{o}x{c}xi8>", 1
        product = f"qnn.dense %x, %w, %zx, %zw, %sx, %sw : ({x_t}, {w_t}, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> {y_t}"
    q_t = y_t.replace("xi32>", f"x{out}>")
    tail = (
        f"""
  %c = relay.clip %r {{{clip}}} : ({q_t}) -> {q_t}
  func.return %c : {q_t}"""
        if clip
        else f"""
  func.return %r : {q_t}"""
    )
    return f"""
func.func @main(%x: {x_t} {{xrelay.name = "x"}}, %w: {w_t} {{xrelay.name = "w", xrelay.param}}) -> {q_t} {{
  %zx = relay.constant dense<{zx}> : tensor<i32>
  %zw = relay.constant dense<0> : tensor<i32>
  %sx = relay.constant dense<0.5> : tensor<f32>
  %sw = relay.constant dense<0.25> : tensor<f32>
  %y = {product}
  %bias = relay.constant dense<[{bias}]> : tensor<{o}xi32>
  %b = relay.nn.bias_add %y, %bias {{axis = {axis} : i64}} : ({y_t}, tensor<{o}xi32>) -> {y_t}
  %si = relay.constant dense<[{scales}]> : tensor<{o}xf32>
  %zi = relay.constant dense<{in_zp}> : tensor<i32>
  %so = relay.constant dense<0.25> : tensor<f32>
  %zo = relay.constant dense<{-3 if out == "i8" else 7}> : tensor<i32>
  %r = qnn.requantize %b, %si, %zi, %so, %zo {{axis = {axis} : i64, out_dtype = {out}}} : ({y_t}, tensor<{o}xf32>, tensor<i32>, tensor<f32>, tensor<i32>) -> {q_t}{tail}
}}"""


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize(
    ("kind", "c", "o", "xt", "zx", "out", "clip", "in_zp"),
    [("conv", 70, 20, "ui8", 3, "ui8", "a_min = 7.0 : f64, a_max = 255.0 : f64", 0),
     ("conv", 16, 64, "i8", -5, "i8", "", 11),
     ("conv", 3, 7, "ui8", 0, "ui8", "", 0),
     ("dense", 300, 70, "ui8", 128, "ui8", "a_min = 0.0 : f64, a_max = 200.0 : f64", 0),
     ("dense", 64, 33, "i8", 0, "i8", "", -4)],
)  # fmt: skip
def test_requantization_in_the_epilogue(
    layout, monkeypatch, threads, kind, c, o, xt, zx, out, clip, in_zp
):
    """bias_add -> requantize (-> clip) after the product runs in the kernel's epilogue and
    gives the bytes of the reference executor: ties, per-channel multipliers, K over one
    block (70 x 9, 300), edge tiles in both directions, u8 and s8 data and outputs, input
    zero points, a clip narrower than the type."""
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    text = requantized_text(kind, c, o, xt, zx, out, clip, in_zp)
    w = rng.integers(-128, 128, (o, c, 3, 3) if kind == "conv" else (o, c)).astype(np.int8)
    ir = stage_ir(text, {"w": w})
    assert "qnn.requantize" not in ir and "requantize = true" in ir
    assert "relay.clip" not in ir  # folded into the clamp
    signed = xt == "i8"
    shape = (1, c, 9, 9) if kind == "conv" else (9, c)
    x = rng.integers(-128 if signed else 0, 128 if signed else 256, shape)
    x = x.astype(np.int8 if signed else np.uint8)
    got = run(text, {"w": w}, {"x": x}, layout)
    want = reference(text, {"w": w}, {"x": x})
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    if clip:  # the clip's bounds hold (7 and 200 are inside the types' ranges)
        assert got.min() >= 7 if kind == "conv" else got.max() <= 200


@pytest.mark.parametrize("side", ["left", "right"])
def test_a_parameter_bias_added_before_the_requantization(layout, side):
    """onnxruntime's quantized Gemm adds its i32 bias as a parameter with relay.add (either
    operand order): the kernel's epilogue takes it with the requantization."""
    o, c = 70, 300
    text = requantized_text("dense", c, o, "ui8", 128, "ui8", "", 0)
    old = "  %bias = relay.constant"
    head, rest = text.split(old)
    rest = rest.split("\n", 1)[1]
    text = head + rest
    text = text.replace(
        '%w: tensor<70x300xi8> {xrelay.name = "w", xrelay.param})',
        '%w: tensor<70x300xi8> {xrelay.name = "w", xrelay.param}, %bias: tensor<70xi32> {xrelay.name = "bias", xrelay.param})',
    )
    operands = "%y, %bias" if side == "right" else "%bias, %y"
    text = text.replace(
        "%b = relay.nn.bias_add %y, %bias {axis = 1 : i64} : (tensor<9x70xi32>, tensor<70xi32>)",
        f"%b = relay.add {operands} : ({'tensor<9x70xi32>, tensor<70xi32>' if side == 'right' else 'tensor<70xi32>, tensor<9x70xi32>'})",
    )
    w = rng.integers(-128, 128, (o, c)).astype(np.int8)
    bias = rng.integers(-5000, 5000, o).astype(np.int32)
    ir = stage_ir(text, {"w": w, "bias": bias})
    assert "qnn.requantize" not in ir and "relay.add" not in ir and "requantize = true" in ir
    x = rng.integers(0, 256, (9, c)).astype(np.uint8)
    got = run(text, {"w": w, "bias": bias}, {"x": x}, layout)
    np.testing.assert_array_equal(got, reference(text, {"w": w, "bias": bias}, {"x": x}))


def test_requantizations_the_kernel_does_not_take():
    """TFLite rounding, an i32 output (TorchScript's requantize before its clip and cast)
    and a product with a second user stay for qnn-legalize."""
    w = rng.integers(-128, 128, (8, 3, 3, 3)).astype(np.int8)
    text = requantized_text("conv", 3, 8, "ui8", 0, "ui8", "", 0)
    tflite = text.replace("out_dtype = ui8}", 'out_dtype = ui8, rounding = "tflite"}')
    ir = stage_ir(tflite, {"w": w})
    assert "qnn.requantize" in ir and "requantize = true" not in ir
    wide = text.replace("out_dtype = ui8}", "out_dtype = i32}").replace("xui8>", "xi32>")
    ir = stage_ir(wide, {"w": w})
    assert "qnn.requantize" in ir and "requantize = true" not in ir
    two_users = text.replace(
        "func.return %r",
        "%extra = relay.add %b, %b : (tensor<1x8x9x9xi32>, tensor<1x8x9x9xi32>) -> tensor<1x8x9x9xi32>\n  func.return %r",
    )
    ir = stage_ir(two_users, {"w": w})
    assert "qnn.requantize" in ir and "requantize = true" not in ir


def test_requantized_convolution_with_a_run_time_batch(layout):
    """The epilogue's bytes and the padded input of the implicit im2col with a batch size
    known only at run time: one build, three batch sizes."""
    t = lambda c, e: f'tensor<?x{c}x9x9x{e}, #relay.dims<"n">>'
    text = f"""
func.func @main(%x: {t(5, "ui8")} {{xrelay.name = "x"}}, %w: tensor<8x5x3x3xi8> {{xrelay.name = "w", xrelay.param}}) -> {t(8, "ui8")} {{
  %zx = relay.constant dense<3> : tensor<i32>
  %zw = relay.constant dense<0> : tensor<i32>
  %sx = relay.constant dense<0.5> : tensor<f32>
  %sw = relay.constant dense<0.25> : tensor<f32>
  %y = qnn.conv2d %x, %w, %zx, %zw, %sx, %sw {{padding = array<i64: 1, 1, 1, 1>}} : ({t(5, "ui8")}, tensor<8x5x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> {t(8, "i32")}
  %bias = relay.constant dense<[1, 2, 3, 4, 5, 6, 7, 8]> : tensor<8xi32>
  %b = relay.nn.bias_add %y, %bias : ({t(8, "i32")}, tensor<8xi32>) -> {t(8, "i32")}
  %si = relay.constant dense<0.125> : tensor<f32>
  %zi = relay.constant dense<0> : tensor<i32>
  %so = relay.constant dense<0.25> : tensor<f32>
  %zo = relay.constant dense<7> : tensor<i32>
  %r = qnn.requantize %b, %si, %zi, %so, %zo {{axis = 1 : i64, out_dtype = ui8}} : ({t(8, "i32")}, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> {t(8, "ui8")}
  func.return %r : {t(8, "ui8")}
}}"""
    w = rng.integers(-128, 128, (8, 5, 3, 3)).astype(np.int8)
    assert "requantize = true" in stage_ir(text, {"w": w})
    lib = xrelay.build(xrelay.parse_module(text), {"w": w}, cache=False, target_cpu=layout)
    for n in (1, 2, 3):
        x = rng.integers(0, 256, (n, 5, 9, 9)).astype(np.uint8)
        np.testing.assert_array_equal(lib.run(x=x)[0], reference(text, {"w": w}, {"x": x}))


@pytest.mark.parametrize(
    ("kind", "c", "size", "pixel_major"),
    [("window", 120, 7, True), ("window", 120, 16, True), ("window", 120, 17, False),
     ("window", 48, 13, "vnni"), ("pointwise", 1024, 7, True), ("pointwise", 40, 7, False)],
)  # fmt: skip
def test_convolutions_on_few_pixels_run_pixel_major(
    layout, monkeypatch, kind, c, size, pixel_major
):
    """A convolution (batch 1) of at most PIXEL_MAJOR_MAX output pixels and a K of at
    least PIXEL_MAJOR_MIN_K runs as pixels x channels: the data A read in place (1x1) or
    made as the im2col's transpose by the GEMM (3x3, padded), the weight packed as B, the
    per-channel requantization in the epilogue's columns, the bytes or the i32 result
    transposed back; exact either way, on one thread and two (200 channels: 7 x 7 pixels
    split across threads by columns, 16 x 16 by rows). With VNNI (group 4) the windows,
    and the pixel-major 1x1s, read their input's words directly (kernels/vnni_conv.py) and
    store their result channel-major (no transpose back), windows of any K ("vnni": 48
    channels, K = 432)."""
    o = 200
    if kind == "window":  # 3x3, padding 1, bias, requantize, clip: K = 1080
        clip = "a_min = 5.0 : f64, a_max = 250.0 : f64"
        text = requantized_text("conv", c, o, "ui8", 3, "ui8", clip, 0, size)
        w = rng.integers(-128, 128, (o, c, 3, 3)).astype(np.int8)
    else:  # 1x1, s8 data, the i32 result
        text = conv_text(1, c, o, 1, "i8", -9).replace("9x9", f"{size}x{size}")
        w = rng.integers(-128, 128, (o, c, 1, 1)).astype(np.int8)
    group = build_module.int_group(None)  # the layout's
    ir = stage_ir(text, {"w": w}, {"group": group})
    # VNNI reads windows, and pixel-major 1x1s, from the input's words: vnni_conv.py
    # (a 16 x 16 window pixel-major there too: weight-major tiles would compute 1.125
    # columns a pixel)
    pixels = pixel_major is True or (pixel_major == "vnni" and group == 4)
    direct = group == 4 and (kind == "window" or pixels)
    assert "xr_igemm" in ir and ("relay.transpose" in ir) == (pixels and not direct)
    assert ("direct = true" in ir) == direct
    assert ("pixel_major = true" in ir) == (pixels and direct)
    signed = kind == "pointwise"
    x = rng.integers(-128 if signed else 0, 128 if signed else 256, (1, c, size, size))
    x = x.astype(np.int8 if signed else np.uint8)
    want = reference(text, {"w": w}, {"x": x})
    for threads in ("1", "2"):
        monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
        np.testing.assert_array_equal(run(text, {"w": w}, {"x": x}, layout), want)


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize(
    ("m", "k", "n", "xt", "zx"),
    [(128, 2048, 10, "ui8", 138), (70, 301, 7, "i8", -5), (200, 64, 1, "ui8", 0)],
)
def test_narrow_dense_runs_weight_major(layout, monkeypatch, threads, m, k, n, xt, zx):
    """A dense product of few output channels (MLP int8's classifier: 10) runs with the
    weight as A, in rows of 6, and the samples as B's columns read [N, K], the result
    transposed back: the same integers, K over a block and not a multiple of 4 too."""
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    signed = xt == "i8"
    lo, hi = (-128, 128) if signed else (0, 256)
    x = rng.integers(lo, hi, (m, k)).astype(np.int8 if signed else np.uint8)
    x[0] = lo if zx > 0 else hi - 1
    w = rng.integers(-128, 128, (k, n)).astype(np.int8)
    w[:, 0] = -128
    text = dense_module(m, k, n, xt, "i8", zx, "dense<0> : tensor<i32>")
    ir = stage_ir(text, {"w": w})
    assert "per_row = true" in ir and "relay.transpose" in ir
    got = run(text, {"w": w}, {"x": x}, layout)
    np.testing.assert_array_equal(got, (x.astype(np.int64) - zx) @ w.astype(np.int64))


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize(("xt", "zx", "out"), [("ui8", 128, "ui8"), ("i8", 0, "i8")])
def test_narrow_dense_requantized(layout, monkeypatch, threads, xt, zx, out):
    """... with the bias and the per-channel requantization in its epilogue, per row."""
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    text = requantized_text("dense", 300, 10, xt, zx, out, "", 0, size=100)
    w = rng.integers(-128, 128, (10, 300)).astype(np.int8)
    ir = stage_ir(text, {"w": w})
    assert "requantize = true" in ir and "per_row = true" in ir and "relay.transpose" in ir
    signed = xt == "i8"
    x = rng.integers(-128 if signed else 0, 128 if signed else 256, (100, 300))
    x = x.astype(np.int8 if signed else np.uint8)
    got = run(text, {"w": w}, {"x": x}, layout)
    np.testing.assert_array_equal(got, reference(text, {"w": w}, {"x": x}))


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("kind", ["dense", "pointwise"])
def test_edge_tiles_of_few_columns_are_exact(layout, monkeypatch, threads, kind):
    """An edge tile of at most half a panel's columns (a dense product's 40 = 32 + 8
    channels; a 1x1 convolution's 13 x 13 = 5 x 32 + 9 pixels, SqueezeNet int8's last
    convolution) runs on xr_iukr_half_<u>, half the products of the full micro-kernel:
    exact, requantized and i32, on one thread and two."""
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    ir = igemm.runtime_ir(True, 16, 2)
    assert "define internal void @xr_iukr_half_a(" in ir and "@xr_iukr_half_b" in ir
    if kind == "dense":
        text = requantized_text("dense", 70, 40, "ui8", 9, "ui8", "", 0, size=20)
        w = rng.integers(-128, 128, (40, 70)).astype(np.int8)
        x = rng.integers(0, 256, (20, 70)).astype(np.uint8)
    else:
        text = conv_text(1, 48, 20, 1, "ui8", 3).replace("9x9", "13x13")
        w = rng.integers(-128, 128, (20, 48, 1, 1)).astype(np.int8)
        x = rng.integers(0, 256, (1, 48, 13, 13)).astype(np.uint8)
    want = reference(text, {"w": w}, {"x": x})
    np.testing.assert_array_equal(run(text, {"w": w}, {"x": x}, layout), want)
