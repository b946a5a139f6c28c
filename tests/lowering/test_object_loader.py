"""The object loader (lowering/object_loader.py): objects the compile worker emits, linked
into this process without LLVM; and a process that builds and runs a model never loading
LLVM itself."""

from __future__ import annotations

import ctypes
import os
import struct
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import xrelay
from onnx import TensorProto, helper
from xrelay.lowering import compile_worker, object_loader
from xrelay.lowering.jit import resolve_target

EXAMPLE = Path(xrelay.__file__).parent / "examples" / "cnn.onnx"

# two modules: `twice` in one, the caller in the other, which also reads and writes a
# global, calls libm's expf, a callback from Python and a table of constants
CALLEE = """
@counter = global i32 7
define i32 @twice(i32 %x) {
  %y = mul i32 %x, 2
  ret i32 %y
}
"""
CALLER = """
@counter = external global i32
@table = internal constant [4 x float] [float 1.0, float 2.0, float 4.0, float 8.0]
declare i32 @twice(i32)
declare float @expf(float)
declare i32 @callback(i32)
define i32 @combine(i32 %x) {
  %a = call i32 @twice(i32 %x)
  %c = load i32, ptr @counter
  %c1 = add i32 %c, 1
  store i32 %c1, ptr @counter
  %b = call i32 @callback(i32 %a)
  %s = add i32 %b, %c
  ret i32 %s
}
define float @exp_of(i32 %i) {
  %p = getelementptr [4 x float], ptr @table, i32 0, i32 %i
  %v = load float, ptr %p
  %e = call float @expf(float %v)
  ret float %e
}
"""
CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32)


@pytest.fixture(scope="module")
def target():
    return resolve_target(None)


@pytest.mark.parametrize("pic", [False, True], ids=["absolute", "position-independent"])
def test_links_objects_with_each_other_the_process_and_callbacks(target, pic):
    objects = [compile_worker.object_code(t, target, pic) for t in (CALLEE, CALLER)]
    object_loader.load_library("m")
    callback = CALLBACK(lambda v: v + 100)
    address = ctypes.cast(callback, ctypes.c_void_p).value
    linked = object_loader.LinkedCode(objects, {"callback": address})
    combine = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32)(linked.address("combine"))
    assert combine(5) == 10 + 100 + 7
    assert combine(5) == 10 + 100 + 8  # the global kept its new value
    assert ctypes.c_int32.from_address(linked.address("counter")).value == 9
    exp_of = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_int32)(linked.address("exp_of"))
    assert exp_of(2) == pytest.approx(np.exp(np.float32(4.0)), rel=1e-6)
    assert linked.address("absent") == 0


def test_undefined_or_twice_defined_symbols_are_link_errors(target):
    caller = compile_worker.object_code(CALLER, target)
    with pytest.raises(
        object_loader.LinkError, match="undefined symbol '(twice|callback|counter)'"
    ):
        object_loader.LinkedCode([caller], {})
    callee = compile_worker.object_code(CALLEE, target)
    with pytest.raises(object_loader.LinkError, match="'(twice|counter)' is defined twice"):
        object_loader.LinkedCode([callee, callee], {})


def test_what_it_does_not_link_is_unsupported(target):
    with pytest.raises(object_loader.Unsupported, match="not an ELF object"):
        object_loader.LinkedCode([b"not an object at all, but long enough" * 4], {})
    tls = "@t = thread_local global i32 0\ndefine ptr @f() {\n  ret ptr @t\n}\n"
    with pytest.raises(object_loader.Unsupported, match="thread-local"):
        object_loader.LinkedCode([compile_worker.object_code(tls, target)], {})


def _model():
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Exp", ["m"], ["y"])],
        "m",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 4])],
        [helper.make_tensor("w", TensorProto.FLOAT, [16, 4], np.linspace(-1, 1, 64).tolist())],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_objects_it_does_not_take_are_linked_by_mcjit(monkeypatch):
    """The fallback: a Library whose objects the loader refuses still runs (LLVM's MCJIT)."""
    x = np.linspace(-1, 1, 128, dtype=np.float32).reshape(8, 16)
    expected = np.exp(x @ np.linspace(-1, 1, 64, dtype=np.float32).reshape(16, 4))

    def refuse(*args, **kwargs):
        raise object_loader.Unsupported("refused by the test")

    monkeypatch.setattr(object_loader, "LinkedCode", refuse)
    lib = xrelay.build(*xrelay.from_onnx(_model()), cache=False)
    assert type(lib._engine).__name__ != "LinkedCode"
    np.testing.assert_allclose(lib.run(x=x)[0], expected, rtol=1e-5)


def test_a_process_that_builds_and_runs_a_model_never_loads_llvm(tmp_path):
    """Nor OpenSSL's libcrypto (hashlib) until it saves an artifact: 3.6 MB of resident
    memory each (the build hashes the model with CPython's own BLAKE2)."""
    path = tmp_path / "m.onnx"
    path.write_bytes(_model().SerializeToString())
    script = (
        "import sys, numpy as np, xrelay\n"
        f"lib = xrelay.build(*xrelay.from_onnx({str(path)!r}), cache=False)\n"
        "x = np.ones((8, 16), np.float32)\n"
        "assert lib.run(x=x)[0].shape == (8, 4)\n"
        "openssl = '_hashlib' in sys.modules\n"
        f"lib.save({str(tmp_path / 'm.xrl')!r})\n"
        f"assert xrelay.load({str(tmp_path / 'm.xrl')!r}).run(x=x)[0].shape == (8, 4)\n"
        "print(type(lib._engine).__name__, 'llvmlite.binding' in sys.modules, openssl)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["LinkedCode", "False", "False"]


def test_workers_compile_without_starting_threads(target, monkeypatch):
    """One thread hands the parts out (a thread per worker grew a long-lived process by a
    few MB of malloc arenas: the 1,000-build memory test failed in a full run)."""
    monkeypatch.setenv("XRELAY_COMPILE_JOBS", "2")

    def no_threads(self):
        raise AssertionError("a thread was started")

    monkeypatch.setattr(threading.Thread, "start", no_threads)
    texts = [
        f"define i32 @f{k}(i32 %x) {{\n  %y = add i32 %x, {k}\n  ret i32 %y\n}}\n" for k in range(5)
    ]
    codes = compile_worker._compile_all(texts, target)
    assert len(codes) == 5 and all(code[:4] == b"\x7fELF" for code in codes)
    linked = object_loader.LinkedCode(codes, {})
    for k in range(5):
        f = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32)(linked.address(f"f{k}"))
        assert f(10) == 10 + k


def test_the_host_description_from_a_process_is_llvms():
    from xrelay.lowering import host

    assert host._ask_process() == host._ask_llvm()


def test_the_host_description_is_remembered_per_cpu(tmp_path, monkeypatch):
    """What the short-lived process says is kept in the cache folder under a key of the
    CPU and llvmlite: read back as it was written; another key, a corrupt file or a
    missing field reads as nothing; XRELAY_CACHE_DIR=off keeps nothing."""
    from xrelay.lowering import host

    monkeypatch.setenv("XRELAY_CACHE_DIR", str(tmp_path))
    description = host._ask_llvm()
    assert host._remembered() is None
    assert host._remember(description) == description
    (written,) = tmp_path.glob("host-*.json")
    assert host._remembered() == description
    monkeypatch.setattr(host, "_key", lambda: "another-cpu")
    assert host._remembered() is None
    monkeypatch.undo()
    monkeypatch.setenv("XRELAY_CACHE_DIR", str(tmp_path))
    written.write_text('{"cpu": "znver4"}')
    assert host._remembered() is None
    written.write_text("{not json")
    assert host._remembered() is None
    monkeypatch.setenv("XRELAY_CACHE_DIR", "off")
    assert host._path() is None and host._remember(description) == description


def test_a_serving_process_reads_the_remembered_host(tmp_path):
    """A second process loading an artifact describes the CPU from the cache folder: it
    starts no process of its own (the first one did)."""
    module, params = xrelay.from_onnx(str(EXAMPLE))
    xrelay.build(module, params, cache=False).save(tmp_path / "cnn.xrl")
    script = (
        "import sys, numpy as np, xrelay\n"
        "from xrelay.lowering import host\n"
        "if sys.argv[1] == 'second':\n"
        "    def refuse():\n"
        "        raise AssertionError('asked a process')\n"
        "    host._ask_process = refuse\n"
        f"lib = xrelay.load({str(tmp_path / 'cnn.xrl')!r})\n"
        "lib.run(np.zeros((1, 3, 32, 32), np.float32))\n"
    )
    env = {**os.environ, "XRELAY_CACHE_DIR": str(tmp_path / "cache")}
    for which in ("first", "second"):
        done = subprocess.run(
            [sys.executable, "-c", script, which],
            check=False,
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, (which, done.stderr)
    assert len(list((tmp_path / "cache").glob("host-*.json"))) == 1


def test_a_strong_definition_replaces_a_weak_one(target):
    weak = "define weak i32 @pick() {\n  ret i32 1\n}\n"
    strong = "define i32 @pick() {\n  ret i32 2\n}\n"
    objects = [compile_worker.object_code(t, target) for t in (weak, strong)]
    for order in (objects, objects[::-1]):
        linked = object_loader.LinkedCode(order, {})
        assert ctypes.CFUNCTYPE(ctypes.c_int32)(linked.address("pick"))() == 2
    with pytest.raises(object_loader.LinkError, match="'pick' is defined twice"):
        object_loader.LinkedCode([objects[0], objects[1], objects[1]], {})


def test_a_malformed_object_is_a_link_error(target):
    good = compile_worker.object_code(CALLEE, target)
    truncated = good[: len(good) // 2]  # the section headers are past the end
    with pytest.raises(object_loader.LinkError, match="malformed object"):
        object_loader.LinkedCode([truncated], {})
    # a relocation's offset moved past its section's end
    caller = bytearray(compile_worker.object_code(CALLER, target))
    obj = object_loader._Object(bytes(caller))
    k = next(k for k, s in enumerate(obj.sections) if s[1] == 4)  # SHT_RELA
    struct.pack_into("<Q", caller, obj.sections[k][4], 1 << 40)
    with pytest.raises(object_loader.LinkError, match="relocation outside its section"):
        object_loader.LinkedCode([bytes(caller)], {"callback": 1, "twice": 1, "counter": 1})


def test_a_library_reports_a_link_error_as_an_xrelay_error(monkeypatch):
    def fail(*args, **kwargs):
        raise object_loader.LinkError("undefined symbol 'xr_missing'")

    monkeypatch.setattr(object_loader, "LinkedCode", fail)
    with pytest.raises(xrelay.Error, match="cannot link the compiled code: undefined symbol"):
        xrelay.build(*xrelay.from_onnx(_model()), cache=False)
