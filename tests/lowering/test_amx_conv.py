"""Unit-stride 8-bit convolutions read straight from the input on AMX tiles
(lowering/kernels/amx_conv.py): the tile over every tap and channel block and its scalar
fallback give numpy's integers; whole convolutions (window sizes, padding, channel counts
that are not multiples of 64, row edges, batches, s8 data, 1-3 threads) give the reference
executor's, and only unit-stride windows take the path."""

from __future__ import annotations

import ctypes
import importlib

import llvmlite.binding as llvm
import numpy as np
import pytest
import xrelay
from xrelay.lowering import compile_worker
from xrelay.lowering.context import BuildContext
from xrelay.lowering.jit import amx_tiles, resolve_target
from xrelay.lowering.kernels import amx_conv, gemm, igemm
from xrelay.lowering.kernels.prepack import pack_direct_rows
from xrelay.lowering.pipeline import lower

build_module = importlib.import_module("xrelay.lowering.build")
rng = np.random.default_rng(11)
needs_amx = pytest.mark.skipif(not amx_tiles(), reason="no AMX-INT8 on this CPU (or OS)")


def _tile_functions():
    text = gemm.HEADER + igemm.runtime_ir(False, 16, 4, tiles=True)
    params = ", ".join(f"{t} {n}" for t, n in amx_conv.TILE_PARAMS)
    args = ", ".join(f"{t} {n}" for t, n in amx_conv.TILE_PARAMS)
    for name in ("xr_tdirect_tile", "xr_tdirect_tile_slow"):
        text += f"""
define void @t_{name}({params}) {{
  %ready = call i1 @xr_amx_ready()
  call void @llvm.x86.ldtilecfg(ptr @xr_amx_config)
  call void @{name}({args})
  call void @llvm.x86.tilerelease()
  ret void
}}"""
    module = llvm.parse_assembly(text)
    machine = compile_worker.target_machine(resolve_target(None), pic=False)
    engine = llvm.create_mcjit_compiler(module, machine)
    engine.finalize_object()
    kind = ctypes.CFUNCTYPE(
        None, ctypes.c_void_p, ctypes.c_void_p, *[ctypes.c_int64] * 8, ctypes.c_void_p
    )
    return engine, {
        n: kind(engine.get_function_address(f"t_{n}"))
        for n in ("xr_tdirect_tile", "xr_tdirect_tile_slow")
    }


@needs_amx
@pytest.mark.parametrize(("c", "kh", "kw"), [(70, 3, 3), (64, 1, 3), (5, 5, 2)])
def test_the_tile_and_its_fallback_give_numpys_integers(c, kh, kw):
    """32 weight rows (s8, extreme values) times the band's words (u8) over every tap and
    block of 64 channels, 32 virtual columns from an offset: by the tiles and by the
    scalar loops the runtime falls back to."""
    width, rows, boff = 13, kh + 3, 5
    cp = -(-c // 64) * 64
    plane = rows * width + amx_conv.SLACK
    weight = rng.integers(-128, 128, (32, c, kh, kw)).astype(np.int8)
    weight[0] = -128
    band = rng.integers(0, 256, (cp // 4, plane, 4)).astype(np.uint8)
    band[rng.random(band.shape) < 0.1] = 255
    packed = pack_direct_rows(weight, 32)
    want = np.zeros((32, 32), np.int64)
    for i in range(kh):
        for j in range(kw):
            start = boff + i * width + j
            cols = band[:, start : start + 32, :].transpose(0, 2, 1).reshape(cp, 32)[:c]
            want += weight[:, :, i, j].astype(np.int64) @ cols.astype(np.int64)
    engine, fns = _tile_functions()
    for name, fn in fns.items():
        t = np.full((32, 32), -1, np.int32)
        args = (boff, plane, kh, kw, width, cp // 64, 1, rows * width)  # stride 1: one phase
        fn(packed.ctypes.data, band.ctypes.data, *args, t.ctypes.data)
        np.testing.assert_array_equal(t, want, err_msg=name)
    del engine


def conv_text(n, c, o, kh, kw, h, w, pad, xt, zx, stride=1):
    top, left, bottom, right = pad
    oh = (h + top + bottom - kh) // stride + 1
    ow = (w + left + right - kw) // stride + 1
    x_t, w_t = f"tensor<{n}x{c}x{h}x{w}x{xt}>", f"tensor<{o}x{c}x{kh}x{kw}xi8>"
    y_t = f"tensor<{n}x{o}x{oh}x{ow}xi32>"
    return f"""
func.func @main(%x: {x_t} {{xrelay.name = "x"}}, %w: {w_t} {{xrelay.name = "w", xrelay.param}}) -> {y_t} {{
  %zx = relay.constant dense<{zx}> : tensor<i32>
  %zw = relay.constant dense<0> : tensor<i32>
  %sx = relay.constant dense<0.5> : tensor<f32>
  %sw = relay.constant dense<0.25> : tensor<f32>
  %y = qnn.conv2d %x, %w, %zx, %zw, %sx, %sw {{padding = array<i64: {top}, {left}, {bottom}, {right}>, strides = array<i64: {stride}, {stride}>}} : ({x_t}, {w_t}, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> {y_t}
  func.return %y : {y_t}
}}"""


@pytest.fixture
def on_tiles(monkeypatch):
    monkeypatch.setattr(build_module, "int_group", lambda _target: 4)
    monkeypatch.setattr(build_module, "amx_tiles", lambda _target: True)


CASES = [  # n, c, o, kh, kw, h, w, padding, data type, zero point
    (1, 48, 8, 3, 3, 9, 9, (1, 1, 1, 1), "ui8", 7),
    (1, 100, 40, 3, 3, 20, 23, (1, 0, 1, 2), "i8", -9),
    (2, 64, 33, 5, 5, 11, 13, (2, 2, 2, 2), "ui8", 255),
    (1, 50, 64, 5, 5, 7, 7, (0, 0, 0, 0), "ui8", 0),
    (1, 130, 20, 1, 3, 6, 40, (0, 1, 0, 1), "ui8", 3),
    # stride 2: the input's four phases (odd and even sizes, a 7x7 window)
    (1, 64, 40, 3, 3, 20, 23, (1, 0, 1, 2), "i8", -9, 2),
    (2, 100, 33, 3, 3, 15, 16, (1, 1, 1, 1), "ui8", 255, 2),
    (1, 64, 8, 7, 7, 19, 18, (3, 3, 3, 3), "ui8", 4, 2),
    (1, 130, 20, 1, 3, 7, 41, (0, 1, 0, 1), "ui8", 3, 2),
    (1, 200, 20, 3, 1, 9, 8, (1, 0, 1, 0), "i8", 0, 2),
]


@needs_amx
@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[:7])) + f"s{c[10:] or 1}")
@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_direct_convolutions_are_exact(on_tiles, monkeypatch, case, threads):
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    assert_direct_exact(case, _stage)


def assert_direct_exact(case: tuple, stage) -> None:
    """The convolution `case` (conv_text's arguments) is direct in `stage`'s IR (the stage
    of qnn-int-products under its options) and its build gives the reference executor's
    integers, on extreme data and weights (shared with test_vnni_conv.py)."""
    n, c, o, kh, kw, h, w, _, xt, *_ = case
    text = conv_text(*case)
    info = np.iinfo(np.uint8 if xt == "ui8" else np.int8)
    x = rng.integers(info.min, info.max + 1, (n, c, h, w)).astype(info.dtype)
    x[:, ::3] = info.max
    weight = rng.integers(-128, 128, (o, c, kh, kw)).astype(np.int8)
    weight[::2] = -128
    params = {"w": weight}
    assert "direct = true" in _stage(text, params)
    lib = xrelay.build(xrelay.parse_module(text), dict(params), cache=False)
    (got,) = lib.run(x=x)
    (want,) = xrelay.create_executor("debug", xrelay.parse_module(text), params).run(x=x)
    np.testing.assert_array_equal(got, want)


def _stage(text: str, params: dict) -> str:
    module = xrelay.parse_module(text)
    options = {"qnn-int-products": {"group": 4, "vector_width": 16, "tiles": True}}
    lower(module, ctx=BuildContext(params=dict(params)), stop_after="qnn-int-products",
          options=options)  # fmt: skip
    return str(module)


def test_only_unit_stride_windows_with_enough_channels_are_direct():
    """3x3 convolutions of 64 channels with stride 1 or 2 are direct; one of 16 channels
    (a quarter of each step), 1x1 ones (stride 1 or 2), one of stride 3 and a dilated one
    keep the im2col blocks."""
    few = conv_text(1, 16, 8, 3, 3, 9, 9, (1, 1, 1, 1), "ui8", 0)
    few_weight = rng.integers(-128, 128, (8, 16, 3, 3)).astype(np.int8)
    assert "direct" not in _stage(few, {"w": few_weight})
    weight = rng.integers(-128, 128, (8, 64, 3, 3)).astype(np.int8)
    text = conv_text(1, 64, 8, 3, 3, 9, 9, (1, 1, 1, 1), "ui8", 0)
    assert "direct = true" in _stage(text, {"w": weight})
    halved = conv_text(1, 64, 8, 3, 3, 9, 9, (1, 1, 1, 1), "ui8", 0, 2)
    assert "direct = true" in _stage(halved, {"w": weight})
    strided = conv_text(1, 64, 8, 3, 3, 9, 9, (1, 1, 1, 1), "ui8", 0, 3)
    assert "direct" not in _stage(strided, {"w": weight})
    dilated = text.replace("strides =", "dilation = array<i64: 2, 2>, strides =")
    dilated = dilated.replace("1x8x9x9xi32", "1x8x7x7xi32")
    assert "direct" not in _stage(dilated, {"w": weight})
    for stride in (1, 2):  # pointwise: in place, or one phase
        pointwise = conv_text(1, 64, 8, 1, 1, 9, 9, (0, 0, 0, 0), "ui8", 0, stride)
        assert "direct" not in _stage(pointwise, {"w": weight[:, :, :1, :1].copy()})
