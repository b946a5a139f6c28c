"""The TFLite frontend: `from_tflite(path_or_bytes, shape=None) -> (module, params)`.

Converters are registered by builtin operator name with `@tflite_op("CONV_2D")`, in files
by op group (`nn`, `elementwise`, `tensor`, `quantized`); frontends/tflite/binder.py has
the binder they open with and the NHWC/NCHW layout handling. Needs the `tflite` package
(`pip install xrelay[tflite]`); `xrelay.from_tflite` imports this package lazily.
"""

from xrelay.frontends.tflite import (  # noqa: F401  (registers the converters)
    elementwise,
    nn,
    quantized,
    tensor,
)
from xrelay.frontends.tflite.binder import NCHW, Operator
from xrelay.frontends.tflite.importer import from_tflite
from xrelay.frontends.tflite.registry import register_converter, tflite_op

__all__ = ["NCHW", "Operator", "from_tflite", "register_converter", "tflite_op"]
