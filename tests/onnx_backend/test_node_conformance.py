"""The onnx node cases through the JIT (see conformance.py): no wrong answer, no crash,
and every outcome as the expected-outcome table says. The summary line is printed at the
end of the pytest run."""

from __future__ import annotations

import conformance
import pytest
from onnx.backend.test.case.node import collect_testcases


@pytest.mark.slow
def test_node_cases_match_the_table():
    names = [c.name for c in collect_testcases(None)]
    results = conformance.run_all(names, jobs=2, timeout=120, executor="jit")
    conformance.SUMMARY_LINES.append(f"ONNX node conformance (JIT): {conformance.summary(results)}")
    problems = conformance.check_against_table(results, conformance.read_table())
    assert not problems, "\n".join(problems[:50])
