"""`build(profile=True)` and `xrelay profile`: every call of the compiled main is counted
once per run and attributed to a node and op type of the model; the profile build computes
what the normal build computes; the CLI prints the tables and writes a Chrome trace. (No
timing is asserted.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xrelay
from xrelay.tools import profile

EXAMPLE = Path(xrelay.__file__).parent / "examples" / "cnn.onnx"


def test_every_call_is_counted_and_attributed():
    module, params = xrelay.from_onnx(str(EXAMPLE))
    lib = xrelay.build(module, params, profile=True, cache=False)
    plain = xrelay.build(module, params, cache=False)
    x = np.random.default_rng(0).standard_normal(lib.signature.inputs[0].shape).astype(np.float32)
    np.testing.assert_array_equal(lib.run(x)[0], plain.run(x)[0])
    sites, wall = profile.measure(lib, {lib.signature.inputs[0].name: x}, runs=7)
    assert sites and wall > 0
    assert all(s["calls"] == 7 and s["ns"] > 0 for s in sites)
    nodes = profile.node_ops(module)
    known = [s for s in sites if s["node"] in nodes]
    assert {nodes[s["node"]][0] for s in known} >= {"relay.nn.conv2d", "relay.nn.dense"}
    rows = profile.summarize(sites, nodes)
    assert sum(r.calls for r in rows) == len(sites)
    conv = next(r for r in rows if r.name == "relay.nn.conv2d")
    conv_nodes = {
        xrelay.ir.location_str(op) for op in module.walk() if op.name == "relay.nn.conv2d"
    }
    assert conv.flops == sum(  # a node's FLOPs: its convolution and its bias add
        profile.op_flops(op)
        for op in module.walk()
        if op.name.startswith("relay.")
        and xrelay.ir.location_str(op) in conv_nodes
        and op.name != "relay.constant"
    )
    with pytest.raises(xrelay.Error, match="profile=True"):
        plain.profile()


def test_cli_tables_and_trace(tmp_path):
    trace = tmp_path / "trace.json"
    done = subprocess.run(
        [sys.executable, "-m", "xrelay.tools.cli", "profile", str(EXAMPLE), "--runs", "3",
         "--trace", str(trace)],
        check=False, capture_output=True, text=True,
        env={**os.environ, "XRELAY_CACHE_DIR": "off"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("op type") and "total of calls" in done.stdout
    assert "node GFLOP/s" in done.stdout
    events = json.loads(trace.read_text())["traceEvents"]
    assert events and all(e["ph"] == "X" and e["dur"] >= 0 for e in events)


def test_quantized_products_count_their_operations():
    """qnn.conv2d and qnn.dense count 2 operations per multiply-add as their float twins do
    (they counted one per output element, so an int8 model's convolutions showed 0.7
    GFLOP/s)."""
    from xrelay.tests.lowering.test_qnn_float_products import conv_module, dense_module

    conv = xrelay.parse_module(conv_module(8, 16, 2, 2, 3))
    (op,) = [o for o in conv.walk() if o.name == "qnn.conv2d"]
    assert profile.op_flops(op) == 2 * (16 * 4 * 4) * (4 * 3 * 3)
    dense = xrelay.parse_module(dense_module(3, 40, 5, "ui8", "i8", 0, "dense<0> : tensor<i32>"))
    (op,) = [o for o in dense.walk() if o.name == "qnn.dense"]
    assert profile.op_flops(op) == 2 * 3 * 5 * 40
