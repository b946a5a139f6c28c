"""qnn-lookup-tables: chains of unary ops from 8-bit to 8-bit values become table lookups
(lowering/kernels/lut.py) that give the chain's bytes exactly: the same bytes as the
build without the pass (the tables mirror the lowering's f32 arithmetic), for u8 and s8
data, per-channel and per-tensor parameters, planes that are not multiples of 64 bytes
and 1-2 threads; chains that end in f32, hold a NaN or have nothing but cheap ops stay."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
import xrelay
from xrelay.lowering import qnn_lookup_tables
from xrelay.lowering.context import BuildContext
from xrelay.lowering.jit import host_features
from xrelay.lowering.pipeline import lower

rng = np.random.default_rng(3)
needs_vbmi = pytest.mark.skipif("avx512vbmi" not in host_features(), reason="no AVX512-VBMI")


def chain_text(shape, xt, out, per_channel=True, eps="1.0e-05", tail=""):
    """x (8-bit) -> dequantize -> batch_norm -> quantize (`out`) [-> `tail`]; a second
    input y joins after: dequantize both, add, relu, quantize (a residual block's end)."""
    dims = "x".join(map(str, shape))
    c = shape[1]
    x_t, o_t = f"tensor<{dims}x{xt}>", f"tensor<{dims}x{out}>"
    f_t, v_t = f"tensor<{dims}xf32>", f"tensor<{c}xf32>"
    scale = f"%sc : {v_t}" if per_channel else "%s1 : tensor<f32>"
    return f"""
func.func @main(%x: {x_t} {{xrelay.name = "x"}}, %y: {o_t} {{xrelay.name = "y"}}, %gamma: {v_t} {{xrelay.name = "gamma", xrelay.param}}, %beta: {v_t} {{xrelay.name = "beta", xrelay.param}}, %mean: {v_t} {{xrelay.name = "mean", xrelay.param}}, %var: {v_t} {{xrelay.name = "var", xrelay.param}}) -> {o_t} {{
  %s1 = relay.constant dense<0.0413> : tensor<f32>
  %s2 = relay.constant dense<0.0271> : tensor<f32>
  %sc = relay.constant dense<{[round(0.01 + 0.02 * i / c, 5) for i in range(c)]}> : {v_t}
  %zx = relay.constant dense<{-3 if xt == "i8" else 117}> : tensor<i32>
  %zo = relay.constant dense<{5 if out == "i8" else 131}> : tensor<i32>
  %dq = qnn.dequantize %x, {scale.split(" : ")[0]}, %zx {{axis = 1 : i64}} : ({x_t}, {scale.split(" : ")[1]}, tensor<i32>) -> {f_t}
  %bn = relay.nn.batch_norm %dq, %gamma, %beta, %mean, %var {{epsilon = {eps} : f64}} : ({f_t}, {v_t}, {v_t}, {v_t}, {v_t}) -> {f_t}
  %q = qnn.quantize %bn, %s2, %zo {{axis = 1 : i64, out_dtype = {out}}} : ({f_t}, tensor<f32>, tensor<i32>) -> {o_t}
  %a = qnn.dequantize %q, %s2, %zo : ({o_t}, tensor<f32>, tensor<i32>) -> {f_t}{tail}
  %b = qnn.dequantize %y, %s2, %zo : ({o_t}, tensor<f32>, tensor<i32>) -> {f_t}
  %sum = relay.add %a, %b : ({f_t}, {f_t}) -> {f_t}
  %r = relay.nn.relu %sum : ({f_t}) -> {f_t}
  %out = qnn.quantize %r, %s1, %zo {{out_dtype = {out}}} : ({f_t}, tensor<f32>, tensor<i32>) -> {o_t}
  func.return %out : {o_t}
}}"""


def params(c, negative_var=False):
    var = rng.uniform(0.2, 3.0, c).astype(np.float32)
    if negative_var:
        var[1] = -1.0  # 1 / sqrt(negative): NaN in the chain
    return {
        "gamma": rng.uniform(-1, 1, c).astype(np.float32),
        "beta": rng.uniform(-1, 1, c).astype(np.float32),
        "mean": rng.uniform(-1, 1, c).astype(np.float32),
        "var": var,
    }


def stage(text: str, values: dict) -> str:
    module = xrelay.parse_module(text)
    lower(module, ctx=BuildContext(params=dict(values)), stop_after="qnn-lookup-tables")
    return str(module)


def ir_of(lib) -> str:
    return zlib.decompress(lib.ir_z).decode()


CASES = [  # shape, data type, output type, per-channel scale
    ((1, 5, 11, 13), "ui8", "ui8", True),
    ((2, 3, 11, 13), "i8", "ui8", False),
    ((1, 4, 33, 35), "ui8", "i8", True),
    ((1, 70, 20, 20), "i8", "i8", True),
]


@needs_vbmi
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[1]}-{c[2]}-{'x'.join(map(str, c[0]))}")
@pytest.mark.parametrize("threads", ["1", "2"])
def test_lookups_give_the_chains_bytes(monkeypatch, case, threads):
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    shape, xt, out, per_channel = case
    text = chain_text(shape, xt, out, per_channel)
    values = params(shape[1])
    assert "xr_lut_1" in stage(text, values)
    info_x = np.iinfo(np.uint8 if xt == "ui8" else np.int8)
    info_o = np.iinfo(np.uint8 if out == "ui8" else np.int8)
    x = rng.integers(info_x.min, info_x.max + 1, shape).astype(info_x.dtype)
    x.reshape(-1)[:256] = np.arange(info_x.min, info_x.max + 1)[: x.size]  # every value
    y = rng.integers(info_o.min, info_o.max + 1, shape).astype(info_o.dtype)
    with_tables = xrelay.build(xrelay.parse_module(text), dict(values), cache=False)
    assert "xr_lut8" in ir_of(with_tables)
    monkeypatch.setattr(qnn_lookup_tables.QnnLookupTables, "apply", lambda self, ctx, op: None)
    without = xrelay.build(xrelay.parse_module(text), dict(values), cache=False)
    assert "xr_lut8" not in ir_of(without)
    (got,) = with_tables.run(x=x, y=y)
    (want,) = without.run(x=x, y=y)
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(got)) > 8


def test_what_stays():
    """A chain with a NaN (a negative variance), one ending in f32 (dequantize ->
    batch_norm, read by an add) and one on planes under MIN_PLANE bytes stay as they are;
    the table is [C, 256] of the output's type."""
    text = chain_text((1, 4, 12, 12), "ui8", "ui8")
    assert "tensor<4x256xui8>" in stage(text, params(4))
    assert "xr_lut" not in stage(text, params(4, negative_var=True))
    assert "xr_lut" not in stage(chain_text((1, 4, 7, 7), "ui8", "ui8"), params(4))
    f32_end = text.replace(
        "%q = qnn.quantize %bn",
        "%a0 = relay.add %bn, %bn : (tensor<1x4x12x12xf32>, tensor<1x4x12x12xf32>) -> tensor<1x4x12x12xf32>\n  %q = qnn.quantize %a0",
    )
    assert "xr_lut" not in stage(f32_end, params(4))


def test_targets_without_vbmi_keep_the_chains():
    text = chain_text((1, 4, 12, 12), "ui8", "ui8")
    lib = xrelay.build(xrelay.parse_module(text), params(4), cache=False, target_cpu="x86-64-v4")
    assert "xr_lut8" not in ir_of(lib)


@needs_vbmi
def test_every_entry_of_many_tables(monkeypatch):
    """Every value of every channel of 512 (131,072 table entries, few saturated). (An f32
    operation rounded differently from the lowering's moves about one entry in 10^5 by a
    step: gamma folded into the 1 / sqrt factor changes 27,834 of the f32 values here and
    none of the bytes, so the tables mirror the lowering op by op rather than by test.)"""
    shape = (1, 512, 16, 16)
    text = chain_text(shape, "ui8", "ui8")
    values = params(512)
    x = np.stack([rng.permutation(256) for _ in range(512)]).astype(np.uint8).reshape(shape)
    y = rng.integers(0, 256, shape).astype(np.uint8)
    with_tables = xrelay.build(xrelay.parse_module(text), dict(values), cache=False)
    monkeypatch.setattr(qnn_lookup_tables.QnnLookupTables, "apply", lambda self, ctx, op: None)
    without = xrelay.build(xrelay.parse_module(text), dict(values), cache=False)
    np.testing.assert_array_equal(with_tables.run(x=x, y=y)[0], without.run(x=x, y=y)[0])


CONCAT = """
func.func @main(%x: tensor<1x64x45x45x{t}> {{xrelay.name = "x"}}, %y: tensor<1x64x45x45x{t}> {{xrelay.name = "y"}}) -> tensor<1x128x45x45x{t}> {{
  %s1 = relay.constant dense<0.0200116672> : tensor<f32>
  %s2 = relay.constant dense<0.0211802367> : tensor<f32>
  %z1 = relay.constant dense<{z1}> : tensor<i32>
  %z2 = relay.constant dense<{z2}> : tensor<i32>
  %c = qnn.concatenate %x, %y, %s1, %s2, %z1, %z2, %s2, %z2 {{axis = 1 : i64}} : (tensor<1x64x45x45x{t}>, tensor<1x64x45x45x{t}>, tensor<f32>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x128x45x45x{t}>
  func.return %c : tensor<1x128x45x45x{t}>
}}"""


@needs_vbmi
@pytest.mark.parametrize("t", ["ui8", "i8"])
@pytest.mark.parametrize("threads", ["1", "2"])
def test_a_concatenations_requantized_input_is_a_table(monkeypatch, t, threads):
    """A concatenation's input with other parameters than its result goes through a
    table (SqueezeNet int8's fire modules), in planes of 2,025 bytes the threads share:
    the same bytes as qnn-legalize's requantization."""
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    text = CONCAT.format(t=t, z1=0 if t == "ui8" else -5, z2=3)
    info = np.iinfo(np.uint8 if t == "ui8" else np.int8)
    x, y = (rng.integers(info.min, info.max + 1, (1, 64, 45, 45)).astype(info.dtype) for _ in "xy")
    x.reshape(-1)[:256] = np.arange(info.min, info.max + 1)  # every value
    with_tables = xrelay.build(xrelay.parse_module(text), {}, cache=False)
    assert "xr_lut8" in ir_of(with_tables)
    monkeypatch.setattr(qnn_lookup_tables.QnnLookupTables, "apply", lambda self, ctx, op: None)
    without = xrelay.build(xrelay.parse_module(text), {}, cache=False)
    assert "xr_lut8" not in ir_of(without)
    (got,) = with_tables.run(x=x, y=y)
    (want,) = without.run(x=x, y=y)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got[:, 64:], y)
    assert not np.array_equal(got[:, :64], x)
