"""ai.onnx.preview FlexAttention, following the ONNX reference
(onnx/reference/ops/aionnx_preview/op_flex_attention.py): Q [B, Hq, L, E] and K, V
[B, Hkv, S, *] (key/value heads repeated for grouped queries), Q and K each scaled by
sqrt(scale) (computed in f32, then in the inputs' type), scores in the inputs' type, then
in the softmax precision (f32 for 16-bit inputs unless `softmax_precision` says): the
`score_mod` subgraph, a softmax over S, the `prob_mod` subgraph, and probs @ V, cast back.
The subgraphs are converted in place, their one input bound to the scores or the
probabilities."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import onnx
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dtypes import element_type, numpy_dtype
from xrelay.frontends.common import matmul_nd
from xrelay.frontends.onnx.binder import Node, Value
from xrelay.frontends.onnx.registry import onnx_op

PRECISIONS = {
    onnx.TensorProto.FLOAT: np.dtype(np.float32),
    onnx.TensorProto.FLOAT16: np.dtype(np.float16),
    onnx.TensorProto.BFLOAT16: np.dtype(ml_dtypes.bfloat16),
    onnx.TensorProto.DOUBLE: np.dtype(np.float64),
}


def _cast(b: Node, x: SSAValue, dtype: np.dtype) -> SSAValue:
    if numpy_dtype(x.type.element_type) == dtype:
        return x
    return b.emit(relay.CastOp(x, dtype=element_type(dtype)))


def _repeat_heads(b: Node, x: SSAValue, reps: int) -> SSAValue:
    """np.repeat(x, reps, axis=1) for [B, H, S, D]."""
    if reps == 1:
        return x
    batch, heads, seq, dim = x.type.get_shape()
    x = b.emit(relay.ExpandDimsOp(x, axis=2))
    x = b.emit(relay.BroadcastToOp(x, shape=(batch, heads, reps, seq, dim)))
    return b.emit(relay.ReshapeOp(x, newshape=(batch, heads * reps, seq, dim)))


def _modified(b: Node, name: str, x: SSAValue, dtype: np.dtype) -> SSAValue:
    """x through the node's graph attribute `name` (if any), as `dtype`."""
    if not b.has_attr(name):
        return x
    graph = b.attr(name)
    if len(graph.input) != 1 or len(graph.output) != 1:
        raise b.error(f"{name} takes and gives one tensor")
    (out,) = b.importer.convert_graph(graph, {graph.input[0].name: Value(ssa=x)})
    return _cast(b, b.ssa(out), dtype)


def _softmax(b: Node, x: SSAValue) -> SSAValue:
    """exp(x - max) / sum, over the last axis, as the reference writes it."""
    top = b.emit(relay.MaxOp(x, axis=(3,), keepdims=True))
    e = b.emit(relay.ExpOp(b.emit(relay.SubtractOp(x, top))))
    return b.emit(relay.DivideOp(e, b.emit(relay.SumOp(e, axis=(3,), keepdims=True))))


@onnx_op("FlexAttention", since=1, domain="ai.onnx.preview", structured=True)
def flex_attention(b: Node) -> SSAValue:
    if not b.rank(0) == b.rank(1) == b.rank(2) == 4:
        raise b.error("Q, K and V must be rank 4")
    hq, embed = b.static_dims([b.shape(0)[1], b.shape(0)[3]], "FlexAttention Q heads/size")
    (hkv,) = b.static_dims([b.shape(1)[1]], "FlexAttention K heads")
    if hkv <= 0 or hq % hkv or b.shape(2)[1] != hkv or b.shape(1)[3] != embed:
        raise b.error(f"Q {b.shape(0)}, K {b.shape(1)} and V {b.shape(2)} do not match")
    dtype, v_dtype = np.dtype(b.dtype(0)), np.dtype(b.dtype(2))
    if b.has_attr("softmax_precision"):
        compute = PRECISIONS.get(int(b.attr("softmax_precision")))
        if compute is None:
            raise b.unsupported(f"softmax_precision {b.attr('softmax_precision')}")
    else:
        compute = np.dtype(np.float32) if dtype.itemsize < 4 else dtype
    scale = b.attr("scale", None)
    scale = 1.0 / math.sqrt(embed) if scale is None else float(scale)
    root = b.constant(np.asarray(np.sqrt(np.float32(scale)), dtype))
    q = b.emit(relay.MultiplyOp(b.input(0), root))
    k = b.emit(relay.MultiplyOp(_repeat_heads(b, b.input(1), hq // hkv), root))
    scores = matmul_nd(b, q, b.emit(relay.TransposeOp(k, axes=(0, 1, 3, 2))))
    scores = _modified(b, "score_mod", _cast(b, scores, compute), compute)
    probs = _modified(b, "prob_mod", _softmax(b, scores), compute)
    v = _cast(b, _repeat_heads(b, b.input(2), hq // hkv), compute)
    return _cast(b, matmul_nd(b, probs, v), v_dtype)
