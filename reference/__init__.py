"""The reference executor: evaluates relay IR with numpy, one implementation per op.

Implementations mirror the dialect's modules (`reference/nn.py` holds those of
`dialects/relay/nn.py`) and register with `@impl(OpClass)`. This is the oracle for lowering
tests and the engine of constant folding.

    ref = xrelay.create_executor("debug", module, params=params)
    outputs = ref.run(**inputs)          # list of numpy arrays, in the function's result order
"""

from xrelay.reference.executor import DebugExecutor, create_executor, evaluate_function, evaluate_op
from xrelay.reference.registry import IMPLS, impl

from . import control, elementwise, nn, qnn, reduce, tensor  # noqa: F401  (registers the implementations)

__all__ = ["IMPLS", "DebugExecutor", "create_executor", "evaluate_function", "evaluate_op", "impl"]
