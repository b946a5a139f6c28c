"""ONNX Attention (opset 23+) and RotaryEmbedding composed of relay ops.

Attention: 3-d inputs split into heads, a KV cache (past_key/past_value concatenated; present_* outputs), grouped-query heads repeated,
scale applied to Q and K as sqrt(scale) each (as the ONNX reference does), softcap, a
boolean or additive mask (padded to the key length), causal and sliding-window masks
offset by the cache length or by `nonpad_kv_seqlen`, softmax in `softmax_precision`, and
the `qk_matmul_output_mode` output. A fully masked row attends to nothing (zeros)."""

from __future__ import annotations

import math

import numpy as np
import onnx
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dims import Dim, equal, normalize, shape_of
from xrelay.dialects.dtypes import element_type
from xrelay.frontends.common import arange, dim_scalar, matmul_nd
from xrelay.frontends.onnx.binder import Node, sign
from xrelay.frontends.onnx.registry import onnx_op


def _shape(v: SSAValue) -> list[Dim]:
    return list(shape_of(v.type))


def _iota(b: Node, size: Dim, shape: list[Dim]) -> SSAValue:
    """0..size-1 (int64) reshaped to `shape`."""
    return b.emit(relay.ReshapeOp(arange(b, size), newshape=shape))


def _heads(b: Node, x: SSAValue, heads: int) -> SSAValue:
    """[B, S, H*D] -> [B, H, S, D]."""
    batch, seq, hidden = _shape(x)
    (hidden,) = b.static_dims([hidden], "Attention hidden size")
    if hidden % heads:
        raise b.error(f"hidden size {hidden} is not a multiple of {heads} heads")
    x = b.emit(relay.ReshapeOp(x, newshape=(batch, seq, heads, hidden // heads)))
    return b.emit(relay.TransposeOp(x, axes=(0, 2, 1, 3)))


def _repeat_heads(b: Node, x: SSAValue, reps: int) -> SSAValue:
    """np.repeat(x, reps, axis=1) for [B, H, S, D]."""
    batch, heads, seq, dim = _shape(x)
    x = b.emit(relay.ExpandDimsOp(x, axis=2))
    x = b.emit(relay.BroadcastToOp(x, shape=(batch, heads, reps, seq, dim)))
    return b.emit(relay.ReshapeOp(x, newshape=(batch, heads * reps, seq, dim)))


class Bias:
    """The additive attention bias [.., q, kv], built from constants and run-time masks."""

    def __init__(self, b: Node, dtype: np.dtype, q: Dim, kv: Dim) -> None:
        self.b, self.dtype, self.q, self.kv = b, dtype, q, kv
        self.value: SSAValue | None = None

    def const(self, array) -> SSAValue:
        return self.b.constant(np.asarray(array, self.dtype))

    def add(self, term: SSAValue) -> None:
        self.value = term if self.value is None else self.b.emit(relay.AddOp(self.value, term))

    def allowed_to_bias(self, allowed: SSAValue) -> SSAValue:
        return self.b.emit(relay.WhereOp(allowed, self.const(0), self.const(-np.inf)))

    def window(self, offset: SSAValue | Dim, left: int, right: int, causal: bool) -> None:
        """Keys j with i + offset - left <= j <= i + offset + right (causal: right = 0);
        `offset` is an int, a dimension expression (a dynamic cache length) or per-batch
        offsets [B]."""
        b = self.b
        if all(isinstance(v, int) for v in (offset, self.q, self.kv)):
            i = np.arange(self.q).reshape(self.q, 1)
            j = np.arange(self.kv).reshape(1, self.kv)
            diff = i + offset - j
            allowed = np.ones_like(diff, dtype=bool)
            if causal:
                allowed &= diff >= 0
            if left >= 0:
                allowed &= diff <= left
            if right >= 0:
                allowed &= -diff <= right
            self.add(self.const(np.where(allowed, 0, -np.inf)))
            return
        # compare at run time: i - j [q, kv] plus the offset
        if isinstance(self.q, int) and isinstance(self.kv, int):
            diff = b.constant(np.subtract.outer(np.arange(self.q), np.arange(self.kv)))
        else:
            i, j = _iota(b, self.q, [self.q, 1]), _iota(b, self.kv, [1, self.kv])
            diff = b.emit(relay.SubtractOp(i, j))
        if isinstance(offset, SSAValue):  # per batch (nonpad_kv_seqlen - q): [B, 1, q, kv]
            off = b.emit(relay.ReshapeOp(offset, newshape=(_shape(offset)[0], 1, 1, 1)))
            diff = b.emit(relay.AddOp(diff, off))
        elif not (isinstance(offset, int) and offset == 0):
            diff = b.emit(relay.AddOp(diff, dim_scalar(b, offset)))
        conds = []
        if causal:
            conds.append(b.emit(relay.GreaterEqualOp(diff, b.constant(np.int64(0)))))
        if left >= 0:
            conds.append(b.emit(relay.LessEqualOp(diff, b.constant(np.int64(left)))))
        if right >= 0:
            neg = b.emit(relay.NegativeOp(diff))
            conds.append(b.emit(relay.LessEqualOp(neg, b.constant(np.int64(right)))))
        if not conds:
            return
        allowed = conds[0]
        for c in conds[1:]:
            allowed = b.emit(relay.LogicalAndOp(allowed, c))
        self.add(self.allowed_to_bias(allowed))


def _mask(b: Node, bias: Bias, mask: SSAValue) -> None:
    """A boolean (True attends) or additive mask, padded on the key axis to kv."""
    pad = normalize(bias.kv - _shape(mask)[-1])
    is_bool = b.dtype(3) == np.bool_
    longer = sign(pad)
    if longer is None:
        raise b.unsupported(f"a mask of {_shape(mask)[-1]} keys for {bias.kv} keys")
    if longer > 0 and not equal(pad, 0):
        shape = _shape(mask)[:-1] + [pad]
        fill = (False, np.bool_) if is_bool else (-np.inf, bias.dtype)
        extra = b.full(*fill, shape)
        mask = b.emit(relay.ConcatenateOp(mask, extra, axis=len(shape) - 1))
    bias.add(bias.allowed_to_bias(mask) if is_bool else mask)


@onnx_op("Attention", since=23)
def attention(b: Node) -> list[SSAValue | None]:
    q, k, v = b.input(0), b.input(1), b.input(2)
    dtype = np.dtype(b.dtype(0))
    rank = b.rank(0)
    if rank == 3:
        q_heads, kv_heads = b.attr("q_num_heads", None), b.attr("kv_num_heads", None)
        if q_heads is None or kv_heads is None:
            raise b.error("3-d inputs need q_num_heads and kv_num_heads")
        q, k, v = _heads(b, q, q_heads), _heads(b, k, kv_heads), _heads(b, v, kv_heads)
    elif rank != 4:
        raise b.unsupported(f"rank-{rank} inputs")
    past_key, past_value = b.optional_input(4), b.optional_input(5)
    nonpad = b.optional_input(6) if b.n_inputs > 6 else None
    if (past_key is None) != (past_value is None):
        raise b.error("past_key and past_value must be given together")
    past = _shape(past_key)[2] if past_key is not None else 0
    if past_key is not None:
        k = b.emit(relay.ConcatenateOp(past_key, k, axis=2))
        v = b.emit(relay.ConcatenateOp(past_value, v, axis=2))
    present_k, present_v = k, v
    q_len, kv_len = _shape(q)[2], _shape(k)[2]
    b.static_dims([_shape(q)[1], _shape(k)[1]], "Attention head counts")
    if _shape(q)[1] != _shape(k)[1]:
        if _shape(q)[1] % _shape(k)[1]:
            raise b.error(f"{_shape(q)[1]} query heads are not a multiple of {_shape(k)[1]}")
        reps = _shape(q)[1] // _shape(k)[1]
        k, v = _repeat_heads(b, k, reps), _repeat_heads(b, v, reps)

    scale = b.attr("scale", None)
    if scale is None:
        (head,) = b.static_dims(_shape(q)[3:], "Attention head size")
        scale = 1 / math.sqrt(head)
    root = b.constant(np.asarray(np.sqrt(scale), dtype))
    q_scaled = b.emit(relay.MultiplyOp(q, root))
    kt = b.emit(relay.TransposeOp(b.emit(relay.MultiplyOp(k, root)), axes=(0, 1, 3, 2)))
    scores = matmul_nd(b, q_scaled, kt)
    softcap = b.attr("softcap", 0.0)
    if softcap > 0:
        cap = b.constant(np.asarray(softcap, dtype))
        scores = b.emit(
            relay.MultiplyOp(b.emit(relay.TanhOp(b.emit(relay.DivideOp(scores, cap)))), cap)
        )

    bias = Bias(b, dtype, q_len, kv_len)
    mask = b.optional_input(3)
    causal = bool(b.attr("is_causal", 0))
    left, right = b.attr("left_window_size", -1), b.attr("right_window_size", -1)
    if mask is not None:
        _mask(b, bias, mask)
    offset: SSAValue | Dim = past
    if nonpad is not None:
        offset = b.emit(
            relay.SubtractOp(
                b.emit(relay.CastOp(nonpad, dtype=element_type(np.int64))),
                dim_scalar(b, q_len),
            )
        )
    if causal or left >= 0 or right >= 0:
        bias.window(offset, left, right, causal)
    if nonpad is not None:
        keys = _iota(b, kv_len, [1, kv_len])
        lengths = b.emit(
            relay.ReshapeOp(
                b.emit(relay.CastOp(nonpad, dtype=element_type(np.int64))),
                newshape=(_shape(nonpad)[0], 1),
            )
        )
        padding = b.emit(relay.LessOp(keys, lengths))  # [B, kv]
        padding = b.emit(relay.ReshapeOp(padding, newshape=(_shape(nonpad)[0], 1, 1, kv_len)))
        bias.add(bias.allowed_to_bias(padding))

    with_bias = scores if bias.value is None else b.emit(relay.AddOp(scores, bias.value))
    mode = b.attr("qk_matmul_output_mode", 0)
    precision = b.attr("softmax_precision", None)
    logits = with_bias
    if precision is not None:
        target = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(precision))
        if target != dtype:
            logits = b.emit(relay.CastOp(logits, dtype=element_type(target)))
    probs = b.emit(relay.SoftmaxOp(logits, axis=-1))
    if bias.value is not None:  # rows with no attendable key give zeros, not NaN
        top = b.emit(relay.MaxOp(bias.value, axis=(-1,), keepdims=True))
        masked = b.emit(relay.EqualOp(top, b.constant(np.asarray(-np.inf, dtype))))
        zero = b.constant(np.zeros((), np.dtype(_np(probs))))
        probs = b.emit(relay.WhereOp(masked, zero, probs))
    if _np(probs) != dtype:
        probs = b.emit(relay.CastOp(probs, dtype=element_type(dtype)))
    y = matmul_nd(b, probs, v)
    if rank == 3:
        batch, heads, seq, dim = _shape(y)
        y = b.emit(relay.TransposeOp(y, axes=(0, 2, 1, 3)))
        y = b.emit(relay.ReshapeOp(y, newshape=(batch, seq, heads * dim)))
    qk = {0: scores, 1: scores, 2: with_bias, 3: probs}.get(mode)
    if qk is None:
        raise b.error(f"qk_matmul_output_mode {mode} is not 0-3")
    return [y, present_k, present_v, qk]


def _np(v: SSAValue) -> np.dtype:
    from xrelay.dialects.dtypes import numpy_dtype

    return numpy_dtype(v.type.element_type)


@onnx_op("RotaryEmbedding", since=23)
def rotary_embedding(b: Node) -> SSAValue:
    """Rotates pairs of features by the cached angles: halves (or, `interleaved`, even and
    odd features) of the first `rotary_embedding_dim` features of each head; cos/sin
    caches are [B, S, rot/2], or [positions, rot/2] indexed by `position_ids`."""
    x = b.input(0)
    shape = _shape(x)
    if len(shape) == 4:  # [B, H, S, D] -> [B, S, H, D]
        x = b.emit(relay.TransposeOp(x, axes=(0, 2, 1, 3)))
    elif len(shape) == 3:
        heads = int(b.attr("num_heads", 0))
        b.static_dims(shape[2:], "RotaryEmbedding hidden size")
        if heads <= 0 or shape[2] % heads:
            raise b.error(f"3-d input needs num_heads dividing {shape[2]}, got {heads}")
        x = b.emit(relay.ReshapeOp(x, newshape=(shape[0], shape[1], heads, shape[2] // heads)))
    else:
        raise b.unsupported(f"rank-{len(shape)} input")
    batch, seq, heads, head = _shape(x)
    b.static_dims([heads, head], "RotaryEmbedding heads")
    rot = int(b.attr("rotary_embedding_dim", 0)) or head
    cos, sin = b.input(1), b.input(2)
    if b.n_inputs > 3 and b.has_input(3):
        ids = b.input(3)
        cos = b.emit(relay.TakeOp(cos, ids, axis=0))
        sin = b.emit(relay.TakeOp(sin, ids, axis=0))
    if _shape(cos)[-1] != rot // 2 or _shape(sin)[-1] != rot // 2:
        raise b.error(f"cos/sin caches must end in {rot // 2} (rotary_embedding_dim / 2)")
    cos = b.emit(relay.ExpandDimsOp(cos, axis=2))
    sin = b.emit(relay.ExpandDimsOp(sin, axis=2))

    def part(begin: int, end: int, step: int = 1) -> SSAValue:
        return b.emit(relay.StridedSliceOp(x, begin=[begin], end=[end], strides=[step], axes=[3]))

    interleaved = bool(b.attr("interleaved", 0))
    x1 = part(0, rot, 2) if interleaved else part(0, rot // 2)
    x2 = part(1, rot, 2) if interleaved else part(rot // 2, rot)
    real = b.emit(
        relay.SubtractOp(b.emit(relay.MultiplyOp(cos, x1)), b.emit(relay.MultiplyOp(sin, x2)))
    )
    imag = b.emit(relay.AddOp(b.emit(relay.MultiplyOp(sin, x1)), b.emit(relay.MultiplyOp(cos, x2))))
    if interleaved:
        pairs = b.emit(
            relay.ConcatenateOp(
                b.emit(relay.ExpandDimsOp(real, axis=4)),
                b.emit(relay.ExpandDimsOp(imag, axis=4)),
                axis=4,
            )
        )
        rotated = b.emit(relay.ReshapeOp(pairs, newshape=(batch, seq, heads, rot)))
    else:
        rotated = b.emit(relay.ConcatenateOp(real, imag, axis=3))
    y = rotated if rot == head else b.emit(relay.ConcatenateOp(rotated, part(rot, head), axis=3))
    if len(shape) == 3:
        return b.emit(relay.ReshapeOp(y, newshape=shape))
    return b.emit(relay.TransposeOp(y, axes=(0, 2, 1, 3)))
