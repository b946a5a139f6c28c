"""Float models exported from PyTorch and quantized by `onnxruntime.quantization`, for the
quantized ONNX suite. Weights are seeded; calibration data is random."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx

from ..models.exports import _export, small_bert


def _strip_value_info(path: Path) -> Path:
    """Drop the exporter's value_info: onnxruntime's quantizer re-infers shapes and trips
    over stale ones."""
    model = onnx.load(str(path))
    del model.graph.value_info[:]
    onnx.save(model, str(path))
    return path


def cnn(path: Path) -> Path:
    """conv-relu, a padded max pool (pooled on integers: its padding must not win), a
    residual add of two conv branches, global average pool, linear: the ops of a quantized
    CNN."""
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c1 = nn.Conv2d(3, 16, 3, padding=1)
            self.c2 = nn.Conv2d(16, 16, 3, padding=1)
            self.c3 = nn.Conv2d(16, 16, 1)
            self.fc = nn.Linear(16, 10)

        def forward(self, x):
            y = torch.nn.functional.max_pool2d(torch.relu(self.c1(x)), 3, stride=2, padding=1)
            z = torch.relu(self.c2(y)) + self.c3(y)
            return self.fc(torch.nn.functional.adaptive_avg_pool2d(z, 1).flatten(1))

    torch.manual_seed(0)
    return _strip_value_info(_export(Net(), (torch.randn(1, 3, 16, 16),), path))


def mlp(path: Path) -> Path:
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    return _strip_value_info(_export(model, (torch.randn(4, 64),), path))


def bert(path: Path) -> tuple[Path, dict[str, np.ndarray]]:
    """A 2-layer BERT encoder; returns the model and its integer inputs."""
    model, inputs = small_bert(path)
    return _strip_value_info(model), inputs
