"""The dataflow pattern language and the rewrite driver on parsed relay IR."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from xrelay.dialects import relay
from xrelay.signature import main_function
from xrelay.transforms.pattern import (
    PatternCallback,
    PatternError,
    is_constant,
    is_op,
    is_tuple,
    is_tuple_get_item,
    is_var,
    rewrite,
    wildcard,
)

IR = """
func.func @main(%x: tensor<1x2x4x4xf32> {xrelay.name = "x"}, %w: tensor<2x2x1x1xf32> {xrelay.name = "w", xrelay.param}) -> tensor<1x2x4x4xf32> {
  %c = relay.constant dense<[[[[1.0]], [[0.5]]], [[[2.0]], [[1.0]]]]> : tensor<2x2x1x1xf32>
  %b = relay.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %conv = relay.nn.conv2d %x, %c : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %bias = relay.nn.bias_add %conv, %b : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %relu = relay.nn.relu %bias : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %conv2 = relay.nn.conv2d %relu, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %clip = relay.clip %conv2 {a_min = 0.0 : f64, a_max = 6.0 : f64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %parts:2 = relay.split %clip {indices = array<i64: 1>, axis = 1 : i64} : (tensor<1x2x4x4xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>)
  %cat = relay.concatenate %parts#1, %parts#0 {axis = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
  %sum = relay.add %cat, %cat : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %sum : tensor<1x2x4x4xf32>
}
"""


@pytest.fixture
def values():
    module = xrelay.parse_module(IR)
    ops = {op.name: op for op in main_function(module).walk()}
    by_name = {}
    for op in main_function(module).body.block.ops:
        for r in op.results:
            by_name[r.name_hint] = r
    return module, by_name, ops


def test_conv_bias_relu_binds_its_pieces(values) -> None:
    _, v, _ = values
    data, weight, bias = wildcard(), is_constant(), is_constant()
    conv = is_op("nn.conv2d")(data, weight)
    pattern = is_op("nn.relu")(is_op("nn.bias_add")(conv, bias))
    m = pattern.match(v["relu"])
    assert m
    assert m[data] is v["conv"].owner.operands[0] and m[conv] is v["conv"]
    assert pattern.match(v["bias"]) is None


def test_constants_vars_and_constraints(values) -> None:
    _, v, _ = values
    conv_const = is_op("nn.conv2d")(wildcard(), is_constant())
    assert conv_const.match(v["conv"]) and not conv_const.match(v["conv2"])
    conv_param = is_op("nn.conv2d")(wildcard(), is_var("w"))
    assert conv_param.match(v["conv2"]) and not is_op("nn.conv2d")(wildcard(), is_var("v")).match(
        v["conv2"]
    )
    clip = is_op("clip")(wildcard())
    assert clip.has_attr({"a_min": 0.0, "a_max": 6.0}).match(v["clip"])
    assert not clip.has_attr({"a_max": 1.0}).match(v["clip"])
    assert clip.has_dtype("float32").has_shape([1, 2, 4, 4]).match(v["clip"])
    assert not clip.has_dtype("int8").match(v["clip"])
    assert not clip.has_shape([2, 4]).match(v["clip"])


def test_alternation_and_optional(values) -> None:
    _, v, _ = values
    act = is_op("nn.relu")(wildcard()) | is_op("clip")(wildcard())
    assert act.match(v["relu"]) and act.match(v["clip"]) and not act.match(v["conv"])
    conv = is_op("nn.conv2d")(wildcard(), wildcard())
    maybe_clipped = conv.optional(lambda p: is_op("clip")(p))
    assert maybe_clipped.match(v["clip"]) and maybe_clipped.match(v["conv"])


def test_tuples_and_repeated_patterns(values) -> None:
    _, v, _ = values
    split = is_op("split")(wildcard())
    cat = is_op("concatenate")(is_tuple([is_tuple_get_item(split, 1), is_tuple_get_item(split, 0)]))
    assert cat.match(v["cat"])
    swapped = is_op("concatenate")(is_tuple([is_tuple_get_item(split, 0), wildcard()]))
    assert not swapped.match(v["cat"])
    x = wildcard()
    assert is_op("add")(x, x).match(v["sum"])
    assert not is_op("add")(x, x).match(v["bias"].owner.operands[0])


def test_malformed_patterns_raise() -> None:
    with pytest.raises(PatternError, match="is_op needs an op name"):
        is_op("")
    with pytest.raises(PatternError, match="argument 0 of is_op"):
        is_op("nn.relu")(3)
    with pytest.raises(PatternError, match="alternative must be a pattern"):
        wildcard() | "relu"


SCALES = """
func.func @main(%x: tensor<4xf32> {xrelay.name = "x"}) -> tensor<4xf32> {
  %a = relay.constant dense<2.0> : tensor<f32>
  %b = relay.constant dense<3.0> : tensor<f32>
  %m1 = relay.multiply %x, %a : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %m2 = relay.multiply %m1, %b : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %m2 : tensor<4xf32>
}
"""


class FuseScales(PatternCallback):
    """(x * a) * b with constant a, b -> x * (a * b)."""

    def __init__(self) -> None:
        self.x, self.a, self.b = wildcard(), is_constant(), is_constant()
        self.pattern = is_op("multiply")(is_op("multiply")(self.x, self.a), self.b)

    def callback(self, pre, post, node_map):
        scale = self.emit(relay.MultiplyOp(node_map[self.a][0], node_map[self.b][0]))
        return self.emit(relay.MultiplyOp(node_map[self.x][0], scale))


def test_rewrite_reaches_a_fixpoint_and_keeps_the_numbers() -> None:
    module = xrelay.parse_module(SCALES)
    x = np.arange(4, dtype=np.float32)
    (before,) = xrelay.create_executor("debug", module).run(x)
    rewrite([FuseScales()], module)
    xrelay.verify_module(module)
    ops = [op.name for op in main_function(module).body.block.ops]
    assert ops.count("relay.multiply") == 2  # x * (a * b): the scale product, then the use
    assert main_function(module).body.block.ops.last.operands[0].owner.operands[0].name_hint == "x"
    (after,) = xrelay.create_executor("debug", module).run(x)
    np.testing.assert_array_equal(before, after)


def test_rewrite_refuses_callbacks_without_pattern_or_with_wrong_types() -> None:
    class NoPattern(PatternCallback):
        pass

    with pytest.raises(PatternError, match="has no `pattern`"):
        rewrite([NoPattern()], xrelay.parse_module(SCALES))

    class WrongType(PatternCallback):
        def __init__(self) -> None:
            self.pattern = is_op("multiply")(wildcard(), is_constant())

        def callback(self, pre, post, node_map):
            return self.emit(relay.ReshapeOp(pre, newshape=[2, 2]))

    with pytest.raises(xrelay.Error, match="replaced a tensor<4xf32> by a tensor<2x2xf32>"):
        rewrite([WrongType()], xrelay.parse_module(SCALES))
