"""`relay.frontend`: Relay's importers with Relay's parameters, on xrelay's frontends.

Both return `(mod, params)`: `mod` an xDSL `builtin.module` whose `@main` takes the data
inputs, then the parameters; `params` maps parameter names to numpy arrays (Relay gives
NDArrays: both have `.shape`, and numpy takes either).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import xrelay
from xdsl.dialects.builtin import ModuleOp
from xrelay.errors import Error
from xrelay.relay.unsupported import unsupported


def from_onnx(
    model: Any,
    shape: Mapping[str, Sequence[int]] | None = None,
    dtype: str | Mapping[str, str] = "float32",
    opset: int | None = None,
    freeze_params: bool = False,
    convert_config: Mapping[str, Any] | None = None,
    export_node_renamed_model_path: str | None = None,
) -> tuple[ModuleOp, dict[str, np.ndarray]]:
    """Relay's `from_onnx` (xrelay.from_onnx): `shape` and `dtype` override the graph
    inputs' (a dim_param not overridden stays a dynamic dimension: build it with
    create_executor('vm')); `freeze_params` makes the initializers constants. QDQ groups
    become qnn ops. `convert_config` and `export_node_renamed_model_path` are refused."""
    if convert_config:
        raise Error(f"from_onnx: convert_config {dict(convert_config)} is not supported")
    if export_node_renamed_model_path is not None:
        raise Error("from_onnx: export_node_renamed_model_path is not supported")
    return xrelay.from_onnx(model, shape, dtype, opset, freeze_params)


def from_pytorch(
    script_module: Any,
    input_infos: Sequence[Any],
    custom_convert_map: Mapping[str, Callable[..., Any]] | None = None,
    default_dtype: str = "float32",
    use_parser_friendly_name: bool = False,
    keep_quantized_weight: bool = False,
    export_renamed_c_graph_path: str | None = None,
    preserve_pytorch_scopes: bool = False,
) -> tuple[ModuleOp, dict[str, np.ndarray]]:
    """Relay's `from_pytorch` (xrelay.from_pytorch) on a TorchScript module (traced or
    scripted). `input_infos`: `[(name, shape)]` or `[(name, (shape, dtype))]`.
    `custom_convert_map` maps op kinds ("aten::flip") to xrelay converters, which take
    one `xrelay.frontends.pytorch.Call` and return relay values; Relay's
    `(inputs, input_types)` converters are refused."""
    if export_renamed_c_graph_path is not None:
        raise Error("from_pytorch: export_renamed_c_graph_path is not supported")
    for kind, converter in (custom_convert_map or {}).items():
        _check_converter(kind, converter)
    return xrelay.from_pytorch(
        script_module,
        input_infos,
        dict(custom_convert_map or {}),
        default_dtype=default_dtype,
        use_parser_friendly_name=use_parser_friendly_name,
        keep_quantized_weight=keep_quantized_weight,
        preserve_pytorch_scopes=preserve_pytorch_scopes,
    )


def _check_converter(kind: str, converter: Any) -> None:
    message = (
        f"from_pytorch: custom_convert_map['{kind}'] must be an xrelay converter taking one "
        "xrelay.frontends.pytorch.Call"
    )
    if not callable(converter):
        raise Error(f"{message}, got {converter!r}")
    try:
        required = [
            p
            for p in inspect.signature(converter).parameters.values()
            if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):  # a builtin without a signature: let the call decide
        return
    if len(required) != 1:
        raise Error(f"{message}; Relay's (inputs, input_types) converters do not carry over")


__all__ = ["from_onnx", "from_pytorch"]


def __getattr__(name: str) -> Any:
    raise unsupported("relay.frontend", name, __all__)
