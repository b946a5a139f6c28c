"""Artifacts (`lib.save`, `xrelay.load`, pickling) and the compile cache: the same outputs
without compiling, and every broken or foreign artifact refused with an `xrelay.Error`."""

from __future__ import annotations

import json
import os
import pickle
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import xrelay
from xrelay.lowering import artifact
from xrelay.lowering import cache as compile_cache

EXAMPLE = Path(xrelay.__file__).parent / "examples" / "cnn.onnx"
rng = np.random.default_rng(0)


@pytest.fixture(scope="module")
def compiled():
    module, params = xrelay.from_onnx(str(EXAMPLE))
    lib = xrelay.build(module, params, cache=False)
    inputs = {a.name: rng.standard_normal(a.shape).astype(a.dtype) for a in lib.signature.inputs}
    return lib, inputs, lib.run(**inputs)


def same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_save_then_load_runs_the_same_code(compiled, tmp_path):
    lib, inputs, want = compiled
    path = tmp_path / "cnn.xrl"
    lib.save(path)
    loaded = xrelay.load(path)
    same(loaded.run(**inputs), want)
    assert loaded.signature == lib.signature
    assert loaded.target == lib.target
    assert all(isinstance(a, np.memmap) or a.base is not None for a in loaded.params.values())
    assert "llvm" not in loaded.times  # no compiler stage ran


def test_weights_read_only_as_prepacked_copies_are_not_kept(compiled, tmp_path):
    """The convolutions read their prepacked weights: the originals are neither held nor
    saved, and passing one at run time is an error rather than silently ignored."""
    lib, inputs, want = compiled
    assert lib.unused_params and not lib.unused_params & set(lib.params)
    lib.save(tmp_path / "cnn.xrl")
    loaded = xrelay.load(tmp_path / "cnn.xrl")
    assert loaded.unused_params == lib.unused_params
    name = min(lib.unused_params)
    weight = next(a for a in lib.signature.args if a.name == name)
    with pytest.raises(xrelay.Error, match=f"'{name}' was replaced by its prepacked copy"):
        loaded.run(**inputs, **{name: np.zeros(weight.shape, weight.dtype)})
    same(loaded.run(**inputs), want)


def test_pickled_library_runs_in_a_process_that_never_compiles(compiled, tmp_path):
    lib, inputs, want = compiled
    (tmp_path / "lib.pkl").write_bytes(pickle.dumps(lib))
    np.savez(tmp_path / "in.npz", **inputs)
    script = textwrap.dedent(
        f"""
        import pickle, numpy as np
        import xrelay.lowering.jit as jit, xrelay.lowering.build as build
        def refuse(*a, **k):
            raise AssertionError("compiled")
        jit.llvm_module = build.llvm_module = build.lower = refuse
        lib = pickle.loads(open({str(tmp_path / "lib.pkl")!r}, "rb").read())
        inputs = dict(np.load({str(tmp_path / "in.npz")!r}))
        np.savez({str(tmp_path / "out.npz")!r}, *lib.run(**inputs))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    out = np.load(tmp_path / "out.npz")
    same([out[f"arr_{i}"] for i in range(len(want))], want)


def test_loading_an_artifact_imports_no_compiler(compiled, tmp_path):
    """A serving process that loads a saved library imports neither the frontends, nor the
    IR's dialects, nor the passes, nor LLVM (`import xrelay` is lazy): about 40 MB less
    than a process that imports them all."""
    lib, inputs, want = compiled
    lib.save(tmp_path / "lib.xrl")
    np.savez(tmp_path / "in.npz", **inputs)
    script = textwrap.dedent(
        f"""
        import sys, numpy as np, xrelay
        lib = xrelay.load({str(tmp_path / "lib.xrl")!r})
        inputs = dict(np.load({str(tmp_path / "in.npz")!r}))
        np.savez({str(tmp_path / "out.npz")!r}, *lib.run(**inputs))
        heavy = ("onnx", "llvmlite.binding", "xrelay.dialects.relay", "xrelay.frontends",
                 "xrelay.lowering.pipeline", "xrelay.lowering.build", "xrelay.transforms")
        print(*sorted(m for m in sys.modules if m.startswith(heavy)))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [], done.stdout
    out = np.load(tmp_path / "out.npz")
    same([out[f"arr_{i}"] for i in range(len(want))], want)


def test_lazy_names_are_the_public_api():
    """`xrelay`'s lazily imported names resolve, appear in dir() and __all__."""
    for name in xrelay.__all__:
        assert callable(getattr(xrelay, name)) or isinstance(getattr(xrelay, name), type)
        assert name in dir(xrelay)
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        xrelay.nonexistent  # noqa: B018


def test_build_stays_the_function_once_its_module_is_imported():
    """`from xrelay.lowering import build` is the function also after lowering/build.py was
    imported as a module (which binds the submodule to the package's name `build`: the
    CLI's `xrelay bench` then called a module)."""
    script = textwrap.dedent(
        """
        import xrelay.lowering.build, xrelay.lowering.artifact
        from xrelay.lowering import build, load
        import xrelay
        print(callable(build), callable(load), xrelay.build is build, xrelay.load is load)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True"] * 4


def test_portable_target_runs_here_and_records_its_features(compiled):
    _, inputs, want = compiled
    module, params = xrelay.from_onnx(str(EXAMPLE))
    portable = xrelay.build(module, params, target_cpu="x86-64-v2", cache=False)
    assert portable.target["cpu"] == "x86-64-v2"
    assert "sse4.2" in portable.target["features"]
    np.testing.assert_allclose(portable.run(**inputs)[0], want[0], rtol=1e-5, atol=1e-6)
    with pytest.raises(xrelay.Error, match="target_cpu 'pentium' is not supported"):
        xrelay.build(module, params, target_cpu="pentium", cache=False)


def _rewrite_header(path: Path, edit) -> None:
    """Edit an artifact's header and re-sign it (so that what is refused is the content,
    not the checksum)."""
    data = path.read_bytes()
    magic, length, _ = artifact._PREFIX.unpack_from(data, 0)
    header = json.loads(data[artifact._PREFIX.size : artifact._PREFIX.size + length])
    edit(header)
    text = json.dumps(header, sort_keys=True).encode()
    assert len(text) <= length  # keep the sections where they are: pad the JSON
    text += b" " * (length - len(text))
    import hashlib

    prefix = struct.pack("<8sQ32s", magic, length, hashlib.sha256(text).digest())
    path.write_bytes(prefix + text + data[artifact._PREFIX.size + length :])


def test_broken_and_foreign_artifacts_are_refused(compiled, tmp_path):
    lib, _, _ = compiled
    good = tmp_path / "good.xrl"
    lib.save(good)
    data = good.read_bytes()
    _, length, _ = artifact._PREFIX.unpack_from(data, 0)
    start = artifact._PREFIX.size + length
    start += -start % artifact.ALIGN

    cases = {
        "empty": (b"", "not an xrelay artifact"),
        "other file": (b"PK\x03\x04" + data[4:], "not an xrelay artifact"),
        "truncated header": (data[:60], "header is truncated or corrupt"),
        "truncated sections": (data[: len(data) - 100], "truncated"),
        "tampered header": (data[:70] + b"X" + data[71:], "header is truncated or corrupt"),
        "tampered code": (
            data[: start + 10] + bytes([data[start + 10] ^ 1]) + data[start + 11 :],
            "object code is corrupt",
        ),
        "tampered parameter": (data[:-5] + bytes([data[-5] ^ 1]) + data[-4:], "is corrupt"),
    }
    for name, (content, message) in cases.items():
        path = tmp_path / f"{name}.xrl"
        path.write_bytes(content)
        with pytest.raises(xrelay.Error, match=message):
            xrelay.load(path)
        with pytest.raises(xrelay.Error, match=message):
            artifact.loads(content)

    old = tmp_path / "old.xrl"
    old.write_bytes(data)
    _rewrite_header(old, lambda h: h.update(abi=artifact.ABI + 1, xrelay="0.0.1"))
    with pytest.raises(xrelay.Error, match=r"made by xrelay 0\.0\.1 .*compile it again"):
        xrelay.load(old)

    other = tmp_path / "other-cpu.xrl"
    other.write_bytes(data)
    _rewrite_header(other, lambda h: h["target"].update(cpu="future", features=["avx10.9", "sse2"]))
    with pytest.raises(xrelay.Error, match="CPU 'future', which needs .*avx10.9"):
        xrelay.load(other)

    with pytest.raises(xrelay.Error, match="does not exist"):
        lib.save(tmp_path / "missing" / "x.xrl")


def test_a_dynamic_library_compiled_once_pickles_and_saves(tmp_path):
    """Batch-dynamic IR the lowering compiles for every size: the pickle and the artifact
    hold that one build, and run new batches without compiling."""
    text = """
    func.func @main(%x: tensor<?x4xf32, #relay.dims<"n">>) -> tensor<?x4xf32, #relay.dims<"n">> {
      %0 = relay.exp %x : (tensor<?x4xf32, #relay.dims<"n">>) -> tensor<?x4xf32, #relay.dims<"n">>
      func.return %0 : tensor<?x4xf32, #relay.dims<"n">>
    }
    """
    lib = xrelay.build(xrelay.parse_module(text), {}, cache=False)
    assert lib.native is not None and lib.compiles == 1
    x2 = rng.standard_normal((2, 4)).astype(np.float32)
    np.testing.assert_allclose(lib.run(x=x2)[0], np.exp(x2), rtol=1e-6)
    again = pickle.loads(pickle.dumps(lib))
    x5 = rng.standard_normal((5, 4)).astype(np.float32)
    np.testing.assert_allclose(again.run(x=x5)[0], np.exp(x5), rtol=1e-6)
    assert again.compiles == 0  # loaded from the pickle, and no binding compiles
    lib.save(tmp_path / "dyn.xrl")
    loaded = xrelay.load(tmp_path / "dyn.xrl")
    x7 = rng.standard_normal((7, 4)).astype(np.float32)
    np.testing.assert_allclose(loaded.run(x=x7)[0], np.exp(x7), rtol=1e-6)
    with pytest.raises(
        xrelay.Error, match="input 'x' axis 1 has size 3, but the model fixes it to 4"
    ):
        loaded.run(x=x7[:, :3])


def test_a_dynamic_library_pickles_with_its_specializations(tmp_path):
    """Batch-dynamic IR with an op that has no dynamic lowering yet (argmax): each binding
    compiles; the pickled library keeps the batch it compiled (loaded, not compiled again)
    and still compiles new ones; `save` explains why it cannot."""
    t_in = 'tensor<?x4xf32, #relay.dims<"n">>'
    t_out = 'tensor<?xi64, #relay.dims<"n">>'
    text = f"""
    func.func @main(%x: {t_in}) -> {t_out} {{
      %0 = relay.argmax %x {{axis = 1 : i64}} : ({t_in}) -> {t_out}
      func.return %0 : {t_out}
    }}
    """
    lib = xrelay.build(xrelay.parse_module(text), {}, cache=False)
    assert lib.native is None and "relay.argmax" in lib.refused
    x2 = rng.standard_normal((2, 4)).astype(np.float32)
    np.testing.assert_array_equal(lib.run(x=x2)[0], x2.argmax(1))
    again = pickle.loads(pickle.dumps(lib))
    np.testing.assert_array_equal(again.run(x=x2)[0], x2.argmax(1))
    assert again.compiles == 0  # loaded from the pickle
    x5 = rng.standard_normal((5, 4)).astype(np.float32)
    np.testing.assert_array_equal(again.run(x=x5)[0], x5.argmax(1))
    assert again.compiles == 1
    with pytest.raises(xrelay.Error, match="one static build"):
        lib.save(tmp_path / "dyn.xrl")


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("XRELAY_CACHE_DIR", str(folder))
    return folder


def test_cache_hit_miss_and_corrupt_entry(cache_dir, compiled):
    _, inputs, want = compiled
    module, params = xrelay.from_onnx(str(EXAMPLE))
    first = xrelay.build(module, params)
    assert "llvm" in first.times and "cache" not in first.times
    (entry,) = cache_dir.glob("*.xrl")
    second = xrelay.build(module, params)
    assert "cache" in second.times and "llvm" not in second.times
    same(second.run(**inputs), want)
    # other parameters, other options: a miss
    other = {k: v * 2 for k, v in params.items()}
    assert "cache" not in xrelay.build(module, other).times
    assert "cache" not in xrelay.build(module, params, kernels=False).times
    assert "cache" not in xrelay.build(module, params, cache=False).times
    # a corrupt entry is removed and rebuilt, never loaded
    entry.write_bytes(entry.read_bytes()[:-7])
    third = xrelay.build(module, params)
    assert "cache" not in third.times
    same(third.run(**inputs), want)
    assert "cache" in xrelay.build(module, params).times


def test_cache_off_and_eviction(tmp_path, monkeypatch, compiled):
    monkeypatch.setenv("XRELAY_CACHE_DIR", "off")
    assert compile_cache.cache_dir() is None
    folder = tmp_path / "small"
    monkeypatch.setenv("XRELAY_CACHE_DIR", str(folder))
    monkeypatch.setenv("XRELAY_CACHE_MAX_MB", "0.25")  # one entry of this model (0.17)
    module, params = xrelay.from_onnx(str(EXAMPLE))
    for scale in (1.0, 2.0, 3.0):
        xrelay.build(module, {k: v * scale for k, v in params.items()})
    assert len(list(folder.glob("*.xrl"))) == 1


def test_concurrent_writers_leave_a_loadable_entry(cache_dir):
    script = textwrap.dedent(
        f"""
        import xrelay
        m, p = xrelay.from_onnx({str(EXAMPLE)!r})
        xrelay.build(m, p)
        """
    )
    env = {**os.environ, "XRELAY_CACHE_DIR": str(cache_dir)}
    procs = [
        subprocess.Popen([sys.executable, "-c", script], env=env, stderr=subprocess.PIPE)
        for _ in range(3)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
    entries = list(cache_dir.glob("*.xrl"))
    assert len(entries) == 1 and not list(cache_dir.glob(".*"))
    xrelay.load(entries[0])


def test_scalar_parameters_keep_their_rank(tmp_path):
    """A 0-d parameter (BERT-base's exported scalars) is saved as 0-d, not as [1]."""
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "s"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [numpy_helper.from_array(np.array(3.0, np.float32), "s")],
    )
    module, params = xrelay.from_onnx(helper.make_model(graph))
    lib = xrelay.build(module, params, cache=False)
    lib.save(tmp_path / "m.xrl")
    loaded = xrelay.load(tmp_path / "m.xrl")
    assert loaded.params["s"].shape == ()
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(loaded.run(x=x)[0], 3 * x)
