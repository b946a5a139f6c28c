"""The onnx package's model suites through from_onnx + the reference (numpy) executor,
compared with the shipped expected outputs (rtol 1e-3, atol 1e-5).

Expected failures live in XFAIL with a reason; a case that starts passing fails the run
(strict xfail), so the table stays true.
"""

from __future__ import annotations

import onnx
import pytest
import xrelay

from .conformance import compare
from .data_cases import DataCase, collect

SUITES = ["pytorch-converted", "pytorch-operator", "light"]

# case name -> reason
XFAIL: dict[str, str] = {}

CASES = [
    pytest.param(
        case,
        id=f"{case.suite}/{case.name}",
        marks=[pytest.mark.xfail(reason=XFAIL[case.name], strict=True)] if case.name in XFAIL else [],
    )
    for suite in SUITES
    for case in collect(suite)
]


def run_reference(case: DataCase) -> None:
    module, params = xrelay.from_onnx(onnx.load(str(case.model_path)))
    executor = xrelay.create_executor("debug", module, params)
    for inputs, expected in case.data_sets():
        outputs = executor.run(*inputs)
        compare(outputs, expected, rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("case", CASES)
def test_reference_matches_expected(case: DataCase):
    run_reference(case)


def test_suites_are_all_there():
    counts = {suite: len(collect(suite)) for suite in SUITES}
    assert counts == {"pytorch-converted": 82, "pytorch-operator": 35, "light": 9}
