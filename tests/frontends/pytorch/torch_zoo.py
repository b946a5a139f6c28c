"""Models for the PyTorch frontend tests, built offline with seeded random weights.

Each entry gives the module (in eval mode), example inputs, the relative tolerance against
torch eager, and which capture paths apply. Transformers models use small configs for the
language/vision transformers and the library's default configs for the CNNs (ResNet-50,
MobileNetV2 and ConvNeXt-tiny are the real architectures, run on small images).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

os.environ.setdefault("HF_HUB_OFFLINE", "1")

BOTH = ("exported", "traced")
ALL_PATHS = (*BOTH, "scripted")  # torch.jit.script handles the hand-written modules


@dataclass
class ZooModel:
    build: Callable[[], tuple[nn.Module, tuple[torch.Tensor, ...]]]
    rtol: float = 1e-4
    paths: tuple[str, ...] = BOTH
    slow: bool = False
    notes: dict[str, str] = field(default_factory=dict)


def lively(model: nn.Module) -> nn.Module:
    """Re-initialize so activations stay O(1) through deep stacks: transformers' init gives
    near-zero outputs for some CNNs (MobileNetV2's come out around 1e-21)."""
    g = torch.Generator().manual_seed(0)
    for m in model.modules():
        if isinstance(m, nn.Conv2d | nn.Linear):
            fan_in = m.weight[0].numel()
            m.weight.data = torch.randn(m.weight.shape, generator=g) * (2.0 / fan_in) ** 0.5
            if m.bias is not None:
                m.bias.data = torch.randn(m.bias.shape, generator=g) * 0.1
        elif isinstance(m, nn.BatchNorm2d):
            n = m.num_features
            m.weight.data = 0.5 + torch.rand(n, generator=g)
            m.bias.data = torch.randn(n, generator=g) * 0.1
            m.running_mean.data = torch.randn(n, generator=g) * 0.1
            m.running_var.data = 0.5 + torch.rand(n, generator=g)
    return model.eval()


def _seeded(fn: Callable[[], Any]) -> Callable[[], Any]:
    def build() -> Any:
        torch.manual_seed(0)
        return fn()

    return build


# --- hand-written modules ------------------------------------------------------------------


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.GELU(), nn.Linear(64, 10)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


class CNN(nn.Module):
    """Conv/BatchNorm/ReLU, max and average pooling, a residual add and a classifier."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1, groups=4)
        self.bn2 = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(2)
        self.avg = nn.AvgPool2d(2, ceil_mode=True)
        self.head = nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.pool(F.relu(self.bn1(self.conv1(x))))
        y = F.relu(y + self.bn2(self.conv2(y)))
        y = self.avg(y)
        y = F.adaptive_avg_pool2d(y, 1).flatten(1)
        return self.head(y)


class Attention(nn.Module):
    """Multi-head self-attention written out: projections, scaled scores, softmax, merge."""

    def __init__(self, dim: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        scores = q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(mask, float("-inf"))
        y = torch.softmax(scores, dim=-1) @ v
        y = y.transpose(1, 2).reshape(b, t, d)
        causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y) + causal.transpose(1, 2).reshape(b, t, d)


class NormBlock(nn.Module):
    """LayerNorm, tanh-GELU, residuals (one in place), a clamp and a mean."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(24)
        self.fc = nn.Linear(24, 24)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = F.gelu(self.fc(self.norm(x)), approximate="tanh")
        z = x * 2
        z += y
        return z.clamp(-3, 3), z.mean(dim=1)


class Cond(nn.Module):
    """torch.cond with a data-dependent predicate (exported programs only)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cond(
            x.sum() > 0, lambda v: self.fc(v).relu(), lambda v: torch.sin(v * 2), (x,)
        )


# --- transformers models -------------------------------------------------------------------


def _bert() -> Any:
    import transformers as T

    c = T.BertConfig(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        vocab_size=100,
        max_position_embeddings=64,
    )
    return T.BertModel(c).eval(), (torch.randint(0, 100, (2, 16)),)


def _distilbert() -> Any:
    import transformers as T

    c = T.DistilBertConfig(
        dim=64, n_layers=2, n_heads=4, hidden_dim=128, vocab_size=100, max_position_embeddings=64
    )
    return T.DistilBertModel(c).eval(), (torch.randint(0, 100, (2, 16)),)


def _gpt2() -> Any:
    import transformers as T

    c = T.GPT2Config(
        n_embd=64,
        n_layer=2,
        n_head=4,
        vocab_size=100,
        n_positions=64,
        use_cache=False,
        bos_token_id=0,
        eos_token_id=0,
    )
    return T.GPT2Model(c).eval(), (torch.randint(0, 100, (1, 16)),)


def _vit() -> Any:
    import transformers as T

    c = T.ViTConfig(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        image_size=32,
        patch_size=8,
    )
    return T.ViTModel(c).eval(), (torch.randn(1, 3, 32, 32),)


def _resnet(depth: int) -> Callable[[], Any]:
    def build() -> Any:
        import transformers as T

        if depth == 18:
            c = T.ResNetConfig(
                depths=[2, 2, 2, 2], layer_type="basic", hidden_sizes=[64, 128, 256, 512]
            )
        else:
            c = T.ResNetConfig()  # the defaults are ResNet-50
        return lively(T.ResNetModel(c)), (torch.randn(1, 3, 64, 64),)

    return build


def _mobilenet_v2() -> Any:
    import transformers as T

    return lively(T.MobileNetV2Model(T.MobileNetV2Config())), (torch.randn(1, 3, 64, 64),)


def _convnext() -> Any:
    import transformers as T

    return lively(T.ConvNextModel(T.ConvNextConfig())), (torch.randn(1, 3, 64, 64),)


ZOO: dict[str, ZooModel] = {
    "mlp": ZooModel(_seeded(lambda: (MLP().eval(), (torch.randn(4, 32),))), paths=ALL_PATHS),
    "cnn": ZooModel(
        _seeded(lambda: (lively(CNN()), (torch.randn(2, 3, 16, 16),))), paths=ALL_PATHS
    ),
    "attention": ZooModel(
        _seeded(lambda: (Attention().eval(), (torch.randn(2, 8, 32),))), paths=ALL_PATHS
    ),
    "norm_block": ZooModel(
        _seeded(lambda: (NormBlock().eval(), (torch.randn(3, 5, 24),))), paths=ALL_PATHS
    ),
    "cond": ZooModel(_seeded(lambda: (Cond().eval(), (torch.randn(2, 8),))), paths=("exported",)),
    "bert": ZooModel(_seeded(_bert)),
    "distilbert": ZooModel(_seeded(_distilbert)),
    "gpt2": ZooModel(_seeded(_gpt2)),
    "vit": ZooModel(_seeded(_vit)),
    "resnet18": ZooModel(_seeded(_resnet(18))),
    "resnet50": ZooModel(_seeded(_resnet(50)), slow=True),
    "mobilenet_v2": ZooModel(_seeded(_mobilenet_v2), slow=True),
    "convnext": ZooModel(_seeded(_convnext), slow=True),
}


def torch_outputs(model: nn.Module, inputs: tuple[torch.Tensor, ...]) -> list[torch.Tensor]:
    """Eager outputs flattened like the importers flatten them (dicts by value order)."""
    with torch.no_grad():
        out = model(*inputs)

    def flat(v: Any) -> list[torch.Tensor]:
        if isinstance(v, dict):
            return [t for item in v.values() for t in flat(item)]
        if isinstance(v, list | tuple):
            return [t for item in v for t in flat(item)]
        return [v] if isinstance(v, torch.Tensor) else []

    return flat(out)
