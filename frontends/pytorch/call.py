"""The binder every PyTorch converter opens with: the op's arguments by schema name (SSA values
computed at run time, or Python/torch values known at import time), typed accessors with
defaults, relay emission at the op's location, and errors naming the op.

Both capture paths build a `Call` from the op's schema, so a converter reads `c.ints("stride")`
or `c.tensor("weight")` the same way whether the op came from an exported program or from
TorchScript. Tensors known at import time are torch tensors; `c.tensor` materializes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from xdsl.dialects.builtin import LocationAttr, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dtypes import element_type, numpy_dtype
from xrelay.errors import Error
from xrelay.frontends.common import checked_axis, emit_constant

REQUIRED = object()

_NUMPY_OF_TORCH = {
    torch.float32: np.float32,
    torch.float64: np.float64,
    torch.float16: np.float16,
    torch.bool: np.bool_,
    torch.int8: np.int8,
    torch.int16: np.int16,
    torch.int32: np.int32,
    torch.int64: np.int64,
    torch.uint8: np.uint8,
}
_TORCH_OF_NUMPY = {np.dtype(n): t for t, n in _NUMPY_OF_TORCH.items()}
# TorchScript passes dtypes as c10::ScalarType codes.
_SCALAR_TYPE_CODES = {
    0: torch.uint8,
    1: torch.int8,
    2: torch.int16,
    3: torch.int32,
    4: torch.int64,
    5: torch.float16,
    6: torch.float32,
    7: torch.float64,
    11: torch.bool,
    15: torch.bfloat16,
}


def torch_dtype(dtype: Any) -> torch.dtype:
    """A torch dtype from a torch dtype, a ScalarType code, a numpy dtype or its name."""
    if isinstance(dtype, torch.dtype):
        return dtype
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        if dtype in _SCALAR_TYPE_CODES:
            return _SCALAR_TYPE_CODES[dtype]
        raise Error(f"unsupported dtype code {dtype}")
    try:
        return _TORCH_OF_NUMPY[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise Error(f"unsupported dtype {dtype}") from None


def dtype_code(dtype: Any) -> int:
    """The c10::ScalarType code TorchScript uses for a dtype."""
    t = torch_dtype(dtype)
    return next(code for code, d in _SCALAR_TYPE_CODES.items() if d == t)


def np_dtype(dtype: Any) -> np.dtype:
    """The numpy dtype of a torch dtype (or anything `torch_dtype` accepts)."""
    t = torch_dtype(dtype)
    if t not in _NUMPY_OF_TORCH:
        raise Error(f"unsupported dtype {t}")
    return np.dtype(_NUMPY_OF_TORCH[t])


def to_numpy(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().cpu().contiguous().numpy().astype(np_dtype(tensor.dtype), copy=False)


def has_ssa(value: Any) -> bool:
    """Whether a value (or any item of a list/tuple/dict) is only known at run time."""
    if isinstance(value, SSAValue):
        return True
    if isinstance(value, list | tuple):
        return any(has_ssa(v) for v in value)
    if isinstance(value, dict):
        return any(has_ssa(v) for v in value.values())
    return False


class Unavailable:
    """An op output xrelay does not compute (a batch norm's saved statistics, max-pool
    indices, ...). Using it in a later op is an error naming the producer."""

    def __init__(self, what: str) -> None:
        self.what = what


class GraphBuilder:
    """The block of `@main` being built."""

    def __init__(self, keep_quantized_weight: bool = False) -> None:
        self.block = Block()
        # quantized tensors' scale and zero point (frontends/pytorch/quantized.py)
        self.qparams: dict[SSAValue, Any] = {}
        self.keep_quantized_weight = keep_quantized_weight

    def add(self, op: Operation, loc: LocationAttr) -> None:
        op.location = loc
        self.block.add_op(op)

    def constant(self, value: Any, loc: LocationAttr, dtype: Any = None) -> SSAValue:
        if isinstance(value, torch.Tensor):
            array = to_numpy(value)
        else:
            array = np.asarray(value)
        if dtype is not None:
            array = array.astype(np_dtype(dtype))
        elif array.dtype.kind == "f" and not isinstance(value, torch.Tensor):
            array = array.astype(np.float32)  # a Python float is torch's default dtype
        return emit_constant(self.block, array, loc)


class Call:
    """One PyTorch op being converted.

    `kind` is "namespace::name" ("aten::convolution"), `overload` the overload name ("Tensor",
    "" for the default), `names` and `values` the schema's arguments in order.
    """

    def __init__(
        self,
        builder: GraphBuilder,
        kind: str,
        overload: str,
        names: Sequence[str],
        values: Sequence[Any],
        label: str,
        loc: LocationAttr,
    ) -> None:
        self.builder = builder
        self.kind = kind
        self.overload = overload
        self.names = list(names)
        self.values = list(values)
        self.label = label
        self.location = loc

    @property
    def name(self) -> str:
        """The op's name without namespace ("convolution"; in-place kinds arrive functional)."""
        return self.kind.split("::")[1]

    # --- errors --------------------------------------------------------------------------

    def error(self, message: str) -> Error:
        return Error(f"PyTorch op {self.label}: {message}")

    def unsupported(self, what: str) -> Error:
        return self.error(f"unsupported {what}")

    def axis(self, key: int | str, rank: int) -> int:
        """The dimension argument `key` of a rank-`rank` tensor, checked (`checked_axis`) as
        torch does: a scripted function imports code torch never ran."""
        return checked_axis(self.int(key), rank, self.error, "dimension")

    # --- arguments -----------------------------------------------------------------------

    def _index(self, key: int | str) -> int | None:
        if isinstance(key, int):
            return key if key < len(self.values) else None
        return self.names.index(key) if key in self.names else None

    def raw(self, key: int | str, default: Any = REQUIRED) -> Any:
        """The argument as given: an SSA value, a Python/torch value, or a list of them."""
        i = self._index(key)
        if i is None:
            if default is REQUIRED:
                raise self.error(f"missing argument '{key}'")
            return default
        value = self.values[i]
        if isinstance(value, Unavailable):
            raise self.unsupported(f"use of {value.what}")
        return value

    def has(self, key: int | str) -> bool:
        """Whether the argument is present and not None."""
        return self.raw(key, None) is not None

    def value(self, key: int | str, default: Any = REQUIRED) -> Any:
        """The argument's value known at import time; an error if it is computed at run time."""
        value = self.raw(key, default)
        if has_ssa(value):
            raise self.unsupported(
                f"argument '{self._name(key)}' computed at run time: it must be known at import time"
            )
        return value

    def _name(self, key: int | str) -> str:
        i = self._index(key)
        return self.names[i] if i is not None else str(key)

    def int(self, key: int | str, default: Any = REQUIRED) -> int:
        value = self.value(key, default)
        return int(value.item() if isinstance(value, torch.Tensor) else value)

    def float(self, key: int | str, default: Any = REQUIRED) -> float:
        value = self.value(key, default)
        return float(value.item() if isinstance(value, torch.Tensor) else value)

    def ints(self, key: int | str, default: Any = REQUIRED) -> list[int]:
        value = self.value(key, default)
        if isinstance(value, torch.Tensor):
            return [int(v) for v in value.reshape(-1).tolist()]
        if isinstance(value, int):
            return [value]
        return [int(v.item() if isinstance(v, torch.Tensor) else v) for v in value]

    def dtype_arg(self, key: int | str) -> np.dtype | None:
        """A dtype argument (None when absent) as a numpy dtype."""
        value = self.value(key, None)
        return None if value is None else np_dtype(value)

    # --- tensors -------------------------------------------------------------------------

    def tensor(self, key: int | str, dtype: Any = None) -> SSAValue:
        """The argument as an SSA tensor (constants materialized), cast to `dtype` if given."""
        return self.as_tensor(self.raw(key), dtype)

    def tensors(self, key: int | str) -> list[SSAValue]:
        return [self.as_tensor(v) for v in self.raw(key)]

    def as_tensor(self, value: Any, dtype: Any = None) -> SSAValue:
        if isinstance(value, Unavailable):
            raise self.unsupported(f"use of {value.what}")
        if not isinstance(value, SSAValue):
            return self.builder.constant(value, self.location, dtype)
        if dtype is not None and numpy_dtype(value.type.element_type) != np_dtype(dtype):
            return self.emit(relay.CastOp(value, dtype=element_type(np_dtype(dtype))))
        return value

    def type(self, key: int | str) -> TensorType:
        value = self.raw(key)
        if isinstance(value, SSAValue):
            assert isinstance(value.type, TensorType)
            return value.type
        if isinstance(value, torch.Tensor):
            return TensorType(element_type(np_dtype(value.dtype)), list(value.shape))
        raise self.error(f"argument '{self._name(key)}' is not a tensor")

    def shape(self, key: int | str) -> tuple[int, ...]:
        return self.type(key).get_shape()

    def rank(self, key: int | str) -> int:
        return len(self.shape(key))

    def dtype(self, key: int | str) -> np.dtype:
        return numpy_dtype(self.type(key).element_type)

    def result_dtype(self, lhs: Any, rhs: Any) -> np.dtype:
        """torch's type promotion of two tensors (SSA or known) or Python scalars."""
        return np_dtype(torch.result_type(_proxy(lhs), _proxy(rhs)))

    # --- building ------------------------------------------------------------------------

    def emit(self, op: Operation) -> Any:
        """Add `op` at the op's location; returns its result (or the op if it has several)."""
        self.builder.add(op, self.location)
        return op.results[0] if len(op.results) == 1 else op

    def constant(self, value: Any, dtype: Any = None) -> SSAValue:
        return self.builder.constant(value, self.location, dtype)

    def cast(self, value: SSAValue, dtype: Any) -> SSAValue:
        return self.as_tensor(value, dtype)


def torch_dtype_of(value: SSAValue) -> torch.dtype:
    """The torch dtype of an SSA tensor."""
    t = value.type
    assert isinstance(t, TensorType)
    return torch_dtype(numpy_dtype(t.element_type))


def _proxy(value: Any) -> Any:
    """A stand-in torch.result_type accepts: a meta tensor for SSA values (a dimension
    decided at run time stands as 1: promotion reads only whether a tensor has dimensions)."""
    if isinstance(value, SSAValue):
        shape = [max(d, 1) for d in value.type.get_shape()]
        return torch.empty(shape, dtype=torch_dtype_of(value), device="meta")
    return value
