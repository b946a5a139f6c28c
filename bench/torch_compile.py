"""Benchmark `torch.compile(backend="xrelay")` against torch eager and against
`torch.compile` with its default backend (inductor), side by side in one run.

    python bench/torch_compile.py [--models bert_base,resnet50] [--runs 10] [--seconds 3]
                                  [--settle 0.2] [--json out.json] [--smoke]

Models (transformers configs, seeded random weights, nothing downloaded): BERT-base
(`BertConfig()`, batch 1, sequence 128) and ResNet-50 (`ResNetConfig()`, 1x3x224x224).
`--smoke` swaps in tiny configs of the same architectures (2-layer BERT of width 64, a
ResNet with one block per stage on 64x64 images) to check the script end to end in seconds.

Per model: build it, compile it with each backend (the first call, timed: "compile s"), check
that every system's outputs agree with eager torch (largest error relative to the output's
largest magnitude), then time all three under torch.no_grad() with 2 torch threads, warm-up
first, alternating the systems in turns (xrelay.tools.timing.alternate) until each has at least
`--runs` runs and `--seconds` seconds. Reports the median (and min) ms of each and the ratios
xrelay/eager and xrelay/inductor (below 1: xrelay is faster). A backend that fails to compile
is reported as failed; the others still run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SYSTEMS = ("eager", "xrelay", "inductor")


def build(name: str, smoke: bool) -> tuple[Any, tuple[Any, ...]]:
    import torch
    import transformers as T

    torch.manual_seed(0)
    if name == "bert_base":
        if smoke:
            c = T.BertConfig(
                hidden_size=64,
                num_hidden_layers=2,
                num_attention_heads=4,
                intermediate_size=128,
                vocab_size=1000,
                max_position_embeddings=64,
            )
            ids = torch.randint(0, 1000, (1, 32))
        else:
            c = T.BertConfig()
            ids = torch.randint(0, c.vocab_size, (1, 128))
        return T.BertModel(c).eval(), (ids,)
    if name == "resnet50":
        if smoke:
            c = T.ResNetConfig(depths=[1, 1, 1, 1], hidden_sizes=[32, 64, 128, 256])
            return T.ResNetModel(c).eval(), (torch.randn(1, 3, 64, 64),)
        return T.ResNetModel(T.ResNetConfig()).eval(), (torch.randn(1, 3, 224, 224),)
    raise SystemExit(f"unknown model {name!r}: bert_base, resnet50")


def flat(value: Any) -> list[Any]:
    import torch

    if isinstance(value, dict):
        return [t for v in value.values() for t in flat(v)]
    if isinstance(value, list | tuple):
        return [t for v in value for t in flat(v)]
    return [value] if isinstance(value, torch.Tensor) else []


def max_error(got: list[Any], want: list[Any]) -> float:
    worst = 0.0
    for g, w in zip(got, want, strict=True):
        scale = max(float(w.abs().max()), 1e-30)
        worst = max(worst, float((g - w).abs().max()) / scale)
    return worst


def measure(name: str, args: argparse.Namespace) -> dict[str, Any]:
    import torch
    from xrelay.dynamo import STATS
    from xrelay.tools.timing import alternate

    model, inputs = build(name, args.smoke)
    with torch.no_grad():
        want = flat(model(*inputs))
    fns: dict[str, Callable[..., Any]] = {
        "eager": model,
        "xrelay": torch.compile(model, backend="xrelay"),
        "inductor": torch.compile(model),
    }
    row: dict[str, Any] = {"model": name}
    calls: dict[str, Callable[[], object]] = {}
    for system, fn in fns.items():
        eager_before = STATS["eager"]
        try:
            with torch.no_grad():
                start = time.perf_counter()
                got = flat(fn(*inputs))
                row[f"{system} compile s"] = time.perf_counter() - start
        except Exception as e:  # noqa: BLE001 - report the failure, time the others
            row[f"{system} failed"] = f"{type(e).__name__}: {str(e)[:200]}"
            continue
        row[f"{system} error"] = max_error(got, want)
        if system == "xrelay" and STATS["eager"] != eager_before:
            row["xrelay note"] = "some graphs ran in eager torch (see the log)"
        calls[system] = lambda fn=fn: fn(*inputs)

    def no_grad(fn: Callable[[], object]) -> Callable[[], object]:
        def run() -> object:
            with torch.no_grad():
                return fn()

        return run

    times = alternate(
        {k: no_grad(v) for k, v in calls.items()}, args.runs, args.seconds, args.settle
    )
    for system, ts in times.items():
        row[f"{system} ms"] = 1e3 * statistics.median(ts)
        row[f"{system} min ms"] = 1e3 * min(ts)
    if "xrelay ms" in row:
        for other in ("eager", "inductor"):
            if f"{other} ms" in row:
                row[f"xrelay/{other}"] = row["xrelay ms"] / row[f"{other} ms"]
    return row


def report(rows: list[dict[str, Any]]) -> None:
    head = f"{'model':<10}" + "".join(f"{s + ' ms':>14}" for s in SYSTEMS)
    head += f"{'xr/eager':>10}{'xr/ind':>8}{'xr err':>10}{'xr comp s':>11}{'ind comp s':>11}"
    print(head)
    for r in rows:
        line = f"{r['model']:<10}"
        for s in SYSTEMS:
            ms, lo = r.get(f"{s} ms"), r.get(f"{s} min ms")
            line += f"{f'{ms:.2f} ({lo:.2f})':>14}" if ms is not None else f"{'failed':>14}"
        for key, width, fmt in (
            ("xrelay/eager", 10, ".2f"),
            ("xrelay/inductor", 8, ".2f"),
            ("xrelay error", 10, ".1e"),
            ("xrelay compile s", 11, ".1f"),
            ("inductor compile s", 11, ".1f"),
        ):
            value = r.get(key)
            line += f"{format(value, fmt) if value is not None else '-':>{width}}"
        print(line)
        for key, value in r.items():
            if key.endswith(("failed", "note")):
                print(f"  {key}: {value}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="bert_base,resnet50")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--settle", type=float, default=0.2)
    parser.add_argument("--json", default=None)
    parser.add_argument("--smoke", action="store_true", help="tiny models, to check the script")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(2)
    rows = []
    for name in args.models.split(","):
        rows.append(measure(name.strip(), args))
        print(f"done {name}", file=sys.stderr)
    report(rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
