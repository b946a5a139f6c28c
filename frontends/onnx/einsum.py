"""ONNX Einsum as relay ops: every operand transposed and reshaped onto one index order
(output indices first, then the summed ones), multiplied with broadcasting, and summed
over the indices the output drops. Ellipses broadcast like numpy; an index repeated within
one operand (a diagonal) is refused."""

from __future__ import annotations

from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.dialects.dims import Dim, shape_of
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.registry import onnx_op


def _expand_ellipsis(b: Node, term: str, rank: int, width: int) -> list[str]:
    """A term's index names; an ellipsis becomes the last `rank - letters` of `width`
    broadcast names ('.0', '.1', ...)."""
    if "..." not in term:
        if len(term) != rank:
            raise b.error(f"term '{term}' has {len(term)} indices for a rank-{rank} operand")
        return list(term)
    head, tail = term.split("...")
    dots = rank - len(head) - len(tail)
    if dots < 0:
        raise b.error(f"term '{term}' has more indices than the rank-{rank} operand")
    return list(head) + [f".{i}" for i in range(width - dots, width)] + list(tail)


@onnx_op("Einsum", since=12)
def einsum(b: Node) -> SSAValue:
    equation = b.attr("equation").replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    values = b.inputs()
    if len(terms) != len(values):
        raise b.error(f"equation '{equation}' has {len(terms)} terms for {len(values)} inputs")
    ranks = [len(shape_of(v.type)) for v in values]
    width = max(
        (r - len(t.replace("...", "")) for t, r in zip(terms, ranks) if "..." in t), default=0
    )
    names = [_expand_ellipsis(b, t, r, width) for t, r in zip(terms, ranks)]
    for term, ns in zip(terms, names):
        if len(set(ns)) != len(ns):
            raise b.unsupported(f"a repeated index in '{term}' (a diagonal)")
    if arrow:
        out = (
            _expand_ellipsis(b, rhs, len(rhs.replace("...", "")) + width, width)
            if "..." in rhs
            else list(rhs)
        )
    else:
        counts: dict[str, int] = {}
        for ns in names:
            for n in ns:
                counts[n] = counts.get(n, 0) + 1
        dots = [f".{i}" for i in range(width)]
        out = dots + sorted(n for n, c in counts.items() if c == 1 and not n.startswith("."))
    summed = []
    for ns in names:
        summed += [n for n in ns if n not in out and n not in summed]
    order = out + summed
    sizes: dict[str, Dim] = {}
    aligned = []
    for v, ns in zip(values, names):
        shape = shape_of(v.type)
        for n, d in zip(ns, shape):
            if d != 1:
                if sizes.get(n, d) != d:
                    raise b.error(f"index '{n}' has sizes {sizes[n]} and {d}")
                sizes[n] = d
        present = sorted(ns, key=order.index)
        if present != ns:
            v = b.emit(relay.TransposeOp(v, axes=[ns.index(n) for n in present]))
        full = [shape[ns.index(n)] if n in ns else 1 for n in order]
        if len(full) != len(ns):
            v = b.emit(relay.ReshapeOp(v, newshape=full))
        aligned.append(v)
    product = aligned[0]
    for v in aligned[1:]:
        product = b.emit(relay.MultiplyOp(product, v))
    if summed:
        product = b.emit(relay.SumOp(product, axis=tuple(range(len(out), len(order)))))
    target = [sizes.get(n, 1) for n in out]
    if list(shape_of(product.type)) != target:
        product = b.emit(relay.BroadcastToOp(product, shape=target))
    return product
