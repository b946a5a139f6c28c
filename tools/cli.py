"""`xrelay`: the model-level command line.

    xrelay inspect FILE   parse and verify a model (textual IR .mlir, or .onnx), print its
                          functions' signatures and an op histogram

Every failure is one line `xrelay: error: ...` on stderr and exit code 1.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from xrelay.errors import Error
from xrelay.ir import parse_module, verify_module


def load_module(path: Path) -> ModuleOp:
    """A verified module from a textual IR file or an ONNX model."""
    if path.suffix == ".onnx":
        from xrelay.frontends.onnx import from_onnx

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


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="xrelay", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    inspect = sub.add_parser("inspect", help="parse, verify and summarize a model")
    inspect.add_argument("file")
    inspect.set_defaults(run=cmd_inspect)
    args = parser.parse_args(argv)
    try:
        args.run(args)
    except Error as e:
        print(f"xrelay: error: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
