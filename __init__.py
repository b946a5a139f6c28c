"""xrelay: a deep-learning model compiler in Python on xDSL.

The public API is re-exported here; see the README for the tour. Its functions import
what they need when first used (PEP 562), so a process that only loads a saved library
(`xrelay.load`) never imports the frontends, the IR's dialects or the compiler's passes:
it holds about 40 MB less than one that imports them all.
"""

import importlib as _importlib

from xrelay.errors import (
    Error,
    ParseError,
    ShapeError,
    UnsupportedOpsError,
    VerificationError,
)

# the functions defined elsewhere, imported on first use: name -> its module
_LAZY = {
    "bind_params_by_name": "xrelay.transforms.bind_params",
    "build": "xrelay.lowering.build",
    "create_executor": "xrelay.reference",
    "load": "xrelay.lowering.artifact",
    "parse_module": "xrelay.ir",
    "verify_module": "xrelay.ir",
}


def __getattr__(name):
    if name in _LAZY:
        value = getattr(_importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'xrelay' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_LAZY])


def _to_qnn(module, params):
    """`qdq-to-qnn` on an imported model (frontends import; passes, run here, transform)."""
    from xrelay.ir import verify_module
    from xrelay.transforms.qdq_to_qnn import fold_qdq as _fold_qdq

    params = _fold_qdq(module, params)
    verify_module(module)
    return module, params


def from_onnx(
    model,
    shape=None,
    dtype="float32",
    opset=None,
    freeze_params=False,
    fold_qdq=True,
    const_inputs=None,
):
    """Import an ONNX model: `(module, params)` (see xrelay.frontends.onnx). With `fold_qdq`,
    QDQ groups (DequantizeLinear -> op -> QuantizeLinear) become qnn ops (`qdq-to-qnn`)."""
    from xrelay.frontends import onnx as _onnx

    imported = _onnx.from_onnx(model, shape, dtype, opset, freeze_params, const_inputs)
    return _to_qnn(*imported) if fold_qdq else imported


def from_exported_program(exported_program, keep_params_as_inputs=True, fold_qdq=True):
    """Import a torch.export program: `(module, params)` (see xrelay.frontends.pytorch). With
    `fold_qdq`, a PT2E-quantized program's dequantize -> op -> quantize groups become qnn
    ops (`qdq-to-qnn`; its scale and zero-point buffers become constants)."""
    from xrelay.frontends.pytorch import from_exported_program as convert

    imported = convert(exported_program, keep_params_as_inputs=keep_params_as_inputs)
    return _to_qnn(*imported) if fold_qdq else imported


def from_pytorch(script_module, input_infos, custom_convert_map=None, **options):
    """Import a TorchScript module: `(module, params)` (see xrelay.frontends.pytorch)."""
    from xrelay.frontends.pytorch import from_pytorch as convert

    return convert(script_module, input_infos, custom_convert_map, **options)


def from_tflite(model, shape=None):
    """Import a TFLite flatbuffer (a path or its bytes): `(module, params)` (see
    xrelay.frontends.tflite). Needs the `tflite` package: `pip install xrelay[tflite]`."""
    try:
        import tflite  # noqa: F401
    except ImportError:
        raise Error(
            "reading TFLite models needs the tflite package: pip install xrelay[tflite]"
        ) from None
    from xrelay.frontends.tflite import from_tflite as convert

    return convert(model, shape)


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
    "from_tflite",
    "load",
    "parse_module",
    "verify_module",
]
