"""Peak resident memory of one system running one model, in a process of its own.

    python bench/memory.py SYSTEM MODEL.onnx INPUTS.npz
        (SYSTEM: xrelay, xrelay-artifact, onnxruntime, openvino)

prints the process's peak RSS in MB after import, build and three runs (what a user's
serving process holds at its worst, interpreter and libraries included). `xrelay-artifact`
is a serving process that loads the model compiled ahead of time (`xrelay compile`, made
by a process of its own that is not measured: MODEL.xrl beside the model) and runs it
three times: no compiler, no LLVM, the parameters memory-mapped from the file. `peak_mb` also
counts the processes it starts (xrelay's LLVM compile workers: about 100 MB each at their
peak, half of it libLLVM's pages, which they share), sampling the tree while it runs.
`bench/run.py` calls `peak_mb` for each system after timing a model, so no system's
allocations (or the timing process's own) count against another's, and `floor_mb` once: each
system's peak on a model of one Relu (what it holds whatever the model: the interpreter,
its libraries; for xrelay building, the compiler and LLVM's code in its workers).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

SYSTEMS = ("xrelay", "xrelay-artifact", "onnxruntime", "openvino")


def artifact_path(model: str | Path) -> Path:
    return Path(model).with_suffix(".xrl")


def _run(system: str, model: str, inputs_path: str) -> None:
    import numpy as np
    from run import OPENVINO_CONFIG, ort_session  # bench/, this script's folder, is on sys.path

    inputs = dict(np.load(inputs_path))
    if system == "save":  # not measured: the artifact xrelay-artifact loads
        import xrelay

        module, params = xrelay.from_onnx(model)
        xrelay.build(module, params, cache=False, release_params=True).save(artifact_path(model))
        return
    if system == "xrelay-artifact":
        import xrelay

        lib = xrelay.load(artifact_path(model))
        call = lambda: lib.run(**inputs)
    elif system == "xrelay":
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


def floor_mb(folder: Path) -> dict[str, float | None]:
    """Each system's peak (MB, `peak_mb`) on a model of one Relu on 8 floats, saved in
    `folder`."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper

    model, inputs = folder / "floor.onnx", folder / "floor.inputs.npz"
    io = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 8]) for n in "xy"]
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "floor", io[:1], io[1:])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    np.savez(inputs, x=np.ones((1, 8), np.float32))
    return {system: peak_mb(system, model, inputs) for system in SYSTEMS}


def _tree(pid: int) -> list[int]:
    """`pid` and its descendants (xrelay's LLVM worker processes)."""
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except OSError:
            pass  # gone meanwhile
    return pids


def _tree_kb(pid: int) -> int:
    """Resident KB of `pid`'s process tree now: every process's anonymous pages, plus each
    mapped file's pages once (the most any process of the tree has of it resident: the
    workers share libLLVM's pages, and the interpreter's with their parent)."""
    anon, once = 0, {}  # once: (device, inode) -> the most KB one process has of the file
    for p in _tree(pid):
        try:
            with open(f"/proc/{p}/smaps") as f:
                text = f.read()
        except OSError:
            continue
        key, mine = None, {}
        for line in text.splitlines():
            first = line.split(maxsplit=6)
            if not first:
                continue
            if "-" in first[0] and len(first) >= 5:  # a mapping's header
                key = None if first[4] == "0" else (first[3], first[4])
            elif first[0] == "Rss:":
                if key is None:
                    anon += int(first[1])
                else:
                    mine[key] = mine.get(key, 0) + int(first[1])
        for key, kb in mine.items():
            once[key] = max(once.get(key, 0), kb)
    return anon + sum(once.values())


def peak_mb(system: str, model: Path, inputs: Path) -> float | None:
    """`system`'s peak resident memory (MB) for `model` on `inputs` in a new process, with
    the processes it starts (xrelay compiles in worker processes): the process's own
    high-water mark, or the tree's resident memory sampled every 10 ms while it runs
    (files' pages counted once), whichever is more; None if it failed (OpenVINO not
    installed, say). `xrelay-artifact` first saves the artifact it loads, in a process of
    its own that is not measured."""
    if system == "xrelay-artifact":
        made = subprocess.run(
            [sys.executable, __file__, "save", str(model), str(inputs)],
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if made.returncode != 0:
            return None
    proc = subprocess.Popen(
        [sys.executable, __file__, system, str(model), str(inputs)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    tree_kb = 0
    start = time.monotonic()
    while proc.poll() is None and time.monotonic() - start < 1800:
        tree_kb = max(tree_kb, _tree_kb(proc.pid))
        time.sleep(0.01)
    if proc.poll() is None:
        proc.kill()
    out, _ = proc.communicate()
    if proc.returncode != 0:
        return None
    return max(float(out.split()[-1]), tree_kb / 1024)


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in (*SYSTEMS, "save"):
        sys.exit(__doc__)
    _run(*sys.argv[1:])
