"""Built-in pattern tables for `merge-composite` (register more with
`register_pattern_table`).

`example`: the float analogue of the seed's quantized-conv entry, then plain conv+bias:

    [nn.pad]?                      (optional, constant padding)
        |
    nn.conv2d(_, const)
        |
    nn.bias_add(_, const)
        |
    nn.relu                        "conv2d_bias_relu"

    nn.conv2d(_, const) -> nn.bias_add(_, const)      "conv2d_bias"
    nn.dense(_, const) -> add(_, const) [-> nn.relu]  "dense_bias_relu" / "dense_bias"
"""

from __future__ import annotations

from xrelay.transforms.merge_composite import CompositePattern, register_pattern_table
from xrelay.transforms.pattern import Pattern, is_constant, is_op, wildcard


def conv2d_bias_pattern() -> Pattern:
    """A convolution by a constant weight plus a constant bias, optionally after zero-style
    constant padding:

        data
          |
        [nn.pad mode=constant]
          |
        nn.conv2d(_, const)
          |
        nn.bias_add(_, const)
    """
    data = wildcard()
    padded = is_op("nn.pad")(data).has_attr({"pad_mode": "constant"}) | data
    conv = is_op("nn.conv2d")(padded, is_constant())
    return is_op("nn.bias_add")(conv, is_constant())


def conv2d_bias_relu_pattern() -> Pattern:
    """`conv2d_bias_pattern` followed by a relu:

    [nn.pad] -> nn.conv2d(_, const) -> nn.bias_add(_, const) -> nn.relu
    """
    return is_op("nn.relu")(conv2d_bias_pattern())


def dense_bias_pattern() -> Pattern:
    r"""A dense layer by a constant weight plus a constant bias (how linear layers import):

    data    const W
       \    /
      nn.dense
         |
      add(_, const b)
    """
    return is_op("add")(is_op("nn.dense")(wildcard(), is_constant()), is_constant())


@register_pattern_table("example")
def example_table() -> list[CompositePattern]:
    return [
        CompositePattern("conv2d_bias_relu", conv2d_bias_relu_pattern()),
        CompositePattern("conv2d_bias", conv2d_bias_pattern()),
        CompositePattern("dense_bias_relu", is_op("nn.relu")(dense_bias_pattern())),
        CompositePattern("dense_bias", dense_bias_pattern()),
    ]
