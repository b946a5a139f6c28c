"""plan-buffers: temporaries share arena bytes only when their lifetimes are disjoint, and
compiled models give the reference's results run after run, also from several threads."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import xrelay
from xdsl.dialects import func, memref
from xrelay.dialects import relay
from xrelay.lowering.pipeline import lower
from xrelay.lowering.plan_buffers import place
from xrelay.lowering.relay_to_linalg.tensor import CONCAT_ATTR

from .jit_check import random_inputs
from .test_kernels import module

F = "float32"


def test_disjoint_lifetimes_share_bytes():
    # (size, first, last): 0 and 2 never live together, 1 overlaps both
    offsets, total = place([(256, 0, 1), (128, 1, 2), (256, 2, 3)])
    assert offsets[0] == offsets[2] == 0
    assert offsets[1] == 256
    assert total == 384


def test_overlapping_lifetimes_never_share():
    spans = [(64 * (i + 1), i, i + 2) for i in range(6)]
    offsets, total = place(spans)
    for i, (size, first, last) in enumerate(spans):
        for j, (size2, first2, last2) in enumerate(spans):
            if i < j and first <= last2 and first2 <= last:
                assert offsets[i] + size <= offsets[j] or offsets[j] + size2 <= offsets[i]
    assert total <= sum(s for s, _, _ in spans)


def chain(x, r, rows=4):
    """exp -> add -> relu -> multiply, with a reshape view in between: six temporaries."""
    a = relay.ExpOp(x)
    b = relay.AddOp(a, r)
    c = relay.ReluOp(b)
    v = relay.ReshapeOp(c, newshape=(2 * rows, 150))
    d = relay.ExpOp(v)
    e = relay.ReshapeOp(d, newshape=(rows, 300))
    return [a, b, c, v, d, e, relay.MultiplyOp(e, a)]


def test_a_chain_reuses_its_buffers_and_matches_the_reference():
    mod = module([(4, 300), (4, 300)], 2, chain)
    work = mod.clone()
    lower(work, stop_after="plan-buffers")
    (arena,) = [op for op in work.ops if isinstance(op, memref.GlobalOp)]
    assert arena.type.get_shape()[0] < 4 * (4 * 300 * 4)  # fewer slots than temporaries
    lib = xrelay.build(mod)
    for seed in range(3):
        inputs = random_inputs([((4, 300), F)] * 2, seed)
        want = xrelay.create_executor("debug", mod).run(*inputs)
        np.testing.assert_allclose(lib.run(*inputs)[0], want[0], rtol=1e-5)


def test_runs_from_several_threads_do_not_mix():
    mod = module([(64, 300), (64, 300)], 2, lambda x, r: chain(x, r, rows=64))
    lib = xrelay.build(mod)
    cases = [random_inputs([((64, 300), F)] * 2, seed) for seed in range(4)]
    want = [xrelay.create_executor("debug", mod).run(*c)[0] for c in cases]
    got: dict[int, list[np.ndarray]] = {}

    def work(k: int) -> None:
        got[k] = [lib.run(*cases[k])[0] for _ in range(30)]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        for result in got[k]:
            np.testing.assert_allclose(result, want[k], rtol=1e-5)


def _concat_kernels_left(mod) -> int:
    """How many calls of a concatenation kernel the lowered module still makes."""
    work = mod.clone()
    lower(work, stop_after="plan-buffers")
    kernels = {
        f.sym_name.data
        for f in work.ops
        if isinstance(f, func.FuncOp) and any(CONCAT_ATTR in op.attributes for op in f.walk())
    }
    return sum(
        1
        for op in work.walk()
        if isinstance(op, func.CallOp) and op.callee.string_value() in kernels
    )


def _check_concat(shapes, body, left: int) -> None:
    mod = module(shapes, len(shapes), body)
    assert _concat_kernels_left(mod) == left
    lib = xrelay.build(mod, cache=False)
    for seed in range(2):
        inputs = random_inputs([(s, F) for s in shapes], seed)
        want = xrelay.create_executor("debug", mod).run(*inputs)
        np.testing.assert_allclose(lib.run(*inputs)[0], want[0], rtol=1e-5, atol=1e-6)


def dense_block(x):
    """DenseNet's pattern: each layer concatenates all earlier features with its own,
    nested; a feature also read after the block (lives past the concatenations)."""
    features = relay.NegativeOp(x)
    ops, first = [features], None
    for k in range(3):
        new = relay.TanhOp(relay.MultiplyOp(features, features)) if k else relay.ExpOp(x)
        first = first or new
        cat = relay.ConcatenateOp(features, new, axis=1)
        ops += [*([new.operands[0].owner] if k else []), new, cat]
        features = cat
    head = relay.SumOp(features, axis=[1])
    tail = relay.SumOp(first, axis=[1])
    return [*ops, head, tail, relay.AddOp(head, tail)]


def test_concatenation_in_place_nested_and_unaligned():
    # every slice 3 * 5 * 7 floats: offsets not multiples of 64 bytes; no copy left
    _check_concat([(1, 3, 5, 7)], dense_block, left=0)


@pytest.mark.parametrize(
    "parts", [lambda x, a: (a, a), lambda x, a: (x, a)], ids=["one-buffer-twice", "graph-input"]
)
def test_concatenations_that_copy(parts):
    def body(x):
        a = relay.ExpOp(x)
        cat = relay.ConcatenateOp(*parts(x, a), axis=1)
        return [a, cat, relay.SumOp(cat, axis=[1])]

    _check_concat([(1, 3, 5, 7)], body, left=1)


def test_concatenation_not_contiguous_per_input_copies():
    # batch 2 along axis 1, or the last axis: an input is not one run of the result
    def body(axis):
        def make(x):
            a, b = relay.ExpOp(x), relay.TanhOp(x)
            cat = relay.ConcatenateOp(a, b, axis=axis)
            return [a, b, cat, relay.SumOp(cat, axis=[0])]

        return make

    _check_concat([(2, 3, 5, 7)], body(1), left=1)
    _check_concat([(1, 3, 5, 7)], body(3), left=1)
    _check_concat([(1, 3, 5, 7)], body(0), left=0)  # axis 0 of a batch of 1: in place
