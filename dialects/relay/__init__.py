"""The relay dialect: tensor-level deep-learning ops on `tensor<...>` values, whose dimensions
are static or named by symbols (`#relay.dims`, dialects/dims.py).

Op families live in `elementwise`, `nn`, `tensor` and `reduce`; the shared base class and
the attribute and shape helpers in `base`; `deferred` holds a frontend node whose conversion
waits for run-time values (a graph input used as a Reshape target, say). The ops the VM runs
(VM_OPS, docs/control-flow.md) live in `control` (relay.if, relay.loop), `data_dependent`
(result sizes the data decides), `sequence` (!relay.seq) and `optional` (!relay.opt).
Import ops from here: `relay.AddOp`, `relay.Conv2DOp`.
"""

from xdsl.ir import Dialect
from xrelay.dialects.dims import DimsAttr

from .base import Attrs, RelayOp
from .control import *
from .control import CONTROL_OPS
from .data_dependent import *
from .data_dependent import DATA_DEPENDENT_OPS
from .deferred import DeferredOp
from .elementwise import *
from .elementwise import ELEMENTWISE_OPS
from .nn import *
from .nn import NN_OPS
from .optional import *
from .optional import OPTIONAL_OPS, OptionalType
from .reduce import *
from .reduce import REDUCE_OPS
from .sequence import *
from .sequence import SEQUENCE_OPS, SequenceType
from .tensor import *
from .tensor import TENSOR_OPS

ALL_OPS: list[type[RelayOp]] = [
    # elementwise: binary, comparisons, logical, where, unary math, activations, cast
    *ELEMENTWISE_OPS,
    # nn: convolutions, dense/matmul, normalization, pooling, softmax, pad, lrn, dropout
    *NN_OPS,
    # tensor: constant, shape manipulation, slicing, gather
    *TENSOR_OPS,
    # reductions
    *REDUCE_OPS,
]

# ops the VM runs (lowering/vm.py): control flow with regions, ops whose result sizes
# the data decides, and run-time sequences; they never reach relay-to-linalg
VM_OPS: list[type] = [*CONTROL_OPS, *DATA_DEPENDENT_OPS, *SEQUENCE_OPS, *OPTIONAL_OPS]

Relay = Dialect("relay", [*ALL_OPS, DeferredOp, *VM_OPS], [DimsAttr, SequenceType, OptionalType])

__all__ = [
    "ALL_OPS",
    "CONTROL_OPS",
    "DATA_DEPENDENT_OPS",
    "OPTIONAL_OPS",
    "SEQUENCE_OPS",
    "VM_OPS",
    "Attrs",
    "DeferredOp",
    "DimsAttr",
    "OptionalType",
    "Relay",
    "RelayOp",
    "SequenceType",
]
