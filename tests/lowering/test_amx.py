"""The 8-bit GEMM on AMX tiles (lowering/kernels/amx.py): the micro-tile and its scalar
fallback give numpy's integers on the packed layouts; builds on a host with AMX use the
tiles (and XRELAY_AMX=0 keeps them off); the weights are packed as the tiles read them.
The exactness of whole products (edges, threads, requantization) is test_qnn_int_products'
`amx` layout."""

from __future__ import annotations

import ctypes
import shutil
import zlib

import llvmlite.binding as llvm
import numpy as np
import pytest
import xrelay
from xrelay.lowering import compile_worker
from xrelay.lowering.jit import amx_tiles, resolve_target
from xrelay.lowering.kernels import amx, gemm, igemm
from xrelay.lowering.kernels.prepack import AMX_KC as IKC
from xrelay.lowering.kernels.prepack import pack_tile_rows, pack_words, word_groups
from xrelay.tests.lowering.test_qnn_float_products import dense_module

rng = np.random.default_rng(5)
needs_amx = pytest.mark.skipif(not amx_tiles(), reason="no AMX-INT8 on this CPU (or OS)")


def _tile_functions():
    """The AMX runtime with exported entries calling each micro-tile function."""
    text = gemm.HEADER + igemm.runtime_ir(False, 16, 4, tiles=True)
    for name in ("xr_tukr_a", "xr_tukr_b", "xr_tukr_slow_a", "xr_tukr_slow_b"):
        text += f"""
define void @t_{name}(i64 %kcg, ptr %ap, ptr %bp, ptr %t) {{
  %ready = call i1 @xr_amx_ready()
  call void @llvm.x86.ldtilecfg(ptr @xr_amx_config)
  call void @{name}(i64 %kcg, ptr %ap, ptr %bp, ptr %t)
  call void @llvm.x86.tilerelease()
  ret void
}}"""
    target = resolve_target(None)
    module = llvm.parse_assembly(text)
    machine = compile_worker.target_machine(target, pic=False)
    engine = llvm.create_mcjit_compiler(module, machine)
    engine.finalize_object()
    kind = ctypes.CFUNCTYPE(None, ctypes.c_int64, *[ctypes.c_void_p] * 3)
    return engine, {n: kind(engine.get_function_address(f"t_{n}")) for n in
                    ("xr_tukr_a", "xr_tukr_b", "xr_tukr_slow_a", "xr_tukr_slow_b")}  # fmt: skip


@needs_amx
@pytest.mark.parametrize("kcg", [16, 48, 128])
def test_the_micro_tile_and_its_fallback_give_numpys_integers(kcg):
    """32 x 32 i32 = A (32 rows, each step's 64-byte rows together) times B (panel of 32
    columns, words of 4 k): u8 x s8 (xr_tukr_a, tdpbusd) and s8 x u8 (xr_tukr_b, tdpbsud), at the extreme
    values, by the tiles and by the scalar loops the runtime falls back to."""
    engine, fns = _tile_functions()
    k = 4 * kcg
    for unsigned in "ab":
        a_kind, b_kind = (np.uint8, np.int8) if unsigned == "a" else (np.int8, np.uint8)
        a = rng.integers(np.iinfo(a_kind).min, np.iinfo(a_kind).max + 1, (32, k)).astype(a_kind)
        b = rng.integers(np.iinfo(b_kind).min, np.iinfo(b_kind).max + 1, (k, 32)).astype(b_kind)
        a[0], b[:, 0] = np.iinfo(a_kind).max, np.iinfo(b_kind).min  # the largest sums
        want = a.astype(np.int64) @ b.astype(np.int64)
        b_words = np.ascontiguousarray(b.reshape(kcg, 4, 32).transpose(0, 2, 1))  # [g][col][4]
        a_tiles = np.ascontiguousarray(a.reshape(32, kcg // 16, 64).transpose(1, 0, 2))
        for fn in (f"xr_tukr_{unsigned}", f"xr_tukr_slow_{unsigned}"):
            t = np.full((32, 32), -1, np.int32)
            fns[fn](kcg, a_tiles.ctypes.data, b_words.ctypes.data, t.ctypes.data)
            np.testing.assert_array_equal(t, want, err_msg=fn)
    del engine


def test_weights_are_packed_as_the_tiles_read_them():
    """Conv weights (A): per K block, rows padded to 32, each row's groups rounded up to
    16 words (zeros), each panel of 32 rows tile-major (a step's 32 rows of 64 bytes
    together); dense weights (B): igemm's panels with every block's groups rounded up to
    16. K = 1000: a full block of 512 values and one of 488 (122 -> 128 groups)."""
    rows, k = 40, 1000
    mat = rng.integers(-128, 128, (rows, k)).astype(np.int8)
    assert word_groups(k, 4, 16) == 128 + 128 and word_groups(k, 4) == 250
    a = pack_tile_rows(mat, 32)
    assert a.size == 64 * 256 * 4

    def rows_of(block: np.ndarray) -> np.ndarray:  # [panel][step][row][64] -> [row][k]
        return block.reshape(2, 8, 32, 64).transpose(0, 2, 1, 3).reshape(64, IKC)

    first, second = rows_of(a[: 64 * IKC]), rows_of(a[64 * IKC :])
    np.testing.assert_array_equal(first[:rows], mat[:, :IKC])
    assert not first[rows:].any()
    np.testing.assert_array_equal(second[:rows, : k - IKC], mat[:, IKC:])
    assert not second[:, k - IKC :].any() and not second[rows:].any()
    assert a[64 * 5 + 3] == mat[5, 3]  # block 0, panel 0, step 0: row 5's byte 3
    b = pack_words(mat, 32, 4, multiple=16)
    assert b.size == 64 * 256 * 4
    tail = b[64 * 128 * 4 :].reshape(2, 128, 32, 4)  # block 1: [panel][g][column][t]
    np.testing.assert_array_equal(tail[0, 5, 3], mat[3, IKC + 20 : IKC + 24])
    assert not tail[:, 122:].any()


def _dense_ir(monkeypatch, amx_env: str) -> str:
    monkeypatch.setenv("XRELAY_AMX", amx_env)
    text = dense_module(7, 100, 64, "ui8", "i8", 3, "dense<0> : tensor<i32>")
    w = rng.integers(-128, 128, (100, 64)).astype(np.int8)
    lib = xrelay.build(xrelay.parse_module(text), {"w": w}, cache=False)
    x = rng.integers(0, 256, (7, 100)).astype(np.uint8)
    want = xrelay.create_executor("debug", xrelay.parse_module(text), {"w": w}).run(x=x)[0]
    np.testing.assert_array_equal(lib.run(x=x)[0], want)
    return zlib.decompress(lib.ir_z).decode()


@needs_amx
def test_builds_use_tiles_where_the_host_has_them(monkeypatch):
    assert "@llvm.x86.tdpbusd" in _dense_ir(monkeypatch, "1")
    assert "@llvm.x86.tdpbusd" not in _dense_ir(monkeypatch, "0")
    assert amx.ROWS % 16 == 0 and amx.MC % amx.ROWS == 0


def test_portable_targets_have_no_tiles():
    assert not amx_tiles(resolve_target("x86-64-v4"))


@needs_amx
@pytest.mark.skipif(shutil.which("cc") is None or shutil.which("objcopy") is None,
                    reason="export_library needs a C compiler and objcopy")  # fmt: skip
def test_a_c_program_gets_the_tiles_itself(monkeypatch, tmp_path):
    """A C program running an exported 8-bit product on tiles (a process where Python never
    asked Linux for the tile data: the runtime asks) gives lib.run's integers."""
    from xrelay.tests.lowering.test_export import run_from_c

    monkeypatch.setenv("XRELAY_AMX", "1")
    text = dense_module(37, 200, 70, "ui8", "i8", 3, "dense<0> : tensor<i32>")
    w = rng.integers(-128, 128, (200, 70)).astype(np.int8)
    lib = xrelay.build(xrelay.parse_module(text), {"w": w}, cache=False)
    assert "@llvm.x86.tdpbusd" in zlib.decompress(lib.ir_z).decode()
    x = rng.integers(0, 256, (37, 200)).astype(np.uint8)
    got = run_from_c(lib, "tiles", tmp_path, [x])
    np.testing.assert_array_equal(got[0], lib.run(x=x)[0])
