"""8-bit convolutions of stride 1 or 2 read straight from the input on AVX-512 VNNI
(lowering/kernels/vnni_conv.py): the tile over every tap and channel word gives numpy's
integers; whole convolutions (window sizes, padding, row edges, batches, s8 data, both
strides, the few-pixel shapes that ran pixel-major before, 1-3 threads) give the
reference executor's, and only the convolutions the kernel serves take the path."""

from __future__ import annotations

import ctypes
import importlib

import llvmlite.binding as llvm
import numpy as np
import pytest
import xrelay
from xrelay.lowering import compile_worker, qnn_int_products
from xrelay.lowering.context import BuildContext
from xrelay.lowering.jit import int_group, resolve_target
from xrelay.lowering.kernels import amx_conv, gemm, igemm, vnni_conv
from xrelay.lowering.kernels.prepack import pack_direct_rows
from xrelay.lowering.pipeline import lower

from .test_amx_conv import assert_direct_exact, conv_text
from .test_qnn_int_products import requantized_text

build_module = importlib.import_module("xrelay.lowering.build")
rng = np.random.default_rng(12)
needs_vnni = pytest.mark.skipif(int_group() != 4, reason="no AVX-512 VNNI on this CPU")


@needs_vnni
@pytest.mark.parametrize(("c", "kh", "kw"), [(72, 3, 3), (4, 1, 3), (20, 5, 2)])
def test_the_tile_gives_numpys_integers(c, kh, kw):
    """vnni_conv.ROWS = 8 weight rows (s8, extreme values) times the band's words (u8) over
    every tap and word of 4 channels, 32 virtual columns from an offset."""
    width, rows, boff, mr = 13, kh + 3, 5, vnni_conv.ROWS
    assert mr == 8  # 64 and 128 output channels in whole tiles
    plane = rows * width + amx_conv.SLACK
    weight = rng.integers(-128, 128, (mr, c, kh, kw)).astype(np.int8)
    weight[0] = -128
    band = rng.integers(0, 256, (c // 4, plane, 4)).astype(np.uint8)
    band[rng.random(band.shape) < 0.1] = 255
    packed = pack_direct_rows(weight, mr, 4)
    want = np.zeros((mr, 32), np.int64)
    for i in range(kh):
        for j in range(kw):
            start = boff + i * width + j
            cols = band[:, start : start + 32, :].transpose(0, 2, 1).reshape(c, 32)
            want += weight[:, :, i, j].astype(np.int64) @ cols.astype(np.int64)
    module = llvm.parse_assembly(gemm.HEADER + igemm.runtime_ir(False, 16, 4))
    machine = compile_worker.target_machine(resolve_target(None), pic=False)
    engine = llvm.create_mcjit_compiler(module, machine)
    engine.finalize_object()
    ptr, i64, f32 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_float
    kind = ctypes.CFUNCTYPE(
        None, ptr, ptr, i64, i64, ptr, *[i64] * 3, ptr, ptr, i64, ptr, ptr, *[i64] * 5,
        f32, f32, f32,
    )  # fmt: skip
    fn = kind(engine.get_function_address("xr_vdirect_tile"))
    t = np.full((mr + 1, 32), -1, np.int32)
    offs = np.array([i * width + j for i in range(kh) for j in range(kw)], np.int64)
    args = (boff, plane, offs.ctypes.data, kh * kw, width, c // 4)  # stride 1: one phase
    # q null: the tile into t (the epilogue's other arguments unused)
    fn(packed.ctypes.data, band.ctypes.data, *args, t.ctypes.data, None, 0, None, None,
       mr, 0, 1, 0, 1, 0.0, 0.0, 0.0)  # fmt: skip
    np.testing.assert_array_equal(t[:mr], want)
    del engine


def _band_reference(x, cp, pt, pl, s, kh, kw, oy0, rows, wq, flip, fill):
    """xr_tband's words as numpy makes them: [cp / 4][phases][rows][wq][4] bytes."""
    c, h, w = x.shape
    phases = [(a, b) for a in range(min(s, kh)) for b in range(min(s, kw))]
    out = np.zeros((cp // 4, s * s, rows, wq, 4), np.uint8)
    for a, b in phases:
        for r in range(rows):
            for q in range(wq):
                iy, ix = s * (oy0 + r) + a - pt, s * q + b - pl
                for ch in range(c):
                    inside = 0 <= iy < h and 0 <= ix < w
                    value = (x[ch, iy, ix] ^ flip) if inside else fill
                    out[ch // 4, a * s + b, r, q, ch % 4] = value
    return out


@needs_vnni
@pytest.mark.parametrize(
    ("c", "h", "w", "s", "pad", "oy0", "rows"),
    [(8, 9, 9, 1, 1, 0, 9), (6, 7, 40, 1, 2, 1, 4), (12, 14, 14, 2, 1, 0, 8),
     (5, 15, 37, 2, 3, 2, 5), (4, 3, 70, 1, 1, 0, 5)],
)  # fmt: skip
@pytest.mark.parametrize("flip", [0, 0x80])
def test_the_band_gives_numpys_words(c, h, w, s, pad, oy0, rows, flip):
    """The band of channel words (shared with the AMX kernel): rows inside and outside the
    input, chunks wholly inside it and at both edges, both strides, channels past C zero,
    the fill byte in the padding, s8 data flipped."""
    kh = kw = 3
    wq = (w + 2 * pad - kw) // s + 1 + (kw - 1) // s
    cp = -(-c // 4) * 4
    plane = s * s * rows * wq + amx_conv.SLACK
    x = rng.integers(0, 256, (c, h, w)).astype(np.uint8)
    fill = 77
    buf = np.full(cp // 4 * plane * 4 + 256, 0xEE, np.uint8)
    module = llvm.parse_assembly(gemm.HEADER + igemm.runtime_ir(False, 16, 4))
    machine = compile_worker.target_machine(resolve_target(None), pic=False)
    engine = llvm.create_mcjit_compiler(module, machine)
    engine.finalize_object()
    kind = ctypes.CFUNCTYPE(
        None, ctypes.c_void_p, *[ctypes.c_int64] * 12, ctypes.c_void_p, *[ctypes.c_int64] * 3
    )
    band = kind(engine.get_function_address("xr_tband"))
    band(x.ctypes.data, c, cp, h, w, pad, pad, s, kh, kw, oy0, rows, wq, buf.ctypes.data,
         plane, flip, fill)  # fmt: skip
    got = buf[: cp // 4 * plane * 4].reshape(cp // 4, plane, 4)[:, : s * s * rows * wq]
    want = _band_reference(x, cp, pad, pad, s, kh, kw, oy0, rows, wq, flip, fill)
    np.testing.assert_array_equal(got.reshape(want.shape), want)
    del engine


@pytest.fixture
def on_vnni(monkeypatch):
    """The VNNI path even on an AMX host (which would take the tiles)."""
    monkeypatch.setattr(build_module, "amx_tiles", lambda _target: False)


CASES = [  # n, c, o, kh, kw, h, w, padding, data type, zero point(, stride)
    (1, 48, 8, 3, 3, 9, 9, (1, 1, 1, 1), "ui8", 7),
    (1, 100, 40, 3, 3, 20, 23, (1, 0, 1, 2), "i8", -9),
    (2, 64, 33, 5, 5, 11, 13, (2, 2, 2, 2), "ui8", 255),
    (1, 52, 64, 5, 5, 7, 7, (0, 0, 0, 0), "ui8", 0),
    (1, 128, 20, 1, 3, 6, 40, (0, 1, 0, 1), "ui8", 3),
    (1, 512, 70, 3, 3, 7, 7, (1, 1, 1, 1), "ui8", 4),  # few pixels: was pixel-major
    # stride 2: the input's four phases (odd and even sizes, a 7x7 window)
    (1, 64, 40, 3, 3, 20, 23, (1, 0, 1, 2), "i8", -9, 2),
    (2, 100, 33, 3, 3, 15, 16, (1, 1, 1, 1), "ui8", 255, 2),
    (1, 64, 8, 7, 7, 19, 18, (3, 3, 3, 3), "ui8", 4, 2),
    (1, 256, 30, 3, 3, 14, 14, (1, 1, 1, 1), "ui8", 4, 2),
]


@needs_vnni
@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[:7])) + f"s{c[10:] or 1}")
@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_direct_convolutions_are_exact(on_vnni, monkeypatch, case, threads):
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    assert_direct_exact(case, _stage)


def _stage(text: str, params: dict) -> str:
    module = xrelay.parse_module(text)
    options = {"qnn-int-products": {"group": 4, "vector_width": 16}}
    lower(module, ctx=BuildContext(params=dict(params)), stop_after="qnn-int-products",
          options=options)  # fmt: skip
    return str(module)


def test_only_windows_of_whole_channel_words_are_direct(monkeypatch):
    """3x3 convolutions of a multiple of 4 channels with stride 1 or 2 are direct on VNNI;
    one of 6 channels, 1x1 ones, stride 3, a dilated one, i16 pairs (group 2) and the
    switch off keep the im2col blocks."""
    weight = rng.integers(-128, 128, (8, 64, 3, 3)).astype(np.int8)
    text = conv_text(1, 64, 8, 3, 3, 9, 9, (1, 1, 1, 1), "ui8", 0)
    assert "direct = true" in _stage(text, {"w": weight})
    halved = conv_text(1, 64, 8, 3, 3, 9, 9, (1, 1, 1, 1), "ui8", 0, 2)
    assert "direct = true" in _stage(halved, {"w": weight})
    odd = conv_text(1, 6, 8, 3, 3, 9, 9, (1, 1, 1, 1), "ui8", 0)
    assert "direct" not in _stage(odd, {"w": weight[:, :6].copy()})
    strided = conv_text(1, 64, 8, 3, 3, 9, 9, (1, 1, 1, 1), "ui8", 0, 3)
    assert "direct" not in _stage(strided, {"w": weight})
    dilated = text.replace("strides =", "dilation = array<i64: 2, 2>, strides =")
    dilated = dilated.replace("1x8x9x9xi32", "1x8x7x7xi32")
    assert "direct" not in _stage(dilated, {"w": weight})
    pointwise = conv_text(1, 64, 8, 1, 1, 9, 9, (0, 0, 0, 0), "ui8", 0)
    assert "direct" not in _stage(pointwise, {"w": weight[:, :, :1, :1].copy()})
    module = xrelay.parse_module(text)
    lower(module, ctx=BuildContext(params={"w": weight}), stop_after="qnn-int-products",
          options={"qnn-int-products": {"group": 2, "vector_width": 16}})  # fmt: skip
    assert "direct" not in str(module)
    monkeypatch.setattr(qnn_int_products, "VNNI_DIRECT", False)
    assert "direct" not in _stage(text, {"w": weight})


@needs_vnni
@pytest.mark.parametrize(
    ("c", "o", "size", "stride", "out"),
    [(16, 20, 13, 1, "ui8"), (64, 70, 7, 1, "i8"), (32, 14, 14, 2, "ui8"), (8, 9, 56, 1, "ui8"),
     (64, 33, 9, 2, "i8")],
)  # fmt: skip
@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_requantized_tiles_store_their_own_bytes(
    on_vnni, monkeypatch, c, o, size, stride, out, threads
):
    """A requantized direct convolution (bias, per-channel multipliers with ties, clip)
    stores each tile's bytes from its registers, run by run of valid columns, rows past
    the weight's last not at all: the reference executor's bytes for output rows that
    wrap inside a tile (7 x 7, 13 x 13), wide ones (56), both strides, 1-3 threads."""
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    clip = "a_min = 5.0 : f64, a_max = 250.0 : f64" if out == "ui8" else ""
    text = requantized_text("conv", c, o, "ui8", 3, out, clip, 0, size)
    if stride == 2:
        small = (size - 1) // 2 + 1
        text = text.replace(
            "padding = array<i64: 1, 1, 1, 1>}",
            "padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}",
        )
        text = text.replace(f"x{size}x{size}xi32>", f"x{small}x{small}xi32>")
        text = text.replace(f"{o}x{size}x{size}x{out}>", f"{o}x{small}x{small}x{out}>")
    weight = rng.integers(-128, 128, (o, c, 3, 3)).astype(np.int8)
    params = {"w": weight}
    assert "direct = true" in _stage(text, params) and "requantize = true" in _stage(text, params)
    x = rng.integers(0, 256, (1, c, size, size)).astype(np.uint8)
    lib = xrelay.build(xrelay.parse_module(text), dict(params), cache=False)
    (got,) = lib.run(x=x)
    (want,) = xrelay.create_executor("debug", xrelay.parse_module(text), params).run(x=x)
    np.testing.assert_array_equal(got, want)


PIXEL_CASES = [  # c, o, kh, h, padding, data type, zero point, stride: <= 256 px
    (512, 70, 3, 7, 1, "ui8", 4, 1),
    (48, 70, 3, 13, 1, "ui8", 4, 1),  # K = 432: 169 pixels, the last tile of one
    (64, 40, 3, 13, 1, "i8", -9, 2),
    (256, 40, 3, 14, 1, "i8", -9, 2),
    (1024, 45, 1, 7, 0, "ui8", 3, 1),  # a 1x1: its input's words, not packed in place
    (1024, 33, 1, 14, 0, "i8", 0, 2),
    (1024, 20, 1, 16, 0, "ui8", 255, 1),  # 256 pixels: split by rows
]


@needs_vnni
@pytest.mark.parametrize("case", PIXEL_CASES, ids=lambda c: "x".join(map(str, c)))
@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_pixel_major_convolutions_read_the_band(on_vnni, monkeypatch, case, threads):
    """Few output pixels and a long K run pixels x channels (transposed back) with each
    pixel's words broadcast from the band (windows where weight-major tiles would drop
    many columns: 7 x 7 outputs), its result stored channel-major (not transposed back):
    exact for windows and 1x1s, both strides, channel counts that leave a partial
    32-column panel, s8 data, 1-3 threads (pixels or channels split)."""
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    c, o, k, h, p, xt, zx, stride = case
    text = conv_text(1, c, o, k, k, h, h, (p,) * 4, xt, zx, stride)
    info = np.iinfo(np.uint8 if xt == "ui8" else np.int8)
    x = rng.integers(info.min, info.max + 1, (1, c, h, h)).astype(info.dtype)
    weight = rng.integers(-128, 128, (o, c, k, k)).astype(np.int8)
    weight[::3] = -128
    params = {"w": weight}
    ir = _stage(text, params)
    assert "direct = true" in ir and "pixel_major = true" in ir
    assert "relay.transpose" not in ir
    lib = xrelay.build(xrelay.parse_module(text), dict(params), cache=False)
    (got,) = lib.run(x=x)
    (want,) = xrelay.create_executor("debug", xrelay.parse_module(text), params).run(x=x)
    np.testing.assert_array_equal(got, want)


def test_only_small_windows_run_pixel_major_direct():
    """Of the few-pixel windows, 7 x 7 and 14 x 14 outputs (weight-major tiles would
    compute 1.31 and 1.14 columns a pixel) run pixel-major; 4 x 62 ones (1.03)
    weight-major, direct."""
    weight = rng.integers(-128, 128, (8, 256, 3, 3)).astype(np.int8)
    for (h, w), pixels in (((7, 7), True), ((14, 14), True), ((4, 62), False)):
        ir = _stage(conv_text(1, 256, 8, 3, 3, h, w, (1,) * 4, "ui8", 0), {"w": weight})
        assert "direct = true" in ir and ("pixel_major = true" in ir) == pixels


def test_pixel_major_tiles_are_seven_pixels():
    """A pixel-major tile is vnni_conv.PIXELS = 7 pixels x 32 channels (ResNet-50's 7 x 7,
    14 x 14 and 28 x 28 outputs in whole tiles): 14 products a step; the threads split
    a direct pixel-major convolution's pixels in units of 7 (dense products' rows in 6)."""
    ir = igemm.runtime_ir(True, 16, 4)
    tile = ir[ir.index("define internal void @xr_vdirect_ptile(") :]
    tile = tile[: tile.index("\n}")]
    assert tile.count("@llvm.x86.avx512.vpdpbusd.512(") == 14
    worker = ir[ir.index("define internal void @xr_igemm_a_worker(") :]
    worker = worker[: worker.index("\n}")]
    assert "i64 7, i64 6" in worker
