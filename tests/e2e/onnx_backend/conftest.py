import re
from collections import defaultdict

from . import conformance

# data-suite outcomes of test_jit_suites.py: suite -> {case: passed}
DATA_SUITES: dict[str, dict[str, bool]] = defaultdict(dict)
_CASE = re.compile(r"test_jit_suites\.py::\w+\[([\w-]+)/([^\]]+)\]")


def pytest_runtest_logreport(report):
    match = _CASE.search(report.nodeid)
    if match is None or report.when != "call":
        return
    suite, case = match.groups()
    DATA_SUITES[suite][case] = report.passed and not hasattr(report, "wasxfail")


def pytest_terminal_summary(terminalreporter):
    for line in conformance.SUMMARY_LINES:
        terminalreporter.write_line(line)
    if DATA_SUITES:
        counts = ", ".join(
            f"{suite} {sum(cases.values())}/{len(cases)}" for suite, cases in sorted(DATA_SUITES.items())
        )
        terminalreporter.write_line(f"ONNX data suites (JIT, passed/run): {counts}")
