"""plan-buffers: temporaries share arena bytes only when their lifetimes are disjoint, and
compiled models give the reference's results run after run, also from several threads."""

from __future__ import annotations

import threading

import numpy as np
import xrelay
from xdsl.dialects import memref
from xrelay.dialects import relay
from xrelay.lowering.pipeline import lower
from xrelay.lowering.plan_buffers import place

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
