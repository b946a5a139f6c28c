"""Relay API names xrelay does not provide: using one raises `UnsupportedAPIError`, an
`xrelay.Error` naming the call and what to use instead (docs/relay-migration.md)."""

from __future__ import annotations

from collections.abc import Iterable

from xrelay.errors import Error

_IR = (
    "xrelay builds IR as xDSL ops (xrelay.dialects.relay, e.g. relay.nn.Conv2dOp) or parses "
    "textual IR (xrelay.parse_module); import models with relay.frontend"
)
_HOST_ONLY = "xrelay compiles for and runs on the host CPU only: use relay.cpu(0)"
_TO_ONNX = "no such frontend: export the model to ONNX and use relay.frontend.from_onnx"
_NO_PASS = "xrelay has no equivalent pass"

# "module.name" -> what to use instead
INSTEAD: dict[str, str] = {
    **{
        f"relay.{n}": _IR
        for n in (
            "var", "const", "Function", "Call", "Tuple", "TupleGetItem", "Let", "If",
            "GlobalVar", "IRModule", "ScopeBuilder", "nn", "op", "qnn", "image", "vision",
            "TensorType", "TupleType", "scalar_type", "ty", "expr", "function",
        )
    },
    **{f"relay.{n}": _HOST_ONLY for n in ("cuda", "gpu", "rocm", "opencl", "vulkan", "metal")},
    **{f"relay.nd.{n}": _HOST_ONLY for n in ("cuda", "gpu", "rocm", "opencl", "vulkan", "metal")},
    "relay.vm": "create_executor('vm', mod) compiles a module with dynamic dimensions",
    "relay.backend": "use relay.build or relay.create_executor",
    "relay.testing": "no model zoo: build the model in PyTorch or ONNX and import it",
    "relay.analysis": "no analyses: the module is xDSL IR (walk it with mod.walk())",
    "relay.quantize": "no quantizer: import models quantized by onnxruntime or PyTorch",
    "relay.dataflow_pattern": "the pattern language is xrelay.transforms.pattern",
    "relay.fromtext": "xrelay.parse_module(text)",
    "relay.parse": "xrelay.parse_module(text)",
    "relay.save_param_dict": "params are a dict of numpy arrays: numpy.savez",
    "relay.load_param_dict": "params are a dict of numpy arrays: numpy.load",
    "relay.optimize": "apply relay.transform passes; relay.build reads the PassContext",
    "relay.frontend.from_tflite": "xrelay.from_tflite(model, shape)",
    "relay.frontend.from_exported_program": "xrelay.from_exported_program(exported_program)",
    **{
        f"relay.frontend.{n}": _TO_ONNX
        for n in (
            "from_tensorflow", "from_keras", "from_mxnet", "from_caffe", "from_caffe2",
            "from_coreml", "from_darknet", "from_paddle", "from_oneflow",
        )
    },
    "relay.transform.FuseOps": (
        "relay.build fuses products and convolutions with their elementwise epilogues "
        "(select-kernels); PassContext(opt_level=0) or disabled_pass=['FuseOps'] turns it off"
    ),
    "relay.transform.DeadCodeElimination": "xrelay-opt -p dce (xDSL's pass)",
    "relay.transform.EliminateCommonSubexpr": "xrelay-opt -p cse (xDSL's pass)",
    "relay.transform.CanonicalizeOps": "xrelay-opt -p canonicalize",
    "relay.transform.SimplifyExpr": "xrelay-opt -p canonicalize",
    "relay.transform.DynamicToStatic": (
        "pin shapes at import (from_onnx(shape=...)) or specialize-shapes{dims=...}"
    ),
    "relay.transform.ToMixedPrecision": _NO_PASS,
    "relay.transform.ConvertLayout": _NO_PASS + " (models stay NCHW)",
    "relay.transform.AlterOpLayout": _NO_PASS + " (weights are prepacked by relay.build)",
    "relay.transform.FoldScaleAxis": _NO_PASS,
    "relay.transform.function_pass": "write an xDSL ModulePass and run it with xrelay-opt",
    "relay.transform.module_pass": "write an xDSL ModulePass and run it with xrelay-opt",
    "relay.graph_executor.create": "GraphModule(relay.build(mod, params=params)['default'](dev))",
    "GraphModule.benchmark": "the CLI: xrelay bench model.onnx --compare onnxruntime",
    "GraphModule.load_params": "set_input(**params)",
    "GraphModule.set_input_zero_copy": "set_input",
    "GraphModule.debug_get_output": "create_executor('debug') or the CLI's xrelay bisect",
    "GraphExecutorFactoryModule.get_graph_json": "there is no graph JSON: str(mod) is the IR",
    "GraphExecutorFactoryModule.get_executor_config": "there is no graph JSON: str(mod) is the IR",
}  # fmt: skip


class UnsupportedAPIError(Error, AttributeError):
    """A Relay API name xrelay does not provide. Also an AttributeError, so `hasattr`
    answers False instead of raising."""


def unsupported(owner: str, name: str, provided: Iterable[str]) -> AttributeError:
    """The error for `owner.name` (`relay.transform.FuseOps`); a private or dunder name
    gets a plain AttributeError (tools probe for those)."""
    if name.startswith("_"):
        return AttributeError(f"'{owner}' has no attribute '{name}'")
    call = f"{owner}.{name}"
    hint = INSTEAD.get(call, f"{owner} provides {', '.join(sorted(provided))}")
    return UnsupportedAPIError(
        f"{call} is not supported by xrelay's Relay API: {hint} (see docs/relay-migration.md)"
    )
