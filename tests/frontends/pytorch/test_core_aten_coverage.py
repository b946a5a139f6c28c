"""Every core ATen op (torch.Tag.core) of the installed torch is converted, folded at import
time, or excluded with a reason (frontends/pytorch/exclusions.py), and the exclusion tables
stay true: no converted op is also excluded, no listed op is missing from torch, every folded
op takes no tensor, and docs/pytorch-ops.md lists every excluded op."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from xrelay.frontends.pytorch import lookup
from xrelay.frontends.pytorch.convert import SHAPE_ONLY
from xrelay.frontends.pytorch.exclusions import EXCLUDED, FOLDED

DOC = Path(__file__).resolve().parents[3] / "docs" / "pytorch-ops.md"


def core_ops() -> dict[str, list[torch._ops.OpOverload]]:
    """Schema name ("aten::add") -> its core-tagged overloads."""
    ops: dict[str, list[torch._ops.OpOverload]] = {}
    for name in dir(torch.ops.aten):
        packet = getattr(torch.ops.aten, name, None)
        if not isinstance(packet, torch._ops.OpOverloadPacket):
            continue
        for overload in packet.overloads():
            op = getattr(packet, overload)
            if torch.Tag.core in op.tags:
                ops.setdefault(op._schema.name, []).append(op)
    return ops


CORE = core_ops()


def test_enumeration_finds_the_core_set() -> None:
    assert len(CORE) > 100 and "aten::convolution" in CORE and "aten::add" in CORE


def test_every_core_op_is_converted_folded_or_excluded() -> None:
    missing = [
        kind
        for kind in sorted(CORE)
        if lookup(kind) is None and kind not in SHAPE_ONLY | FOLDED.keys() | EXCLUDED.keys()
    ]
    if missing:
        pytest.fail(
            f"{len(missing)} core ATen op(s) neither converted nor listed in "
            f"frontends/pytorch/exclusions.py: {', '.join(missing)}",
            False,
        )


def test_exclusions_are_not_converted_and_exist() -> None:
    listed = EXCLUDED.keys() | FOLDED.keys()
    assert not [k for k in listed if lookup(k) is not None], "converted ops listed as excluded"
    assert not [k for k in listed if k not in CORE], "listed ops that are not core in this torch"


@pytest.mark.parametrize("kind", sorted(FOLDED))
def test_folded_ops_take_no_tensor(kind: str) -> None:
    for op in CORE[kind]:
        types = [str(a.type) for a in op._schema.arguments]
        assert not any("Tensor" in t for t in types), (kind, types)


def test_random_exclusions_are_tagged_random() -> None:
    for kind, reason in EXCLUDED.items():
        if "random" in reason:
            assert any(torch.Tag.nondeterministic_seeded in op.tags for op in CORE[kind]), kind


def test_the_doc_lists_every_exclusion() -> None:
    text = DOC.read_text()
    assert not [k for k in EXCLUDED.keys() | FOLDED.keys() if f"`{k}`" not in text]


def test_at_least_95_percent_of_inference_ops_are_handled() -> None:
    """Gradient, random and stride ops aside (they never carry inference values), at least
    95 % of the core ops are converted or folded at import."""
    from xrelay.frontends.pytorch.exclusions import BACKWARD, LAYOUT, RANDOM

    not_inference = {k for k, why in EXCLUDED.items() if why in (BACKWARD, RANDOM, LAYOUT)}
    relevant = [k for k in CORE if k not in not_inference]
    handled = [k for k in relevant if lookup(k) is not None or k in SHAPE_ONLY | FOLDED.keys()]
    assert len(handled) / len(relevant) >= 0.95, (len(handled), len(relevant))
