"""`fuse-composites`: a call of a conv composite (from `merge-composite`) becomes one fused
loop nest that writes each output element once.

A composite whose body is `[nn.pad (zeros, spatial)] -> nn.conv2d -> nn.bias_add -> [nn.relu]`
(f32, NCHW/OIHW) becomes one `linalg.generic` with only parallel iterators over the output;
its body starts from the bias, runs the reduction over input channels and the kernel window
as nested `scf.for` loops carrying the sum, applies the relu and yields once:

    out[n, o, y, x] = relu(bias[o] + sum_{c, i, j} xpad[n, g*C + c, y*s + i*d, x*s + j*d] * w[o, c, i, j])

Other composites are left for `inline-calls`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, f32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xrelay.dialects import relay
from xrelay.lowering.inline_calls import erase_uncalled
from xrelay.lowering.relay_to_linalg.builder import Emitter
from xrelay.lowering.relay_to_linalg.nn import fused_conv2d
from xrelay.transforms.merge_composite import COMPOSITE_ATTR


@dataclass
class ConvChain:
    pad: relay.PadOp | None
    conv: relay.Conv2DOp
    bias: relay.BiasAddOp
    relu: relay.ReluOp | None


def match_chain(fn: func.FuncOp) -> ConvChain | None:
    """The conv chain a composite body holds (constants aside), or None."""
    ops = [op for op in fn.body.block.ops if not isinstance(op, relay.ConstantOp | func.ReturnOp)]
    kinds = [type(op) for op in ops]
    pad = ops.pop(0) if kinds and kinds[0] is relay.PadOp else None
    relu = ops.pop() if ops and isinstance(ops[-1], relay.ReluOp) else None
    if [type(op) for op in ops] != [relay.Conv2DOp, relay.BiasAddOp]:
        return None
    conv, bias = ops
    a = conv.attrs
    if a.data_layout != "NCHW" or a.kernel_layout != "OIHW" or conv.result.type.element_type != f32:
        return None
    if bias.data is not conv.result or bias.attrs.axis not in (1, -3):
        return None
    if pad is not None:
        widths = list(pad.attrs.pad_width)
        if pad.attrs.pad_mode != "constant" or pad.attrs.pad_value != 0.0 or any(widths[:4]):
            return None
        if any(w < 0 for w in widths) or conv.data is not pad.result:
            return None
    return ConvChain(pad, conv, bias, relu)


def emit_fused_conv(
    e: Emitter, chain: ConvChain, x: SSAValue, w: SSAValue, bias: SSAValue
) -> SSAValue:
    a = chain.conv.attrs
    padding = list(a.padding)
    if chain.pad is not None:  # zero padding of H and W joins the conv's own
        widths = list(chain.pad.attrs.pad_width)
        padding = [padding[0] + widths[4], padding[1] + widths[6]]
        padding += [list(a.padding)[2] + widths[5], list(a.padding)[3] + widths[7]]
    out_shape = list(chain.conv.result.type.get_shape())
    return fused_conv2d(
        e, x, w, bias, a.strides, padding, a.dilation, a.groups, out_shape, chain.relu is not None
    )


def _at_call(e: Emitter, mapping: dict[SSAValue, SSAValue], value: SSAValue) -> SSAValue:
    """A composite body value at the call site: an argument, or a copy of its constant."""
    if value not in mapping:
        owner = value.owner
        assert isinstance(owner, Operation)
        if owner.operands:  # a constant splat: the scalar first
            _at_call(e, mapping, owner.operands[0])
        clone = owner.clone(value_mapper=mapping)
        e.insert(clone)
        mapping[value] = clone.results[0]
    return mapping[value]


def fuse_composites(module: ModuleOp) -> None:
    functions = {
        op.sym_name.data: op
        for op in module.body.block.ops
        if isinstance(op, func.FuncOp) and isinstance(op.attributes.get(COMPOSITE_ATTR), StringAttr)
    }
    for call in [op for op in module.walk() if isinstance(op, func.CallOp)]:
        fn = functions.get(call.callee.root_reference.data)
        chain = match_chain(fn) if fn is not None else None
        if chain is None:
            continue
        mapping: dict[SSAValue, SSAValue] = dict(zip(fn.body.block.args, call.arguments))
        e = Emitter(call)
        data = chain.pad.data if chain.pad is not None else chain.conv.data
        x, w, b = (_at_call(e, mapping, v) for v in (data, chain.conv.weight, chain.bias.bias))
        y = emit_fused_conv(e, chain, x, w, b)
        call.results[0].replace_all_uses_with(y)
        e.rewriter.erase_op(call)
    erase_uncalled(module, functions)


@dataclass(frozen=True)
class FuseComposites(ModulePass):
    """Conv composites -> one fused loop nest each. No options."""

    name = "fuse-composites"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fuse_composites(op)
