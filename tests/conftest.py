"""Shared pytest fixtures and helpers.

The compile cache is off for the suite (tests that patch the pipeline must compile what
they patched; tests/lowering/test_artifact.py turns it on in a temporary folder), also
for the subprocesses tests start.

Summary lines at the end of the run: a test records one with
`record_property("summary", line)` (the ONNX node conformance count, the fuzzing tier),
and the outcomes of the ONNX data suites are counted from their reports. Both arrive
here through the test reports, so they print under pytest-xdist too (this file is the
one conftest the controlling process loads)."""

from __future__ import annotations

import os
import re
from collections import defaultdict

import pytest
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, BlockArgument
from xrelay.dialects.dtypes import tensor_type

os.environ["XRELAY_CACHE_DIR"] = "off"


def make_args(*specs: tuple[tuple[int, ...], str]) -> list[BlockArgument]:
    """Block arguments of the given (shape, dtype) specs, to feed op constructors."""
    types: list[TensorType] = [tensor_type(shape, dtype) for shape, dtype in specs]
    return list(Block(arg_types=types).args)


@pytest.fixture
def args():
    return make_args


SUMMARY_LINES: list[str] = []
# data-suite outcomes of tests/e2e/onnx_backend/test_jit_suites.py: suite -> {case: passed}
DATA_SUITES: dict[str, dict[str, bool]] = defaultdict(dict)
_CASE = re.compile(r"test_jit_suites\.py::\w+\[([\w-]+)/([^\]]+)\]")


def pytest_runtest_logreport(report):
    if report.when != "call":
        return
    SUMMARY_LINES.extend(value for name, value in report.user_properties if name == "summary")
    match = _CASE.search(report.nodeid)
    if match is not None:
        suite, case = match.groups()
        DATA_SUITES[suite][case] = report.passed and not hasattr(report, "wasxfail")


def pytest_terminal_summary(terminalreporter):
    for line in SUMMARY_LINES:
        terminalreporter.write_line(line)
    if DATA_SUITES:
        counts = ", ".join(
            f"{suite} {sum(cases.values())}/{len(cases)}"
            for suite, cases in sorted(DATA_SUITES.items())
        )
        terminalreporter.write_line(f"ONNX data suites (JIT, passed/run): {counts}")
