"""Repeated builds do not grow the process: 300 import+build+run cycles of a small model,
with LLVM's optimization pipeline left out (llvmlite 0.50 leaks about 65 KB per run of it,
inside its C++ layer: see `jit.optimize`), grow RSS by less than 3 MB after a warm-up."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import xrelay
from onnx import TensorProto, helper
from xrelay.lowering import jit


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


@pytest.mark.slow
def test_builds_do_not_leak(monkeypatch):
    monkeypatch.setattr(jit, "optimize", lambda module, machine: None)
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Gather", ["r", "i"], ["y"])],
        "m",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3]),
            helper.make_tensor_value_info("i", TensorProto.INT64, [2]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    x, i = np.ones((4, 3), np.float32), np.array([0, 3])

    def cycle() -> None:
        lib = xrelay.build(*xrelay.from_onnx(model), cache=False)
        assert lib.run(x=x, i=i)[0].shape == (2, 3)

    for _ in range(50):
        cycle()
    gc.collect()
    before = _rss_mb()
    for _ in range(300):
        cycle()
    gc.collect()
    assert _rss_mb() - before < 3.0
