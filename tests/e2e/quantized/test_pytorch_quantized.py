"""Quantized PyTorch models against torch: eager-mode quantization traced to TorchScript
(with and without keep_quantized_weight), dynamic quantization, and PT2E (torchao)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xrelay

torch = pytest.importorskip("torch")
nn = torch.nn


class EagerNet(nn.Module):
    """conv-relu (fused), conv, a quantized add, global average pool, linear."""

    def __init__(self) -> None:
        super().__init__()
        from torch.ao.quantization import DeQuantStub, QuantStub

        self.quant, self.dequant = QuantStub(), DeQuantStub()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.add = torch.ao.nn.quantized.FloatFunctional()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        y = self.relu(self.conv(self.quant(x)))
        z = self.add.add(y, self.conv2(y))
        return self.dequant(self.fc(self.pool(z).flatten(1)))


@pytest.fixture(scope="module")
def eager_quantized():
    from torch.ao.quantization import convert, fuse_modules, get_default_qconfig, prepare

    torch.backends.quantized.engine = "fbgemm"
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = fuse_modules(EagerNet().eval(), [["conv", "relu"]])
        model.qconfig = get_default_qconfig("fbgemm")
        prepare(model, inplace=True)
        for _ in range(8):
            model(torch.randn(1, 3, 8, 8))
        convert(model, inplace=True)
        x = torch.randn(1, 3, 8, 8)
        traced = torch.jit.trace(model, x)
    return model, traced, x


@pytest.mark.parametrize("keep", [False, True])
def test_eager_quantized_cnn_matches_torch(eager_quantized, keep):
    model, traced, x = eager_quantized
    module, params = xrelay.from_pytorch(traced, [("x", (1, 3, 8, 8))], keep_quantized_weight=keep)
    names = [op.name for op in module.walk()]
    assert names.count("qnn.conv2d") == 2 and names.count("qnn.dense") == 1
    assert "qnn.add" in names and "qnn.global_avg_pool2d" in names
    # float weights arrive quantized by qnn.quantize unless kept as integers
    quantized_constants = [
        op
        for op in module.walk()
        if op.name == "qnn.quantize" and getattr(op.data.owner, "name", "") == "relay.constant"
    ]
    assert bool(quantized_constants) != keep
    got = xrelay.build(module, params=params).run(x.numpy())[0]
    want = model(x).numpy()
    step = model.fc.scale  # the output's quantization step
    err = float(np.abs(got - want).max())
    assert err <= step * 1.0001, (err, step)  # measured: 0


def test_canonical_ir_is_the_same_with_and_without_keep_quantized_weight(eager_quantized):
    """The seed: after qnn-fold-quantize-constants and qnn-remove-clip-after-requantize the
    float-weight import and the int8-weight import print the same IR."""
    from xdsl.context import Context
    from xrelay.transforms.qnn_canonicalize import (
        QnnFoldQuantizeConstants,
        QnnRemoveClipAfterRequantize,
    )

    _, traced, _ = eager_quantized
    texts = []
    for keep in (False, True):
        module, _ = xrelay.from_pytorch(traced, [("x", (1, 3, 8, 8))], keep_quantized_weight=keep)
        QnnFoldQuantizeConstants().apply(Context(), module)
        QnnRemoveClipAfterRequantize().apply(Context(), module)
        texts.append(str(module))
    assert texts[0] == texts[1]
    assert "relay.clip" not in texts[0] or "a_min = 0.000000e+00" not in texts[0]
    assert "qnn.quantize %x" in texts[0]  # only the input is quantized at run time


def test_dynamic_quantized_linear_matches_torch():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 8)).eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        qmodel = torch.ao.quantization.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)
        x = torch.randn(4, 32)
        traced = torch.jit.trace(qmodel, x)
    module, params = xrelay.from_pytorch(traced, [("x", (4, 32))])
    assert [op.name for op in module.walk()].count("qnn.dense") == 2
    got = xrelay.build(module, params=params).run(x.numpy())[0]
    want = qmodel(x).numpy()
    # float output after integer products with the same run-time input quantization as
    # fbgemm: measured 3e-8 against outputs of about 0.5
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_pt2e_quantized_model_matches_torch():
    pytest.importorskip("torchao")
    import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer as xiq
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1)
            self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
            self.fc = nn.Linear(8, 10)

        def forward(self, x):
            y = torch.relu(self.conv(x))
            z = y + self.conv2(y)
            return self.fc(torch.nn.functional.adaptive_avg_pool2d(z, 1).flatten(1))

    torch.manual_seed(0)
    x = torch.randn(1, 3, 8, 8)
    quantizer = xiq.X86InductorQuantizer()
    quantizer.set_global(xiq.get_default_x86_inductor_quantization_config())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prepared = prepare_pt2e(torch.export.export(Net().eval(), (x,)).module(), quantizer)
        for _ in range(8):
            prepared(torch.randn(1, 3, 8, 8))
        converted = convert_pt2e(prepared)
        program = torch.export.export(converted, (x,))
    module, params = xrelay.from_exported_program(program)
    names = [op.name for op in module.walk()]
    assert names.count("qnn.conv2d") == 2 and "qnn.dense" in names
    assert "relay.nn.conv2d" not in names and "relay.nn.matmul" not in names
    got = xrelay.build(module, params=params).run(x.numpy())[0]
    want = converted(x).detach().numpy()
    # the float output of a linear on 8-bit inputs: one input step times the weight norm
    # bounds any single rounding flip; measured 1.2e-5 against outputs of about 0.5
    np.testing.assert_allclose(got, want, atol=1e-3)


def test_zero_scale_and_out_of_range_zero_point_are_errors():
    def zero_scale(x):
        return torch.dequantize(torch.quantize_per_tensor(x, 0.0, 0, torch.quint8))

    def bad_zero_point(x):
        return torch.dequantize(torch.quantize_per_tensor(x, 0.1, 300, torch.quint8))

    for fn, message in (
        (zero_scale, r"scale 0\.0 is not a finite non-zero number"),
        (bad_zero_point, r"zero point 300 is outside the range \[0, 255\]"),
    ):
        scripted = torch.jit.script(fn)
        with pytest.raises(xrelay.Error, match=message) as info:
            xrelay.from_pytorch(scripted, [("x", (4,))])
        assert "quantize_per_tensor" in str(info.value)
