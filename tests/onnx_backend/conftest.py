import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def pytest_terminal_summary(terminalreporter):
    import conformance

    for line in conformance.SUMMARY_LINES:
        terminalreporter.write_line(line)
