"""torch.export programs with dynamic dimensions (`torch.export.Dim`): symbols named after
the Dims, their ranges on @main, one build that runs every size (one specialization per
size) against torch eager."""

from __future__ import annotations

import os

import numpy as np
import pytest
import xrelay

torch = pytest.importorskip("torch")
Dim = torch.export.Dim


class Block(torch.nn.Module):
    """Linear, a reshape by derived sizes, attention-style softmax over the sequence."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        b, s, _ = x.shape
        h = torch.relu(self.fc(x))
        scores = torch.softmax(h @ h.transpose(1, 2) / 8**0.5, dim=-1)
        return (scores @ h).reshape(b * s, 8)


def test_dims_name_the_symbols_and_every_size_runs():
    torch.manual_seed(0)
    model = Block().eval()
    batch, seq = Dim("batch"), Dim("seq", max=64)
    ep = torch.export.export(
        model, (torch.randn(2, 3, 8),), dynamic_shapes={"x": {0: batch, 1: seq}}
    )
    module, params = xrelay.from_exported_program(ep)
    text = str(module)
    assert '#relay.dims<"batch", "seq">' in text and '#relay.dims<"batch*seq">' in text
    assert "xrelay.dim_ranges = {seq = array<i64: 1, 64>}" in text
    lib = xrelay.build(module, params)
    shapes = [(2, 3), (1, 1), (3, 17), (2, 3)]
    for b, s in shapes:
        x = torch.randn(b, s, 8)
        np.testing.assert_allclose(
            lib.run(x=x.numpy())[0], model(x).detach().numpy(), rtol=1e-5, atol=1e-5
        )
    assert lib.compiles == 3  # a size seen before runs its build again
    debug = xrelay.create_executor("debug", module, params)
    x = torch.randn(2, 5, 8)
    np.testing.assert_allclose(debug.run(x=x.numpy())[0], model(x).detach().numpy(), atol=1e-5)
    with pytest.raises(xrelay.Error, match=r"input 'x' axis 1 has size 65, outside .*'seq'"):
        lib.run(x=np.zeros((1, 65, 8), np.float32))
    with pytest.raises(xrelay.Error, match="input 'x' axis 2 has size 7"):
        lib.run(x=np.zeros((1, 2, 7), np.float32))


@pytest.mark.slow
def test_bert_hidden_256_four_layers_every_batch_and_sequence():
    """Issue 18's case through torch.export: BertModel (hidden 256, 4 layers) exported with
    Dim("batch") and Dim("seq", max=512), built once, against torch eager for batch x
    sequence in {1, 2, 4} x {1, 7, 128, 384}."""
    transformers = pytest.importorskip("transformers")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    torch.manual_seed(0)
    config = transformers.BertConfig(
        hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=1024
    )
    model = transformers.BertModel(config).eval()
    ids = torch.randint(0, config.vocab_size, (2, 16))
    ep = torch.export.export(
        model,
        (ids,),
        dynamic_shapes={"input_ids": {0: Dim("batch"), 1: Dim("seq", max=512)}},
    )
    module, params = xrelay.from_exported_program(ep)
    assert '#relay.dims<"batch", "seq">' in str(module.body.block.first_op.function_type)
    lib = xrelay.build(module, params)
    rng = np.random.default_rng(0)
    shapes = [(b, s) for b in (1, 2, 4) for s in (1, 7, 128, 384)]
    for b, s in shapes:
        x = torch.from_numpy(rng.integers(0, config.vocab_size, (b, s)))
        with torch.no_grad():
            want = model(input_ids=x).last_hidden_state.numpy()
        got = lib.run(input_ids=x.numpy())[0]
        scale = float(np.abs(want).max())
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4 * scale)
    assert lib.compiles == len(shapes)
