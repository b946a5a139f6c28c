"""The fuzzing tier in CI: 1,000 seeded hostile cases (tests/fuzz/run.py), each in its own
worker with a time limit, must give no untyped exception, crash, hang or wrong answer.
The run is the documented command in its own process; its counts join the summary."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

SUMMARY = re.compile(r"^fuzz cases \(seed \d+\): (.*) in \d+ s$", re.MULTILINE)


@pytest.mark.slow
def test_a_thousand_hostile_cases_give_typed_errors_or_right_answers(record_property):
    argv = [sys.executable, "-m", "xrelay.tests.fuzz.run", "--cases", "1000", "--jobs", "2"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=1800)
    summary = SUMMARY.search(done.stdout)
    assert summary is not None, done.stdout[-3000:] + done.stderr[-3000:]
    record_property("summary", f"fuzzing tier (1,000 cases): {summary.group(1)}")
    failures = done.stdout[summary.end() :].strip()
    assert done.returncode == 0 and not failures, failures[:5000]


def test_a_mutated_model_with_a_dynamic_input_is_run_on_sizes_the_harness_picks():
    """Found by a 3,000-case run (seed 11): a byte mutation that made an input's dimension
    dynamic gave `untyped` from the harness itself (`int` of the symbol), not from xrelay."""
    from onnx import TensorProto, helper

    from .run import run_xrelay

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 5])
    y = helper.make_tensor_value_info("y", TensorProto.INT64, None)
    node = helper.make_node("ArgMax", ["x"], ["y"], axis=1, keepdims=0)
    graph = helper.make_graph([node], "g", [x], [y])
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    outcome, (feeds, got) = run_xrelay(data.SerializeToString(), None)
    assert outcome == "result" and feeds["x"].shape == (2, 5)
    assert (got[0] == feeds["x"].argmax(axis=1)).all()
