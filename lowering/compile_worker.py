"""LLVM IR -> object code (O2 + code generation), in a worker process by default.

`object_codes(ir_texts, target)` is what `Library` compiles with: the parts of one module
(lowering/split_module.py), one worker process per CPU at once. llvmlite 0.50 leaks about
65 KB per optimization run (LLVMPY_CreatePassBuilder allocates a PassInstrumentationCallbacks it never
frees, and every run registers more callbacks into it), so a process that builds a thousand
models would grow by 65 MB. The compile therefore runs in persistent worker processes
(this file run as a script: it imports llvmlite only, never the xrelay package), restarted
every `RECYCLE` compiles, which returns the leak to the system; the object code comes back
and is JIT-linked in the calling process as an artifact's is. A side effect: an LLVM abort
while optimizing or generating code ends the worker, not the caller, and becomes an
`xrelay.Error` with LLVM's message.

Workers idle for IDLE_SECONDS are stopped (each holds about 50 MB besides libLLVM's shared
pages: a serving process that built its model once should not keep them) by a reaper
thread `prestart` starts once per process; the next build starts them again (0.1 s each).

XRELAY_COMPILE_WORKER=0 compiles in the calling process instead (no subprocess, one part
after another); XRELAY_COMPILE_JOBS=n sets how many workers compile at once.

`linked_text(ir_texts)` links modules into one (the model's, the runtime's) in a worker
too, so the calling process never loads LLVM: it links the object code itself
(lowering/object_loader.py) and asks for the host's description once (lowering/host.py).

Protocol on the worker's stdin/stdout, per request: a 4-byte big-endian length and a JSON
header (`{"target": ..., "pic": ..., "link": ...}`), an 8-byte length and the IR text
(UTF-8; with "link", a JSON list of IR texts). Reply: one status byte (0: object code, or
the linked IR text, follows; 1: an error message follows), an 8-byte length, the bytes.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import selectors
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    from collections.abc import Callable

    import llvmlite.binding as llvm

RECYCLE = 100  # compiles per worker process before it is replaced
IDLE_SECONDS = 10.0  # workers unused this long are stopped


class CompileError(Exception):
    """The worker could not compile (an Error in the caller's terms)."""


_initialized = False


def _llvm() -> Any:
    """llvmlite's binding to LLVM, ready for this machine (imported here, not at the top:
    the caller's process imports this module and need not load LLVM)."""
    global _initialized
    import llvmlite.binding

    if not _initialized:
        llvmlite.binding.initialize_native_target()
        llvmlite.binding.initialize_native_asmprinter()
        _initialized = True
    return llvmlite.binding


def target_machine(target: dict[str, Any], pic: bool = False) -> llvm.TargetMachine:
    """The machine code is generated for: LLVM's JIT code model (large: no assumption on
    where the JIT linker puts sections). `pic` False (what `build` runs): absolute
    addresses, which MCJIT's linker resolves across several objects; position-independent
    code uses GOT-relative relocations, which it resolves against the first object's GOT
    only (RuntimeDyldELF's R_X86_64_GOTOFF64), so a module compiled in parts must not be
    PIC. `pic` True: one object linked into a shared library (export_library)."""
    llvm = _llvm()
    return llvm.Target.from_triple(target["triple"]).create_target_machine(
        cpu=target["cpu"],
        features=target["llvm_features"],
        opt=3,
        reloc="pic" if pic else "static",
    )


def optimize(module: llvm.ModuleRef, machine: llvm.TargetMachine) -> None:
    """LLVM's O2 module pipeline, in place (each call leaks inside llvmlite: see above).
    O3 gave the same code where it matters (outputs bit for bit, the same speed on six
    models in a same-process A/B: the GEMM is written vectorized) for 14 % more build time
    (ResNet-50 3.30 -> 2.85 s)."""
    llvm = _llvm()
    tuning = llvm.create_pipeline_tuning_options(speed_level=2)
    # full unrolling of the many constant-trip loops costs minutes of compile time
    tuning.loop_unrolling = False
    # kernels stay separate functions: inlining them into main rebuilds the one huge
    # function that outline-kernels exists to avoid
    tuning.inlining_threshold = 0
    # the SLP vectorizer found nothing: the same object code without it for every part of
    # the 14 benchmark models (the runtime is written in vectors, the kernels' loops are the
    # loop vectorizer's), and the GEMM runtime's part compiled 1.45 -> 1.30 s
    tuning.slp_vectorization = False
    builder = llvm.create_pass_builder(machine, tuning)
    builder.getModulePassManager().run(module, builder)


def compile_here(ir_text: str, target: dict[str, Any], pic: bool = False) -> bytes:
    """Optimize and generate code in this process."""
    llvm = _llvm()
    machine = target_machine(target, pic)
    module = llvm.parse_assembly(ir_text)
    module.verify()
    optimize(module, machine)
    return machine.emit_object(module)


def link_here(ir_texts: list[str]) -> str:
    """The modules (their texts) linked into the first, verified, as LLVM prints it."""
    llvm = _llvm()
    linked = llvm.parse_assembly(ir_texts[0])
    for text in ir_texts[1:]:
        part = llvm.parse_assembly(text)
        part.verify()
        linked.link_in(part)
    linked.verify()
    return str(linked)


# --- the worker side -----------------------------------------------------------------------


def _read_exact(stream: BinaryIO, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = stream.read(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return bytes(data)


def serve(inp: BinaryIO, out: BinaryIO) -> None:
    """Answer requests until the input closes."""
    while True:
        try:
            (size,) = struct.unpack(">I", _read_exact(inp, 4))
        except EOFError:
            return
        header = json.loads(_read_exact(inp, size))
        (size,) = struct.unpack(">Q", _read_exact(inp, 8))
        body = _read_exact(inp, size).decode()
        try:
            if header.get("link"):
                status, payload = 0, link_here(json.loads(body)).encode()
            else:
                status, payload = 0, compile_here(body, header["target"], header["pic"])
        except Exception as e:  # noqa: BLE001 - every failure goes back as a message
            status, payload = 1, f"{type(e).__name__}: {e}".encode()
        out.write(bytes([status]) + struct.pack(">Q", len(payload)) + payload)
        out.flush()


# --- the caller side -----------------------------------------------------------------------


class Worker:
    """One compile process, started on first use, replaced every RECYCLE compiles, after a
    crash, and in a forked child (which must not share its parent's pipes)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.proc: subprocess.Popen | None = None
        self.pid = 0
        self.jobs = 0
        self.stderr: Any = None

    def _start(self) -> None:
        self._stop()
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the worker
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        # -P: the script's folder (lowering/) is not put first on sys.path, where its modules
        # could shadow others
        flags = ["-P"] if sys.version_info >= (3, 11) else []
        self.proc = subprocess.Popen(
            [sys.executable, *flags, os.path.abspath(__file__)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=env,
        )
        self.pid = os.getpid()
        self.jobs = 0

    def _stop(self) -> None:
        proc = self.proc
        if proc is not None and self.pid == os.getpid():
            try:
                proc.stdin.close()  # type: ignore[union-attr]
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()
        # only now: a worker without its process has none running (the reaper's stop was
        # seen half done, the process still exiting, in CI)
        self.proc = None
        if self.stderr is not None:
            self.stderr.close()
            self.stderr = None

    def _stderr_tail(self) -> str:
        if self.stderr is None:
            return ""
        self.stderr.seek(0)
        lines = self.stderr.read().decode(errors="replace").strip().splitlines()
        return "; ".join(lines[-3:])

    def ensure(self) -> None:
        """A running process of this one's own (under `lock`)."""
        if (
            self.proc is None
            or self.pid != os.getpid()
            or self.proc.poll() is not None
            or self.jobs >= RECYCLE
        ):
            if self.pid != os.getpid():
                self.proc = None  # the parent's worker: leave it alone
            self._start()

    def compile(self, ir_text: str, target: dict[str, Any], pic: bool = False) -> bytes:
        with self.lock:
            self.send(ir_text, target, pic)
            return self.receive()

    def link(self, ir_texts: list[str]) -> str:
        with self.lock:
            self.send(json.dumps(ir_texts), None, False, link=True)
            return self.receive().decode()

    def send(
        self, ir_text: str, target: dict[str, Any] | None, pic: bool, link: bool = False
    ) -> None:
        """Hand the worker one module, or (`link`) a JSON list of modules to link (the
        caller holds `lock` until `receive`)."""
        self.ensure()
        assert self.proc is not None and self.proc.stdin is not None
        self.jobs += 1
        header = json.dumps({"target": target, "pic": pic, "link": link}).encode()
        body = ir_text.encode()
        try:
            stdin = self.proc.stdin
            stdin.write(struct.pack(">I", len(header)) + header)
            stdin.write(struct.pack(">Q", len(body)))
            stdin.write(body)
            stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._stopped() from None

    def fileno(self) -> int:
        """The worker's output (readable when its object code is on the way)."""
        assert self.proc is not None and self.proc.stdout is not None
        return self.proc.stdout.fileno()

    def receive(self) -> bytes:
        """The object code of the module `send` handed over."""
        assert self.proc is not None and self.proc.stdout is not None
        try:
            stdout = self.proc.stdout
            status = _read_exact(stdout, 1)[0]
            (size,) = struct.unpack(">Q", _read_exact(stdout, 8))
            payload = _read_exact(stdout, size)
        except (EOFError, OSError):
            raise self._stopped() from None
        if status != 0:
            raise CompileError(payload.decode(errors="replace"))
        return payload

    def _stopped(self) -> CompileError:
        assert self.proc is not None
        code = self.proc.wait()
        tail = self._stderr_tail()
        self._stop()
        how = f"signal {-code}" if code < 0 else f"exit code {code}"
        return CompileError(
            f"LLVM stopped the compiler process ({how})" + (f": {tail}" if tail else "")
        )


_WORKERS: list[Worker] = []


def _stop_all() -> None:
    """At exit: stop the workers; one still busy (compiling ahead for a build that will not
    use it) is killed, not waited for."""
    for worker in _WORKERS:
        if worker.lock.acquire(blocking=False):
            try:
                worker._stop()
            finally:
                worker.lock.release()
        elif worker.proc is not None and worker.pid == os.getpid():
            worker.proc.kill()  # its thread reads the end of the output and gives up


atexit.register(_stop_all)

_IDLE = threading.Condition()
_deadline: float | None = None  # when the workers are stopped if nothing uses them before
_reaper_pid = 0  # the process whose reaper thread runs (a forked child starts its own)


def _stop_idle() -> None:
    """Stop every worker no build is using now (one in use is left running: its build
    schedules the next check when it is done)."""
    for worker in _WORKERS:
        if worker.lock.acquire(blocking=False):
            try:
                worker._stop()
            finally:
                worker.lock.release()


def _reap() -> None:
    """The reaper thread: stops the workers at the deadline, which every use moves on."""
    global _deadline
    while True:
        with _IDLE:
            while _deadline is None or time.monotonic() < _deadline:
                _IDLE.wait(None if _deadline is None else _deadline - time.monotonic())
            _deadline = None
        _stop_idle()


def _after_fork_in_child() -> None:
    """A forked child gets a fresh condition (the parent's reaper may have held its lock
    at the fork) and no deadline; its first prestart starts its own reaper."""
    global _IDLE, _deadline, _AHEAD_LOCK, _AHEAD_QUEUE
    _IDLE = threading.Condition()
    _deadline = None
    # the parent's requests to compile ahead run on its thread and workers, not here
    _AHEAD_LOCK = threading.Lock()
    _AHEAD_QUEUE = queue.SimpleQueue()
    _AHEAD.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _stop_when_idle(start: bool = False) -> None:
    """Stop the workers IDLE_SECONDS from now unless they are used again; `start` (from
    `prestart`): the reaper thread too, once per process (one long-lived thread: a thread
    per build would hold malloc arenas of its own)."""
    global _deadline, _reaper_pid
    with _IDLE:
        _deadline = time.monotonic() + IDLE_SECONDS
        if start and _reaper_pid != os.getpid():
            _reaper_pid = os.getpid()
            threading.Thread(target=_reap, name="xrelay-llvm-reaper", daemon=True).start()
        _IDLE.notify()


def use_worker() -> bool:
    return os.environ.get("XRELAY_COMPILE_WORKER", "1").strip() not in ("0", "false", "no")


def jobs() -> int:
    """How many modules compile at once: XRELAY_COMPILE_JOBS, else the CPUs this process may
    run on (at most 8: each worker holds its own LLVM)."""
    value = os.environ.get("XRELAY_COMPILE_JOBS", "").strip()
    if value:
        try:
            return max(1, int(value))
        except ValueError:
            raise CompileError(f"XRELAY_COMPILE_JOBS must be an integer, not '{value}'") from None
    if not use_worker():
        return 1  # one process, one LLVM context: not thread-safe
    return max(1, min(8, len(os.sched_getaffinity(0))))


def prestart() -> None:
    """Start the `jobs()` worker processes now if they are not running (each takes about
    0.1 s to import llvmlite: `build` calls this before its passes)."""
    try:
        n = jobs() if use_worker() else 0
    except CompileError:
        return  # the compile reports it
    while len(_WORKERS) < n:
        _WORKERS.append(Worker())
    for worker in _WORKERS:
        if worker.lock.acquire(blocking=False):  # (one busy compiling ahead is running)
            try:
                worker.ensure()
            finally:
                worker.lock.release()
    _stop_when_idle(start=True)


def linked_text(ir_texts: list[str]) -> str:
    """LLVM modules (their texts) linked into one, verified, as LLVM prints it (by a
    worker, or here with XRELAY_COMPILE_WORKER=0); raises CompileError."""
    if not use_worker():
        try:
            return link_here(ir_texts)
        except RuntimeError as e:
            raise CompileError(str(e)) from None
    if not _WORKERS:
        _WORKERS.append(Worker())
    try:
        return _WORKERS[0].link(ir_texts)
    finally:
        _stop_when_idle()


def object_code(ir_text: str, target: dict[str, Any], pic: bool = False) -> bytes:
    """Object code of an LLVM module (its text) for `target`, not cached; raises
    CompileError."""
    return _compile_all([ir_text], target, pic)[0]


# object code by (IR text, target): the same text compiles to the same bytes, and the
# GEMM runtime's part (split_module) is the same text in every model that has it. Only
# texts of CACHE_MIN_TEXT characters or more are kept (the runtime's parts; a small
# model's parts compile in milliseconds, and a process building many different ones
# would otherwise fill the cache with them)
_CACHE: OrderedDict[bytes, bytes] = OrderedDict()
CACHE_BYTES = 16 << 20  # least recently used entries go beyond this
CACHE_MIN_TEXT = 64 * 1024


# CPython's own BLAKE2: `hashlib` loads OpenSSL's libcrypto, 3.6 MB of resident memory
# in every process that builds a model
try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover (another interpreter)
    from hashlib import blake2b


def _key(ir_text: str, target: dict[str, Any]) -> bytes:
    digest = blake2b(json.dumps(target, sort_keys=True).encode())
    digest.update(ir_text.encode())
    return digest.digest()


_CACHE_LOCK = threading.Lock()  # builds may run on several threads


def _remember(key: bytes, code: bytes) -> None:
    with _CACHE_LOCK:
        _CACHE[key] = code
        total = sum(map(len, _CACHE.values()))
        while total > CACHE_BYTES and len(_CACHE) > 1:
            total -= len(_CACHE.popitem(last=False)[1])


def object_codes(ir_texts: list[str], target: dict[str, Any]) -> list[bytes]:
    """Object code (absolute addresses) of each LLVM module (their texts) for `target`:
    from this process's cache, or compiled by up to `jobs()` worker processes at once,
    the longest texts first; raises CompileError (the first failure's). A text that a
    `compile_ahead` request is compiling is waited for, not compiled again."""
    keys = [_key(text, target) for text in ir_texts]
    ahead = _ahead_of(keys)
    with _CACHE_LOCK:
        known = {k: _CACHE[k] for k in keys if k in _CACHE}
        for k in known:
            _CACHE.move_to_end(k)
    coming = {k for request in ahead for k in request.keys} - set(known)
    todo = [n for n, k in enumerate(keys) if k not in known and k not in coming]
    made = _compile_all([ir_texts[n] for n in todo], target)
    for request in ahead:
        request.done.wait()
    with _CACHE_LOCK:
        known.update({k: _CACHE[k] for k in coming if k in _CACHE})
    late = [n for n, k in enumerate(keys) if k in coming and k not in known]  # failed ahead
    made += _compile_all([ir_texts[n] for n in late], target)
    for n, code in zip(todo + late, made):
        known[keys[n]] = code
        if len(ir_texts[n]) >= CACHE_MIN_TEXT:
            _remember(keys[n], code)
    return [known[k] for k in keys]


# --- compiling ahead: while the passes run, the GEMM runtime's part on an idle worker ------


class _Request:
    """One `compile_ahead` request: the cache keys it compiles (set before `ready`) and
    whether it is over (`done`)."""

    def __init__(self) -> None:
        self.keys: set[bytes] = set()
        self.ready = threading.Event()
        self.done = threading.Event()


_AHEAD: list[_Request] = []  # requests not over
_AHEAD_LOCK = threading.Lock()
_AHEAD_QUEUE: queue.SimpleQueue = queue.SimpleQueue()  # for the thread that serves them
_ahead_pid = 0  # the process whose thread serves them (a forked child starts its own)


def can_compile_ahead() -> bool:
    """Is a worker free to compile ahead (two or more, the first linking the build's own
    module)?"""
    try:
        return use_worker() and jobs() >= 2
    except CompileError:
        return False


def compile_ahead(
    ir_texts: list[str], target: dict[str, Any], select: Callable[[str], list[str]]
) -> bool:
    """Link `ir_texts` and compile, into the cache, the modules `select` makes of the
    linked text (those of CACHE_MIN_TEXT characters or more, not cached yet), on a thread
    of its own and the last worker, while the caller goes on: `object_codes` of the same
    texts waits for them. Only with two workers or more (the first links the build's own
    module). A failure is dropped: the build compiles the text itself and reports it.
    Returns whether the request was made."""
    if not can_compile_ahead():
        return False
    while len(_WORKERS) < jobs():
        _WORKERS.append(Worker())
    request = _Request()
    global _ahead_pid
    with _AHEAD_LOCK:
        _AHEAD.append(request)
        _AHEAD_QUEUE.put((request, _WORKERS[jobs() - 1], ir_texts, target, select))
        if _ahead_pid != os.getpid():  # one long-lived thread per process (see _compile_in_workers)
            _ahead_pid = os.getpid()
            threading.Thread(target=_serve_ahead, name="xrelay-llvm-ahead", daemon=True).start()
    return True


def _serve_ahead() -> None:
    while True:
        request = _AHEAD_QUEUE.get()
        _compile_ahead(*request)


def _compile_ahead(
    request: _Request,
    worker: Worker,
    ir_texts: list[str],
    target: dict[str, Any],
    select: Callable[[str], list[str]],
) -> None:
    todo: list[tuple[bytes, str]] = []
    try:
        try:
            texts = [t for t in select(worker.link(ir_texts)) if len(t) >= CACHE_MIN_TEXT]
            with _CACHE_LOCK:
                todo = [(k, t) for k, t in ((_key(t, target), t) for t in texts) if k not in _CACHE]
            request.keys = {k for k, _ in todo}
        except Exception:  # noqa: BLE001 - the build compiles what this did not
            todo = []
        finally:
            request.ready.set()
        for key, text in todo:
            try:
                code = worker.compile(text, target)
            except Exception:  # noqa: BLE001, S112 - (CompileError, or the process exiting)
                continue
            _remember(key, code)
    finally:
        with _AHEAD_LOCK:
            if request in _AHEAD:
                _AHEAD.remove(request)
        request.done.set()
        _stop_when_idle()


def _ahead_of(keys: list[bytes]) -> list[_Request]:
    """The requests that compile some of `keys` (each waited for until its keys are
    known)."""
    with _AHEAD_LOCK:
        requests = list(_AHEAD)
    wanted = set(keys)
    found = []
    for request in requests:
        request.ready.wait()
        if request.keys & wanted:
            found.append(request)
    return found


def _compile_all(ir_texts: list[str], target: dict[str, Any], pic: bool = False) -> list[bytes]:
    if not ir_texts:
        return []
    if not use_worker():
        try:
            return [compile_here(text, target, pic) for text in ir_texts]
        except RuntimeError as e:
            raise CompileError(str(e)) from None
    try:
        return _compile_in_workers(ir_texts, target, pic)
    finally:
        _stop_when_idle()


def _compile_in_workers(ir_texts: list[str], target: dict[str, Any], pic: bool) -> list[bytes]:
    n = min(jobs(), len(ir_texts))
    while len(_WORKERS) < n:
        _WORKERS.append(Worker())
    if n == 1:
        return [_WORKERS[0].compile(text, target, pic) for text in ir_texts]
    # one thread hands modules out and collects the object code (no thread per worker: the
    # object code's buffers would be allocated in each new thread's malloc arena, and a
    # long-lived process that builds often grew by a few MB per arena)
    results: list[bytes | None] = [None] * len(ir_texts)
    errors: list[CompileError] = []
    left = sorted(range(len(ir_texts)), key=lambda k: -len(ir_texts[k]))
    # the workers that are free (one compiling ahead joins when it is done); never waiting
    # for one while holding another, so two building threads cannot deadlock
    pool = _WORKERS[: jobs()]
    held: list[Worker] = []
    for worker in pool:
        if len(held) < len(ir_texts) and worker.lock.acquire(blocking=False):
            held.append(worker)
    if not held:
        pool[0].lock.acquire()
        held = [pool[0]]
    try:
        with selectors.DefaultSelector() as busy:

            def hand_out(worker: Worker) -> None:
                k = left.pop(0)
                try:
                    worker.send(ir_texts[k], target, pic)
                except CompileError as e:
                    errors.append(e)
                    return
                busy.register(worker, selectors.EVENT_READ, k)

            for worker in held:
                if left:
                    hand_out(worker)
            while busy.get_map():
                waiting = len(held) < len(pool) and left and not errors
                for key, _ in busy.select(0.02 if waiting else None):
                    worker, k = key.fileobj, key.data
                    busy.unregister(worker)
                    try:
                        results[k] = worker.receive()  # type: ignore[union-attr]
                    except CompileError as e:
                        errors.append(e)
                    if left and not errors:
                        hand_out(worker)  # type: ignore[arg-type]
                if waiting:
                    for worker in pool:
                        if worker not in held and left and worker.lock.acquire(blocking=False):
                            held.append(worker)
                            hand_out(worker)
    finally:
        for worker in held:
            worker.lock.release()
    if errors:
        raise errors[0]
    return [r for r in results if r is not None]


if __name__ == "__main__":
    serve(sys.stdin.buffer, sys.stdout.buffer)
