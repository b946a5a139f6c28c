"""Small models exported from PyTorch with `torch.onnx.export(dynamo=True)`, built with
seeded random weights (nothing is downloaded)."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _export(model, args, path: Path) -> Path:
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.onnx.export(model.eval(), args, dynamo=True, verbose=False)
    program.save(str(path))
    return path


def small_cnn(path: Path) -> tuple[Path, dict[str, np.ndarray]]:
    """Conv-Relu-MaxPool-Gemm-Softmax on a 1x3x16x16 image."""
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(8 * 8 * 8, 10),
        nn.Softmax(dim=1),
    )
    x = torch.randn(1, 3, 16, 16)
    return _export(model, (x,), path), {"input": x.numpy()}


def small_bert(path: Path, seq: int = 16) -> tuple[Path, dict[str, np.ndarray]]:
    """A 2-layer BERT encoder (hidden 64, 4 heads) with a padded attention mask."""
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        vocab_size=1000,
        max_position_embeddings=64,
    )
    model = BertModel(config)
    ids = torch.randint(0, 1000, (1, seq))
    mask = torch.ones(1, seq, dtype=torch.int64)
    mask[0, seq - 4 :] = 0
    return _export(model, (ids, mask), path), {
        "input_ids": ids.numpy(),
        "attention_mask": mask.numpy(),
    }
