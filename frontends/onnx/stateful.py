"""ONNX ops that carry a state from one call to the next (opset 27): CausalConvWithState
and LinearAttention, following the ONNX reference (onnx/reference/ops/op_*.py).

- CausalConvWithState: the past state (zeros if absent) concatenated before the input, a
  depthwise conv1d over it, the optional SiLU in f32; the present state is the last k - 1
  positions of the padded input.
- LinearAttention: the recurrence over time unrolled at import (at most MAX_STEPS steps),
  in f32 as the reference computes: the state [B * H_kv, d_k, d_v] decays by exp(decay)
  (gated rules), the delta rules replace v by beta * (v - k^T S), then S += k v^T and each
  query head reads scale * q^T S of its key/value head (grouped-query heads share one).
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dtypes import element_type, numpy_dtype
from xrelay.frontends.common import matmul_nd
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.registry import onnx_op

F32 = np.dtype(np.float32)
MAX_STEPS = 512


def _cast(b: Node, x: SSAValue, dtype: np.dtype) -> SSAValue:
    if numpy_dtype(x.type.element_type) == dtype:
        return x
    return b.emit(relay.CastOp(x, dtype=element_type(dtype)))


def _silu_f32(b: Node, x: SSAValue, dtype: np.dtype) -> SSAValue:
    """x * sigmoid(x), computed in f32 and cast back to `dtype`."""
    wide = _cast(b, x, F32)
    return _cast(b, b.emit(relay.MultiplyOp(wide, b.emit(relay.SigmoidOp(wide)))), dtype)


@onnx_op("CausalConvWithState", since=27)
def causal_conv_with_state(b: Node) -> list[SSAValue]:
    batch, channels, length = b.static_shape(0, "CausalConvWithState")
    out_channels, one, k = b.static_shape(1, "CausalConvWithState weight")
    if (out_channels, one) != (channels, 1) or k < 1:
        raise b.error(f"weight {[out_channels, one, k]} is not [{channels}, 1, k]")
    activation = b.attr("activation", "none")
    if activation not in ("none", "silu", "swish"):
        raise b.unsupported(f"activation '{activation}'")
    dtype = np.dtype(b.dtype(0))
    x = b.input(0)
    if b.has_input(3):
        past = b.input(3)
    else:
        past = b.constant(np.zeros((batch, channels, k - 1), dtype))
    padded = x if k == 1 else b.emit(relay.ConcatenateOp(past, x, axis=2))
    y = b.emit(
        relay.Conv1DOp(
            padded, b.input(1), strides=[1], padding=[0, 0], dilation=[1], groups=channels
        )
    )
    if b.has_input(2):
        bias = b.emit(relay.ReshapeOp(b.input(2), newshape=(1, channels, 1)))
        y = b.emit(relay.AddOp(y, bias))
    if activation != "none":
        y = _silu_f32(b, y, dtype)
    total = length + k - 1
    present = b.emit(relay.StridedSliceOp(padded, begin=[total - (k - 1)], end=[total], axes=[2]))
    return [y, present]


UPDATE_RULES = ("linear", "gated", "delta", "gated_delta")


@onnx_op("LinearAttention", since=27)
def linear_attention(b: Node) -> list[SSAValue]:
    rule = b.attr("update_rule", "gated_delta")
    if rule not in UPDATE_RULES:
        raise b.error(f"update_rule '{rule}' is not one of {UPDATE_RULES}")
    gated, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    if gated != b.has_input(4) or delta != b.has_input(5):
        raise b.error(f"update_rule '{rule}' takes decay: {gated}, beta: {delta}")
    hq, hkv = int(b.attr("q_num_heads")), int(b.attr("kv_num_heads"))
    if hq <= 0 or hkv <= 0 or hq % hkv:
        raise b.error(f"q_num_heads {hq} is not a positive multiple of kv_num_heads {hkv}")
    batch, steps, q_width = b.static_shape(0, "LinearAttention query")
    k_width = b.static_shape(1, "LinearAttention key")[2]
    v_width = b.static_shape(2, "LinearAttention value")[2]
    if q_width % hq or v_width % hkv:
        raise b.error(f"query {q_width} / value {v_width} widths do not split into heads")
    dk, dv, group = q_width // hq, v_width // hkv, hq // hkv
    if k_width != hkv * dk:
        raise b.error(f"key width {k_width} is not {hkv} heads of {dk}")
    if not 1 <= steps <= MAX_STEPS:
        raise b.unsupported(f"LinearAttention over {steps} steps (1 to {MAX_STEPS})")
    scale = float(b.attr("scale", 0.0))
    if scale == 0.0:
        scale = float(np.float32(1.0 / math.sqrt(dk)))
    out_dtype = np.dtype(b.dtype(0))
    heads = batch * hkv

    def per_step(i: int, shape: tuple[int, ...]) -> list[SSAValue]:
        """Input i [B, T, width] (f32) split into T steps, each reshaped to `shape`."""
        x = _cast(b, b.input(i), F32)
        steps_of_x = [
            b.emit(relay.StridedSliceOp(x, begin=[t], end=[t + 1], axes=[1])) for t in range(steps)
        ]
        return [b.emit(relay.ReshapeOp(x_t, newshape=shape)) for x_t in steps_of_x]

    q = per_step(0, (heads, group, dk))
    k = per_step(1, (heads, dk, 1))
    v = per_step(2, (heads, 1, dv))
    decay = beta = None
    if gated:
        width = b.static_shape(4, "LinearAttention decay")[2]
        if width not in (hkv, hkv * dk):
            raise b.error(f"decay width {width} is neither {hkv} nor {hkv * dk}")
        decay = per_step(4, (heads, width // hkv, 1))
    if delta:
        width = b.static_shape(5, "LinearAttention beta")[2]
        if width not in (hkv, 1):
            raise b.error(f"beta width {width} is neither {hkv} nor 1")
        beta = per_step(5, (batch, width, 1, 1))
    if b.has_input(3):
        past = b.input(3)
        if b.static_shape(3, "LinearAttention past_state") != (batch, hkv, dk, dv):
            raise b.error(f"past_state is not [{batch}, {hkv}, {dk}, {dv}]")
        state_dtype = np.dtype(b.dtype(3))
        state = b.emit(relay.ReshapeOp(_cast(b, past, F32), newshape=(heads, dk, dv)))
    else:
        state_dtype = out_dtype
        state = b.constant(np.zeros((heads, dk, dv), np.float32))
    scale_c = b.constant(np.float32(scale))
    outputs = []
    for t in range(steps):
        if decay is not None:
            state = b.emit(relay.MultiplyOp(state, b.emit(relay.ExpOp(decay[t]))))
        v_t = v[t]
        if beta is not None:
            k_row = b.emit(relay.ReshapeOp(k[t], newshape=(heads, 1, dk)))
            retrieved = matmul_nd(b, k_row, state)  # [heads, 1, dv]
            diff = b.emit(relay.SubtractOp(v_t, retrieved))
            diff = b.emit(relay.ReshapeOp(diff, newshape=(batch, hkv, 1, dv)))
            v_t = b.emit(relay.MultiplyOp(beta[t], diff))
            v_t = b.emit(relay.ReshapeOp(v_t, newshape=(heads, 1, dv)))
        state = b.emit(relay.AddOp(state, b.emit(relay.MultiplyOp(k[t], v_t))))
        read = b.emit(relay.MultiplyOp(scale_c, matmul_nd(b, q[t], state)))  # [heads, group, dv]
        outputs.append(b.emit(relay.ReshapeOp(read, newshape=(batch, 1, hq * dv))))
    out = outputs[0] if steps == 1 else b.emit(relay.ConcatenateOp(*outputs, axis=1))
    present = b.emit(relay.ReshapeOp(state, newshape=(batch, hkv, dk, dv)))
    return [_cast(b, out, out_dtype), _cast(b, present, state_dtype)]
