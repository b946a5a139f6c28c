"""ONNX If, Loop and Scan: unrolled at import where everything that decides them is known
then, else run-time control flow (`relay.if`, `relay.loop`: dialects/relay/control.py) that
the VM runs (lowering/vm.py).

- If: a condition known at import converts the chosen branch in place; a run-time one
  gives `relay.if` with both branches as regions.
- Loop: with the trip count, the initial condition and every condition the body computes
  known at import (and at most MAX_STEPS iterations), the body is converted once per
  iteration, loop-carried values passed along, scan outputs stacked on a new axis 0; else
  `relay.loop`, its body converted once.
- Scan (opset 9 on): the body is converted once per step along the scan axes of the scan
  inputs (forward or reverse), states carried along, scan outputs stacked on their axes.

Bodies may use any converted op, including sequences; each unrolled step is plain relay IR,
so the result compiles like any straight-line graph. A loop of more than MAX_STEPS steps is
refused rather than unrolled.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType, i1, i64
from xdsl.ir import Block, SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dims import shape_of, symbol, symbols_of
from xrelay.dialects.relay.optional import OptionalType
from xrelay.dialects.relay.sequence import SequenceType
from xrelay.frontends.common import erase_block, join_types, outside_type, stack
from xrelay.frontends.onnx.binder import Node, Value
from xrelay.frontends.onnx.deferred import drop_partial
from xrelay.frontends.onnx.registry import onnx_op
from xrelay.frontends.onnx.sequence import element_type, general, lift

MAX_STEPS = 1024


def _stack(b: Node, values: list[Value], axis: int) -> Value:
    """Values stacked on a new axis: a constant if all are known, else relay ops."""
    if all(v.array is not None and not v.is_param for v in values):
        return Value(array=np.stack([np.asarray(v.array) for v in values], axis=axis))
    return Value(ssa=stack(b, [b.ssa(v) for v in values], axis))


@onnx_op("If", structured=True, since=1)
def if_(b: Node) -> list[Value]:
    known = b.value(0).array
    if known is None or np.asarray(known).dtype == object:  # decided at run time
        return _runtime_if(b)
    cond = np.asarray(known).reshape(-1)
    if cond.size != 1:
        raise b.error(f"the condition has {cond.size} elements, expected 1")
    branch = b.attr("then_branch") if bool(cond[0]) else b.attr("else_branch")
    return b.importer.convert_graph(branch, {})


def _runtime_if(b: Node) -> list[Value]:
    """`relay.if` on a condition computed at run time: each branch converted into its
    region; a result dimension the branches disagree on becomes a fresh symbol."""
    cond = _scalar(b, b.input(0), i1, "the condition")
    blocks, outs = [], []
    for attr in ("then_branch", "else_branch"):
        block = Block()
        outs.append(b.importer.convert_region(b.attr(attr), block, {}))
        blocks.append(block)
    if len(outs[0]) != len(outs[1]):
        raise b.error(f"the branches give {len(outs[0])} and {len(outs[1])} outputs")
    types = [_join(b, x.type, y.type, f"output {i}") for i, (x, y) in enumerate(zip(*outs))]
    for block, values in zip(blocks, outs):
        block.add_op(relay.YieldOp(*values))
    op = relay.IfOp(cond, types, blocks[0], blocks[1])
    b.emit(op)
    return [Value(ssa=r) for r in op.outputs]


@onnx_op("Loop", structured=True, since=1)
def loop(b: Node) -> list[Value]:
    body = b.attr("body")
    carried = [b.value(i) for i in range(2, b.n_inputs)]
    names = [v.name for v in body.input]
    if len(names) != 2 + len(carried):
        raise b.error(f"the body takes {len(names)} inputs, expected {2 + len(carried)}")
    static = all(
        not b.has_input(i)
        or (b.value(i).array is not None and np.asarray(b.value(i).array).dtype != object)
        for i in (0, 1)
    )
    if static:
        mark = b.importer.block.last_op
        try:
            return _unrolled_loop(b, body, carried, names)
        except _RunTime:  # a condition the body computes at run time
            drop_partial(b.importer, mark)
    return _runtime_loop(b, body, carried, names)


class _RunTime(Exception):
    pass


def _unrolled_loop(b: Node, body, carried: list[Value], names: list[str]) -> list[Value]:
    trip = int(np.asarray(b.const(0)).reshape(())) if b.has_input(0) else None
    cond = bool(np.asarray(b.const(1)).reshape(())) if b.has_input(1) else True
    if cond and trip is not None and trip > MAX_STEPS:
        raise _RunTime  # long loops run in the VM (known before unrolling any step)
    n_scan = len(body.output) - 1 - len(carried)
    scans: list[list[Value]] = [[] for _ in range(n_scan)]
    step = 0
    while cond and (trip is None or step < trip):
        if step >= MAX_STEPS:
            raise _RunTime  # long loops run in the VM
        bindings = {
            names[0]: Value(array=np.array(step, np.int64)),
            names[1]: Value(array=np.array(cond)),
            **dict(zip(names[2:], carried)),
        }
        outs = b.importer.convert_graph(body, bindings)
        if outs[0].array is None:
            raise _RunTime
        cond = bool(np.asarray(outs[0].array).reshape(-1)[0])
        carried = outs[1 : 1 + len(carried)]
        for scan, value in zip(scans, outs[1 + len(carried) :]):
            scan.append(value)
        step += 1
    if n_scan and step == 0:
        raise _RunTime  # the scan outputs' shapes come from the body's types
    return [*carried, *(_stack(b, scan, 0) for scan in scans)]


def _runtime_loop(b: Node, body, carried: list[Value], names: list[str]) -> list[Value]:
    """`relay.loop`: the trip count and the conditions are run-time values. A carried
    value whose shape the body changes gets fresh symbols for the dimensions that change
    (the body is converted again with them)."""
    importer = b.importer
    if b.has_input(0):
        max_trip = _scalar(b, b.input(0), i64, "the trip count")
    else:
        max_trip = b.constant(np.array(np.iinfo(np.int64).max, np.int64))
    cond = (
        _scalar(b, b.input(1), i1, "the condition")
        if b.has_input(1)
        else b.constant(np.array(True))
    )
    initial = [_operand(b, v, 2 + i) for i, v in enumerate(carried)]
    arg_types = [v.type for v in initial]
    carried_symbols: set[str] = set()  # made for the body's arguments: each stands for any size
    for _attempt in range(4):
        before = set(importer._fresh)
        block = Block(arg_types=[TensorType(i64, []), TensorType(i1, []), *arg_types])
        bindings = {n: Value(ssa=a) for n, a in zip(names, block.args)}
        outs = importer.convert_region(body, block, bindings)
        if len(outs) < 1 + len(initial):
            raise b.error(
                f"the body gives {len(outs)} outputs, expected at least {1 + len(initial)}"
            )
        for i, t in enumerate(arg_types):  # an optional carried in, its value yielded
            if isinstance(t, OptionalType) and not isinstance(outs[1 + i].type, OptionalType):
                wrapped = relay.OptConstructOp([outs[1 + i]], OptionalType(outs[1 + i].type))
                block.add_op(wrapped)
                outs[1 + i] = wrapped.result
        widened = [
            _join(b, t, y.type, f"loop-carried value {i}", free=carried_symbols)
            for i, (t, y) in enumerate(zip(arg_types, outs[1 : 1 + len(initial)]))
        ]
        if widened == arg_types:
            break
        arg_types = widened
        erase_block(block)
    else:
        raise b.error("the loop-carried shapes do not settle")
    local = (importer._fresh - before) | {s for t in arg_types for s in _symbols(t)}
    saved = importer.block
    importer.block = block
    try:
        outs[0] = _scalar(b, outs[0], i1, "the body's condition")
    finally:
        importer.block = saved
    block.add_op(relay.YieldOp(*outs))
    steps = symbol(importer.fresh_symbol(f"{b.name}_steps"))  # one count for every scan output
    fresh = lambda axis: importer.fresh_symbol(f"{b.name}_out_{axis}")
    scan_types = [
        outside_type(o.type.element_type, [steps, *shape_of(o.type)], local, fresh)
        for o in outs[1 + len(initial) :]
    ]
    result_types = [
        outside_type(t.element_type, shape_of(t), local, fresh) if isinstance(t, TensorType) else t
        for t in arg_types
    ]
    op = relay.LoopOp(max_trip, cond, initial, result_types + scan_types, block)
    b.emit(op)
    return [Value(ssa=r) for r in op.outputs]


def _scalar(b: Node, value: SSAValue, elem, what: str) -> SSAValue:
    """`value` as a 0-d tensor of `elem` (ONNX gives conditions and counts as [] or [1])."""
    t = value.type
    if t.element_type != elem:
        raise b.error(f"{what} is {t}, expected {elem} elements")
    if t.get_shape() == ():
        return value
    if t.get_shape() != (1,):
        raise b.error(f"{what} has shape {list(t.get_shape())}, expected one element")
    return b.emit(relay.ReshapeOp(value, newshape=[]))


def _symbols(t) -> set[str]:
    return symbols_of(t) if isinstance(t, TensorType) else set()


def _operand(b: Node, value: Value, i: int) -> SSAValue:
    """A tensor's SSA value; a sequence as a run-time sequence."""
    if value.items is not None:
        return lift(b, value, element_type(b.importer.inferred_value_types().get(b.node.input[i])))
    return b.ssa(value)


def _join(b: Node, x, y, what: str, free: set[str] | None = None):
    """The type of a value that is `x` on one path and `y` on another (frontends/common.py:
    join_types; `free` for a loop-carried value); sequences keep what their elements share."""
    if isinstance(x, OptionalType) and isinstance(y, OptionalType):
        return OptionalType(_join(b, x.inner, y.inner, what, free))
    if isinstance(x, SequenceType) or isinstance(y, SequenceType):
        joined = None
        if isinstance(x, SequenceType) and isinstance(y, SequenceType):
            joined = general([x.element, y.element])
        if joined is None:
            raise b.unsupported(f"{what} is {x} on one path and {y} on another")
        return SequenceType(joined)
    if x.element_type != y.element_type or x.get_num_dims() != y.get_num_dims():
        raise b.unsupported(f"{what} changes its element type or rank ({x} and {y})")
    stem = f"{b.name}_{what.split()[-1]}"
    return join_types(x, y, lambda axis: b.importer.fresh_symbol(f"{stem}_{axis}"), free)


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
    axes = [b.axis(a, b.rank(n_state + j), "scan_input_axes entry") for j, a in enumerate(in_axes)]
    states = [b.value(i) for i in range(n_state)]
    return _scan_steps(b, body, states, inputs, axes, in_dirs, out_axes, out_dirs)


@onnx_op("Scan", structured=True, since=8)
def scan_8(b: Node) -> list[Value]:
    """Scan before opset 9: every input has a batch axis 0 (the scan axis is 1); each batch
    element is scanned on its own and the results stacked back on axis 0. An optional
    sequence_lens (input 0) must be absent: every sequence runs the whole axis."""
    if b.has_input(0):
        raise b.unsupported("Scan (opset 8) with sequence_lens")
    body = b.attr("body")
    n_in = int(b.attr("num_scan_inputs"))
    n_state = b.n_inputs - 1 - n_in
    n_out = len(body.output) - n_state
    dirs = list(b.attr("directions", [0] * n_in))
    (batch,) = b.static_dims([b.shape(1)[0]], "Scan batch")
    per_batch = []
    for k in range(batch):
        at = b.constant(np.array(k, np.int64))
        picked = [b.emit(relay.TakeOp(b.input(i), at, axis=0)) for i in range(1, b.n_inputs)]
        states = [Value(ssa=v) for v in picked[:n_state]]
        inputs = picked[n_state:]
        per_batch.append(
            _scan_steps(b, body, states, inputs, [0] * n_in, dirs, [0] * n_out, [0] * n_out)
        )
    return [_stack(b, [outs[i] for outs in per_batch], 0) for i in range(n_state + n_out)]


def _scan_steps(b, body, states, inputs, axes, in_dirs, out_axes, out_dirs) -> list[Value]:
    """Scan-9 semantics, unrolled: the body once per step along each input's scan axis."""
    n_state, n_out = len(states), len(out_axes)
    lengths = {shape_of(x.type)[axes[j]] for j, x in enumerate(inputs)}
    if len(lengths) != 1:
        raise b.error(f"scan inputs of different lengths {sorted(lengths, key=str)}")
    (length,) = b.static_dims(list(lengths), "Scan length")
    if length > MAX_STEPS:
        raise b.unsupported(f"Scan of more than {MAX_STEPS} steps")
    if length == 0:
        raise b.unsupported("a Scan over an empty axis")
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
