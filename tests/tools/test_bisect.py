"""`xrelay bisect`: no divergence on a correct build; a deliberately wrong lowering of one
op is found and that node named."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xrelay
from xrelay.dialects import relay
from xrelay.lowering import relay_to_linalg, select_kernels
from xrelay.tools.bisect import bisect

EXAMPLE = Path(xrelay.__file__).parent / "examples" / "cnn.onnx"


def inputs_of(module, params):
    lib = xrelay.build(module, params, cache=False)
    rng = np.random.default_rng(0)
    return {a.name: rng.standard_normal(a.shape).astype(a.dtype) for a in lib.signature.inputs}


def negate(e, op):
    """A wrong lowering: -x instead of the op's result."""
    t = op.results[0].type
    return e.map(
        [op.operands[0]], t.get_shape(), t.element_type, lambda b: b.unary("neg", b.args[0])
    )


def test_no_divergence_on_a_correct_build():
    module, params = xrelay.from_onnx(str(EXAMPLE))
    report = bisect(module, params, inputs_of(module, params))
    assert report.first is None and report.checked > 5


@pytest.mark.parametrize("op", [relay.SoftmaxOp, relay.AddOp])
def test_an_injected_fault_is_named(op, monkeypatch):
    module, params = xrelay.from_onnx(str(EXAMPLE))
    inputs = inputs_of(module, params)
    monkeypatch.setitem(relay_to_linalg.LOWERINGS, op, negate)
    # the fault is in the linalg lowering: the softmax on it, not on the row kernel
    monkeypatch.setattr(select_kernels, "ROWS", False)
    report = bisect(module, params, inputs)
    assert report.first is not None
    assert report.first.op.name == op.name
    faulty = next(o for o in module.walk() if isinstance(o, op))
    assert report.first.location == xrelay.ir.location_str(faulty)
    assert "diverges" in str(report.first) and report.first.max_abs > 0


def test_cli_exit_status():
    done = subprocess.run(
        [sys.executable, "-m", "xrelay.tools.cli", "bisect", str(EXAMPLE)],
        check=False, capture_output=True, text=True,
        env={**os.environ, "XRELAY_CACHE_DIR": "off"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "no op diverges" in done.stdout
