"""The fuzzing tier: hostile cases (tests/fuzz/cases.py), each in a worker process with a
time limit (tests/isolation.py): xrelay first, alone (a crash there is xrelay's), then
onnxruntime on what xrelay answered, in other workers. Classified:

    typed      an xrelay.Error with a message (what every bad input must give)
    ok         a result that matches onnxruntime's (or a module that parses and verifies)
    lenient    a result for a model onnxruntime refuses, or aborts on (reported, not a
               failure)
    untyped    any other exception            -- a failure
    crash      the worker died (abort, signal) -- a failure
    timeout    no answer in time (a hang)      -- a failure
    wrong      a result that differs from onnxruntime's, or a result for bad run-time
               data onnxruntime refuses (an out-of-range index)  -- a failure

    python -m xrelay.tests.fuzz.run [--cases 1000] [--seed 0] [--jobs 2] [--timeout 60]

prints the counts, then every failure; exit status 1 if any.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

FAILURES = ("untyped", "crash", "timeout", "wrong")


def _same(got: list, want: list) -> bool:
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape:
            return False
        if w.dtype.kind in "fc":
            if not np.allclose(
                g.astype(np.float64), w.astype(np.float64), rtol=1e-4, atol=1e-5, equal_nan=True
            ):
                return False
        elif not np.array_equal(g, w):
            return False
    return True


def _untyped(e: BaseException) -> tuple[str, str]:
    tb = traceback.extract_tb(e.__traceback__)
    where = f" ({Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
    return "untyped", f"{type(e).__name__}: {str(e)[:200]}{where}"


def check_ir(text: str) -> tuple[str, str]:
    import xrelay

    try:
        module = xrelay.parse_module(text)
        xrelay.verify_module(module)
    except xrelay.Error as e:
        return ("typed", str(e)[:200]) if str(e).strip() else ("untyped", "empty message")
    except Exception as e:  # noqa: BLE001 - the point of the tier
        return _untyped(e)
    return "ok", ""


def _sizes(shape) -> list[int]:
    """Sizes for a signature's shape: its ints, and 2 for each dynamic dimension (a
    mutation can make one dynamic: `int` of a symbol raised in the harness, not in xrelay)."""
    return [int(d) if getattr(d, "is_Integer", True) else 2 for d in shape]


def run_xrelay(data: bytes, feeds: dict | None) -> tuple[str, object]:
    """xrelay alone on a model file: ("typed" | "untyped", detail) or ("result", (feeds,
    outputs))."""
    import xrelay

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.onnx"
        path.write_bytes(data)
        try:
            module, params = xrelay.from_onnx(str(path))
            lib = xrelay.build(module, params, cache=False)
            if feeds is None:
                rng = np.random.default_rng(0)
                feeds = {
                    a.name: rng.standard_normal(_sizes(a.shape)).astype(a.dtype)
                    for a in lib.signature.inputs
                }
            got = lib.run(**feeds)
        except xrelay.Error as e:
            return ("typed", str(e)[:200]) if str(e).strip() else ("untyped", "empty message")
        except Exception as e:  # noqa: BLE001 - the point of the tier
            return _untyped(e)
    return "result", (feeds, got)


def check(payload: tuple) -> tuple[str, object]:
    """Phase one, xrelay alone (what each isolated worker runs): a crash here is xrelay's."""
    warnings.filterwarnings("ignore")
    os.environ["XRELAY_CACHE_DIR"] = "off"
    if payload[0] == "ir":
        return check_ir(payload[1])
    _, data, feeds, _ = payload
    return run_xrelay(data, feeds)


def compare(item: tuple) -> tuple[str, str]:
    """Phase two, onnxruntime on the cases xrelay answered (isolated too: onnxruntime
    itself aborts on some malformed models)."""
    import onnxruntime as ort

    data, feeds, got, bad_data = item
    try:
        options = ort.SessionOptions()
        options.log_severity_level = 4
        session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
        want = session.run(None, feeds)
    except Exception as e:  # noqa: BLE001 - onnxruntime refused it
        reason = str(e).splitlines()[0][:150]
        if bad_data:  # a valid model on data onnxruntime refuses: an answer is wrong
            return "wrong", f"an answer for data onnxruntime refuses ({reason})"
        return "lenient", f"onnxruntime: {reason}"
    if not _same(got, want):
        return "wrong", "differs from onnxruntime"
    return "ok", ""


def run(count: int, seed: int, jobs: int, timeout: float) -> dict[str, tuple[str, str]]:
    from ..isolation import run_isolated
    from .cases import generate

    cases = generate(count, seed)
    results = run_isolated(cases, "xrelay.tests.fuzz.run:check", (), jobs, timeout)
    answered = {
        name: (cases[name][1], *results[name][1], cases[name][3])
        for name in results
        if results[name][0] == "result"
    }
    compared = run_isolated(answered, "xrelay.tests.fuzz.run:compare", (), jobs, timeout)
    for name, outcome in compared.items():
        if outcome[0] in ("crash", "timeout"):  # onnxruntime's, not xrelay's
            outcome = ("lenient", f"onnxruntime {outcome[0]}ed on it")
        results[name] = outcome
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=60)
    args = parser.parse_args()
    start = time.monotonic()
    results = run(args.cases, args.seed, args.jobs, args.timeout)
    counts = Counter(outcome for outcome, _ in results.values())
    print(
        f"fuzz cases (seed {args.seed}): "
        + ", ".join(f"{counts[k]} {k}" for k in ("typed", "ok", "lenient", *FAILURES))
        + f" (of {len(results)}) in {time.monotonic() - start:.0f} s"
    )
    for name in sorted(results):
        outcome, detail = results[name]
        if outcome in FAILURES:
            print(f"{name}: {outcome}: {detail}")
    return 1 if any(counts[k] for k in FAILURES) else 0


if __name__ == "__main__":
    sys.exit(main())
