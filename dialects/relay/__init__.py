"""The relay dialect: tensor-level deep-learning ops on statically shaped `tensor<...>` values.

Op families live in `elementwise`, `nn`, `tensor` and `reduce`; the shared base class and
the attribute and shape helpers in `base`. Import ops from here: `relay.AddOp`, `relay.Conv2DOp`.
"""

from xdsl.ir import Dialect

from .base import Attrs, RelayOp
from .elementwise import *  # noqa: F403
from .elementwise import ELEMENTWISE_OPS
from .nn import *  # noqa: F403
from .nn import NN_OPS
from .reduce import *  # noqa: F403
from .reduce import REDUCE_OPS
from .tensor import *  # noqa: F403
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

Relay = Dialect("relay", ALL_OPS, [])

__all__ = ["ALL_OPS", "Attrs", "Relay", "RelayOp"]
