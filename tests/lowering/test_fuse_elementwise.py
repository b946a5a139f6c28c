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
