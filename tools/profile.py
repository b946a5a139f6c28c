"""`xrelay profile`: where the time of a compiled model goes, per op type and per kernel.

The model is built with `profile=True` (lowering/instrument_calls.py: every call of the
compiled main is timed with the monotonic clock into counters), run once to warm up and
then `runs` times; each call's mean time is attributed to the model node it came from (its
location), and through the node to its relay op type (the op with the most FLOPs when an
import made several ops of one node). FLOPs come from the relay types: 2 per
multiply-add of convolutions and products (qnn's integer ones too), one per output element
otherwise.

`summarize` gives the table rows; `chrome_trace` a Chrome trace (chrome://tracing,
Perfetto) of one mean run, the calls laid end to end.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp, TensorType
from xdsl.ir import Operation
from xrelay.dialects import qnn, relay
from xrelay.dialects.relay.base import RelayOp
from xrelay.ir import location_str

CONVS = (relay.Conv2DOp, qnn.Conv2DOp)
PRODUCTS = (relay.DenseOp, relay.MatmulOp, relay.BatchMatmulOp, qnn.DenseOp, qnn.BatchMatmulOp)


def op_flops(op: Operation) -> int:
    """Floating-point operations of one relay op (static shapes)."""
    out = op.results[0].type if op.results else None
    if not isinstance(out, TensorType) or DYNAMIC_INDEX in out.get_shape():
        return 0
    elements = int(np.prod(out.get_shape()))
    if isinstance(op, CONVS):
        weight = op.operands[1].type
        assert isinstance(weight, TensorType)
        _, cin, kh, kw = weight.get_shape()
        return 2 * elements * cin * kh * kw
    if isinstance(op, PRODUCTS):
        lhs = op.operands[0].type
        assert isinstance(lhs, TensorType)
        return 2 * elements * lhs.get_shape()[-1]
    return elements


@dataclass
class Row:
    name: str
    ms: float  # per run
    calls: int  # per run
    flops: int  # per run

    @property
    def gflops(self) -> float:
        return self.flops / (self.ms / 1e3) / 1e9 if self.ms > 0 else 0.0


def node_ops(module: ModuleOp) -> dict[str, tuple[str, int]]:
    """Node (location) -> (the op type with the most FLOPs there, the node's FLOPs)."""
    best: dict[str, tuple[str, int]] = {}
    total: dict[str, int] = defaultdict(int)
    for op in module.walk():
        if isinstance(op, RelayOp) and op.name != "relay.constant":
            node, flops = location_str(op), op_flops(op)
            total[node] += flops
            if node not in best or flops > best[node][1]:
                best[node] = (op.name, flops)
    return {node: (name, total[node]) for node, (name, _) in best.items()}


def measure(lib: Any, inputs: dict[str, np.ndarray], runs: int) -> tuple[list[dict], float]:
    """Per-call counters averaged over `runs` runs (after one warm-up run), and the
    median wall time of a run in ms (measured in the same runs)."""
    lib.run(**inputs)
    lib.profile(reset=True)
    walls = []
    for _ in range(runs):
        start = time.perf_counter()
        lib.run(**inputs)
        walls.append(time.perf_counter() - start)
    sites = lib.profile(reset=True)
    for site in sites:
        site["ms"] = site["ns"] / runs / 1e6
    return sites, float(np.median(walls)) * 1e3


def summarize(sites: list[dict], nodes: dict[str, tuple[str, int]]) -> list[Row]:
    """Rows per op type, slowest first (each node's FLOPs counted once)."""
    rows: dict[str, Row] = {}
    counted: set[str] = set()
    for site in sites:
        kind, flops = nodes.get(site["node"], ("(other)", 0))
        row = rows.setdefault(kind, Row(kind, 0.0, 0, 0))
        row.ms += site["ms"]
        row.calls += 1
        if site["node"] not in counted:
            counted.add(site["node"])
            row.flops += flops
    return sorted(rows.values(), key=lambda r: -r.ms)


def chrome_trace(sites: list[dict], nodes: dict[str, tuple[str, int]]) -> dict[str, Any]:
    events, clock = [], 0.0
    for site in sites:
        duration = site["ms"] * 1e3
        events.append(
            {
                "name": site["kernel"],
                "cat": nodes.get(site["node"], ("(other)", 0))[0],
                "ph": "X",
                "ts": clock,
                "dur": duration,
                "pid": 0,
                "tid": 0,
                "args": {"node": site["node"]},
            }
        )
        clock += duration
    return {"traceEvents": events, "displayTimeUnit": "ms"}
