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
from xrelay.transforms.bind_params import bind_params_by_name


def from_exported_program(exported_program, keep_params_as_inputs=True):
    """Import a torch.export program: `(module, params)` (see xrelay.frontends.pytorch)."""
    from xrelay.frontends.pytorch import from_exported_program as convert

    return convert(exported_program, keep_params_as_inputs=keep_params_as_inputs)


def from_pytorch(script_module, input_infos, custom_convert_map=None, **options):
    """Import a TorchScript module: `(module, params)` (see xrelay.frontends.pytorch)."""
    from xrelay.frontends.pytorch import from_pytorch as convert

    return convert(script_module, input_infos, custom_convert_map, **options)


__all__ = [
    "Error",
    "ParseError",
    "ShapeError",
    "UnsupportedOpsError",
    "VerificationError",
    "bind_params_by_name",
    "build",
    "create_executor",
    "from_exported_program",
    "from_onnx",
    "from_pytorch",
    "parse_module",
    "verify_module",
]
