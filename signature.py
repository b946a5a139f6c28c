"""The calling convention of a module's `@main`: argument names, which arguments are data
inputs and which are parameters, and the checks every executor runs before it computes.

An argument's user-facing name is its `xrelay.name` argument attribute (frontends keep the
model's names there, which need not be valid SSA names), else its SSA name hint, else
`arg<i>`. Parameters carry the unit attribute `xrelay.param` and come after the data inputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    UnrankedTensorType,
    i64,
)
from xdsl.ir import Attribute, BlockArgument, SSAValue
from xrelay.dialects.dims import Dim, dim_str, evaluate, fmt_dims, shape_of
from xrelay.dialects.dtypes import (
    from_storage,
    narrow_dtype,
    numpy_dtype,
    storage_dtype,
    to_storage,
)
from xrelay.errors import Error, ShapeError

NAME_ATTR = "xrelay.name"
PARAM_ATTR = "xrelay.param"
# A data input or result of a narrow type (bfloat16, float8, int4, ...: dialects/dtypes.py)
# is carried in its storage type; this argument/result attribute names the type users see.
DTYPE_ATTR = "xrelay.dtype"
# @main attribute: {symbol = array<i64: min, max>} for dynamic dimensions with a declared range
DIM_RANGES_ATTR = "xrelay.dim_ranges"


def param_name(fn: func.FuncOp, value: SSAValue) -> str | None:
    """The name of the parameter `value` is, if it is one of fn's parameters."""
    if not isinstance(value, BlockArgument) or value.owner is not fn.body.block:
        return None
    if fn.arg_attrs is None:
        return None
    entries = fn.arg_attrs.data[value.index].data
    name = entries.get(NAME_ATTR)
    return name.data if PARAM_ATTR in entries and isinstance(name, StringAttr) else None


def arg_attrs(
    names: Sequence[str], n_inputs: int, dtypes: Mapping[str, np.dtype] | None = None
) -> ArrayAttr[DictionaryAttr]:
    """The `arg_attrs` of a `@main` whose first `n_inputs` arguments are data inputs;
    `dtypes` names the narrow type of data inputs carried in a storage type."""
    dicts = []
    for i, name in enumerate(names):
        entries: dict[str, Any] = {NAME_ATTR: StringAttr(name)}
        if i >= n_inputs:
            entries[PARAM_ATTR] = UnitAttr()
        elif dtypes and name in dtypes:
            entries[DTYPE_ATTR] = StringAttr(np.dtype(dtypes[name]).name)
        dicts.append(DictionaryAttr(entries))
    return ArrayAttr(dicts)


def res_attrs(dtypes: Sequence[np.dtype | None]) -> ArrayAttr[DictionaryAttr] | None:
    """The `res_attrs` of a `@main` whose results have these narrow types (None: none)."""
    if all(d is None for d in dtypes):
        return None
    return ArrayAttr(
        [DictionaryAttr({DTYPE_ATTR: StringAttr(d.name)} if d is not None else {}) for d in dtypes]
    )


def _logical(entries: Mapping[str, Attribute], storage: np.dtype, what: str) -> np.dtype:
    attr = entries.get(DTYPE_ATTR)
    if not isinstance(attr, StringAttr):
        return storage
    import ml_dtypes

    dtype = narrow_dtype(getattr(ml_dtypes, attr.data, None))
    if dtype is None or storage_dtype(dtype) != storage:
        raise Error(f'{what}: {DTYPE_ATTR} "{attr.data}" is not a narrow type stored as {storage}')
    return dtype


def main_function(module: ModuleOp) -> func.FuncOp:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == "main":
            return op
    raise Error("the module has no func.func @main")


@dataclass(frozen=True)
class Argument:
    name: str
    shape: tuple[Dim, ...]  # ints, and expressions of symbols for dynamic dimensions
    dtype: np.dtype  # what callers pass
    is_param: bool
    storage: np.dtype | None = None  # what native code reads, when it differs from dtype
    # a list of arrays of this dtype and rank (`shape` fixes their static dimensions)
    sequence: bool = False
    optional: bool = False  # None, or a value as the rest of this argument describes


@dataclass(frozen=True)
class FunctionSignature:
    args: tuple[Argument, ...]
    results: tuple[tuple[tuple[Dim, ...], np.dtype], ...]  # shapes and storage dtypes
    result_dtypes: tuple[np.dtype, ...] = ()  # what callers get (narrow types included)
    # the declared [min, max] of dynamic dimensions' symbols (@main's xrelay.dim_ranges)
    dim_ranges: tuple[tuple[str, int, int], ...] = ()
    sequence_results: tuple[int, ...] = ()  # results that are lists of arrays
    optional_results: tuple[int, ...] = ()  # results that may be None

    def result_text(self, i: int) -> str:
        """How result `i` is described to users (`float32[batch, 3]`, `sequence of ...`)."""
        shape, dtype = self.results[i]
        return type_text(shape, dtype, i in self.sequence_results, i in self.optional_results)

    @cached_property  # read at every run: computed once (the fields are frozen)
    def is_dynamic(self) -> bool:
        return any(not isinstance(d, int) for a in self.args if not a.sequence for d in a.shape)

    def outputs(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Result storage arrays as the arrays callers get."""
        if not self.result_dtypes:
            return list(arrays)
        return [from_storage(a, d) for a, d in zip(arrays, self.result_dtypes)]

    @staticmethod
    def of(fn: func.FuncOp) -> FunctionSignature:
        # the relay dialect's types, imported here: loading a saved library (the
        # signature from its header) imports no dialect
        from xrelay.dialects.relay.optional import OptionalType
        from xrelay.dialects.relay.sequence import SequenceType

        attrs = fn.arg_attrs.data if fn.arg_attrs is not None else [None] * len(fn.args)
        args = []
        for i, (arg, extra) in enumerate(zip(fn.args, attrs)):
            entries = extra.data if isinstance(extra, DictionaryAttr) else {}
            name_attr = entries.get(NAME_ATTR)
            name = (
                name_attr.data if isinstance(name_attr, StringAttr) else arg.name_hint or f"arg{i}"
            )
            t = arg.type
            optional = isinstance(t, OptionalType)
            if optional:
                t = t.inner
            sequence = isinstance(t, SequenceType)
            if sequence:
                t = _ranked(t.element)
            if not isinstance(t, TensorType):
                raise Error(f"@main argument '{name}' is not a tensor: {t}")
            storage = numpy_dtype(t.element_type)
            dtype = _logical(entries, storage, f"@main argument '{name}'")
            args.append(
                Argument(
                    name,
                    shape_of(t),
                    dtype,
                    PARAM_ATTR in entries,
                    storage if dtype != storage else None,
                    sequence,
                    optional,
                )
            )
        results, logical = [], []
        res = (
            fn.res_attrs.data
            if fn.res_attrs is not None
            else [None] * len(fn.function_type.outputs)
        )
        sequences, optionals = [], []
        for i, (t, extra) in enumerate(zip(fn.function_type.outputs, res)):
            if isinstance(t, OptionalType):  # returned as None or the value
                optionals.append(i)
                t = t.inner
            if isinstance(t, SequenceType):
                sequences.append(i)
                t = _ranked(t.element)
            if not isinstance(t, TensorType):
                raise Error(f"@main result is not a tensor: {t}")
            storage = numpy_dtype(t.element_type)
            entries = extra.data if isinstance(extra, DictionaryAttr) else {}
            results.append((shape_of(t), storage))
            logical.append(_logical(entries, storage, f"@main result {i}"))
        narrow = any(d != s for d, (_, s) in zip(logical, results))
        return FunctionSignature(
            tuple(args),
            tuple(results),
            tuple(logical) if narrow else (),
            _dim_ranges(fn),
            tuple(sequences),
            tuple(optionals),
        )

    @property
    def inputs(self) -> list[Argument]:
        return [a for a in self.args if not a.is_param]


def _ranked(t: Attribute) -> Attribute:
    """A sequence's element type as a tensor type (an unranked one: the one dimension
    UNRANKED, which the input checks and descriptions read as "any rank")."""
    if isinstance(t, UnrankedTensorType):
        return TensorType(t.element_type, [UNRANKED])
    return t


# the one dimension of an unranked sequence element's stand-in type (any rank)
UNRANKED = 0x7FFF_FFFF_FFFF_FFF0


def _dim_ranges(fn: func.FuncOp) -> tuple[tuple[str, int, int], ...]:
    attr = fn.attributes.get(DIM_RANGES_ATTR)
    if not isinstance(attr, DictionaryAttr):
        return ()
    ranges = []
    for name, value in attr.data.items():
        bounds = list(value.iter_values()) if isinstance(value, DenseArrayBase) else []
        if len(bounds) != 2:
            raise Error(f"@main {DIM_RANGES_ATTR}: '{name}' needs [min, max], got {value}")
        ranges.append((name, int(bounds[0]), int(bounds[1])))
    return tuple(ranges)


def dim_ranges_attr(ranges: Mapping[str, tuple[int, int]]) -> DictionaryAttr:
    """The `xrelay.dim_ranges` attribute of @main: each symbol's declared [min, max]."""
    return DictionaryAttr(
        {n: DenseArrayBase.from_list(i64, [int(lo), int(hi)]) for n, (lo, hi) in ranges.items()}
    )


def _describe(shape: tuple[Dim, ...], dtype: np.dtype) -> str:
    if shape == (UNRANKED,):
        return f"{dtype.name} of any rank"
    return f"{dtype.name}{fmt_dims(shape)}"


def type_text(
    shape: tuple[Dim, ...], dtype: Any, sequence: bool = False, optional: bool = False
) -> str:
    """A value's type for users: `float32[batch, 3]`, `sequence of float32[?]`, `optional
    float32[3]` (None or the value)."""
    text = _describe(shape, np.dtype(dtype))
    text = f"sequence of {text}" if sequence else text
    return f"optional {text}" if optional else text


def argument_text(arg: Argument) -> str:
    return type_text(arg.shape, arg.dtype, arg.sequence, arg.optional)


def bind_dims(sig: FunctionSignature, arrays: Sequence[np.ndarray]) -> dict[str, int]:
    """The values of the dynamic dimensions' symbols, read from the argument arrays (in
    signature order). Raises `xrelay.Error` naming the input, the axis and the rule when a
    dimension the model fixes differs, when two inputs give one symbol different values,
    when a value is outside its declared range, or when an expression (`2*seq`) does not
    hold."""
    binding: dict[str, int] = {}
    source: dict[str, str] = {}
    derived: list[tuple[str, int, Dim, int]] = []
    for arg, array in zip(sig.args, arrays):
        if arg.sequence or arg.optional:  # no symbol is bound from their sizes
            continue
        for axis, (dim, size) in enumerate(zip(arg.shape, array.shape)):
            where = f"input '{arg.name}' axis {axis}"
            if isinstance(dim, int):
                if dim != size:
                    raise Error(
                        f"{where} has size {size}, but the model fixes it to {dim} "
                        f"(expects {_describe(arg.shape, arg.dtype)})"
                    )
            elif dim.is_Symbol:
                name = dim.name
                if name in binding and binding[name] != size:
                    raise Error(
                        f"{where} has size {size}, but dimension '{name}' is {binding[name]} "
                        f"from {source[name]}: both are '{name}'"
                    )
                binding[name], source[name] = size, where
            else:
                derived.append((arg.name, axis, dim, size))
    for name, lo, hi in sig.dim_ranges:
        if name in binding and not lo <= binding[name] <= hi:
            raise Error(
                f"{source[name]} has size {binding[name]}, outside the range [{lo}, {hi}] "
                f"declared for dimension '{name}'"
            )
    for name, axis, dim, size in derived:
        try:
            expected = evaluate(dim, binding)
        except ShapeError:
            raise Error(
                f"input '{name}' axis {axis}: its size follows from {dim_str(dim)}, whose symbols "
                "no other input names"
            ) from None
        if expected != size:
            raise Error(
                f"input '{name}' axis {axis} has size {size}, but the model requires "
                f"{dim_str(dim)} = {expected}"
            )
    return binding


def _sequence_input(arg: Argument, value: Any) -> list[np.ndarray]:
    """A sequence input: a list (or tuple) of arrays of the argument's dtype and rank, each
    fitting its static dimensions."""
    if not isinstance(value, list | tuple):
        raise Error(
            f"input '{arg.name}' is a sequence: pass a list of {_describe(arg.shape, arg.dtype)} "
            f"arrays, got {type(value).__name__}"
        )
    items = []
    for i, item in enumerate(value):
        try:
            array = np.asarray(item)
        except (ValueError, TypeError) as e:
            raise Error(f"input '{arg.name}' element {i} is not an array: {e}") from None
        unranked = arg.shape == (UNRANKED,)
        fits = array.dtype == arg.dtype and (unranked or len(array.shape) == len(arg.shape))
        fits = fits and (
            unranked
            or all(not isinstance(d, int) or d == n for d, n in zip(arg.shape, array.shape))
        )
        if not fits:
            raise Error(
                f"input '{arg.name}' element {i} is {_describe(array.shape, array.dtype)}, "
                f"expected {_describe(arg.shape, arg.dtype)}"
            )
        items.append(np.asarray(array, order="C"))
    return items


def _shape_fits(expected: tuple[Dim, ...], actual: tuple[int, ...]) -> bool:
    """The rank, and for a static shape every dimension (`bind_dims` checks the dimensions
    of a dynamic one, naming the axis and the rule)."""
    if any(not isinstance(d, int) for d in expected):
        return len(expected) == len(actual)
    return tuple(expected) == tuple(actual)


def check_inputs(
    sig: FunctionSignature,
    positional: Sequence[Any],
    named: Mapping[str, Any],
    params: Mapping[str, np.ndarray],
) -> list[np.ndarray]:
    """The argument arrays in order: positional values fill the data inputs, named values
    any argument, parameters default to `params`. Raises `xrelay.Error` naming the input on
    a missing, unknown, misshapen or mistyped value."""
    data_names = [a.name for a in sig.inputs]
    if len(positional) > len(data_names):
        raise Error(
            f"got {len(positional)} positional inputs, the model takes {len(data_names)}: {data_names}"
        )
    given = dict(zip(data_names, positional))
    for name, value in named.items():
        if name in given:
            raise Error(f"input '{name}' given twice")
        given[name] = value
    known = {a.name for a in sig.args}
    unknown = sorted(set(given) - known)
    if unknown:
        raise Error(f"unknown input {unknown[0]!r}; the model's inputs are {data_names}")
    arrays: list[Any] = []
    for arg in sig.args:
        if arg.optional and arg.name in given and given[arg.name] is None:
            arrays.append(None)  # an optional input that holds no value
            continue
        value = given.get(arg.name, params.get(arg.name) if arg.is_param else None)
        if value is None:
            kind = "parameter" if arg.is_param else "input"
            raise Error(f"missing {kind} '{arg.name}' ({_describe(arg.shape, arg.dtype)})")
        if arg.sequence:
            arrays.append(_sequence_input(arg, value))
            continue
        try:
            array = np.asarray(value)
        except (ValueError, TypeError) as e:  # a ragged nested list, an odd object
            raise Error(f"input '{arg.name}' is not an array: {e}") from None
        if array.dtype != arg.dtype and array.dtype.newbyteorder("=") == arg.dtype:
            array = array.astype(arg.dtype)  # the other byte order: the same values, native
        if array.dtype != arg.dtype or not _shape_fits(arg.shape, array.shape):
            raise Error(
                f"input '{arg.name}' expects {_describe(arg.shape, arg.dtype)}, "
                f"got {_describe(array.shape, array.dtype)}"
            )
        if arg.storage is not None:
            array = to_storage(array)
        arrays.append(np.asarray(array, order="C"))
    return arrays
