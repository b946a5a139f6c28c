"""Shared pytest fixtures and helpers."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, BlockArgument
from xrelay.dialects.dtypes import tensor_type


def make_args(*specs: tuple[tuple[int, ...], str]) -> list[BlockArgument]:
    """Block arguments of the given (shape, dtype) specs, to feed op constructors."""
    types: list[TensorType] = [tensor_type(shape, dtype) for shape, dtype in specs]
    return list(Block(arg_types=types).args)


@pytest.fixture
def args():
    return make_args
