"""The GEMM runtime compiled while the passes run (lowering/runtime_ahead.py,
compile_worker.compile_ahead): the part it compiles is the build's own (the build compiles
no large part itself, or only the pixel-major product's with the wrappers that inline it),
a wrong guess or a failure ahead only costs time, object_codes waits for a text compiled
ahead instead of compiling it again, a forked child does not wait for its parent's
requests, and a worker freed mid-build joins the build's compile."""

from __future__ import annotations

import importlib
import os
import threading
import time

import numpy as np
import pytest
import xrelay
from xrelay.lowering import compile_worker, runtime_ahead
from xrelay.lowering.context import BuildContext
from xrelay.lowering.jit import resolve_target
from xrelay.lowering.kernels.wrappers import kernel_specs
from xrelay.lowering.pipeline import lower
from xrelay.lowering.prepack_weights import packed_specs
from xrelay.signature import FunctionSignature, main_function

CONV = """
func.func @main(%x: tensor<1x5x16x16xf32>, %w1: tensor<8x5x3x3xf32>) -> tensor<1x8x16x16xf32> {
  %0 = relay.nn.conv2d %x, %w1 {padding = array<i64: 1, 1, 1, 1>}
      : (tensor<1x5x16x16xf32>, tensor<8x5x3x3xf32>) -> tensor<1x8x16x16xf32>
  %1 = relay.nn.relu %0 : (tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  func.return %1 : tensor<1x8x16x16xf32>
}"""

# a pointwise convolution of few pixels (pixel-major with 16-float vectors) after a
# direct 3 x 3 one
POINTWISE = """
func.func @main(%x: tensor<1x256x13x13xf32> {xrelay.name = "x"},
                %w1: tensor<64x256x3x3xf32> {xrelay.name = "w1", xrelay.param},
                %w2: tensor<256x64x1x1xf32> {xrelay.name = "w2", xrelay.param})
    -> tensor<1x256x13x13xf32> {
  %0 = relay.nn.conv2d %x, %w1 {padding = array<i64: 1, 1, 1, 1>}
      : (tensor<1x256x13x13xf32>, tensor<64x256x3x3xf32>) -> tensor<1x64x13x13xf32>
  %1 = relay.nn.relu %0 : (tensor<1x64x13x13xf32>) -> tensor<1x64x13x13xf32>
  %2 = relay.nn.conv2d %1, %w2
      : (tensor<1x64x13x13xf32>, tensor<256x64x1x1xf32>) -> tensor<1x256x13x13xf32>
  func.return %2 : tensor<1x256x13x13xf32>
}"""

DENSE = """
func.func @main(%x: tensor<4x64xf32>, %w: tensor<32x64xf32>) -> tensor<4x32xf32> {
  %0 = relay.nn.dense %x, %w : (tensor<4x64xf32>, tensor<32x64xf32>) -> tensor<4x32xf32>
  %1 = relay.sigmoid %0 : (tensor<4x32xf32>) -> tensor<4x32xf32>
  func.return %1 : tensor<4x32xf32>
}"""

# the 8-bit GEMM (its weight a parameter)
QDENSE = """
func.func @main(%x: tensor<4x64xui8> {xrelay.name = "x"},
                %w: tensor<64x32xi8> {xrelay.name = "w", xrelay.param}) -> tensor<4x32xi32> {
  %zx = relay.constant dense<3> : tensor<i32>
  %zw = relay.constant dense<0> : tensor<i32>
  %s = relay.constant dense<0.5> : tensor<f32>
  %wt = relay.transpose %w {axes = array<i64: 1, 0>} : (tensor<64x32xi8>) -> tensor<32x64xi8>
  %y = qnn.dense %x, %wt, %zx, %zw, %s, %s : (tensor<4x64xui8>, tensor<32x64xi8>, tensor<i32>,
      tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<4x32xi32>
  func.return %y : tensor<4x32xi32>
}"""


def _inputs(module):
    """(run-time inputs, parameters) of `module`, seeded."""
    rng = np.random.default_rng(0)
    signature = FunctionSignature.of(main_function(xrelay.parse_module(module)))
    inputs, params = {}, {}
    for arg in signature.args:
        dtype = np.dtype(arg.dtype)
        if dtype.kind in "iu":
            value = rng.integers(0 if dtype.kind == "u" else -20, 20, arg.shape).astype(dtype)
        else:
            value = rng.standard_normal(arg.shape).astype(np.float32)
        (params if arg.is_param else inputs)[arg.name] = value
    return inputs, params


def _build_and_check(module):
    """Build `module` and compare its outputs with a build without the runtime GEMM."""
    inputs, params = _inputs(module)
    lib = xrelay.build(xrelay.parse_module(module), params, cache=False)
    ref = xrelay.build(xrelay.parse_module(module), params, kernels=False, cache=False)
    for got, want in zip(lib.run(**inputs), ref.run(**inputs)):
        if got.dtype == np.float32:  # (Winograd's rounding: 3 x 3 over 256 channels)
            scale = max(float(np.abs(want).max()), 1.0)
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4 * scale)
        else:
            np.testing.assert_array_equal(got, want)


@pytest.fixture
def two_jobs(monkeypatch):
    """Two compile workers, whatever the machine; no object code left from other tests."""
    monkeypatch.setenv("XRELAY_COMPILE_WORKER", "1")
    monkeypatch.setenv("XRELAY_COMPILE_JOBS", "2")
    compile_worker._CACHE.clear()
    yield
    compile_worker._CACHE.clear()


def _record(monkeypatch):
    """(texts the build compiled itself, texts compiled ahead)."""
    own, ahead = [], []
    real_all, real_ahead = compile_worker._compile_all, compile_worker._compile_ahead

    def compile_all(texts, target, pic=False):
        own.extend(texts)
        return real_all(texts, target, pic)

    def compile_ahead(request, worker, texts, target, select):
        def selected(linked):
            parts = select(linked)
            ahead.extend(p for p in parts if len(p) >= compile_worker.CACHE_MIN_TEXT)
            return parts

        return real_ahead(request, worker, texts, target, selected)

    monkeypatch.setattr(compile_worker, "_compile_all", compile_all)
    monkeypatch.setattr(compile_worker, "_compile_ahead", compile_ahead)
    return own, ahead


@pytest.mark.parametrize("module", [CONV, DENSE, QDENSE], ids=["conv", "dense", "qnn"])
def test_the_runtime_part_is_compiled_ahead_and_not_again(module, two_jobs, monkeypatch):
    own, ahead = _record(monkeypatch)
    _build_and_check(module)
    assert ahead, "nothing was compiled ahead"
    # every large part (the runtime's) came from the request: the guess was the build's text
    assert not [t for t in own if len(t) >= compile_worker.CACHE_MIN_TEXT]


def test_the_gemm_part_is_compiled_ahead_beside_wrappers_that_inline_the_pixel_product(
    two_jobs, monkeypatch
):
    """POINTWISE's Winograd terms run pixel-major, their batch split over threads: each
    thread calls the runtime's xr_gemm_pm, which stays internal so that LLVM inlines it
    into the wrapper with the sizes as constants (SqueezeNet 2.5-3.9 % faster). Those
    wrappers share the pixel-major product's part, which has copies of its own of what it
    shares with the GEMM (kernels/gemm_pixel.py): the GEMM's part is still compiled ahead,
    and the build compiles only the pixel-major one (ResNet-50's LLVM time after the
    passes: 1.6-1.9 -> 0.8-1.34 s)."""
    from xrelay.lowering import jit

    if jit.vector_width(resolve_target(None)) != 16:
        pytest.skip("pixel-major products need 16-float vectors")
    own, ahead = _record(monkeypatch)
    texts = []
    real = jit.llvm_module
    monkeypatch.setattr(
        importlib.import_module("xrelay.lowering.build"),
        "llvm_module",
        lambda m: texts.append(real(m)) or texts[-1],
    )
    _build_and_check(POINTWISE)
    assert "define internal void @xr_gemm_pm(" in texts[0]
    serial = "void @xr_gemm_serial("
    assert [t for t in ahead if f"define internal {serial}" in t], "the GEMM was not ahead"
    large = [t for t in own if len(t) >= compile_worker.CACHE_MIN_TEXT]
    assert not [t for t in large if f"define internal {serial}" in t]
    # the pixel-major product's part, with the wrappers that inline it, is the build's
    assert [t for t in own if "define internal void @xr_gemm_pm(" in t]


def test_a_wrong_guess_only_costs_time(two_jobs, monkeypatch):
    own, ahead = _record(monkeypatch)
    real = runtime_ahead.runtime_text

    def other(module, vector_width):  # every function noinline: another text
        text = real(module, vector_width)
        return text and text.replace(" nounwind {", " nounwind noinline {")

    monkeypatch.setattr(runtime_ahead, "runtime_text", other)
    _build_and_check(CONV)
    assert ahead and [t for t in own if len(t) >= compile_worker.CACHE_MIN_TEXT]


def test_a_failure_ahead_is_compiled_by_the_build(two_jobs, monkeypatch):
    """The request's text does not compile (here: LLVM rejects it); the build compiles its
    own runtime and reports nothing."""
    own, _ = _record(monkeypatch)
    real_compile = compile_worker.Worker.compile

    def failing(self, text, target, pic=False):
        if threading.current_thread().name == "xrelay-llvm-ahead":
            raise compile_worker.CompileError("LLVM could not")
        return real_compile(self, text, target, pic)

    monkeypatch.setattr(compile_worker.Worker, "compile", failing)
    _build_and_check(CONV)
    assert [t for t in own if len(t) >= compile_worker.CACHE_MIN_TEXT]


def _large_ir(n=700):
    """A module of CACHE_MIN_TEXT characters or more (the cache keeps only those)."""
    body = "\n".join(
        f"define void @f{k}(ptr %p) {{\n  %v = load float, ptr %p\n"
        f"  %w = fadd float %v, {k}.0\n  store float %w, ptr %p\n  ret void\n}}"
        for k in range(n)
    )
    assert len(body) >= compile_worker.CACHE_MIN_TEXT
    return body


def test_object_codes_waits_for_the_text_compiled_ahead(two_jobs, monkeypatch):
    target = resolve_target(None)
    text = _large_ir()
    gate = threading.Event()
    own = []
    real_all = compile_worker._compile_all
    monkeypatch.setattr(
        compile_worker,
        "_compile_all",
        lambda texts, t, pic=False: own.extend(texts) or real_all(texts, t, pic),
    )

    def select(linked):
        gate.wait(10)  # the request is still on its way when object_codes asks
        return [linked]

    assert compile_worker.compile_ahead([text], target, select)
    threading.Timer(0.3, gate.set).start()
    start = time.monotonic()
    (code,) = compile_worker.object_codes([compile_worker.linked_text([text])], target)
    assert time.monotonic() - start >= 0.25  # it waited
    assert not own  # and compiled nothing itself
    assert code == compile_worker.compile_here(compile_worker.linked_text([text]), target)


def test_a_forked_child_does_not_wait_for_its_parents_request(two_jobs):
    target = resolve_target(None)
    gate = threading.Event()

    def select(linked):
        gate.wait(30)
        return [linked]

    assert compile_worker.compile_ahead([_large_ir()], target, select)
    pid = os.fork()
    if pid == 0:  # the child: the parent's request never finishes here
        try:
            compile_worker.object_codes([_large_ir()], target)
            os._exit(0)
        except BaseException:  # noqa: BLE001
            os._exit(1)
    try:
        deadline = time.monotonic() + 60
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            assert time.monotonic() < deadline, "the child waited for its parent's request"
            time.sleep(0.05)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    finally:
        gate.set()
        if not done:
            os.kill(pid, 9)
            os.waitpid(pid, 0)


def test_a_worker_freed_mid_build_joins_the_compile(two_jobs, monkeypatch):
    """The build's compile starts on the free worker and takes the other (busy compiling
    ahead) as soon as it is free."""
    target = resolve_target(None)
    compile_worker.prestart()
    free, busy = compile_worker._WORKERS[0], compile_worker._WORKERS[1]
    busy.lock.acquire()
    # counted here, not by `jobs`: a worker's count starts again when it is recycled (CI saw
    # 99 before and 1 after); it is recycled on its next compile here
    busy.jobs = compile_worker.RECYCLE
    sent = []
    real_send, real_receive = busy.send, free.receive
    monkeypatch.setattr(busy, "send", lambda *a, **k: (sent.append(1), real_send(*a, **k))[1])

    def receive_then_free_the_other():  # the busy worker comes free after the first result
        code = real_receive()
        if busy.lock.locked() and not sent:
            busy.lock.release()
        return code

    monkeypatch.setattr(free, "receive", receive_then_free_the_other)
    texts = [_large_ir(700 + k) for k in range(6)]  # different texts, none cached
    codes = compile_worker.object_codes(texts, target)
    assert len(codes) == 6 and all(codes)
    assert sent


@pytest.mark.parametrize(
    "module", [CONV, POINTWISE, DENSE, QDENSE], ids=["conv", "pointwise", "dense", "qnn"]
)
def test_the_specs_known_after_select_kernels_are_prepack_weights(module):
    """runtime_ahead reads the GEMM specs right after select-kernels: packed_specs gives
    the ones prepack-weights then leaves (POINTWISE's Winograd product runs pixel-major)."""
    _, params = _inputs(module)
    work = xrelay.parse_module(module)
    ctx = BuildContext(params=dict(params))
    options = {"select-kernels": {"vector_width": 16}, "winograd-convs": {"vector_width": 16}}
    lower(work, stop_after="select-kernels", ctx=ctx, options=options)
    predicted = {repr(spec) for spec in packed_specs(work, 16)}
    lower(work, start_after="select-kernels", stop_after="prepack-weights", ctx=ctx,
          options={"prepack-weights": {"vector_width": 16}})  # fmt: skip
    assert predicted == {repr(spec) for spec, _ in kernel_specs(work).values()}
    if module is POINTWISE:
        assert any(spec.pixel_major for spec, _ in kernel_specs(work).values())


def test_a_process_exits_at_once_while_compiling_ahead(tmp_path):
    """A process that ends (an error, say) while the runtime compiles ahead is not held up
    by the compile, and prints nothing about it."""
    import subprocess
    import sys

    script = tmp_path / "exit_early.py"
    script.write_text(
        "import os, threading, time\n"
        "os.environ['XRELAY_COMPILE_JOBS'] = '2'\n"
        "from xrelay.lowering import compile_worker as cw\n"
        "from xrelay.lowering.jit import resolve_target\n"
        "text = ''.join(f'define void @f{k}(ptr %p) {{\\n  %v = load float, ptr %p\\n"
        "  %w = fmul float %v, {k}.0\\n  store float %w, ptr %p\\n  ret void\\n}}\\n'"
        " for k in range(20000))\n"
        "started = threading.Event()\n"
        "def select(linked):\n"
        "    started.set()\n"
        "    return [linked]\n"
        "assert cw.compile_ahead([text], resolve_target(None), select)\n"
        "started.wait(60)\n"
        "time.sleep(0.5)  # compiling now: seconds of work\n"
        "print('leaving', time.time(), flush=True)\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], check=False, capture_output=True, text=True, timeout=120
    )
    ended = time.time()
    assert done.returncode == 0, done.stderr
    assert "leaving" in done.stdout
    # from the last line to the process's end (its start, the import, is no part of it)
    took = ended - float(done.stdout.split()[-1])
    assert "Traceback" not in done.stderr and "Exception" not in done.stderr, done.stderr
    # (the compile of 20,000 functions takes 11 s; waiting for the worker to stop, 5 s)
    assert took < 3, took
