"""parallel-loops: kernels split over the thread pool give the reference's results, with one,
two and three threads, whatever loop the split falls on (outer, behind a reduction, behind
size-1 loops)."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from xdsl.dialects import func
from xrelay.dialects import relay
from xrelay.lowering import parallel_loops
from xrelay.lowering.kernels.parallel import parallel_specs
from xrelay.lowering.pipeline import lower

from .jit_check import random_inputs
from .test_kernels import module

F = "float32"

CASES = {
    # name: (input shapes, body)
    "broadcast_add": ([(1, 6, 5, 7), (6, 1, 1)], lambda x, y: [relay.AddOp(x, y)]),
    "softmax": ([(3, 4, 9)], lambda x: [relay.SoftmaxOp(x, axis=2)]),
    # the first loop is the reduction: the split falls on the kept axis behind it
    "sum_axis0": ([(11, 13)], lambda x: [relay.SumOp(x, axis=(0,))]),
    "transpose": ([(1, 5, 7, 3)], lambda x: [relay.TransposeOp(x, axes=(0, 3, 1, 2))]),
    "max_pool": (
        [(1, 3, 9, 9)],
        lambda x: [relay.MaxPool2DOp(x, pool_size=(3, 3), strides=(2, 2), padding=(1, 1, 1, 1))],
    ),
    "concatenate": (
        [(2, 3, 4), (2, 5, 4)],
        lambda x, y: [relay.ConcatenateOp(x, y, axis=1)],
    ),
}


def split_kernels(mod, collapse: bool = True) -> dict:
    work = mod.clone()
    lower(work, stop_after="parallel-loops", options={"collapse-loops": {"enabled": collapse}})
    return parallel_specs(work)


@pytest.mark.parametrize("name", list(CASES))
def test_split_kernels_match_the_reference(name, monkeypatch):
    monkeypatch.setattr(parallel_loops, "MIN_ITERATIONS", 1)
    shapes, body = CASES[name]
    mod = module(shapes, len(shapes), body)
    assert split_kernels(mod), "no kernel was split"
    # new inputs for every run: a range no thread wrote must not pass by holding the values
    # of an earlier run (freed buffers come back from malloc)
    for seed, threads in enumerate(("1", "2", "3")):
        inputs = random_inputs([(s, F) for s in shapes], seed)
        want = xrelay.create_executor("debug", mod).run(*inputs)
        monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
        got = xrelay.build(mod).run(*inputs)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-6)


def test_small_kernels_stay_serial():
    mod = module([(4, 8)], 1, lambda x: [relay.ExpOp(x)])
    assert split_kernels(mod) == {}


def test_split_on_the_first_loop_longer_than_one(monkeypatch):
    monkeypatch.setattr(parallel_loops, "MIN_ITERATIONS", 1)
    mod = module([(1, 1, 6, 5)], 1, lambda x: [relay.ExpOp(x)])
    # (with its loops apart: collapse-loops makes them one of 30)
    body, extent, types = split_kernels(mod, collapse=False)["k0"]  # k1 copies to the result
    assert (extent, len(types)) == (6, 2)
    assert split_kernels(mod)["k0"][1] == 30
    work = mod.clone()
    lower(work, stop_after="parallel-loops")
    names = {op.sym_name.data for op in work.ops if isinstance(op, func.FuncOp)}
    assert body in names


def test_a_short_outer_loop_gives_way_to_a_long_one(monkeypatch):
    """[1, 3, 40, 40]: 3 channels split 2:1 over two threads; the 40 rows split evenly."""
    monkeypatch.setattr(parallel_loops, "MIN_ITERATIONS", 1)
    mod = module([(1, 3, 40, 40)], 1, lambda x: [relay.ExpOp(x)])
    assert split_kernels(mod, collapse=False)["k0"][1] == 40


def test_a_run_time_extent_splits_at_the_size_main_is_given(monkeypatch):
    """Dynamic shapes: the split loop runs to an argument's run-time size; every thread
    count gives the serial answer, at several sizes, from one build."""
    monkeypatch.setattr(parallel_loops, "MIN_ITERATIONS", 1)
    t = 'tensor<?x5xf32, #relay.dims<"n">>'
    text = f"""
    func.func @main(%x: {t}) -> {t} {{
      %0 = relay.exp %x : ({t}) -> {t}
      func.return %0 : {t}
    }}
    """
    mod = xrelay.parse_module(text)
    _, extent, types = split_kernels(mod)["k0"]
    assert extent == (0, 0, 5)  # argument 0's axis 0, 5 static iterations per row
    for threads in ("1", "2", "3"):
        monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
        lib = xrelay.build(mod, cache=False)
        assert lib.native is not None
        for n in (1, 2, 7):
            x = np.random.default_rng(n).standard_normal((n, 5)).astype(np.float32)
            np.testing.assert_allclose(lib.run(x=x)[0], np.exp(x), rtol=1e-6)
