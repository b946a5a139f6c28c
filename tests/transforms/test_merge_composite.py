"""merge-composite from Python: tables, errors, and composites through the reference
executor and the JIT."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import xrelay
from xdsl.dialects import func
from xrelay.transforms.merge_composite import (
    CompositePattern,
    get_pattern_table,
    merge_composite,
    register_pattern_table,
)
from xrelay.transforms.pattern import PatternError, is_op, wildcard

CASES = Path(__file__).parents[1] / "filecheck" / "transforms" / "merge-composite.mlir"


def first_case() -> str:
    return CASES.read_text().split("// -----")[0]


def test_composite_module_runs_the_same() -> None:
    module = xrelay.parse_module(first_case())
    x = np.random.default_rng(0).standard_normal((1, 1, 4, 4)).astype(np.float32)
    (want,) = xrelay.create_executor("debug", module).run(x)
    merge_composite(module, get_pattern_table("example"))
    assert any(isinstance(op, func.CallOp) for op in module.walk())
    (ref,) = xrelay.create_executor("debug", module).run(x)
    (jit,) = xrelay.build(module).run(x)
    np.testing.assert_array_equal(ref, want)
    np.testing.assert_allclose(jit, want, rtol=1e-5, atol=1e-6)


def test_registered_table_and_errors() -> None:
    @register_pattern_table("test-relu")
    def table() -> list[CompositePattern]:
        return [CompositePattern("just_relu", is_op("nn.relu")(wildcard()))]

    module = xrelay.parse_module(first_case())
    merge_composite(module, get_pattern_table("test-relu"))
    names = [op.attributes.get("Composite") for op in module.body.block.ops]
    assert any(n is not None and n.data == "just_relu" for n in names)
    rejecting = CompositePattern("never", is_op("nn.relu")(wildcard()), check=lambda m: False)
    module = xrelay.parse_module(first_case())
    merge_composite(module, [rejecting])
    assert not any("Composite" in op.attributes for op in module.body.block.ops)
    with pytest.raises(xrelay.Error, match="no pattern table 'nope'"):
        get_pattern_table("nope")
    with pytest.raises(PatternError, match="needs a Pattern"):
        CompositePattern("bad", "nn.relu")
