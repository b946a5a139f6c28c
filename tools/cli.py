"""`xrelay`: the model-level command line.

    xrelay inspect FILE [--dot OUT.dot]
                          a model (.onnx, .pt2 saved by torch.export, .tflite, textual IR .mlir):
                          inputs and parameters apart, shapes with their symbols, results,
                          the op histogram with GFLOP per op type, and with --dot a
                          Graphviz graph; an artifact (.xrl): target, signature, sizes.
                          Every verb takes .pt2 and .tflite models where it takes ONNX models.
    xrelay compile MODEL.onnx -o OUT.xrl [--shape NAME=1x3x224x224 ...] [--target-cpu CPU]
                          compile a model and save it as an artifact (lowering/artifact.py)
    xrelay bench MODEL.onnx [--compare onnxruntime] [--runs N] [--seconds S] [--shape ...]
                          latency of the compiled model (median and min over alternating
                          turns) beside onnxruntime's in the same run, on the same inputs
    xrelay profile MODEL.onnx [--runs N] [--trace OUT.json] [--shape ...]
                          time per op type and per kernel (% of the total, GFLOP/s), the
                          sum against the measured run time; a Chrome trace with --trace
    xrelay bisect MODEL.onnx [--input NAME=FILE.npy ...] [--shape ...] [--rtol R] [--atol A]
                          compile with every intermediate value exposed, compare each with
                          the reference executor, name the first op that diverges (exit 1)
                          or say none does (exit 0)
    xrelay run MODEL.onnx|OUT.xrl [--input NAME=FILE.npy ...] [--shape NAME=1x3x224x224 ...]
                          [--dim NAME=VALUE ...] [--output OUT.npz] [--repeat N] [--time-passes]
                          compile (or load) and run a model (random inputs of the declared
                          shapes when none are given), print each output's name, shape,
                          dtype and a short summary; with --repeat, the first run's time
                          and the median of N more. A model with dynamic dimensions
                          compiles as such; `--shape` pins an input's shape at import
                          instead, and `--dim` sets a dynamic dimension's size for random
                          inputs (default 1). Compiled models are cached (XRELAY_CACHE_DIR).

Every failure is one line `xrelay: error: ...` on stderr and exit code 1 (`xrelay
--traceback VERB ...` or XRELAY_TRACEBACK=1 prints the traceback too).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xrelay.errors import Error, ShapeError
from xrelay.ir import parse_module, verify_module

MODEL_SUFFIXES = (".onnx", ".pt2", ".tflite", ".mlir")
IMPORTED = (".onnx", ".pt2", ".tflite")  # suffixes of models a frontend imports


def load_model(path: Path, shape_specs: Sequence[str] = ()) -> tuple[ModuleOp, dict]:
    """(module, params) of an ONNX model, a saved torch.export program (.pt2), a TFLite
    flatbuffer or textual IR (.mlir, no parameters), verified; `--shape` specs pin ONNX and
    TFLite inputs."""
    if not path.is_file():
        raise Error(f"cannot read {path}: no such file")
    shapes = _parse_shapes(list(shape_specs)) or None
    if path.suffix == ".onnx":
        from xrelay import from_onnx

        return from_onnx(str(path), shape=shapes)
    if path.suffix == ".tflite":
        from xrelay import from_tflite

        return from_tflite(str(path), shape=shapes)
    if shapes:
        raise Error("--shape applies to ONNX and TFLite models")
    if path.suffix == ".pt2":
        import logging
        import zipfile

        from xrelay import from_exported_program

        if not zipfile.is_zipfile(path):
            raise Error(f"{path.name}: not a saved torch.export program (not a zip archive)")
        try:
            import torch
        except ImportError:
            raise Error(f"{path.name}: reading .pt2 programs needs torch") from None
        # after importing torch, which sets its loggers' levels: torch logs a traceback
        # before raising on a broken archive
        quiet = logging.getLogger("torch.export")
        level = quiet.level
        quiet.setLevel(logging.CRITICAL)
        try:
            program = torch.export.load(str(path))
        except Exception as e:  # noqa: BLE001 - any unreadable archive is one line
            raise Error(
                f"{path.name}: not a saved torch.export program ({type(e).__name__})"
            ) from None
        finally:
            quiet.setLevel(level)
        return from_exported_program(program)
    if path.suffix in (".mlir", ".xdsl", ".ir"):
        return load_module(path), {}
    raise Error(
        f"{path.name}: not a model xrelay reads (expected {', '.join(MODEL_SUFFIXES)} or .xrl)"
    )


def load_module(path: Path) -> ModuleOp:
    """A verified module from a textual IR file or an ONNX model."""
    if path.suffix in IMPORTED:
        return load_model(path)[0]
    try:
        text = path.read_bytes()
    except OSError as e:
        raise Error(f"cannot read {path}: {e.strerror}") from None
    module = parse_module(text, str(path))
    verify_module(module)
    return module


def describe(module: ModuleOp, params: dict | None = None) -> str:
    """Inputs and parameters apart (shapes with their symbols), results, and the op
    histogram with FLOPs per op type (static shapes)."""
    from xrelay.signature import FunctionSignature, argument_text
    from xrelay.tools.profile import op_flops

    lines: list[str] = []
    for op in module.walk():
        if not isinstance(op, func.FuncOp) or not op.body.blocks:
            continue
        if op.sym_name.data != "main":
            ins = ", ".join(str(t) for t in op.function_type.inputs)
            outs = ", ".join(str(t) for t in op.function_type.outputs)
            lines.append(f"func @{op.sym_name.data}({ins}) -> ({outs})")
            continue
        sig = FunctionSignature.of(op)
        lines.append("inputs:")
        lines += [f"  {a.name}: {argument_text(a)}" for a in sig.inputs]
        weights = [a for a in sig.args if a.is_param]
        if weights:
            total = sum(int(np.prod(a.shape)) * a.dtype.itemsize for a in weights)
            lines.append(f"parameters: {len(weights)} ({total / 2**20:.1f} MiB)")
        lines.append("results:")
        lines += [f"  {i}: {sig.result_text(i)}" for i in range(len(sig.results))]
        for name, lo, hi in sig.dim_ranges:
            lines.append(f"dimension {name} in [{lo}, {hi}]")
    counts: Counter[str] = Counter()
    flops: Counter[str] = Counter()
    for op in module.walk():
        if op.dialect_name() in ("relay", "qnn"):
            counts[op.name] += 1
            flops[op.name] += op_flops(op)
    lines.append(f"{sum(counts.values())} ops, {sum(flops.values()) / 1e9:.3f} GFLOP")
    lines += [
        f"  {n:5d}  {name:<32}{flops[name] / 1e9:>10.4f} GFLOP"
        if flops[name]
        else f"  {n:5d}  {name}"
        for name, n in counts.most_common()
    ]
    return "\n".join(lines)


def describe_artifact(path: Path) -> str:
    from xrelay import load
    from xrelay.dialects.dims import fmt_dims

    lib = load(path)
    meta, target, sig = lib.meta, lib.target, lib.signature
    kept = sum(a.nbytes for a in lib.params.values())
    lines = [
        f"artifact for {target['cpu']} ({target['triple']}, {len(target['features'])} CPU features)",
        f"options {meta.get('options', {})}, model {meta.get('model_hash', '')[:16]}",
        "inputs:",
        *[f"  {a.name}: {a.dtype.name}{fmt_dims(a.shape)}" for a in sig.inputs],
        (
            f"parameters: {len(lib.params)} kept ({kept / 2**20:.1f} MiB), "
            f"{len(lib.unused_params)} folded into prepacked copies"
        ),
        "results:",
        *[f"  {i}: {np.dtype(d).name}{fmt_dims(s)}" for i, (s, d) in enumerate(sig.results)],
        f"object code: {sum(map(len, lib.objects)) / 1024:.0f} KiB in {len(lib.objects)} objects",
    ]
    return "\n".join(lines)


def write_dot(module: ModuleOp, out: Path) -> None:
    """A Graphviz graph of @main: one node per relay/qnn op (name, node, result shape),
    inputs as boxes, an edge per use."""
    from xrelay.ir import location_str
    from xrelay.signature import main_function

    fn = main_function(module)
    ids: dict[Any, str] = {}
    lines = ["digraph model {", "  rankdir=TB; node [shape=ellipse, fontsize=10];"]
    for i, arg in enumerate(fn.body.block.args):
        ids[arg] = f"a{i}"
        lines.append(f'  a{i} [shape=box, label="{arg.name_hint or i}\\n{arg.type}"];')
    for k, op in enumerate(fn.body.block.ops):
        if op.dialect_name() not in ("relay", "qnn") or op.name == "relay.constant":
            continue
        label = f"{op.name}\\n{location_str(op)}"
        if op.results:
            label += f"\\n{op.results[0].type}"
        lines.append(f'  n{k} [label="{label}"];')
        for r in op.results:
            ids[r] = f"n{k}"
        for v in op.operands:
            if v in ids:
                lines.append(f"  {ids[v]} -> n{k};")
    lines.append("}")
    try:
        out.write_text("\n".join(lines) + "\n")
    except OSError as e:
        raise Error(f"cannot write {out}: {e.strerror}") from None


def cmd_inspect(args: argparse.Namespace) -> None:
    path = Path(args.file)
    if path.suffix == ".xrl":
        if args.dot:
            raise Error("--dot draws a model's graph; an artifact holds native code only")
        print(describe_artifact(path))
        return
    if path.suffix not in (*MODEL_SUFFIXES, ".xdsl", ".ir") and path.is_file():
        raise Error(
            f"{path.name}: not a model xrelay reads (expected {', '.join(MODEL_SUFFIXES)} or .xrl)"
        )
    module, params = load_model(path) if path.suffix in IMPORTED else (load_module(path), {})
    print(describe(module, params))
    if args.dot:
        write_dot(module, Path(args.dot))


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


def _parse_shapes(specs: list[str]) -> dict[str, tuple[int, ...]]:
    shapes = {}
    for spec in specs:
        name, sep, dims = spec.partition("=")
        parts = dims.split("x") if dims else []
        if not sep or not name or not all(p.isdigit() for p in parts):
            raise Error(f"--shape takes NAME=DIMxDIMx... (e.g. input=1x3x224x224), got '{spec}'")
        shapes[name] = tuple(int(p) for p in parts)
    return shapes


def _parse_dims(specs: list[str]) -> dict[str, int]:
    dims = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        if not sep or not name or not value.isdigit():
            raise Error(f"--dim takes NAME=SIZE (e.g. batch=4), got '{spec}'")
        dims[name] = int(value)
    return dims


def _concrete(shape: tuple, dims: dict[str, int], name: str) -> tuple[int, ...]:
    """A random input's shape: its dynamic dimensions from --dim, 1 by default."""
    from xrelay.dialects.dims import evaluate

    out = []
    for d in shape:
        if isinstance(d, int):
            out.append(d)
            continue
        binding = {s.name: dims.get(s.name, 1) for s in d.free_symbols}
        try:
            out.append(evaluate(d, binding))
        except ShapeError as e:  # an anonymous dimension
            raise Error(f"input '{name}': cannot choose a size for {d}; pass --input") from e
    return tuple(out)


def cmd_compile(args: argparse.Namespace) -> None:
    from xrelay.lowering import build
    from xrelay.lowering.dynamic import DynamicLibrary

    path = Path(args.model)
    out = Path(args.output)
    if not out.parent.is_dir():
        raise Error(f"cannot write {out}: folder '{out.parent}' does not exist")
    module, params = load_model(path, args.shape)
    lib = build(module, params, target_cpu=args.target_cpu, cache=False, release_params=True)
    if isinstance(lib, DynamicLibrary):
        if lib.native is None:
            raise Error(
                f"{path.name} has dynamic dimensions that compile per shape here "
                f"({lib.refused}); an artifact holds one build: pin the inputs with "
                "--shape NAME=DIMS"
            )
        lib = lib.native  # one build for every shape
    lib.meta["output_names"] = _output_names(path, len(lib.signature.results))
    lib.meta["source"] = path.name
    lib.save(out)
    seconds = sum(lib.times.values())
    print(f"{path.name}: compiled in {seconds:.2f} s for {lib.target['cpu']} -> {out}")


def _complete_inputs(sig: Any, inputs: dict[str, np.ndarray], dims: dict[str, int]) -> None:
    """Random inputs of the declared shapes (dynamic dimensions from --dim) for the inputs
    no file gives."""
    from xrelay.signature import argument_text

    rng = np.random.default_rng(0)
    for arg in sig.inputs:
        if arg.name not in inputs and (arg.sequence or arg.optional):
            raise Error(
                f"input '{arg.name}' ({argument_text(arg)}): the CLI reads and makes tensors "
                "only; give a tensor with --input, or run the model from Python (lib.run "
                "takes a list for a sequence, None for an empty optional)"
            )
        if arg.name not in inputs:
            shape = _concrete(arg.shape, dims, arg.name)
            inputs[arg.name] = _random_input(shape, arg.dtype, rng)


def _load_model(
    args: argparse.Namespace, path: Path, inputs: dict[str, np.ndarray]
) -> tuple[Any, Any, dict, list[str] | None]:
    """(library, signature, params, output names) of an artifact or a model; the inputs
    are completed and checked against the model's signature before anything compiles."""
    from xrelay import load
    from xrelay.lowering import build
    from xrelay.signature import FunctionSignature, bind_dims, check_inputs, main_function

    dims = _parse_dims(args.dim)
    if path.suffix == ".xrl":
        if args.shape:
            raise Error("--shape applies to models, not to a compiled artifact")
        lib = load(path)
        _complete_inputs(lib.signature, inputs, dims)
        names = lib.meta.get("output_names") or []
        n = len(lib.signature.results)
        names = names if len(names) == n else [f"output_{i}" for i in range(n)]
        return lib, lib.signature, lib.params, names
    module, params = load_model(path, args.shape)
    sig = FunctionSignature.of(main_function(module))
    _complete_inputs(sig, inputs, dims)
    bind_dims(sig, check_inputs(sig, (), inputs, params))  # a wrong input fails here
    return build(module, params), sig, params, None


def cmd_run(args: argparse.Namespace) -> None:
    import time

    from xrelay.lowering.dynamic import DynamicLibrary
    from xrelay.signature import bind_dims, check_inputs

    path = Path(args.model)
    if args.repeat < 1:
        raise Error(f"--repeat takes a positive count, got {args.repeat}")
    if args.output and not Path(args.output).resolve().parent.is_dir():
        raise Error(f"cannot write {args.output}: its folder does not exist")
    inputs = _read_inputs(args.input)
    start = time.perf_counter()
    lib, sig, params, names = _load_model(args, path, inputs)
    loaded = time.perf_counter() - start
    if isinstance(lib, DynamicLibrary):  # compile for these shapes now, not in the timed run
        arrays = check_inputs(sig, (), inputs, params)
        values = {i: arrays[i] for i in lib.value_inputs}
        lib = lib.specialization(bind_dims(sig, arrays), values)
    compiled = time.perf_counter() - start
    start = time.perf_counter()
    outputs = lib.run(**inputs)
    ran = time.perf_counter() - start
    names = names or _output_names(path, len(outputs))
    how = "loaded" if path.suffix == ".xrl" else "compiled"
    if "cache" in lib.times:
        how = "loaded from the cache"
    took = loaded if path.suffix == ".xrl" else compiled
    print(f"{path.name}: {how} in {took:.2f} s, ran in {ran * 1000:.1f} ms")
    if args.repeat > 1:
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            lib.run(**inputs)
            times.append(time.perf_counter() - start)
        print(
            f"first run {ran * 1000:.2f} ms, steady state {np.median(times) * 1000:.2f} ms "
            f"(median of {args.repeat})"
        )
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


def cmd_bench(args: argparse.Namespace) -> None:
    import onnx
    from xrelay.lowering import build
    from xrelay.lowering.dynamic import DynamicLibrary
    from xrelay.signature import FunctionSignature, main_function
    from xrelay.tools.timing import alternate

    path = Path(args.model)
    if args.runs < 1 or args.seconds < 0:
        raise Error("--runs takes a positive count and --seconds a non-negative time")
    module, params = load_model(path, args.shape)
    lib = build(module, params, release_params=True)
    if isinstance(lib, DynamicLibrary):
        raise Error(f"{path.name} has dynamic dimensions: pin them with --shape NAME=DIMS")
    sig = FunctionSignature.of(main_function(module))
    rng = np.random.default_rng(0)
    inputs = {
        a.name: _random_input(_concrete(a.shape, {}, a.name), a.dtype, rng) for a in sig.inputs
    }
    calls = {"xrelay": lambda: lib.run(**inputs)}
    if args.compare == "onnxruntime":
        if path.suffix != ".onnx":
            raise Error("--compare onnxruntime needs an ONNX model (use --compare none)")
        try:
            import onnxruntime as ort
        except ImportError:
            raise Error("--compare onnxruntime needs the onnxruntime package") from None
        options = ort.SessionOptions()
        options.intra_op_num_threads = 2
        options.log_severity_level = 3
        model = onnx.load(str(path))
        session = ort.InferenceSession(
            model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        calls["onnxruntime"] = lambda: session.run(None, inputs)
    rounds: dict = {}
    times = alternate(calls, args.runs, args.seconds, settle=0.2, stats=rounds)
    median = {k: float(np.median(v)) * 1e3 for k, v in times.items()}
    print(f"{'system':<13}{'median ms':>11}{'min ms':>10}{'runs':>7}")
    for system, values in times.items():
        print(f"{system:<13}{median[system]:>11.3f}{min(values) * 1e3:>10.3f}{len(values):>7}")
    if "onnxruntime" in median:
        print(f"ratio xrelay/onnxruntime: {median['xrelay'] / median['onnxruntime']:.2f}")
    # rounds in the machine's slow state (xrelay.tools.timing: its CPUs passed a cache line
    # over twice as slowly as at best) are dropped
    if rounds["all_rounds"]:
        print(f"rounds: {rounds['rounds']} run, none in the machine's best state: all counted")
    elif rounds["kept"] < rounds["rounds"]:
        print(f"rounds: {rounds['rounds']} run, {rounds['kept']} kept (the rest in a slow state)")


def cmd_profile(args: argparse.Namespace) -> None:
    import json

    from xrelay.lowering import build
    from xrelay.lowering.dynamic import DynamicLibrary
    from xrelay.tools import profile

    path = Path(args.model)
    if args.runs < 1:
        raise Error(f"--runs takes a positive count, got {args.runs}")
    if args.trace and not Path(args.trace).parent.is_dir():
        raise Error(f"cannot write {args.trace}: its folder does not exist")
    module, params = load_model(path, args.shape)
    lib = build(module, params, profile=True, release_params=True)
    if isinstance(lib, DynamicLibrary):
        raise Error(f"{path.name} has dynamic dimensions: pin them with --shape NAME=DIMS")
    rng = np.random.default_rng(0)
    inputs = {
        a.name: _random_input(_concrete(a.shape, {}, a.name), a.dtype, rng)
        for a in lib.signature.inputs
    }
    sites, wall = profile.measure(lib, inputs, args.runs)
    nodes = profile.node_ops(module)
    rows = profile.summarize(sites, nodes)
    total = sum(r.ms for r in rows)
    print(f"{'op type':<28}{'ms/run':>10}{'%':>8}{'calls':>7}{'GFLOP/s':>10}")
    for r in rows:
        share = 100 * r.ms / total if total else 0.0
        print(f"{r.name:<28}{r.ms:>10.3f}{share:>8.1f}{r.calls:>7}{r.gflops:>10.2f}")
    node_ms: dict[str, float] = {}
    for s in sites:
        node_ms[s["node"]] = node_ms.get(s["node"], 0.0) + s["ms"]
    print(f"\n{'kernel':<28}{'node':<28}{'ms/run':>10}{'%':>8}{'node GFLOP/s':>14}")
    for s in sorted(sites, key=lambda s: -s["ms"])[: args.top]:
        share = 100 * s["ms"] / total if total else 0.0
        flops, ms = nodes.get(s["node"], ("", 0))[1], node_ms[s["node"]]
        rate = f"{flops / ms / 1e6:>14.1f}" if flops and ms > 0 else ""
        print(f"{s['kernel'][:27]:<28}{s['node'][:27]:<28}{s['ms']:>10.3f}{share:>8.1f}{rate}")
    print(
        f"\ntotal of calls {total:.3f} ms, measured run {wall:.3f} ms "
        f"(median of {args.runs}; the rest is the call from Python and input checks)"
    )
    if args.trace:
        Path(args.trace).write_text(json.dumps(profile.chrome_trace(sites, nodes)))
        print(f"Chrome trace: {args.trace}")


def cmd_bisect(args: argparse.Namespace) -> None:
    from xrelay.signature import FunctionSignature, main_function
    from xrelay.tools.bisect import bisect

    path = Path(args.model)
    module, params = load_model(path, args.shape)
    sig = FunctionSignature.of(main_function(module))
    inputs = _read_inputs(args.input)
    rng = np.random.default_rng(0)
    for arg in sig.inputs:
        if arg.name not in inputs:
            inputs[arg.name] = _random_input(_concrete(arg.shape, {}, arg.name), arg.dtype, rng)
    report = bisect(module, params, inputs, args.rtol, args.atol)
    if report.first is None:
        print(f"{path.name}: no op diverges ({report.checked} values compared)")
        return
    print(f"{path.name}: {report.first}")
    sys.exit(1)


def _output_names(path: Path, n: int) -> list[str]:
    if path.suffix == ".tflite":
        try:
            from xrelay.frontends.tflite.model import read_model

            model = read_model(path.read_bytes(), path.name)
            return [model.tensors[i].name for i in model.outputs][:n]
        except Exception:  # noqa: BLE001 - names are only decoration
            return [f"output_{i}" for i in range(n)]
    if path.suffix != ".onnx":
        return [f"output_{i}" for i in range(n)]
    import onnx

    try:
        graph = onnx.load(str(path), load_external_data=False).graph
        return [o.name for o in graph.output][:n]
    except Exception:  # noqa: BLE001 - names are only decoration
        return [f"output_{i}" for i in range(n)]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="xrelay", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--traceback", action="store_true", help="print the whole traceback of a failure"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    inspect = sub.add_parser("inspect", help="parse, verify and summarize a model")
    inspect.add_argument("file")
    inspect.add_argument("--dot", metavar="OUT.dot", help="write @main as a Graphviz graph")
    inspect.set_defaults(run=cmd_inspect)
    comp = sub.add_parser("compile", help="compile an ONNX model into an artifact (.xrl)")
    comp.add_argument("model")
    comp.add_argument("-o", "--output", required=True, metavar="OUT.xrl")
    comp.add_argument("--shape", action="append", default=[], metavar="NAME=1x3x224x224")
    comp.add_argument(
        "--target-cpu",
        default=None,
        metavar="CPU",
        help="host (default) or a portable level: x86-64-v2, x86-64-v3, x86-64-v4",
    )
    comp.set_defaults(run=cmd_compile)
    ben = sub.add_parser("bench", help="latency, beside onnxruntime's in the same run")
    ben.add_argument("model")
    ben.add_argument("--compare", choices=["onnxruntime", "none"], default="onnxruntime")
    ben.add_argument("--runs", type=int, default=10)
    ben.add_argument("--seconds", type=float, default=2.0)
    ben.add_argument("--shape", action="append", default=[], metavar="NAME=1x3x224x224")
    ben.set_defaults(run=cmd_bench)
    pro = sub.add_parser("profile", help="time per op type and kernel")
    pro.add_argument("model")
    pro.add_argument("--runs", type=int, default=20)
    pro.add_argument("--top", type=int, default=10, help="kernels listed")
    pro.add_argument("--trace", metavar="OUT.json", help="write a Chrome trace")
    pro.add_argument("--shape", action="append", default=[], metavar="NAME=1x3x224x224")
    pro.set_defaults(run=cmd_profile)
    bis = sub.add_parser("bisect", help="name the first op whose compiled value diverges")
    bis.add_argument("model")
    bis.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    bis.add_argument("--shape", action="append", default=[], metavar="NAME=1x3x224x224")
    bis.add_argument("--rtol", type=float, default=1e-3)
    bis.add_argument("--atol", type=float, default=1e-4, help="relative to the value's scale")
    bis.set_defaults(run=cmd_bisect)
    run = sub.add_parser("run", help="compile (or load an artifact) and run a model")
    run.add_argument("model")
    run.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    run.add_argument(
        "--shape",
        action="append",
        default=[],
        metavar="NAME=1x3x224x224",
        help="pin an input's shape at import (its dynamic dimensions become these sizes)",
    )
    run.add_argument(
        "--dim",
        action="append",
        default=[],
        metavar="NAME=SIZE",
        help="the size of a dynamic dimension for random inputs (default 1)",
    )
    run.add_argument("--output", metavar="OUT.npz")
    run.add_argument("--repeat", type=int, default=1, metavar="N", help="time N more runs")
    run.add_argument("--time-passes", action="store_true", help="print the time of each stage")
    run.set_defaults(run=cmd_run)
    args = parser.parse_args(argv)
    from xrelay.lowering import pipeline
    from xrelay.tools.report import fail

    pipeline.PROGRESS = True  # shown only when stderr is a terminal
    try:
        args.run(args)
    except (Exception, KeyboardInterrupt) as e:  # noqa: BLE001 - one line, never a traceback
        fail("xrelay", e, args.traceback)


if __name__ == "__main__":
    main()
