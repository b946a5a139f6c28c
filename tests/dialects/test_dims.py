"""Dynamic dimensions in types (dialects/dims.py): expressions, shape rules with symbols,
and the textual form."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import f32
from xdsl.ir import Block
from xrelay.dialects import relay
from xrelay.dialects.dims import evaluate, make_tensor, parse_dim, shape_of, substitute, symbol
from xrelay.errors import ShapeError

batch, seq = symbol("batch"), symbol("seq")


def values(*shapes):
    return list(Block(arg_types=[make_tensor(f32, s) for s in shapes]).args)


def test_expressions_are_canonical():
    assert parse_dim("seq*batch") == parse_dim("batch*seq") == batch * seq
    assert make_tensor(f32, [seq * batch, 4]) == make_tensor(f32, [batch * seq, 4])
    assert make_tensor(f32, [batch, 4]) != make_tensor(f32, [seq, 4])
    assert shape_of(make_tensor(f32, [batch, 3, 2 * seq])) == (batch, 3, 2 * seq)
    assert make_tensor(f32, [parse_dim("2"), 3]).get_shape() == (2, 3)


def test_broadcast_proves_and_rejects():
    a, b = values([batch, 1, 4], [seq, 4])
    assert shape_of(relay.AddOp(a, b).result.type) == (batch, seq, 4)
    x, y = values([batch, 4], [seq, 4])
    with pytest.raises(ShapeError, match="not broadcastable"):
        relay.AddOp(x, y)


def test_dense_reshape_concat_conv():
    x, w = values([batch, seq, 8], [16, 8])
    flat = relay.ReshapeOp(x, newshape=[-1, 8])
    assert shape_of(flat.result.type) == (batch * seq, 8)
    dense = relay.DenseOp(flat.result, w)
    assert shape_of(dense.result.type) == (batch * seq, 16)
    back = relay.ReshapeOp(dense.result, newshape=[batch, seq, 16])
    assert shape_of(back.result.type) == (batch, seq, 16)
    cat = relay.ConcatenateOp(back.result, back.result, axis=1)
    assert shape_of(cat.result.type) == (batch, 2 * seq, 16)
    img, k = values([batch, 3, seq, seq], [4, 3, 3, 3])
    conv = relay.Conv2DOp(img, k, strides=[2, 2], padding=[1, 1, 1, 1])
    (n, c, h, _) = shape_of(conv.result.type)
    assert (n, c) == (batch, 4)
    assert [evaluate(h, {"seq": s}) for s in (1, 7, 8, 224)] == [1, 4, 4, 112]


def test_reshape_that_cannot_be_proved():
    (x,) = values([batch, 4])
    with pytest.raises(ShapeError, match="cannot reshape"):
        relay.ReshapeOp(x, newshape=[seq, 4])
    with pytest.raises(ShapeError, match="cannot reshape"):
        relay.ReshapeOp(x, newshape=[3, -1])  # 4*batch/3 is not a whole number


def test_substitute_and_unbound():
    t = make_tensor(f32, [batch, 2 * seq])
    assert substitute(t, {"batch": 3, "seq": 5}).get_shape() == (3, 10)
    with pytest.raises(ShapeError, match="unbound"):
        substitute(t, {"batch": 3})


def test_symbol_names():
    with pytest.raises(ShapeError, match="not an identifier"):
        symbol("batch size")
    with pytest.raises(ShapeError, match="malformed"):
        parse_dim("batch+*2")


def test_unknown_dimensions_without_names():
    """Regression: `tensor<2x?x?xf32>` (unknown dimensions, no #relay.dims) read as 0
    expressions for 2 dimensions: shape_of counted -1 where xDSL marks them otherwise."""
    from xrelay.dialects.dims import dim_str, unknown

    t = make_tensor(f32, [2, unknown(), unknown()])
    dims = shape_of(t)
    assert dims[0] == 2 and [dim_str(d) for d in dims[1:]] == ["?", "?"]
    assert dims[1] != dims[2]


def test_a_dynamic_type_is_never_over_the_size_limit():
    """Regression: the check compared against -1, not xDSL's dynamic marker, so two dynamic
    dimensions multiplied into a huge size (a data-dependent result of rank 2 was refused)."""
    from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType, f32
    from xrelay.dialects.limits import over_limit

    assert over_limit(TensorType(f32, [DYNAMIC_INDEX, DYNAMIC_INDEX])) is None
    assert over_limit(TensorType(f32, [2**40, 2**20])) is not None
