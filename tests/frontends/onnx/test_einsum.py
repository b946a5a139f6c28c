"""ONNX Einsum through the JIT against numpy.einsum on equations beyond the node suite."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from onnx import TensorProto, helper

CASES = [
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk", [(2, 1, 3, 4), (3, 4, 2)]),  # implicit output, broadcast ellipsis
    ("i,j->ij", [(3,), (4,)]),
    ("ij,ij->", [(3, 4), (3, 4)]),
    ("abc,cd,b->da", [(2, 3, 4), (4, 5), (3,)]),
    ("ji", [(3, 4)]),  # implicit: sorted indices, a transpose
]


@pytest.mark.parametrize("equation, shapes", CASES, ids=[c[0] for c in CASES])
def test_einsum_matches_numpy(equation, shapes):
    names = [f"x{i}" for i in range(len(shapes))]
    graph = helper.make_graph(
        [helper.make_node("Einsum", names, ["y"], equation=equation)],
        "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in zip(names, shapes)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    module, params = xrelay.from_onnx(model)
    (got,) = xrelay.build(module, params).run(*arrays)
    np.testing.assert_allclose(got, np.einsum(equation, *arrays), rtol=1e-5, atol=1e-5)
