"""The ONNX frontend: `from_onnx(model) -> (module, params)`.

Converters are registered by op type and minimum opset with `@onnx_op("Conv", since=11)`, in
files by op group (`elementwise`, `nn`, `tensor`, `reduce`, `sequence`, and `composite` for
ops made of several relay ops). Users add their own the same way:

    from xrelay.frontends.onnx import register_converter
    @register_converter("MyOp", since=1)
    def my_op(b):                      # b: the node binder (inputs, attributes, emit)
        return b.emit(relay.TanhOp(b.input(0)))
"""

from xrelay.frontends.onnx import (  # noqa: F401  (registers the converters)
    affine_grid,
    attention,
    col2im,
    composite,
    control_flow,
    data_dependent,
    deform_conv,
    einsum,
    elementwise,
    flex_attention,
    gradient,
    grid_sample,
    loss,
    more_ops,
    nn,
    optional,
    quantized,
    reduce,
    resize,
    rnn,
    roi_align,
    scatter,
    sequence,
    spectral,
    stateful,
    tensor,
    windows,
)
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.importer import from_onnx
from xrelay.frontends.onnx.registry import lookup, onnx_op, register_converter

__all__ = ["Node", "from_onnx", "lookup", "onnx_op", "register_converter"]
