"""The example external target "numpy": partitioned regions run on the reference executor
(numpy) through a ctypes callback that the JIT-compiled model calls like any kernel.

It shows the whole BYOC path: annotate-target picks the ops, partition-graph outlines them
into `Compiler = "numpy"` functions, and `xrelay.build` links the address this codegen
returns in place of each function. It supports elementwise ops and softmax.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation
from xrelay.dialects import relay
from xrelay.dialects.dtypes import numpy_dtype
from xrelay.dialects.relay.elementwise import BINARY_OPS
from xrelay.transforms.targets import ExternalFunction, Target, register_target

SUPPORTED = (*BINARY_OPS, relay.ReluOp, relay.TanhOp, relay.SigmoidOp, relay.ExpOp, relay.SoftmaxOp)


def supports(op: Operation) -> bool:
    if not isinstance(op, SUPPORTED):
        return False
    return all(
        isinstance(v.type, TensorType) and numpy_dtype(v.type.element_type) == np.float32
        for v in (*op.operands, *op.results)
    )


def _array(address: int, t: TensorType) -> np.ndarray:
    dtype = numpy_dtype(t.element_type)
    count = int(np.prod(t.get_shape()))
    buffer = (ctypes.c_char * (count * dtype.itemsize)).from_address(address)
    return np.frombuffer(buffer, dtype=dtype, count=count).reshape(t.get_shape())


def codegen(fn: func.FuncOp) -> ExternalFunction:
    from xrelay.reference.executor import evaluate_function

    body = fn.clone()
    ins: Sequence[TensorType] = list(fn.function_type.inputs.data)
    outs: Sequence[TensorType] = list(fn.function_type.outputs.data)

    def run(*pointers: int) -> None:
        arrays = [_array(p, t).copy() for p, t in zip(pointers, ins)]
        for result, pointer, t in zip(evaluate_function(body, arrays), pointers[len(ins) :], outs):
            target = _array(pointer, t)
            target.setflags(write=True)
            np.copyto(target, result)

    prototype = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * (len(ins) + len(outs)))
    callback = prototype(run)
    address = ctypes.cast(callback, ctypes.c_void_p).value
    assert address is not None
    return ExternalFunction(address, [callback, body])


register_target(Target("numpy", supports, codegen))
