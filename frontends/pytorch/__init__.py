"""The PyTorch frontend: `from_exported_program(ep)` (torch.export, the primary path) and
`from_pytorch(script_module, input_infos)` (TorchScript), both `-> (module, params)`.

Both paths share one op table: converters registered by ATen op name with
`@aten_op("convolution")`, in files by op group (`elementwise`, `nn`, `tensor`, `reduce`,
`indexing`, `image`),
reading their arguments by schema name through the `Call` binder.

`torch.compile(model, backend="xrelay")` is `xrelay/dynamo.py` (it joins this frontend and
`xrelay.build`, so it sits above both layers; registered through the `torch_dynamo_backends`
entry point).
"""

from xrelay.frontends.pytorch import (  # noqa: F401  (registers the converters)
    elementwise,
    image,
    indexing,
    nn,
    quantized,
    reduce,
    tensor,
)
from xrelay.frontends.pytorch.call import Call
from xrelay.frontends.pytorch.exported import from_exported_program
from xrelay.frontends.pytorch.registry import aten_op, lookup
from xrelay.frontends.pytorch.torchscript import from_pytorch

__all__ = ["Call", "aten_op", "from_exported_program", "from_pytorch", "lookup"]
