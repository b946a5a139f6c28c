"""`xrelay`: the model-level command line.

    xrelay inspect FILE   parse and verify a model (textual IR .mlir, or .onnx), print its
                          functions' signatures and an op histogram
    xrelay run MODEL.onnx [--input NAME=FILE.npy ...] [--output OUT.npz] [--time-passes]
                          compile and run a model (random inputs of the declared shapes
                          when none are given), print each output's name, shape, dtype and
                          a short summary

Every failure is one line `xrelay: error: ...` on stderr and exit code 1.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xrelay.errors import Error
from xrelay.ir import parse_module, verify_module


def load_module(path: Path) -> ModuleOp:
    """A verified module from a textual IR file or an ONNX model."""
    if path.suffix == ".onnx":
        from xrelay import from_onnx

        module, _ = from_onnx(str(path))
        return module
    try:
        text = path.read_bytes()
    except OSError as e:
        raise Error(f"cannot read {path}: {e.strerror}") from None
    module = parse_module(text, str(path))
    verify_module(module)
    return module


def describe(module: ModuleOp) -> str:
    lines: list[str] = []
    for op in module.walk():
        if isinstance(op, func.FuncOp):
            ins = ", ".join(str(t) for t in op.function_type.inputs)
            outs = ", ".join(str(t) for t in op.function_type.outputs)
            lines.append(f"func @{op.sym_name.data}({ins}) -> ({outs})")
    counts = Counter(op.name for op in module.walk() if op.dialect_name() in ("relay", "qnn"))
    lines.append(f"{sum(counts.values())} ops")
    lines += [f"  {n:5d}  {name}" for name, n in counts.most_common()]
    return "\n".join(lines)


def cmd_inspect(args: argparse.Namespace) -> None:
    print(describe(load_module(Path(args.file))))


def _random_input(shape: tuple[int, ...], dtype: np.dtype, rng: np.random.Generator) -> np.ndarray:
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 10, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _read_inputs(specs: list[str]) -> dict[str, np.ndarray]:
    inputs = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep:
            raise Error(f"--input takes NAME=FILE.npy, got '{spec}'")
        try:
            inputs[name] = np.load(path)
        except (OSError, ValueError, EOFError) as e:
            raise Error(f"cannot read input '{name}' from {path}: {e}") from None
    return inputs


def cmd_run(args: argparse.Namespace) -> None:
    import time

    from xrelay import from_onnx
    from xrelay.lowering import build
    from xrelay.signature import FunctionSignature, main_function

    path = Path(args.model)
    start = time.perf_counter()
    module, params = from_onnx(str(path))
    imported = time.perf_counter() - start
    lib = build(module, params)
    compiled = time.perf_counter() - start
    sig = FunctionSignature.of(main_function(module))
    inputs = _read_inputs(args.input)
    rng = np.random.default_rng(0)
    for arg in sig.inputs:
        if arg.name not in inputs:
            inputs[arg.name] = _random_input(arg.shape, arg.dtype, rng)
    start = time.perf_counter()
    outputs = lib.run(**inputs)
    ran = time.perf_counter() - start
    names = _output_names(path, len(outputs))
    print(f"{path.name}: imported in {imported:.2f} s, compiled in {compiled:.2f} s, ran in {ran * 1000:.1f} ms")
    if args.time_passes:
        for stage, seconds in lib.times.items():
            print(f"  {stage:16s} {seconds:8.3f} s")
    for name, out in zip(names, outputs):
        summary = ""
        if out.size and np.issubdtype(out.dtype, np.number):
            summary = f" min {out.min():.6g} max {out.max():.6g} mean {out.mean():.6g}"
        print(f"{name}: shape {list(out.shape)} {out.dtype}{summary}")
    if args.output:
        np.savez(args.output, **dict(zip(names, outputs)))


def _output_names(path: Path, n: int) -> list[str]:
    import onnx

    try:
        graph = onnx.load(str(path), load_external_data=False).graph
        return [o.name for o in graph.output][:n]
    except Exception:  # noqa: BLE001 - names are only decoration
        return [f"output_{i}" for i in range(n)]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="xrelay", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    inspect = sub.add_parser("inspect", help="parse, verify and summarize a model")
    inspect.add_argument("file")
    inspect.set_defaults(run=cmd_inspect)
    run = sub.add_parser("run", help="compile and run an ONNX model")
    run.add_argument("model")
    run.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    run.add_argument("--output", metavar="OUT.npz")
    run.add_argument("--time-passes", action="store_true", help="print the time of each stage")
    run.set_defaults(run=cmd_run)
    args = parser.parse_args(argv)
    try:
        args.run(args)
    except Error as e:
        print(f"xrelay: error: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
