"""Build-time packing of GEMM operands that are the same at every run (weights), in the
layout the runtime's packed path reads (lowering/kernels/gemm.py): K blocks of KC, each
holding the rows in panels of `width` (6 for A's rows, 16 for B's columns), k-major inside
a panel, rows past the end zero."""

from __future__ import annotations

import numpy as np
from xrelay.lowering.kernels.gemm import KC


def padded(rows: int, width: int) -> int:
    return -(-rows // width) * width


def pack_panels(mat: np.ndarray, width: int) -> np.ndarray:
    """[R, K] -> the flat packed layout, size padded(R, width) * K."""
    rows, k = mat.shape
    rpad = padded(rows, width)
    full = np.zeros((rpad, k), np.float32)
    full[:rows] = mat
    blocks = []
    for pc in range(0, k, KC):
        block = full[:, pc : pc + KC]
        blocks.append(block.reshape(rpad // width, width, -1).transpose(0, 2, 1).ravel())
    return np.concatenate(blocks) if blocks else np.zeros(0, np.float32)


def prepack_params(module, params: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The packed parameters `select-kernels` asked for (arguments of @main with
    `xrelay.pack`), computed from `params`."""
    import json

    from xdsl.dialects.builtin import StringAttr
    from xrelay.lowering.select_kernels import PACK_ATTR
    from xrelay.signature import NAME_ATTR, main_function

    fn = main_function(module)
    out: dict[str, np.ndarray] = {}
    for entry in fn.arg_attrs.data if fn.arg_attrs is not None else []:
        request = entry.data.get(PACK_ATTR)
        if not isinstance(request, StringAttr):
            continue
        spec = json.loads(request.data)
        name = entry.data[NAME_ATTR].data
        source = np.asarray(params[spec["from"]], np.float32)
        rows, k = spec["rows"], spec["k"]
        if spec["operand"] == "a":  # conv weights [O, C/g, kh, kw] -> per group [O/g, K]
            groups = source.reshape(spec["groups"], rows, k)
            out[name] = np.concatenate([pack_panels(g, 6) for g in groups])
        else:  # B's columns as rows: [N, K]
            mat = source.reshape(-1, source.shape[-1])
            out[name] = pack_panels(mat.T if spec["transpose"] else mat, 16)
    return out
