"""The compile cache: `build` looks a module up before compiling and stores what it
compiled, as artifacts (lowering/artifact.py), so a second process building the same
model loads it instead.

Where: `XRELAY_CACHE_DIR`, else `$XDG_CACHE_HOME/xrelay` (`~/.cache/xrelay`);
`XRELAY_CACHE_DIR=off` (or `build(..., cache=False)`) skips it. The key hashes the module
text, the parameters, the build options, the target (CPU and features) and the versions
of xrelay's own source, LLVM and llvmlite, so a change to any of them misses. An entry
that does not load (truncated, corrupt, another format) is removed and rebuilt, never
used; entries are written to a temporary file and renamed, so concurrent writers never
leave a partial one. Above `XRELAY_CACHE_MAX_MB` (default 4096) the least recently used
entries are removed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from xrelay.errors import Error
from xrelay.lowering import artifact
from xrelay.lowering.compile_worker import blake2b  # CPython's own: no OpenSSL
from xrelay.lowering.host import cache_dir  # the folder (also the CPU's description's)
from xrelay.lowering.jit import Library

SUFFIX = ".xrl"


@cache
def source_hash() -> str:
    """A hash of xrelay's own Python source (a changed lowering misses the cache)."""
    root = Path(__file__).resolve().parent.parent
    digest = blake2b(digest_size=32)
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] in ("tests", "bench") or "__pycache__" in rel.parts:
            continue
        digest.update(str(rel).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def key(module_text: str, params: Mapping[str, np.ndarray], options: Mapping[str, Any]) -> str:
    digest = blake2b(digest_size=32)
    head = {"options": dict(options), "versions": artifact.versions(), "source": source_hash()}
    digest.update(json.dumps(head, sort_keys=True, default=str).encode())
    digest.update(module_text.encode())
    for name in sorted(params):
        array = np.asarray(params[name], order="C")
        digest.update(f"{name}:{array.dtype.name}:{array.shape}".encode())
        digest.update(array.reshape(-1).view(np.uint8).data)
    return digest.hexdigest()


def get(entry_key: str) -> Library | None:
    """The cached library for `entry_key`, or None (a broken entry is removed)."""
    folder = cache_dir()
    if folder is None:
        return None
    path = folder / (entry_key + SUFFIX)
    if not path.is_file():
        return None
    try:
        lib = artifact.load(path)
    except Error:
        path.unlink(missing_ok=True)
        return None
    try:
        os.utime(path)  # least recently used goes first
    except OSError:
        pass
    lib.times["cache"] = lib.times.pop("load", 0.0)
    return lib


def put(entry_key: str, lib: Library) -> None:
    """Store `lib` (quietly skipped if the folder cannot be written or lib cannot be saved)."""
    folder = cache_dir()
    if folder is None or lib.externals or not lib.runnable_here:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        artifact.save(lib, folder / (entry_key + SUFFIX))
    except (OSError, Error):
        return
    _evict(folder)


def _evict(folder: Path) -> None:
    limit = int(float(os.environ.get("XRELAY_CACHE_MAX_MB", "4096")) * 2**20)
    entries = []
    for path in folder.glob("*" + SUFFIX):
        try:
            st = path.stat()
        except OSError:
            continue
        entries.append((st.st_mtime, st.st_size, path))
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries):
        if total <= limit:
            break
        path.unlink(missing_ok=True)
        total -= size
