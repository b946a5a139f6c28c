"""The compile worker (lowering/compile_worker.py): object code from another process, the
same as compiled here; a failing compile is an xrelay.Error, and the worker dies, not the
caller, when LLVM aborts; it is replaced after RECYCLE compiles and after a fork."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest
import xrelay
from xrelay.lowering import compile_worker
from xrelay.lowering.jit import resolve_target

MODULE = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}"""

IR = """
define void @f(ptr %p) {
  %v = load float, ptr %p
  %w = fadd float %v, 1.0
  store float %w, ptr %p
  ret void
}
"""


def test_worker_and_in_process_give_the_same_object_code():
    target = resolve_target(None)
    assert compile_worker.object_code(IR, target) == compile_worker.compile_here(IR, target)


def test_build_runs_through_the_worker(monkeypatch):
    x = np.arange(4, dtype=np.float32)
    for setting in ("1", "0"):
        monkeypatch.setenv("XRELAY_COMPILE_WORKER", setting)
        (got,) = xrelay.build(xrelay.parse_module(MODULE), cache=False).run(x=x)
        np.testing.assert_allclose(got, np.exp(x), rtol=1e-6)


def test_invalid_ir_is_an_error_and_the_worker_lives_on():
    target = resolve_target(None)
    with pytest.raises(compile_worker.CompileError, match="expected"):
        compile_worker.object_code("define void @f( {", target)
    assert compile_worker.object_code(IR, target)


def test_a_dead_worker_is_an_error_then_replaced():
    target = resolve_target(None)
    compile_worker.object_code(IR, target)
    worker = compile_worker._WORKERS[0]
    os.kill(worker.proc.pid, signal.SIGKILL)
    worker.proc.wait()
    # the next compile notices the dead process before sending and starts another
    assert compile_worker.object_code(IR, target)


def test_the_worker_is_replaced_every_recycle_compiles(monkeypatch):
    target = resolve_target(None)
    monkeypatch.setattr(compile_worker, "RECYCLE", 2)
    compile_worker.object_code(IR, target)
    pids = set()
    for _ in range(5):
        compile_worker.object_code(IR, target)
        pids.add(compile_worker._WORKERS[0].proc.pid)
    assert len(pids) >= 2


def test_an_abort_mid_compile_is_an_error_naming_the_exit(monkeypatch):
    """A worker that dies while compiling (as on an LLVM abort) gives a CompileError with
    how it ended; the caller survives."""
    target = resolve_target(None)
    compile_worker.object_code(IR, target)
    worker = compile_worker._WORKERS[0]
    real = compile_worker._read_exact

    def killed(stream, n):
        os.kill(worker.proc.pid, signal.SIGKILL)
        worker.proc.wait()
        return real(stream, n)

    monkeypatch.setattr(compile_worker, "_read_exact", killed)
    with pytest.raises(compile_worker.CompileError, match="signal 9"):
        compile_worker.object_code(IR, target)
    monkeypatch.setattr(compile_worker, "_read_exact", real)
    assert compile_worker.object_code(IR, target)


def test_idle_workers_are_stopped_and_started_again(monkeypatch):
    """A process that built its model once does not keep the LLVM workers (about 50 MB
    each besides libLLVM's pages); the next build starts them again."""
    import time

    monkeypatch.setenv("XRELAY_COMPILE_WORKER", "1")
    monkeypatch.setattr(compile_worker, "IDLE_SECONDS", 0.2)
    x = np.arange(4, dtype=np.float32)
    module = xrelay.parse_module(MODULE)
    lib = xrelay.build(module, {}, cache=False)
    started = [w.proc for w in compile_worker._WORKERS if w.proc is not None]
    assert started
    deadline = time.monotonic() + 10
    while any(w.proc is not None for w in compile_worker._WORKERS):
        assert time.monotonic() < deadline, "the idle workers were not stopped"
        time.sleep(0.05)
    assert all(p.poll() is not None for p in started)  # the processes have ended
    np.testing.assert_allclose(lib.run(x)[0], np.exp(x), rtol=1e-6)  # the library stays
    again = xrelay.build(xrelay.parse_module(MODULE.replace("exp", "tanh")), {}, cache=False)
    np.testing.assert_allclose(again.run(x)[0], np.tanh(x), rtol=1e-6)
