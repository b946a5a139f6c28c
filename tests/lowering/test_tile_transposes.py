"""tile-transposes: transposing copies whose rows would share L1's sets run over tiles of
a cache line, and give numpy's transpose, on one thread and two."""

from __future__ import annotations

import numpy as np
import pytest
import xrelay
from xrelay.lowering import tile_transposes

TRANSPOSE = """
func.func @main(%x: tensor<1x{p}x{c}x{t}> {{xrelay.name = "x"}}) -> tensor<1x{c}x{p}x{t}> {{
  %y = relay.transpose %x {{axes = array<i64: 0, 2, 1>}} : (tensor<1x{p}x{c}x{t}>) -> tensor<1x{c}x{p}x{t}>
  func.return %y : tensor<1x{c}x{p}x{t}>
}}"""


@pytest.mark.parametrize(
    "p, c, t, dtype",
    [(49, 2048, "ui8", np.uint8), (7, 1024, "i8", np.int8), (10, 256, "f32", np.float32)],
)
@pytest.mark.parametrize("threads", ["1", "2"])
def test_tiled_transposes_give_numpys(monkeypatch, p, c, t, dtype, threads):
    monkeypatch.setenv("XRELAY_NUM_THREADS", threads)
    tiled = []
    real = tile_transposes.tile
    monkeypatch.setattr(tile_transposes, "tile", lambda op: tiled.append(real(op)) or tiled[-1])
    rng = np.random.default_rng(1)
    if dtype == np.float32:
        x = rng.standard_normal((1, p, c)).astype(dtype)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max + 1, (1, p, c)).astype(dtype)
    lib = xrelay.build(xrelay.parse_module(TRANSPOSE.format(p=p, c=c, t=t)), {}, cache=False)
    assert any(tiled)
    np.testing.assert_array_equal(lib.run(x)[0], x.transpose(0, 2, 1))
