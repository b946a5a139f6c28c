"""Canonical quantized IR, so one backend pattern matches a model however it was imported.

`qnn-fold-quantize-constants`: `qnn.quantize` of a constant with constant parameters
becomes the integer constant it computes, evaluated with the reference executor as
`fold-constants` does (TVM's QnnQuantizeConstFold). Frontends that keep float weights
(PyTorch's `keep_quantized_weight=False`) then give the same int8 weights and int32 biases
as frontends that import them as integers.

    %wq = qnn.quantize %w_f32, %s, %z {out_dtype = i8}   ->   %wq = relay.constant dense<...> : tensor<...xi8>

`qnn-remove-clip-after-requantize`: a requantize to i32 whose result is clipped to a narrow
type's range and cast to it is a requantize straight to that type (requantize saturates);
a clip to a sub-range (a fused relu) stays, on the narrow type.

    %r = qnn.requantize ... {out_dtype = i32}
    %c = relay.clip %r {a_min = 0.0, a_max = 255.0}      ->   %y = qnn.requantize ... {out_dtype = ui8}
    %y = relay.cast %c {dtype = ui8}

`qnn-dense-bias-as-add`: the bias of a `qnn.dense` as `relay.add`, the form dense layers
take elsewhere (TFLite's FULLY_CONNECTED, float `dense_bias` composites), where PyTorch's
quantized linear imports a `relay.nn.bias_add` on the last axis (the same sum).

    %d = qnn.dense ...
    %y = relay.nn.bias_add %d, %b {axis = -1}            ->   %y = relay.add %d, %b
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, i32
from xdsl.passes import ModulePass
from xrelay.dialects import qnn, relay
from xrelay.dialects.constants import constant_value
from xrelay.dialects.dims import shape_of
from xrelay.dialects.dtypes import dense_from_numpy
from xrelay.dialects.qnn.base import QUANTIZED_TYPES, check_params, dtype_range
from xrelay.ir import location_str
from xrelay.reference import evaluate_op
from xrelay.transforms.pattern import PatternCallback, is_constant, is_op, rewrite, wildcard


class FoldQuantizeConstant(PatternCallback):
    def __init__(self) -> None:
        self.pattern = is_op("qnn.quantize")(is_constant(), is_constant(), is_constant())

    def callback(self, pre, post, node_map):
        op = pre.owner
        data, scale, zp = (constant_value(v) for v in op.operands)
        check_params(scale, zp, op.attrs.out_dtype, location_str(op))
        (values,) = evaluate_op(op, [data, scale, zp])
        return self.emit(relay.ConstantOp(dense_from_numpy(values)))


def single_use(value) -> bool:
    return len(list(value.uses)) == 1


class RemoveClipAfterRequantize(PatternCallback):
    def __init__(self) -> None:
        self.requantize = is_op("qnn.requantize")(*[wildcard() for _ in range(5)])
        self.clip = is_op("clip")(self.requantize)
        self.pattern = is_op("cast")(self.clip)

    def callback(self, pre, post, node_map):
        cast = pre.owner
        clip = node_map[self.clip][0].owner
        req = node_map[self.requantize][0].owner
        narrow = cast.attrs.dtype
        if req.attrs.out_dtype != i32 or narrow not in QUANTIZED_TYPES or narrow == i32:
            return None
        if not (single_use(req.results[0]) and single_use(clip.results[0])):
            return None
        lo, hi = dtype_range(narrow)
        a_min, a_max = max(clip.attrs.a_min, lo), min(clip.attrs.a_max, hi)
        if a_min > a_max:
            return None
        new = self.emit(
            qnn.RequantizeOp(
                *req.operands,
                axis=req.attrs.axis,
                out_dtype=narrow,
                rounding=req.attrs.rounding,
            )
        )
        if (a_min, a_max) == (lo, hi):
            return new
        return self.emit(relay.ClipOp(new, a_min=float(a_min), a_max=float(a_max)))


class DenseBiasAsAdd(PatternCallback):
    def __init__(self) -> None:
        dense = is_op("qnn.dense")(*[wildcard() for _ in range(6)])
        self.pattern = is_op("nn.bias_add")(dense, wildcard())

    def callback(self, pre, post, node_map):
        op = pre.owner
        acc, bias = op.operands
        rank = len(shape_of(acc.type))
        if len(shape_of(bias.type)) != 1 or op.attrs.axis % rank != rank - 1:
            return None
        return self.emit(relay.AddOp(acc, bias))


@dataclass(frozen=True)
class QnnFoldQuantizeConstants(ModulePass):
    """Quantize constants at compile time. No options."""

    name = "qnn-fold-quantize-constants"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite([FoldQuantizeConstant()], op)


@dataclass(frozen=True)
class QnnRemoveClipAfterRequantize(ModulePass):
    """requantize(i32) + clip + cast -> requantize to the narrow type. No options."""

    name = "qnn-remove-clip-after-requantize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite([RemoveClipAfterRequantize()], op)


@dataclass(frozen=True)
class QnnDenseBiasAsAdd(ModulePass):
    """bias_add on a qnn.dense's last axis -> add. No options."""

    name = "qnn-dense-bias-as-add"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite([DenseBiasAsAdd()], op)
