"""`xrelay.build(module, params) -> Library`: verify, run the pipeline (lowering/pipeline.py)
on a copy of the module, JIT-compile the result."""

from __future__ import annotations

import ctypes
import functools
import gc
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from xdsl.dialects import llvm as llvm_dialect
from xdsl.dialects.builtin import ArrayAttr, ModuleOp
from xrelay.dialects.specialize import has_deferred
from xrelay.errors import Error
from xrelay.ir import verify_module
from xrelay.lowering import cache as compile_cache
from xrelay.lowering import compile_worker, runtime_ahead
from xrelay.lowering.context import BuildContext
from xrelay.lowering.dynamic import DynamicLibrary
from xrelay.lowering.expose_checks import read_checks
from xrelay.lowering.instrument_calls import SITES_ATTR
from xrelay.lowering.jit import (
    Library,
    amx_tiles,
    int_group,
    llvm_module,
    resolve_target,
    vector_width,
)
from xrelay.lowering.limits import check_sizes, dynamic_sizes
from xrelay.lowering.pipeline import lower
from xrelay.lowering.plan_buffers import read_dynamic_plan
from xrelay.lowering.vm import VMLibrary, uses_vm
from xrelay.signature import Argument, FunctionSignature, main_function

FREEZE_MIN_OPS = 150  # modules this large build with the heap frozen (ResNet-50: 180)


def frozen_heap(compile_fn: Callable[..., Library]) -> Callable[..., Library]:
    """`compile_fn(module, ...)` with the objects alive when it starts (the module, its
    parameters, the imported libraries) left out of the garbage collector's passes
    (gc.freeze) for a module of FREEZE_MIN_OPS operations or more: its passes make and
    drop many objects, and each full collection walked the whole heap (fresh-process
    builds: DenseNet-121 7.6 -> 6.5 s, ResNet-50 2.65 -> 2.7; the collector off instead
    kept DenseNet-121's garbage and peaked 31 MB higher). A full collection first, so no
    garbage is frozen (without it, repeated builds grew the process); about 0.04 s after
    importing xrelay, 0.12 s with torch and transformers loaded, which small modules do
    not repay. A caller's own gc.freeze() or disabled collector is left as it is."""

    @functools.wraps(compile_fn)
    def frozen(module: ModuleOp, *args: Any, **kwargs: Any) -> Library:
        if (
            gc.get_freeze_count()
            or not gc.isenabled()
            or sum(1 for _ in module.walk()) < FREEZE_MIN_OPS
        ):
            return compile_fn(module, *args, **kwargs)
        gc.collect()
        gc.freeze()
        try:
            return compile_fn(module, *args, **kwargs)
        finally:
            gc.unfreeze()

    return frozen


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, or None (another C library)."""
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


_TRIM = _malloc_trim()


def trimmed_heap(compile_fn: Callable[..., Library]) -> Callable[..., Library]:
    """`compile_fn`, then the heap pages it freed (the passes' IR, Winograd's and the
    packing's intermediates) handed back to the system: malloc keeps freed pages inside
    its heap, where they stay resident. SqueezeNet 1.1's serving process 95.9 -> 94.7 MB,
    Inception v1's 150.4 -> 142.5 (bench/memory.py); well under 1 ms."""

    @functools.wraps(compile_fn)
    def trimmed(*args: Any, **kwargs: Any) -> Library:
        try:
            return compile_fn(*args, **kwargs)
        finally:
            if _TRIM is not None:
                _TRIM(0)

    return trimmed


def build(
    module: ModuleOp,
    params: Mapping[str, np.ndarray] | None = None,
    *,
    kernels: bool = True,
    target_cpu: str | None = None,
    cache: bool = True,
    profile: bool = False,
    release_params: bool = False,
) -> Library | DynamicLibrary | VMLibrary:
    """Compile `module` (relay IR with `@main`); the module itself is left unchanged.
    Parameters, and constants of 1024 elements or more, are passed to native code as
    buffers at every run, never embedded. Partitioned functions of a target with a codegen
    are compiled by it and linked in (see `xrelay.transforms.targets`). `kernels=False`
    keeps products and convolutions off the runtime GEMM (`select-kernels{enabled=false}`,
    `winograd-convs{enabled=false}`).
    A module whose inputs have dynamic dimensions, or with `relay.deferred` nodes (a graph
    input that decides a shape), gives a `DynamicLibrary`, which runs any shapes and values
    its signature allows (lowering/dynamic.py). A module with run-time control flow
    (`relay.if`, `relay.loop`) or data-dependent sizes (`relay.nonzero`...) gives a
    `VMLibrary`: compiled segments run by a VM (lowering/vm.py).

    `target_cpu`: "host" (the default: every feature of this CPU) or a portable x86-64
    level ("x86-64-v3") for an artifact (`lib.save`) to run on other machines. `cache`:
    look the module up in the compile cache first and store what is compiled
    (lowering/cache.py; `XRELAY_CACHE_DIR`). `profile`: time every call of the compiled
    main (`instrument-calls`); `lib.profile()` reads the times. `release_params`: build
    takes the arrays out of `params` (it empties that dict) and lets each original weight
    go as soon as its packed copy exists, so a large model's weights are not held twice
    (BERT-base: 911 MB peak without, in a process that drops `params` after the build);
    for a caller with no further use for them, as the CLI."""
    if not isinstance(module, ModuleOp):
        raise Error(
            f"build: expected a relay module (from xrelay.from_onnx, from_pytorch, from_tflite"
            f" or parsed IR), got {type(module).__name__}"
        )
    verify_module(module)
    signature = FunctionSignature.of(main_function(module))
    ctx = BuildContext(params=dict(params or {}))
    missing = [a.name for a in signature.args if a.is_param and a.name not in ctx.params]
    if missing:
        raise Error(f"build: missing parameters {missing}")
    if release_params and params is not None:
        if not isinstance(params, dict):
            raise Error("build: release_params needs the params dict itself (it is emptied)")
        params.clear()
    if uses_vm(module):  # run-time control flow or data-dependent sizes
        options = {"kernels": kernels, "target_cpu": target_cpu, "cache": cache, "profile": profile}
        return VMLibrary(module, ctx.params, options)
    if has_deferred(module) or signature.is_dynamic:
        options = {"kernels": kernels, "target_cpu": target_cpu, "cache": cache, "profile": profile}
        lib = DynamicLibrary(module, signature, ctx.params, options)
        # one native build for every size, where the lowering can
        lib.compile_once(lambda: _compile(module, signature, ctx.params, **options))
        return lib
    # one compile reads them: with release_params it works on ctx's dict itself
    return _compile(
        module, signature, ctx.params, kernels, target_cpu, cache, profile, release_params
    )


# builds on several threads run one at a time: two threads building at once failed once
# in a full test run with "Can't add to a block an operation already attached to a block"
# (the shared state was not found); the passes hold the GIL anyway, and LLVM's parts still
# compile on every CPU
_BUILD_LOCK = threading.RLock()


def one_at_a_time(compile_fn: Callable[..., Library]) -> Callable[..., Library]:
    @functools.wraps(compile_fn)
    def locked(*args: Any, **kwargs: Any) -> Library:
        with _BUILD_LOCK:
            return compile_fn(*args, **kwargs)

    return locked


class _Later:
    """`fn(*args)` on a thread of its own (hashing a model's weights lets go of the GIL:
    ResNet-50's 100 MB took 0.12 s of the build's one busy core)."""

    def __init__(self, fn: Callable[..., str], *args: Any) -> None:
        self._value: str | None = None
        self._error: BaseException | None = None

        def run() -> None:
            try:
                self._value = fn(*args)
            except BaseException as e:  # noqa: BLE001 - raised by result()
                self._error = e

        self._thread = threading.Thread(target=run, name="xrelay-hash", daemon=True)
        self._thread.start()

    def result(self) -> str:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._value is not None
        return self._value


@one_at_a_time
@trimmed_heap
@frozen_heap
def _compile(
    module: ModuleOp,
    signature: FunctionSignature,
    params: Mapping[str, np.ndarray],
    kernels: bool,
    target_cpu: str | None,
    cache: bool,
    profile: bool,
    release: bool = False,
) -> Library:
    """One native build of `module`: static shapes, or dynamic ones with every size a
    run-time value (DynamicUnsupported where the lowering cannot do that yet). `release`:
    `params` is a dict this build owns: its weights are replaced by stand-ins once packed."""
    ctx = BuildContext(params=params if release else dict(params), release=release)
    check_sizes(module)  # before anything is allocated or compiled
    target = resolve_target(target_cpu)
    tiles = amx_tiles(target)  # the 8-bit GEMM on AMX (XRELAY_AMX=0: not)
    options = {"kernels": kernels, "target": target, "profile": profile, "tiles": tiles}
    later = None
    if cache or release:  # (release: the weights go while the passes run)
        entry = compile_cache.key(str(module), ctx.params, options)
    else:  # only the model's hash (meta): on the idle core while the passes run
        entry, later = "", _Later(compile_cache.key, str(module), dict(ctx.params), options)
    if cache:
        hit = compile_cache.get(entry)
        if hit is not None:
            return hit
    compile_worker.prestart()  # the LLVM processes start while the passes run
    given = set(ctx.params)
    work = module.clone()
    times = lower(
        work,
        ctx=ctx,
        options={
            "winograd-convs": {"enabled": kernels, "vector_width": vector_width(target)},
            "select-kernels": {"enabled": kernels, "vector_width": vector_width(target)},
            "qnn-int-products": {
                "enabled": kernels,
                "vector_width": vector_width(target),
                "group": int_group(target),
                "tiles": tiles,
            },
            # the lookup's vpermi2b needs AVX512-VBMI
            "qnn-lookup-tables": {"enabled": kernels and "avx512vbmi" in target["features"]},
            "prepack-weights": {"vector_width": vector_width(target)},
            "instrument-calls": {"enabled": profile},
        },
        # the GEMM runtime's object code compiles on the idle core while the passes go on
        after={"select-kernels": lambda m: runtime_ahead.start(m, target, vector_width(target))},
    )
    # the passes append the parameters they add (hoisted constants, packed weights) to
    # @main's arguments in the order they add their arrays
    added = tuple(
        Argument(name, a.shape, a.dtype, is_param=True)
        for name, a in ctx.params.items()
        if name not in given
    )
    signature = FunctionSignature(
        signature.args + added, signature.results, signature.result_dtypes, signature.dim_ranges
    )
    checks = read_checks(work)
    plan = read_dynamic_plan(work)
    # the index-check result; the arena (pointer, size) and offset table of a dynamic plan
    _check_arity(work, signature, extra=(1 if checks else 0) + (3 if plan else 0))
    start = time.perf_counter()
    native = llvm_module(work)
    times["llvm-ir"] = time.perf_counter() - start
    if later is not None:
        entry = later.result()
    meta: dict = {"model_hash": entry, "options": {"kernels": kernels, "profile": profile}}
    if signature.is_dynamic:  # the sizes each run's binding is checked against
        meta["dynamic_sizes"] = dynamic_sizes(module)
    if plan:  # buffers of run-time size, placed per run (plan-buffers)
        meta["dynamic_plan"] = plan
    if checks:
        meta["checks"] = [list(c) for c in checks]
    sites = work.attributes.get(SITES_ATTR)
    if isinstance(sites, ArrayAttr):
        meta["profile_sites"] = [s.data for s in sites.data]
    lib = Library(
        native,
        signature,
        ctx.params,
        times,
        ctx.externals,
        target=target,
        meta=meta,
        unused_params=_unused_params(work, signature),
    )
    if cache:
        compile_cache.put(entry, lib)
    return lib


def _unused_params(module: ModuleOp, signature: FunctionSignature) -> list[str]:
    """Parameters the lowered main never reads (weights whose prepacked copies it reads)."""
    for op in module.ops:
        if isinstance(op, llvm_dialect.FuncOp) and op.sym_name.data == "main" and op.body.blocks:
            args = iter(op.body.block.args)
            unused = []
            for a in signature.args:  # a pointer, then a size per dynamic dimension
                pointer = next(args)
                for d in a.shape:
                    if not isinstance(d, int):
                        next(args)
                if a.is_param and not pointer.uses:
                    unused.append(a.name)
            return unused
    return []


def _check_arity(module: ModuleOp, signature: FunctionSignature, extra: int = 0) -> None:
    """The lowered main takes one pointer per argument and result of the signature, and
    `extra` more (the index-check result; a mismatch would make the native call read past
    its arguments)."""
    for op in module.ops:
        if isinstance(op, llvm_dialect.FuncOp) and op.sym_name.data == "main":
            arity = len(op.function_type.inputs)
            shapes = [a.shape for a in signature.args] + [s for s, _ in signature.results]
            # a pointer per argument and result, and a size per dynamic dimension
            expected = sum(1 + sum(not isinstance(d, int) for d in s) for s in shapes) + extra
            if arity != expected:
                raise Error(f"build: lowered main takes {arity} pointers, expected {expected}")
            return
    raise Error("build: the lowered module has no main function")
