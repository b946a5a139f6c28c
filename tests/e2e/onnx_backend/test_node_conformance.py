"""The onnx node cases through the JIT (see conformance.py): no wrong answer, no crash,
and every outcome as the expected-outcome table says. The summary line is printed at the
end of the pytest run (tests/conftest.py).

The run is the documented command (`python -m xrelay.tests.e2e.onnx_backend.conformance`)
in its own process, so that a crash in a worker cannot take pytest down with it."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

SUMMARY = re.compile(r"^node cases \(jit, as a user runs them\): (.*) in \d+ s$", re.MULTILINE)


@pytest.mark.slow
def test_node_cases_match_the_table(record_property):
    argv = [sys.executable, "-m", "xrelay.tests.e2e.onnx_backend.conformance", "--jobs", "2", "--timeout", "120"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    summary = SUMMARY.search(done.stdout)
    assert summary is not None, done.stdout + done.stderr
    # printed at the end of the run by tests/conftest.py (also from an xdist worker)
    record_property(
        "summary", f"ONNX node conformance (JIT, as a user runs them): {summary.group(1)}"
    )
    problems = done.stdout[summary.end() :].strip().splitlines()
    assert done.returncode == 0 and not problems, "\n".join(problems[:50]) + done.stderr[-2000:]
