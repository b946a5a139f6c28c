"""Real architectures and hand-written modules through both capture paths, compiled with
xrelay.build and compared with torch eager."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import xrelay

from .torch_zoo import ZOO, torch_outputs

pytestmark = [
    pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

CASES = [
    pytest.param(name, path, marks=[pytest.mark.slow] if entry.slow else [], id=f"{name}-{path}")
    for name, entry in ZOO.items()
    for path in entry.paths
]


def import_model(path: str, model: torch.nn.Module, inputs: tuple[torch.Tensor, ...]):
    if path == "exported":
        return xrelay.from_exported_program(torch.export.export(model, inputs))
    if path == "scripted":
        captured = torch.jit.script(model)
    else:
        captured = torch.jit.trace(model, inputs, strict=False)
    infos = [
        (f"input{i}", (tuple(x.shape), str(x.dtype).removeprefix("torch.")))
        for i, x in enumerate(inputs)
    ]
    return xrelay.from_pytorch(captured, infos)


@pytest.mark.parametrize(("name", "path"), CASES)
def test_matches_torch(name: str, path: str) -> None:
    entry = ZOO[name]
    model, inputs = entry.build()
    want = torch_outputs(model, inputs)
    module, params = import_model(path, model, inputs)
    lib = xrelay.build(module, params=params)
    got = lib.run(*[x.numpy() for x in inputs])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = w.numpy()
        assert g.shape == w.shape and g.dtype == w.dtype
        scale = float(np.max(np.abs(w))) if w.size else 1.0
        assert scale > 1e-3, f"{name}: reference output is near zero, the comparison proves little"
        np.testing.assert_allclose(g, w, rtol=entry.rtol, atol=entry.rtol * scale)
