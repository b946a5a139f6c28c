"""xrelay: a deep-learning model compiler in Python on xDSL.

The public API is re-exported here; see the README for the tour.
"""

from xrelay.errors import (
    Error,
    ParseError,
    ShapeError,
    UnsupportedOpsError,
    VerificationError,
)
from xrelay.frontends.onnx import from_onnx
from xrelay.ir import parse_module, verify_module
from xrelay.lowering import build
from xrelay.reference import create_executor

__all__ = [
    "Error",
    "ParseError",
    "ShapeError",
    "UnsupportedOpsError",
    "VerificationError",
    "build",
    "create_executor",
    "from_onnx",
    "parse_module",
    "verify_module",
]
