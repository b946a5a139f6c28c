"""Shared pytest fixtures and helpers.

The compile cache is off for the suite (tests that patch the pipeline must compile what
they patched; tests/lowering/test_artifact.py turns it on in a temporary folder), also
for the subprocesses tests start."""

from __future__ import annotations

import os

import pytest
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, BlockArgument
from xrelay.dialects.dtypes import tensor_type


os.environ["XRELAY_CACHE_DIR"] = "off"


def make_args(*specs: tuple[tuple[int, ...], str]) -> list[BlockArgument]:
    """Block arguments of the given (shape, dtype) specs, to feed op constructors."""
    types: list[TensorType] = [tensor_type(shape, dtype) for shape, dtype in specs]
    return list(Block(arg_types=types).args)


@pytest.fixture
def args():
    return make_args
