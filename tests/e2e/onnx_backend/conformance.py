"""ONNX backend conformance: every node case of the onnx package through from_onnx +
xrelay.build + lib.run (the JIT), compared as the ONNX runner does (same number of
outputs, dtype and shape, assert_allclose with the case's rtol/atol, NaN equal).

    python -m xrelay.tests.e2e.onnx_backend.conformance [--jobs 2] [--timeout 120] [--filter SUBSTR]
                                                 [--executor jit|debug] [--write-table]
                                                 [--specialize]

By default each case runs as a user runs it: `from_onnx(model)` with no `shape=` and no
`const_inputs`, one build, then every data set of the case. `--specialize` instead pins
inputs of unknown dimensions to the case's shapes and binds graph inputs that determine a
shape (a Reshape target, reduction axes...) to the case's values at import, one build per
data set (the table then differs: run it with --write-table in that mode to compare).

Each case runs in a worker process; a worker that crashes or hangs is replaced and the case
is counted as `crash` / `timeout`, so one case cannot stop the run. Outcomes:
pass, unsupported (UnsupportedOpsError), error (any other xrelay.Error), mismatch (a wrong
answer: the worst outcome), crash, timeout.

Every case that does not pass is listed in `node_expected.tsv` (name, outcome, reason);
the run fails on a mismatch, a crash, a case whose outcome differs from the table, or an
unexpected pass (remove it from the table), so the table stays true. `--write-table`
rewrites the table from the run.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
import time
import traceback
import warnings
from collections import Counter
from pathlib import Path

TABLE = Path(__file__).with_name("node_expected.tsv")
OUTCOMES = ("pass", "unsupported", "error", "mismatch", "crash", "timeout")


def as_array(value):
    """A case's input or expected output as numpy: some cases store TensorProtos (the
    float8, 4-bit and bfloat16 ones), which become ml_dtypes arrays."""
    import numpy as np
    from onnx import TensorProto, numpy_helper

    if isinstance(value, TensorProto):
        return numpy_helper.to_array(value)
    if value is None or isinstance(value, list):  # an empty optional, a sequence
        return value
    return np.asarray(value)


def compare(outputs, expected, rtol: float, atol: float) -> None:
    """As the ONNX runner compares: dtype and shape equal, then assert_allclose. Types numpy
    cannot promote (ml_dtypes' narrow floats and ints) are compared as float32 (exact for
    them); bfloat16 with at least two bfloat16 ulps of relative tolerance, as the ONNX
    runner allows."""
    import numpy as np

    if len(outputs) != len(expected):
        raise AssertionError(f"{len(outputs)} outputs, expected {len(expected)}")
    for i, (got, want) in enumerate(zip(outputs, expected)):
        want = as_array(want)
        if want is None or got is None:  # an optional that holds no value
            if want is not got:
                raise AssertionError(f"output {i}: {got!r}, expected {want!r}")
            continue
        if isinstance(want, list) or isinstance(got, list):  # a sequence: element by element
            if not isinstance(got, list) or not isinstance(want, list):
                raise AssertionError(  # noqa: TRY004 - a mismatch, as the runner reports one
                    f"output {i}: {type(got).__name__}, expected {type(want).__name__}"
                )
            if len(got) != len(want):
                raise AssertionError(f"output {i}: a sequence of {len(got)}, expected {len(want)}")
            compare(got, want, rtol, atol)
            continue
        if got.dtype != want.dtype or got.shape != want.shape:
            raise AssertionError(
                f"output {i}: {got.dtype}{list(got.shape)}, expected {want.dtype}{list(want.shape)}"
            )
        if want.dtype == object:
            raise AssertionError(f"output {i}: object arrays are not compared")
        tol = rtol
        if want.dtype.type.__module__.startswith("ml_dtypes"):
            if want.dtype.name == "bfloat16":
                tol = max(rtol, 2**-6)
            got, want = got.astype(np.float32), want.astype(np.float32)
        np.testing.assert_allclose(got, want, rtol=tol, atol=atol, equal_nan=True)


RUNTIME_VALUE = re.compile(r"\('([^']+)'\) computed at run time: it must be a constant")


def _producers(graph, into: dict) -> dict:
    """value name -> the names it is computed from, subgraphs included: a node with a
    subgraph (If, Loop, Scan) depends on everything its subgraphs read."""
    for node in graph.node:
        reads = [i for i in node.input if i]
        for attr in node.attribute:
            for sub in [attr.g] if attr.HasField("g") else list(attr.graphs):
                inner = _producers(sub, {})
                reads += [i for deps in inner.values() for i in deps]
                into.update(inner)
        for out in node.output:
            into[out] = reads
    return into


def graph_inputs_of(graph, value: str) -> set[str]:
    """The graph inputs a value is computed from (itself, if it is one)."""
    producers = _producers(graph, {})
    seen, stack, found = set(), [value], set()
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        reads = producers.get(name)
        if reads is None:
            found.add(name)
        else:
            stack.extend(reads)
    return found


def compile_case(case, executor: str, inputs: list, specialize: bool):
    return compile_model(case.model, executor, inputs, specialize)


def compile_model(model, executor: str, inputs: list, specialize: bool = True):
    """(runner, the inputs it takes, the inputs bound at import). A graph input that
    determines a shape (reduction axes, a Reshape target, ...) cannot be a run-time value
    with static shapes: when the import says so, that input is bound to the case's value
    with `from_onnx(const_inputs=...)` (a compile-time specialization) and the import
    retried. A graph input of unknown dimensions takes the shape of the case's value."""
    import xrelay

    if not specialize:
        module, params = xrelay.from_onnx(model)
        if executor == "jit":
            return xrelay.build(module, params), inputs, []
        return xrelay.create_executor("debug", module, params), inputs, []
    initializers = {t.name for t in model.graph.initializer}
    names = [v.name for v in model.graph.input if v.name not in initializers]
    bound: dict = {}
    shapes = {}
    for value, array in zip([v for v in model.graph.input if v.name not in initializers], inputs):
        dims = value.type.tensor_type.shape.dim
        if not all(d.HasField("dim_value") for d in dims) and hasattr(array, "shape"):
            shapes[value.name] = array.shape
    while True:
        try:
            module, params = xrelay.from_onnx(model, shape=shapes, const_inputs=bound)
            break
        except xrelay.Error as e:
            found = RUNTIME_VALUE.search(str(e))
            needed = graph_inputs_of(model.graph, found.group(1)) if found else set()
            needed = {n for n in needed if n in names and n not in bound}
            if not needed or len(inputs) != len(names):
                raise
            for name in needed:
                bound[name] = inputs[names.index(name)]
    if executor == "jit":
        runner = xrelay.build(module, params)
    else:
        runner = xrelay.create_executor("debug", module, params)
    rest = [x for n, x in zip(names, inputs) if n not in bound] if bound else inputs
    return runner, rest, sorted(bound)


def run_case(case, executor: str, specialize: bool = False) -> tuple[str, str]:
    """(outcome, detail) of one node case, in the current process; a pass that needed
    bound inputs says so in its detail. As a user runs it: one build for every data set."""
    import xrelay

    bound: list[str] = []
    runner = None
    try:
        for inputs, expected in case.data_sets:
            arrays = [as_array(x) for x in inputs]
            if runner is None or specialize:
                runner, rest, bound = compile_case(case, executor, arrays, specialize)
            else:
                rest = arrays
            compare(runner.run(*rest), expected, case.rtol, case.atol)
    except xrelay.UnsupportedOpsError as e:
        return "unsupported", str(e)
    except xrelay.Error as e:
        return "error", str(e).splitlines()[0][:300]
    except AssertionError as e:
        return "mismatch", " ".join(str(e).split())[:300]
    except Exception as e:  # noqa: BLE001 - a bug in xrelay: reported, never fatal
        tb = traceback.extract_tb(e.__traceback__)[-1]
        return "error", f"internal {type(e).__name__}: {e} ({Path(tb.filename).name}:{tb.lineno})"[:300]
    return "pass", f"bound {', '.join(bound)}" if bound else ""


@functools.cache
def _cases() -> dict:
    warnings.filterwarnings("ignore")
    from onnx.backend.test.case.node import collect_testcases

    return {c.name: c for c in collect_testcases(None)}


def run_named(name: str, executor: str, specialize: bool) -> tuple[str, str]:
    """`run_case` of the node case `name` (what each isolated worker runs)."""
    return run_case(_cases()[name], executor, specialize)


def run_all(
    names: list[str], jobs: int, timeout: float, executor: str, specialize: bool = False
) -> dict[str, tuple[str, str]]:
    """Every case in a worker process with a time limit (tests/isolation.py)."""
    from ...isolation import run_isolated

    return run_isolated(
        {name: name for name in names},
        "xrelay.tests.e2e.onnx_backend.conformance:run_named",
        (executor, specialize),
        jobs,
        timeout,
    )


def read_table() -> dict[str, tuple[str, str]]:
    table = {}
    if TABLE.exists():
        for line in TABLE.read_text().splitlines():
            if line and not line.startswith("#"):
                name, outcome, reason = line.split("\t", 2)
                table[name] = (outcome, reason)
    return table


def write_table(results: dict[str, tuple[str, str]]) -> None:
    lines = ["# node case\texpected outcome\treason (from the last --write-table run)"]
    for name in sorted(results):
        outcome, detail = results[name]
        if outcome != "pass":
            lines.append(f"{name}\t{outcome}\t{detail}")
    TABLE.write_text("\n".join(lines) + "\n")


def check_against_table(results: dict[str, tuple[str, str]], table: dict[str, tuple[str, str]]) -> list[str]:
    problems = []
    for name, (outcome, detail) in sorted(results.items()):
        expected = table.get(name, ("pass", ""))[0]
        if outcome in ("mismatch", "crash"):
            problems.append(f"{name}: {outcome}: {detail}")
        elif outcome != expected:
            problems.append(f"{name}: {outcome} but the table says {expected}: {detail}")
    return problems


def summary(results: dict[str, tuple[str, str]]) -> str:
    counts = Counter(outcome for outcome, _ in results.values())
    bound = sum(1 for o, d in results.values() if o == "pass" and d.startswith("bound"))
    note = f"; {bound} of the passes bind shape-determining inputs at compile time" if bound else ""
    return ", ".join(f"{counts.get(o, 0)} {o}" for o in OUTCOMES) + f" (of {len(results)}{note})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--filter", default="")
    parser.add_argument("--executor", choices=("jit", "debug"), default="jit")
    parser.add_argument("--write-table", action="store_true")
    parser.add_argument(
        "--specialize",
        action="store_true",
        help="pin unknown shapes and bind shape-determining inputs at import (not as a user runs it)",
    )
    args = parser.parse_args(argv)
    from onnx.backend.test.case.node import collect_testcases

    names = [c.name for c in collect_testcases(None) if args.filter in c.name]
    start = time.monotonic()
    results = run_all(names, args.jobs, args.timeout, args.executor, args.specialize)
    mode = "specialized" if args.specialize else "as a user runs them"
    print(
        f"node cases ({args.executor}, {mode}): {summary(results)} "
        f"in {time.monotonic() - start:.0f} s"
    )
    if args.write_table:
        write_table(results)
        return 0
    problems = check_against_table(results, read_table())
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
