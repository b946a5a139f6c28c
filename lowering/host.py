"""This machine as LLVM names it: the process triple, the CPU's name and its enabled features,
and LLVM's version. Asked once per process: from llvmlite where this process has LLVM
loaded already (a compile worker; XRELAY_COMPILE_WORKER=0), else from a short-lived
process running this file, so a process that only builds through the compile workers and
runs models never loads LLVM itself (about 40 MB of resident memory). What that process
says is kept in the compile cache's folder (`host-<key>.json`, XRELAY_CACHE_DIR; not with
XRELAY_CACHE_DIR=off), keyed by the CPU as the kernel lists it (/proc/cpuinfo's model name
and flags), the interpreter and llvmlite's files: the next process, a serving process that
loads an artifact say, reads it instead of starting one (about 20 MB of its peak and
0.1-0.2 s).

    python -P lowering/host.py     prints the description as JSON
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

_DESCRIPTION: dict[str, Any] | None = None
_LOCK = threading.Lock()


def _ask_llvm() -> dict[str, Any]:
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    return {
        "triple": llvm.get_process_triple(),
        "default_triple": llvm.get_default_triple(),
        "cpu": llvm.get_host_cpu_name(),
        "llvm_features": llvm.get_host_cpu_features().flatten(),
        "llvm": ".".join(map(str, llvm.llvm_version_info)),
    }


def describe() -> dict[str, Any]:
    """{"triple" (the process's), "default_triple" (LLVM's default: the triple of the
    IR `build` translates), "cpu", "llvm_features" (LLVM's "+a,-b" string), "llvm" (its
    version)}."""
    global _DESCRIPTION
    with _LOCK:
        if _DESCRIPTION is None:
            if "llvmlite.binding" in sys.modules:
                _DESCRIPTION = _ask_llvm()
            else:
                _DESCRIPTION = _remembered() or _remember(_ask_process())
        return dict(_DESCRIPTION)


KEYS = ("triple", "default_triple", "cpu", "llvm_features", "llvm")


def cache_dir() -> Path | None:
    """The compile cache's folder (lowering/cache.py), or None when the cache is off."""
    value = os.environ.get("XRELAY_CACHE_DIR", "").strip()
    if value.lower() in ("off", "0", "none", "false"):
        return None
    if value:
        return Path(value)
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or Path.home() / ".cache"
    return Path(base) / "xrelay"


def _key() -> str | None:
    """What the description depends on: the CPU's model and flags as the kernel lists
    them, the interpreter, llvmlite's package files; None where /proc/cpuinfo or llvmlite
    cannot be read (then nothing is remembered)."""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = sorted({line for line in f if line.startswith(("model name", "flags"))})
        import importlib.util

        spec = importlib.util.find_spec("llvmlite")
        if not cpu or spec is None or spec.origin is None:
            return None
        folder = Path(spec.origin).parent
        files = [folder / "binding" / name for name in sorted(os.listdir(folder / "binding"))]
        stamps = [f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in files]
    except (OSError, ValueError):
        return None
    text = "\n".join([*cpu, sys.executable, str(folder), *stamps])
    try:  # CPython's own BLAKE2: hashlib would load OpenSSL into the process
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - a build without it
        from hashlib import blake2b
    return blake2b(text.encode(), digest_size=16).hexdigest()


def _path() -> Path | None:
    folder, key = cache_dir(), _key()
    return None if folder is None or key is None else folder / f"host-{key}.json"


def _remembered() -> dict[str, Any] | None:
    """The description a process on this CPU with this llvmlite wrote, if any."""
    path = _path()
    try:
        found = json.loads(path.read_text()) if path is not None else None
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict) or sorted(found) != sorted(KEYS):
        return None
    return found


def _remember(description: dict[str, Any]) -> dict[str, Any]:
    """Write `description` for the next process (a temporary file renamed: a concurrent
    reader sees all of it or none); a folder that cannot be written is skipped."""
    path = _path()
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(description))
            os.replace(tmp, path)
        except OSError:
            pass
    return description


def _ask_process() -> dict[str, Any]:
    flags = ["-P"] if sys.version_info >= (3, 11) else []
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        done = subprocess.run(
            [sys.executable, *flags, os.path.abspath(__file__)],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            check=False,
        )
        if done.returncode == 0:
            return json.loads(done.stdout)
        reason = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
    except (OSError, subprocess.TimeoutExpired) as e:
        reason = str(e)
    # the process could not run: ask LLVM here (what the caller would otherwise have done)
    try:
        return _ask_llvm()
    except Exception as e:  # noqa: BLE001 - both ways failed: say why
        # imported here: run as a script, this file must not import the xrelay package
        from xrelay.errors import Error

        raise Error(f"could not ask LLVM about this CPU: {reason}; {e}") from None


if __name__ == "__main__":
    print(json.dumps(_ask_llvm()))
