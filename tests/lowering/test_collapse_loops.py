"""collapse-loops: adjacent loops every operand indexes together become one loop, on views
of the operands; what cannot be merged so is left alone and computes the same values."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from xdsl.dialects.linalg import ops as linalg
from xrelay.dialects import relay
from xrelay.lowering.context import BuildContext
from xrelay.lowering.pipeline import lower

from .jit_check import check_jit, module_of


def generic_maps(specs, body, stage: str = "collapse-loops") -> list[list[str]]:
    module = module_of(specs, body)
    lower(module, ctx=BuildContext(params={}), stop_after=stage)
    return [
        [str(m.data) for m in op.indexing_maps.data]
        for op in module.walk()
        if isinstance(op, linalg.GenericOp)
    ]


def test_a_per_channel_chain_on_7x7_runs_one_loop_per_channel():
    """[1, 64, 7, 7] * [64, 1, 1], relu: the batch and channel loops, then one of 49."""

    def body(x, s):
        m = relay.MultiplyOp(x, s)
        return [m, relay.ReluOp(m.result)]

    specs = [((1, 64, 7, 7), "float32"), ((64, 1, 1), "float32")]
    maps = generic_maps(specs, body)
    assert maps == [
        [
            "(d0, d1, d2) -> (d0, d1, d2)",
            "(d0, d1, d2) -> (d1, 0, 0)",
            "(d0, d1, d2) -> (d0, d1, d2)",
        ]
    ]
    check_jit(specs, body)


def test_elementwise_on_contiguous_operands_is_one_loop():
    def body(x, y):
        return relay.AddOp(x, y)

    specs = [((2, 3, 5, 7), "float32"), ((2, 3, 5, 7), "float32")]
    assert generic_maps(specs, body) == [["(d0) -> (d0)"] * 3]
    check_jit(specs, body)


def test_a_transpose_keeps_its_loops_apart():
    """A permuted operand reads d1 before d0: those two stay separate loops."""

    def body(x):
        t = relay.TransposeOp(x, axes=[0, 2, 1])
        return [t, relay.ExpOp(t.result)]

    specs = [((2, 6, 5), "float32")]
    for maps in generic_maps(specs, body):
        assert all(m.startswith("(d0, d1, d2)") for m in maps) or len(maps[0].split(",")) >= 2
    check_jit(specs, body)


@pytest.mark.parametrize("padding", [[0, 0, 1, 1], [0, 0, 1, 2]])
def test_a_pad_at_the_end_only_is_not_merged(padding):
    """The pad's interior copy reads [1, C, 6, 6] and writes the top-left corner of
    [1, C, 7, 7] through the identity map: merged, its rows would be written 36 values
    apart instead of 49 (Inception v1's last average pool came out 13 % off)."""

    def body(x):
        return relay.AvgPool2DOp(x, pool_size=[7, 7], strides=[1, 1], padding=padding)

    check_jit([((1, 16, 6, 6), "float32")], body)
    x = np.random.default_rng(1).standard_normal((1, 16, 6, 6)).astype(np.float32)
    module = module_of([((1, 16, 6, 6), "float32")], body)
    got = xrelay.build(module).run(x)[0]
    want = xrelay.create_executor("debug", module).run(x)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
