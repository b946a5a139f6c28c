"""Peak resident memory of one system running one model, in a process of its own.

    python bench/memory.py SYSTEM MODEL.onnx INPUTS.npz     (SYSTEM: xrelay, onnxruntime, openvino)

prints the process's peak RSS in MB after import, build and three runs (what a user's
serving process holds at its worst, interpreter and libraries included). `bench/run.py`
calls `peak_mb` for each system after timing a model, so no system's allocations (or the
timing process's own) count against another's.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SYSTEMS = ("xrelay", "onnxruntime", "openvino")


def _run(system: str, model: str, inputs_path: str) -> None:
    import numpy as np
    from run import OPENVINO_CONFIG, ort_session  # bench/, this script's folder, is on sys.path

    inputs = dict(np.load(inputs_path))
    if system == "xrelay":
        import xrelay

        module, params = xrelay.from_onnx(model)
        # what a serving process would do (and xrelay compile/bench/profile do): the
        # originals go as their packed copies are made
        lib = xrelay.build(module, params, cache=False, release_params=True)
        call = lambda: lib.run(**inputs)
    elif system == "onnxruntime":
        session = ort_session(model)
        call = lambda: session.run(None, inputs)
    else:
        import openvino as ov

        compiled = ov.Core().compile_model(model, "CPU", OPENVINO_CONFIG)
        request = compiled.create_infer_request()
        call = lambda: request.infer(inputs)
    for _ in range(3):
        call()
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent across fork and exec
    with open("/proc/self/status") as f:
        hwm = next(line for line in f if line.startswith("VmHWM:"))
    print(int(hwm.split()[1]) / 1024)


def peak_mb(system: str, model: Path, inputs: Path) -> float | None:
    """`system`'s peak RSS (MB) for `model` on `inputs` in a new process; None if it failed
    (OpenVINO not installed, say)."""
    done = subprocess.run(
        [sys.executable, __file__, system, str(model), str(inputs)],
        check=False,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if done.returncode != 0:
        return None
    return float(done.stdout.split()[-1])


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in SYSTEMS:
        sys.exit(__doc__)
    _run(*sys.argv[1:])
