"""This machine as LLVM names it: the process triple, the CPU's name and its enabled features,
and LLVM's version. Asked once per process: from llvmlite where this process has LLVM
loaded already (a compile worker; XRELAY_COMPILE_WORKER=0), else from a short-lived
process running this file, so a process that only builds through the compile workers and
runs models never loads LLVM itself (about 40 MB of resident memory).

    python -P lowering/host.py     prints the description as JSON
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
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
                _DESCRIPTION = _ask_process()
        return dict(_DESCRIPTION)


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
