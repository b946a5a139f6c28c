"""ONNX If, Loop and Scan, resolved at import time by static unrolling.

- If: the condition must be known at import; the chosen branch is converted in place.
- Loop: the trip count and every condition the body computes must be known at import; the
  body is converted once per iteration, loop-carried values passed along, scan outputs
  stacked on a new axis 0.
- Scan (opset 9 on): the body is converted once per step along the scan axes of the scan
  inputs (forward or reverse), states carried along, scan outputs stacked on their axes.

Bodies may use any converted op, including sequences; each unrolled step is plain relay IR,
so the result compiles like any straight-line graph. A loop of more than MAX_STEPS steps is
refused rather than unrolled.
"""

from __future__ import annotations

import numpy as np
from xrelay.dialects import relay
from xrelay.frontends.common import stack
from xrelay.frontends.onnx.binder import Node, Value
from xrelay.frontends.onnx.registry import onnx_op

MAX_STEPS = 1024


def _known_bool(b: Node, value: Value, what: str) -> bool:
    if value.array is None:
        raise b.unsupported(f"{what} computed at run time (the loop is unrolled at import)")
    return bool(np.asarray(value.array).reshape(-1)[0])


def _stack(b: Node, values: list[Value], axis: int) -> Value:
    """Values stacked on a new axis: a constant if all are known, else relay ops."""
    if all(v.array is not None and not v.is_param for v in values):
        return Value(array=np.stack([np.asarray(v.array) for v in values], axis=axis))
    return Value(ssa=stack(b, [b.ssa(v) for v in values], axis))


@onnx_op("If", structured=True, since=1)
def if_(b: Node) -> list[Value]:
    cond = np.asarray(b.const(0)).reshape(-1)
    if cond.dtype == object:
        raise b.unsupported(f"If on a dynamic dimension ({cond.tolist()})")
    if cond.size != 1:
        raise b.error(f"the condition has {cond.size} elements, expected 1")
    branch = b.attr("then_branch") if bool(cond[0]) else b.attr("else_branch")
    return b.importer.convert_graph(branch, {})


@onnx_op("Loop", structured=True, since=1)
def loop(b: Node) -> list[Value]:
    body = b.attr("body")
    trip = int(np.asarray(b.const(0)).reshape(())) if b.has_input(0) else None
    cond = bool(np.asarray(b.const(1)).reshape(())) if b.has_input(1) else True
    carried = [b.value(i) for i in range(2, b.n_inputs)]
    names = [v.name for v in body.input]
    if len(names) != 2 + len(carried):
        raise b.error(f"the body takes {len(names)} inputs, expected {2 + len(carried)}")
    n_scan = len(body.output) - 1 - len(carried)
    scans: list[list[Value]] = [[] for _ in range(n_scan)]
    step = 0
    while cond and (trip is None or step < trip):
        if step >= MAX_STEPS:
            raise b.unsupported(f"Loop of more than {MAX_STEPS} iterations")
        bindings = {
            names[0]: Value(array=np.array(step, np.int64)),
            names[1]: Value(array=np.array(cond)),
            **dict(zip(names[2:], carried)),
        }
        outs = b.importer.convert_graph(body, bindings)
        cond = _known_bool(b, outs[0], "the Loop condition")
        carried = outs[1 : 1 + len(carried)]
        for scan, value in zip(scans, outs[1 + len(carried) :]):
            scan.append(value)
        step += 1
    if n_scan and step == 0:
        raise b.unsupported("a Loop with scan outputs that runs no iteration")
    return [*carried, *(_stack(b, scan, 0) for scan in scans)]


@onnx_op("Scan", structured=True, since=9)
def scan(b: Node) -> list[Value]:
    body = b.attr("body")
    n_in = int(b.attr("num_scan_inputs"))
    n_state = b.n_inputs - n_in
    n_out = len(body.output) - n_state
    in_axes = list(b.attr("scan_input_axes", [0] * n_in))
    in_dirs = list(b.attr("scan_input_directions", [0] * n_in))
    out_axes = list(b.attr("scan_output_axes", [0] * n_out))
    out_dirs = list(b.attr("scan_output_directions", [0] * n_out))
    inputs = [b.input(n_state + j) for j in range(n_in)]
    axes = [a % b.rank(n_state + j) for j, a in enumerate(in_axes)]
    lengths = {b.shape(n_state + j)[axes[j]] for j in range(n_in)}
    if len(lengths) != 1:
        raise b.error(f"scan inputs of different lengths {sorted(lengths)}")
    (length,) = b.static_dims(list(lengths), "Scan length")
    if length > MAX_STEPS:
        raise b.unsupported(f"Scan of more than {MAX_STEPS} steps")
    if length == 0:
        raise b.unsupported("a Scan over an empty axis")
    states = [b.value(i) for i in range(n_state)]
    names = [v.name for v in body.input]
    scans: list[list[Value]] = [[] for _ in range(n_out)]
    for t in range(length):
        slices = []
        for j, x in enumerate(inputs):
            at = b.constant(np.array(length - 1 - t if in_dirs[j] else t, np.int64))
            slices.append(Value(ssa=b.emit(relay.TakeOp(x, at, axis=axes[j]))))
        outs = b.importer.convert_graph(body, dict(zip(names, states + slices)))
        states = outs[:n_state]
        for out, value in zip(scans, outs[n_state:]):
            out.append(value)
    results = []
    for j, values in enumerate(scans):
        if out_dirs[j]:
            values = values[::-1]
        rank = len(b.type_of(values[0]).get_shape())
        results.append(_stack(b, values, out_axes[j] % (rank + 1)))
    return [*states, *results]
