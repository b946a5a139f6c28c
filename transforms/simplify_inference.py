"""`simplify-inference`: rewrite training-only ops for inference.

- `nn.dropout` is removed (it is the identity at inference).
- `nn.batch_norm` after a conv2d (optionally + bias_add) whose weight is constant and which
  has no other user folds into that conv: the weight is scaled per output channel and the
  shift becomes the bias. Pictured:

      data   W (const)                      data   W * scale
        \\   /                                 \\   /
        conv2d    [bias_add b]      ->        conv2d
          |                                     |
      batch_norm(gamma, beta, mean, var)     bias_add((b - mean) * scale + beta)

- any other `nn.batch_norm` becomes `x * scale + shift` broadcast along its axis, with
  scale = gamma / sqrt(var + eps) and shift = beta - mean * scale.

The new weight, scale and shift are relay ops on the old constants: run `fold-constants`
after this pass to evaluate them (with `xrelay.bind_params_by_name` first when the weights
are still parameters).

Before:
    %y = relay.nn.batch_norm %x, %g, %b, %m, %v {epsilon = 1.0e-05 : f64} : ...
After:
    %s = relay.divide %g, (relay.sqrt (relay.add %v, eps))     (reshaped to [C, 1, 1])
    %y = relay.add (relay.multiply %x, %s), (%b - %m * %s)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xrelay.dialects import relay
from xrelay.dialects.dtypes import dense_from_numpy, numpy_dtype
from xrelay.transforms.pattern import PatternCallback, is_constant, is_op, rewrite, wildcard


class RemoveDropout(PatternCallback):
    def __init__(self) -> None:
        self.x = wildcard()
        self.pattern = is_op("nn.dropout")(self.x)

    def callback(self, pre, post, node_map):
        return node_map[self.x][0]


def _scale_shift(cb: PatternCallback, bn: relay.BatchNormOp) -> tuple[SSAValue, SSAValue]:
    """Per-channel (scale, shift) vectors of a batch norm, as relay ops."""
    dtype = numpy_dtype(bn.data.type.element_type)
    eps = cb.emit(relay.ConstantOp(dense_from_numpy(np.asarray(bn.attrs.epsilon, dtype))))
    scale = cb.emit(
        relay.DivideOp(bn.gamma, cb.emit(relay.SqrtOp(cb.emit(relay.AddOp(bn.moving_var, eps)))))
    )
    shift = cb.emit(relay.SubtractOp(bn.beta, cb.emit(relay.MultiplyOp(bn.moving_mean, scale))))
    return scale, shift


def _along(cb: PatternCallback, vec: SSAValue, rank: int, axis: int) -> SSAValue:
    """A [C] vector reshaped to broadcast along `axis` of a rank-`rank` tensor."""
    shape = [1] * (rank - axis)
    shape[0] = vec.type.get_shape()[0]
    return cb.emit(relay.ReshapeOp(vec, newshape=shape)) if len(shape) > 1 else vec


class BatchNormIntoConv(PatternCallback):
    def __init__(self) -> None:
        self.data, self.weight, self.bias = wildcard(), is_constant(), is_constant()
        self.conv = is_op("nn.conv2d")(self.data, self.weight)
        self.biased = is_op("nn.bias_add")(self.conv, self.bias)
        self.pattern = is_op("nn.batch_norm")(
            self.biased | self.conv, wildcard(), wildcard(), wildcard(), wildcard()
        )

    def callback(self, pre, post, node_map):
        bn = pre.owner
        conv = node_map[self.conv][0].owner
        producer = bn.data.owner
        if (
            bn.attrs.axis % 4 != 1
            or conv.attrs.kernel_layout != "OIHW"
            or conv.attrs.data_layout != "NCHW"
        ):
            return None
        if len(list(conv.result.uses)) != 1 or len(list(producer.results[0].uses)) != 1:
            return None
        scale, shift = _scale_shift(self, bn)
        weight = self.emit(relay.MultiplyOp(conv.weight, _along(self, scale, 4, 0)))
        attrs = {k: conv.attrs[k] for k in ("strides", "padding", "dilation", "groups")}
        new_conv = self.emit(relay.Conv2DOp(conv.data, weight, **attrs))
        if self.bias in node_map:
            old_bias = node_map[self.bias][0]
            shift = self.emit(relay.AddOp(self.emit(relay.MultiplyOp(old_bias, scale)), shift))
        return self.emit(relay.BiasAddOp(new_conv, shift, axis=1))


class BatchNormToScaleShift(PatternCallback):
    def __init__(self) -> None:
        self.pattern = is_op("nn.batch_norm")(
            wildcard(), wildcard(), wildcard(), wildcard(), wildcard()
        )

    def callback(self, pre, post, node_map):
        bn = pre.owner
        rank = len(bn.data.type.get_shape())
        axis = bn.attrs.axis % rank
        scale, shift = _scale_shift(self, bn)
        scaled = self.emit(relay.MultiplyOp(bn.data, _along(self, scale, rank, axis)))
        return self.emit(relay.AddOp(scaled, _along(self, shift, rank, axis)))


def simplify_inference_callbacks() -> list[PatternCallback]:
    return [RemoveDropout(), BatchNormIntoConv(), BatchNormToScaleShift()]


@dataclass(frozen=True)
class SimplifyInference(ModulePass):
    """Remove dropout, fold batch norms into convs or into scale/shift. No options."""

    name = "simplify-inference"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite(simplify_inference_callbacks(), op)
