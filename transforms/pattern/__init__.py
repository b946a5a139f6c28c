"""Declarative dataflow patterns over relay IR and the rewrite driver that applies them."""

from xrelay.transforms.pattern.patterns import (
    Match,
    Pattern,
    PatternError,
    is_constant,
    is_op,
    is_tuple,
    is_tuple_get_item,
    is_var,
    wildcard,
)
from xrelay.transforms.pattern.rewrite import PatternCallback, rewrite

__all__ = [
    "Match",
    "Pattern",
    "PatternCallback",
    "PatternError",
    "is_constant",
    "is_op",
    "is_tuple",
    "is_tuple_get_item",
    "is_var",
    "rewrite",
    "wildcard",
]
