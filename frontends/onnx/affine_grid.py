"""ONNX AffineGrid: the sampling grid of an affine transform `theta` ([N, 2, 3] or
[N, 3, 4]) over an output of `size` (known at import): the normalized base coordinates
(x, y[, z], 1) of every output position, a constant, times theta transposed."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue
from xrelay.dialects import relay
from xrelay.frontends.common import matmul_nd
from xrelay.frontends.onnx.binder import Node
from xrelay.frontends.onnx.registry import onnx_op


def _coords(n: int, align_corners: bool) -> np.ndarray:
    """Normalized coordinates of n positions in [-1, 1]: pixel centers, or the corners."""
    if align_corners:
        return np.linspace(-1, 1, n) if n > 1 else np.zeros(1)
    return (2 * np.arange(n) + 1) / n - 1


@onnx_op("AffineGrid", since=20)
def affine_grid(b: Node) -> SSAValue:
    size = [int(s) for s in np.asarray(b.const(1)).reshape(-1)]
    spatial = size[2:]
    dims = len(spatial)
    if dims not in (2, 3) or b.shape(0)[1:] != (dims, dims + 1):
        raise b.error(f"theta {list(b.shape(0))} does not match size {size} (2-d or 3-d)")
    align = bool(b.attr("align_corners", 0))
    axes = [_coords(n, align) for n in spatial]  # z?, y, x
    mesh = np.meshgrid(*axes, indexing="ij")
    # coordinates in (x, y, z) order, then 1
    base = np.stack([*(m.reshape(-1) for m in reversed(mesh)), np.ones(mesh[0].size)], axis=-1)
    dtype = b.dtype(0)
    theta_t = b.emit(relay.TransposeOp(b.input(0), axes=(0, 2, 1)))
    grid = matmul_nd(b, b.constant(base.astype(dtype)[None]), theta_t)
    return b.emit(relay.ReshapeOp(grid, newshape=(size[0], *spatial, dims)))
