"""build leaves the objects alive when it starts out of the garbage collector's passes
while it compiles a large module (lowering/build.py, frozen_heap), and gives the heap back
as it found it; small modules build with the heap as it is."""

from __future__ import annotations

import gc
import importlib

import numpy as np
import xrelay

MODULE = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}"""


# xrelay.lowering.build is the function; the module is imported only when something asks
BUILD = importlib.import_module("xrelay.lowering.build")


def _freeze_counts(monkeypatch):
    seen = []
    real = xrelay.lowering.jit.Library.__init__

    def init(self, *args, **kwargs):
        seen.append(gc.get_freeze_count())
        real(self, *args, **kwargs)

    monkeypatch.setattr(xrelay.lowering.jit.Library, "__init__", init)
    return seen


def test_a_small_module_builds_with_the_heap_as_it_is(monkeypatch):
    seen = _freeze_counts(monkeypatch)
    xrelay.build(xrelay.parse_module(MODULE), cache=False)
    assert seen == [0]


def test_build_freezes_the_heap_while_it_runs_and_unfreezes_it(monkeypatch):
    monkeypatch.setattr(BUILD, "FREEZE_MIN_OPS", 1)
    seen = _freeze_counts(monkeypatch)
    before = gc.get_freeze_count()
    lib = xrelay.build(xrelay.parse_module(MODULE), cache=False)
    assert seen and seen[0] > 0
    assert gc.get_freeze_count() == before
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_allclose(lib.run(x=x)[0], np.exp(x), rtol=1e-6)


def test_a_callers_own_freeze_is_kept(monkeypatch):
    monkeypatch.setattr(BUILD, "FREEZE_MIN_OPS", 1)
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        xrelay.build(xrelay.parse_module(MODULE), cache=False)
        # not unfrozen (frozen objects that died since leave the count)
        assert gc.get_freeze_count() > frozen // 2
    finally:
        gc.unfreeze()
