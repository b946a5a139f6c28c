"""Build one-function modules from Python and compare the JIT with the reference executor."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import xrelay
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Block, Region
from xrelay.dialects.dtypes import tensor_type
from xrelay.signature import arg_attrs


def module_of(specs: Sequence[tuple[tuple[int, ...], str]], body: Callable) -> ModuleOp:
    """@main(args of the given (shape, dtype)) returning body(*args)'s results."""
    block = Block(arg_types=[tensor_type(s, d) for s, d in specs])
    result = body(*block.args)
    ops = result if isinstance(result, list) else [result]
    for op in ops:
        if op.parent is None:
            block.add_op(op)
    last = ops[-1]
    outs = list(last.results)
    block.add_op(func.ReturnOp(*outs))
    names = [f"x{i}" for i in range(len(specs))]
    fn = func.FuncOp(
        "main",
        FunctionType.from_lists([a.type for a in block.args], [o.type for o in outs]),
        Region(block),
        arg_attrs=arg_attrs(names, len(names)),
    )
    return ModuleOp([fn])


def random_inputs(specs, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays = []
    for shape, dtype in specs:
        dt = np.dtype(dtype)
        if dt == np.bool_:
            arrays.append(rng.random(shape) < 0.5)
        elif np.issubdtype(dt, np.integer):
            arrays.append(rng.integers(-5, 6, shape).astype(dt))
        else:
            arrays.append(rng.standard_normal(shape).astype(dt))
    return arrays


def check_jit(specs, body, inputs=None, rtol=1e-5, atol=1e-6) -> None:
    module = module_of(specs, body)
    arrays = inputs if inputs is not None else random_inputs(specs)
    want = xrelay.create_executor("debug", module).run(*arrays)
    got = xrelay.build(module).run(*arrays)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
