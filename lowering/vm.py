"""The VM: run-time control flow and data-dependent sizes between compiled segments.

A module whose @main holds `relay.if`, `relay.loop` or an op whose result size the data
decides (`relay.nonzero`, `relay.unique`, `relay.non_max_suppression`) builds into a
`VMLibrary`. Each block (@main's, a branch's, a loop body's) becomes a program of steps:

- a *segment*: a maximal run of ordinary ops, outlined into a module of its own (its
  @main takes the values it reads from outside, parameters included, and returns the ones
  read after it) and compiled by `xrelay.build` once, at build time. Sizes that change
  between runs (a symbol of a data-dependent size, a loop-carried value that grows) are
  run-time values of that build (lowering/dynamic_sizes.py), so no input compiles again;
- a *host step*: `relay.if` picks a branch and runs its program; `relay.loop` runs its
  body program while the condition holds and the trip count allows, stacking scan
  outputs; a data-dependent op computes on the host (lowering/host_ops.py);
- constants, read once at build time.

Values live in one table keyed by SSA value, so a region reads the enclosing block's values
as the IR does. A loop that would run more than `max_iterations` iterations (default
XRELAY_MAX_ITERATIONS, else 1,000,000) is an `xrelay.Error`, as is a data-dependent result
over the memory limit.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue
from xrelay.dialects import relay
from xrelay.dialects.constants import constant_value
from xrelay.dialects.dims import shape_of, symbols_of
from xrelay.dialects.dtypes import numpy_dtype
from xrelay.errors import Error
from xrelay.ir import location_str
from xrelay.lowering.host_ops import HOST_OPS
from xrelay.signature import (
    FunctionSignature,
    arg_attrs,
    bind_dims,
    check_inputs,
    main_function,
    param_name,
)

DEFAULT_MAX_ITERATIONS = 1_000_000


def uses_vm(module: ModuleOp) -> bool:
    """Whether `module` has ops only the VM runs (control flow, data-dependent sizes)."""
    vm_ops = tuple(relay.VM_OPS)
    if any(isinstance(op, vm_ops) for op in module.walk()):
        return True
    fn = main_function(module)  # a sequence passed in or returned
    types = [*fn.function_type.inputs, *fn.function_type.outputs]
    return any(isinstance(t, relay.SequenceType | relay.OptionalType) for t in types)


@dataclass
class Segment:
    """Ordinary ops compiled as one library: it reads `inputs`, defines `outputs`."""

    lib: Any
    inputs: list[SSAValue]  # data inputs of the segment's @main, in order
    outputs: list[SSAValue]

    def run(self, env: dict[SSAValue, np.ndarray]) -> None:
        results = self.lib.run(*[env[v] for v in self.inputs])
        env.update(zip(self.outputs, results))


@dataclass
class Program:
    """The steps of one block and the values its terminator gives back."""

    steps: list[Any] = field(default_factory=list)
    results: list[SSAValue] = field(default_factory=list)


class VMLibrary:
    """A compiled model with run-time control flow or data-dependent sizes: `lib.run(**inputs)`
    or `lib(*arrays)` -> list of numpy arrays."""

    def __init__(
        self,
        module: ModuleOp,
        params: Mapping[str, np.ndarray],
        build_options: Mapping[str, Any] | None = None,
    ) -> None:
        start = time.perf_counter()
        self.module = module.clone()
        self.function = main_function(self.module)
        self.signature = FunctionSignature.of(self.function)
        self.params = {k: np.asarray(v, order="C") for k, v in params.items()}
        self.build_options = dict(build_options or {})
        self.max_iterations = int(os.environ.get("XRELAY_MAX_ITERATIONS", DEFAULT_MAX_ITERATIONS))
        self.segments: list[Segment] = []
        self.meta: dict[str, Any] = {}
        self._constants: dict[SSAValue, np.ndarray] = {}
        self._providers: dict[str, SSAValue] = {}  # symbol -> a value with that dimension
        self.program = self._plan(self.function.body.block)
        self.times = {"vm": time.perf_counter() - start}

    # --- build: programs of segments and host steps -----------------------------------------

    def _plan(self, block: Block) -> Program:
        saved = dict(self._providers)
        for arg in block.args:
            self._provide(arg)
        program = Program()
        run: list[Operation] = []
        for op in block.ops:
            if isinstance(op, func.ReturnOp | relay.YieldOp):
                self._flush(run, program)
                program.results = list(op.operands)
            elif isinstance(op, relay.ConstantOp):  # in every run's table from the start
                self._constants[op.result] = constant_value(op.result)
            elif isinstance(op, relay.IfOp):
                self._flush(run, program)
                branches = (self._plan(op.then_region.block), self._plan(op.else_region.block))
                program.steps.append(("if", op, branches))
            elif isinstance(op, relay.LoopOp):
                self._flush(run, program)
                program.steps.append(("loop", op, self._plan(op.body.block)))
            elif type(op) in HOST_OPS:
                self._flush(run, program)
                program.steps.append(("host", op, HOST_OPS[type(op)]))
            elif op.regions:
                raise Error(f"{location_str(op)}: the VM does not run '{op.name}'")
            else:
                run.append(op)
            for r in op.results:  # after the op's step: a segment before it cannot read them
                self._provide(r)
        self._providers = saved
        return program

    def _provide(self, value: SSAValue) -> None:
        """Note the symbols `value`'s type names as dimensions (a segment whose types read
        one of them but none of whose inputs has it takes `value` as an input too)."""
        if isinstance(value.type, TensorType):
            for d in shape_of(value.type):
                if not isinstance(d, int) and d.is_Symbol:
                    self._providers.setdefault(d.name, value)

    def _flush(self, run: list[Operation], program: Program) -> None:
        if run:
            program.steps.append(("segment", self._segment(list(run))))
            run.clear()

    def _segment(self, ops: list[Operation]) -> Segment:
        """Outline `ops` into a module of its own and compile it."""
        from xrelay.lowering.build import build

        inside = set(ops)
        defined = {r for op in ops for r in op.results}
        reads: list[SSAValue] = []
        for op in ops:
            for v in op.operands:
                if v not in defined and v not in reads:
                    reads.append(v)
        outputs = [
            r for op in ops for r in op.results if any(u.operation not in inside for u in r.uses)
        ]
        # a symbol the ops' types read (a Shape of a tensor the segment does not read) is
        # bound from a value that has it as a dimension
        known = {n for v in reads if isinstance(v.type, TensorType) for n in symbols_of(v.type)}
        for op in ops:
            for v in (*op.operands, *op.results):
                if isinstance(v.type, TensorType):
                    for name in sorted(symbols_of(v.type) - known):
                        provider = self._providers.get(name)
                        if provider is not None and provider not in defined:
                            reads.append(provider)
                            known |= symbols_of(provider.type)
        constants = [v for v in reads if isinstance(v.owner, relay.ConstantOp)]
        params = [v for v in reads if param_name(self.function, v) is not None]
        data = [v for v in reads if v not in constants and v not in params]
        block = Block(arg_types=[v.type for v in data + params])
        mapping: dict[SSAValue, SSAValue] = dict(zip(data + params, block.args))
        for v in constants:
            copy = v.owner.clone()
            block.add_op(copy)
            mapping[v] = copy.result
        for op in ops:
            block.add_op(op.clone(value_mapper=mapping))
        block.add_op(func.ReturnOp(*[mapping[v] for v in outputs]))
        names = [f"v{i}" for i in range(len(data))] + [param_name(self.function, v) for v in params]
        fn = func.FuncOp(
            "main",
            FunctionType.from_lists([v.type for v in data + params], [v.type for v in outputs]),
            Region(block),
            arg_attrs=arg_attrs(names, len(data)),
        )
        module = ModuleOp([fn])
        used = {n: self.params[n] for n in names[len(data) :]}
        lib = build(module, used, **self.build_options)
        segment = Segment(lib, data, outputs)
        self.segments.append(segment)
        return segment

    # --- run ----------------------------------------------------------------------------

    @property
    def compiles(self) -> int:
        """Native builds so far (each segment once; more only where one specializes)."""
        return sum(getattr(s.lib, "compiles", 1) for s in self.segments)

    def run(self, *args: Any, **inputs: Any) -> list[np.ndarray]:
        arrays = check_inputs(self.signature, args, inputs, self.params)
        bind_dims(self.signature, arrays)  # the inputs agree on their dimensions
        env: dict[SSAValue, np.ndarray] = dict(self._constants)
        env.update(zip(self.function.body.block.args, arrays))
        results = self._run(self.program, env)
        return self.signature.outputs(
            [r if isinstance(r, list) else np.asarray(r) for r in results]
        )

    __call__ = run

    def _run(self, program: Program, env: dict[SSAValue, np.ndarray]) -> list[np.ndarray]:
        for step in program.steps:
            kind = step[0]
            if kind == "segment":
                step[1].run(env)
            elif kind == "host":
                op, fn = step[1], step[2]
                env.update(zip(op.results, fn(op, [env[v] for v in op.operands])))
            elif kind == "if":
                op, (then, other) = step[1], step[2]
                chosen = then if bool(np.asarray(env[op.cond]).reshape(-1)[0]) else other
                env.update(zip(op.outputs, self._run(chosen, env)))
            elif kind == "loop":
                self._loop(step[1], step[2], env)
        return [env[v] for v in program.results]

    def _loop(self, op: relay.LoopOp, body: Program, env: dict[SSAValue, np.ndarray]) -> None:
        n = op.n_carried
        trip = int(np.asarray(env[op.max_trip]).reshape(()))
        cond = bool(np.asarray(env[op.cond]).reshape(()))
        carried = [env[v] for v in op.initial]
        args = op.body.block.args
        scans: list[list[np.ndarray]] = [[] for _ in range(len(op.outputs) - n)]
        step = 0
        while cond and step < trip:
            if step >= self.max_iterations:
                raise Error(
                    f"{location_str(op)}: the loop ran {step} iterations, more than the bound "
                    f"of {self.max_iterations} (XRELAY_MAX_ITERATIONS)"
                )
            env[args[0]] = np.array(step, np.int64)
            env[args[1]] = np.array(cond)
            env.update(zip(args[2:], carried))
            outs = self._run(body, env)
            cond = bool(np.asarray(outs[0]).reshape(()))
            carried = outs[1 : 1 + n]
            for scan, value in zip(scans, outs[1 + n :]):
                scan.append(value)
            step += 1
        results = list(carried)
        for i, scan in enumerate(scans):
            out = op.outputs[n + i]
            if scan:
                if len({a.shape for a in scan}) != 1:
                    shapes = sorted({a.shape for a in scan})
                    raise Error(f"{location_str(op)}: scan output {i} changes shape: {shapes}")
                results.append(np.stack(scan))
            else:  # no iteration: empty, the element's static dimensions kept
                dims = [d if isinstance(d, int) else 0 for d in shape_of(out.type)[1:]]
                results.append(np.zeros((0, *dims), numpy_dtype(out.type.element_type)))
        env.update(zip(op.outputs, results))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles as its module, parameters and build options: unpickling builds again
        (the compile cache makes that a lookup where the segments are cached)."""
        return (_restore, (str(self.module), self.params, self.build_options))

    # --- what cannot be done yet ----------------------------------------------------------

    def profile(self, reset: bool = False) -> Any:
        raise Error(
            "per-call profiles read one native build, and this model runs control flow or "
            "data-dependent sizes in the VM"
        )

    def save(self, path: Any) -> None:
        raise Error(
            "an artifact (.xrl) holds one native build, and this model runs control flow or "
            "data-dependent sizes in the VM: build it in the process that runs it"
        )

    def export_library(self, path: Any, name: str | None = None) -> Any:
        raise Error(
            "a shared library (export_library) holds one native build, and this model runs "
            "control flow or data-dependent sizes in the VM"
        )


def _restore(text: str, params: Mapping[str, np.ndarray], options: Mapping[str, Any]) -> VMLibrary:
    from xrelay.ir import parse_module

    return VMLibrary(parse_module(text), params, options)
