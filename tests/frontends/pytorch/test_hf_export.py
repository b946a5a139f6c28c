"""Transformers models that need the wider core ATen coverage, through torch.export and
xrelay.from_exported_program, compiled with xrelay.build and compared with torch eager:
BEiT (relative position bias, bilinear upsampling), Wav2Vec2 (group norm, weight-normed
positional convolution) and Llama with a padding attention_mask (several index tensors).
Small configs, seeded random weights, nothing downloaded."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import xrelay

from .torch_zoo import torch_outputs

os.environ.setdefault("HF_HUB_OFFLINE", "1")

pytestmark = [
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]

Built = tuple[torch.nn.Module, tuple[torch.Tensor, ...], dict[str, torch.Tensor]]


def beit() -> Built:
    import transformers as T

    c = T.BeitConfig(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        image_size=32,
        patch_size=8,
        use_relative_position_bias=True,
        use_mean_pooling=True,
    )
    return T.BeitModel(c).eval(), (torch.randn(2, 3, 32, 32),), {}


def wav2vec2() -> Built:
    import transformers as T

    c = T.Wav2Vec2Config(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        conv_dim=(32, 32, 32),
        conv_stride=(5, 2, 2),
        conv_kernel=(10, 3, 3),
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=4,
        feat_extract_norm="group",
    )
    return T.Wav2Vec2Model(c).eval(), (torch.randn(1, 800),), {}


def llama() -> Built:
    import transformers as T

    c = T.LlamaConfig(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=128,
        vocab_size=100,
        max_position_embeddings=64,
        use_cache=False,
    )
    ids = torch.randint(0, 100, (2, 12))
    mask = torch.ones(2, 12, dtype=torch.long)
    mask[1, :4] = 0  # left padding in the second sequence
    return T.LlamaModel(c).eval(), (ids,), {"attention_mask": mask}


MODELS: dict[str, Callable[[], Built]] = {"beit": beit, "wav2vec2": wav2vec2, "llama": llama}


def eager(model: torch.nn.Module, args: tuple, kwargs: dict[str, Any]) -> list[torch.Tensor]:
    class Call(torch.nn.Module):
        def forward(self, *a: torch.Tensor) -> Any:
            return model(*a[: len(args)], **dict(zip(kwargs, a[len(args) :])))

    return torch_outputs(Call(), (*args, *kwargs.values()))


@pytest.mark.parametrize("name", list(MODELS))
def test_matches_eager(name: str) -> None:
    torch.manual_seed(0)
    model, args, kwargs = MODELS[name]()
    want = eager(model, args, kwargs)
    module, params = xrelay.from_exported_program(torch.export.export(model, args, kwargs))
    lib = xrelay.build(module, params=params)
    got = lib.run(*[x.numpy() for x in (*args, *kwargs.values())])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = w.numpy()
        assert g.shape == w.shape and g.dtype == w.dtype
        scale = float(np.max(np.abs(w)))
        assert scale > 1e-3, "the reference output is near zero: the comparison proves little"
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * scale)


def test_llama_mask_matters() -> None:
    """The padding mask reaches the compiled attention: the masked sequence's outputs differ
    from those without a mask, and match torch for both masks."""
    torch.manual_seed(0)
    model, (ids,), kwargs = llama()
    mask = kwargs["attention_mask"]
    ep = torch.export.export(model, (ids,), {"attention_mask": mask})
    lib = xrelay.build(*xrelay.from_exported_program(ep))
    with_mask = lib.run(ids.numpy(), mask.numpy())[0]
    without = lib.run(ids.numpy(), np.ones_like(mask.numpy()))[0]
    assert np.max(np.abs(with_mask[1, 4:] - without[1, 4:])) > 1e-3
    np.testing.assert_allclose(with_mask[0], without[0], rtol=1e-5, atol=1e-5)
    with torch.no_grad():
        want = model(ids, attention_mask=torch.ones_like(mask))[0].numpy()
    np.testing.assert_allclose(without, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
