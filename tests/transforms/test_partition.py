"""annotate-target -> merge-compiler-regions -> partition-graph, and external codegen linked
into the JIT: the example "numpy" target and a target registered by the test."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import xrelay
from xdsl.dialects import func
from xrelay.dialects import relay
from xrelay.transforms.annotate_target import annotate_target
from xrelay.transforms.merge_compiler_regions import merge_compiler_regions
from xrelay.transforms.numpy_target import codegen as numpy_codegen
from xrelay.transforms.partition_graph import partition_graph
from xrelay.transforms.targets import Target, get_target, register_target

CASE = Path(__file__).parents[1] / "filecheck" / "transforms" / "partition-graph.mlir"


def partition(module, targets):
    return partition_graph(merge_compiler_regions(annotate_target(module, targets)))


def inputs():
    rng = np.random.default_rng(0)
    return (
        rng.standard_normal((1, 2, 4, 4)).astype(np.float32),
        rng.standard_normal((2, 2, 1, 1)).astype(np.float32),
    )


def test_numpy_target_regions_run_through_their_codegen() -> None:
    calls = []

    def counting_codegen(fn):
        code = numpy_codegen(fn)
        calls.append(fn.sym_name.data)
        return code

    register_target(Target("counted", get_target("numpy").supports, counting_codegen))
    module = xrelay.parse_module(CASE.read_text())
    (want,) = xrelay.create_executor("debug", module).run(*inputs())
    partition(module, ["counted"])
    compilers = [
        op.attributes["Compiler"].data
        for op in module.body.block.ops
        if "Compiler" in op.attributes
    ]
    assert compilers == ["counted", "counted"]
    lib = xrelay.build(module)
    assert calls == ["counted_main_0", "counted_main_1"] and len(lib.externals) == 2
    (got,) = lib.run(*inputs())
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_target_without_codegen_is_compiled_with_the_rest() -> None:
    register_target(Target("plain", lambda op: isinstance(op, relay.ReluOp | relay.ExpOp)))
    module = xrelay.parse_module(CASE.read_text())
    (want,) = xrelay.create_executor("debug", module).run(*inputs())
    partition(module, ["plain"])
    assert any(isinstance(op, func.CallOp) for op in module.walk())
    lib = xrelay.build(module)
    assert lib.externals == {}
    np.testing.assert_allclose(lib.run(*inputs())[0], want, rtol=1e-5, atol=1e-6)


def test_partitioned_pytorch_attention_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    from ..frontends.pytorch.torch_zoo import ZOO, torch_outputs

    model, example = ZOO["attention"].build()
    module, params = xrelay.from_exported_program(torch.export.export(model, example))
    partition(module, ["numpy"])
    regions = [op for op in module.body.block.ops if "Compiler" in op.attributes]
    assert regions, "the attention block has elementwise/softmax regions"
    (got,) = xrelay.build(module, params=params).run(*[x.numpy() for x in example])
    (want,) = torch_outputs(model, example)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-4, atol=1e-5)


def test_unknown_target_is_an_error() -> None:
    module = xrelay.parse_module(CASE.read_text())
    with pytest.raises(xrelay.Error, match="no target 'nope'"):
        annotate_target(module, ["nope"])
