"""Every relay op has a round-trip case and an invalid case in the lit suite, a reference
implementation, and a lowering to linalg; every attribute-free unary op has a row in the
unary table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from xrelay.dialects import qnn, relay
from xrelay.lowering.qnn_legalize import LEGALIZE
from xrelay.lowering.relay_to_linalg import LOWERINGS
from xrelay.reference import IMPLS

DIALECT_TESTS = Path(__file__).resolve().parent / "filecheck" / "dialects" / "relay"


def ops_used(files: list[Path]) -> set[str]:
    text = "\n".join(p.read_text() for p in files)
    return set(re.findall(r"\b(relay\.[a-z0-9_.]+)", text))


ROUND_TRIP = ops_used([p for p in DIALECT_TESTS.glob("*.mlir") if "invalid" not in p.name])
INVALID = ops_used(list(DIALECT_TESTS.glob("*-invalid.mlir")))


@pytest.mark.parametrize("op", relay.ALL_OPS, ids=lambda op: op.name)
def test_op_is_covered(op):
    assert op.name in ROUND_TRIP, f"{op.name} has no round-trip case in {DIALECT_TESTS}"
    assert op.name in INVALID, f"{op.name} has no invalid case in {DIALECT_TESTS}"
    assert op in IMPLS, f"{op.name} has no reference implementation"
    # check_indices never reaches relay-to-linalg: expose-checks turns it into reductions
    if op is not relay.CheckIndicesOp:
        assert op in LOWERINGS, f"{op.name} has no lowering to linalg"


UNARY = [op for op in relay.ALL_OPS if issubclass(op, relay.UnaryOp)]


@pytest.mark.parametrize("op", UNARY, ids=lambda op: op.name)
def test_unary_op_has_a_row_unless_it_has_attributes(op):
    """The reference, relay-to-linalg and to-llvm read a unary op from its row; ops with
    attributes (leaky_relu, clip) are written by hand in each instead."""
    has_attributes = bool(op.get_irdl_definition().properties)
    assert (op in relay.UNARY_ROWS) != has_attributes, (
        f"{op.name} {'has attributes and a' if has_attributes else 'has no'} row in "
        "relay.UNARY_TABLE"
    )


QNN_TESTS = DIALECT_TESTS.parent / "qnn"
QNN_ROUND_TRIP = set(re.findall(r"\b(qnn\.[a-z0-9_]+)", (QNN_TESTS / "qnn.mlir").read_text()))
QNN_INVALID = set(re.findall(r"\b(qnn\.[a-z0-9_]+)", (QNN_TESTS / "qnn-invalid.mlir").read_text()))


@pytest.mark.parametrize("op", qnn.ALL_OPS, ids=lambda op: op.name)
def test_qnn_op_is_covered(op):
    assert op.name in QNN_ROUND_TRIP, f"{op.name} has no round-trip case in {QNN_TESTS}"
    assert op.name in QNN_INVALID, f"{op.name} has no invalid case in {QNN_TESTS}"
    assert op in IMPLS, f"{op.name} has no reference implementation"
    assert op in LEGALIZE, f"{op.name} has no legalization to relay"


@pytest.mark.parametrize("op", relay.VM_OPS, ids=lambda op: op.name)
def test_vm_op_is_covered(op):
    """Control flow and data-dependent ops never reach relay-to-linalg: the VM runs them
    (lowering/vm.py), a data-dependent one with a host implementation, and the reference
    executor has its own."""
    from xrelay.lowering.host_ops import HOST_OPS

    assert op.name in ROUND_TRIP, f"{op.name} has no round-trip case in {DIALECT_TESTS}"
    if op is not relay.YieldOp:  # a terminator: its errors are its parent's
        assert op.name in INVALID, f"{op.name} has no invalid case in {DIALECT_TESTS}"
    if op in relay.DATA_DEPENDENT_OPS:
        assert op in IMPLS, f"{op.name} has no reference implementation"
    if op in relay.SEQUENCE_OPS or op in relay.OPTIONAL_OPS:
        from xrelay.reference.sequence import SEQUENCE_IMPLS

        assert op in SEQUENCE_IMPLS, f"{op.name} has no reference implementation"
    if op not in relay.CONTROL_OPS:
        assert op in HOST_OPS, f"{op.name} has no host implementation in the VM"
    assert op not in LOWERINGS
