"""ONNX window functions (HannWindow, HammingWindow, BlackmanWindow): their values depend
only on `size`, which static shapes need known at import, so they are constants computed
there (in float64, then cast to `output_datatype`)."""

from __future__ import annotations

import numpy as np
import onnx
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.registry import onnx_op

# name -> coefficients a_k of sum_k (-1)^k a_k cos(2 pi k n / N)
WINDOWS = {
    "HannWindow": (0.5, 0.5),
    "HammingWindow": (25 / 46, 21 / 46),
    "BlackmanWindow": (0.42, 0.5, 0.08),
}


def window(b: Node) -> np.ndarray:
    size = int(np.asarray(b.const(0)).reshape(()))
    if size < 0:
        raise b.error(f"negative window size {size}")
    periodic = int(b.attr("periodic", 1))
    dtype = onnx.helper.tensor_dtype_to_np_dtype(int(b.attr("output_datatype", 1)))
    denominator = size if periodic else size - 1
    if denominator <= 0:  # a symmetric window of one point (as torch gives)
        return np.ones(size, dtype)
    n = np.arange(size, dtype=np.float64)
    values = np.zeros(size, np.float64)
    for k, a in enumerate(WINDOWS[b.op_type]):
        values += (-1) ** k * a * np.cos(2 * np.pi * k * n / denominator)
    return values.astype(dtype)


for _name in WINDOWS:
    onnx_op(_name, since=17)(window)
