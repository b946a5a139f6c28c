"""fuse-elementwise keeps every loop's size: a padded pool of a concatenation (the
concatenation is read only through `tensor.extract`, the pad copies it into the interior
of a filled, larger buffer). Fused, the copy's loops ran over the padding too (wrong
values: Inception v1's last average pool was 27 % off) or had no size at all (a crash)."""

from __future__ import annotations

import pytest
from xrelay.dialects import relay

from .jit_check import check_jit


@pytest.mark.parametrize("padding", [[0, 0, 1, 1], [1, 1, 1, 1], [2, 0, 0, 1]])
@pytest.mark.parametrize("pool", [relay.AvgPool2DOp, relay.MaxPool2DOp])
def test_a_padded_pool_of_a_concatenation(pool, padding):
    def body(a, b):
        cat = relay.ConcatenateOp(a, b, axis=1)
        return [cat, pool(cat.result, pool_size=[3, 3], strides=[1, 1], padding=padding)]

    check_jit([((1, 8, 6, 6), "float32"), ((1, 8, 6, 6), "float32")], body)


def test_a_relu_still_fuses_into_the_pad():
    """An elementwise producer with inputs keeps its sizes: it is computed in the copy."""

    def body(x):
        r = relay.ReluOp(x)
        return [r, relay.MaxPool2DOp(r.result, pool_size=[3, 3], padding=[1, 1, 1, 1])]

    check_jit([((1, 4, 9, 9), "float32")], body)


QUANTIZED_POOL = """
func.func @main(%x: tensor<1x40x13x13xui8>) -> tensor<1x40x1x1xi32> {
  %zp = relay.constant dense<7> : tensor<i32>
  %w = relay.cast %x {dtype = i32} : (tensor<1x40x13x13xui8>) -> tensor<1x40x13x13xi32>
  %d = relay.subtract %w, %zp : (tensor<1x40x13x13xi32>, tensor<i32>) -> tensor<1x40x13x13xi32>
  %s = relay.sum %d {axis = array<i64: 2, 3>, keepdims = true} : (tensor<1x40x13x13xi32>) -> tensor<1x40x1x1xi32>
  func.return %s : tensor<1x40x1x1xi32>
}
"""


def test_an_integer_sum_of_its_widened_bytes():
    """A quantized pool's sum reads the bytes (the cast and the zero point fused into it,
    its two plane loops one loop of 169): the same sums as numpy's."""
    import numpy as np
    import xrelay

    x = np.random.default_rng(0).integers(0, 256, (1, 40, 13, 13), dtype=np.uint8)
    lib = xrelay.build(xrelay.parse_module(QUANTIZED_POOL), {}, cache=False)
    want = (x.astype(np.int32) - 7).sum(axis=(2, 3), keepdims=True)
    np.testing.assert_array_equal(lib.run(x)[0], want)
