"""Issue 22's seed comparison, built from scratch: one network (conv 3x3 + relu, global
average pool, dense) quantized by PyTorch (eager post-training static quantization, fbgemm
qconfig, traced) and by TFLite (Keras, full-integer int8, random representative data),
imported and canonicalized, gives the same qnn op sequence except for the differences
listed in KNOWN_DIFFERENCES (tests/filecheck/frontends/quantized-pytorch-vs-tflite.mlir holds
the two imports as text)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch.ao.quantization")
pytest.importorskip("tensorflow")
pytest.importorskip("tflite")

import xrelay
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.transforms.canonicalize import CanonicalizePass
from xrelay.universe import PASSES

# after xDSL's canonicalize
QNN_CANONICALIZE = (
    "qnn-fold-quantize-constants",
    "qnn-remove-clip-after-requantize",
    "qnn-dense-bias-as-add",
)
IN_CHANNELS, CHANNELS, SIZE, OUTPUTS = 2, 3, 5, 2

# What canonicalization leaves different, each asserted below so that the test fails (and
# this table must shrink) when one goes away:
# - TFLite's input is NHWC: a relay.transpose before qnn.conv2d;
# - the pool: PyTorch's qnn.global_avg_pool2d + reshape, TFLite's integer MEAN kernel in
#   relay i32/i64 ops (its fixed-point rounding differs from qnn.global_avg_pool2d's);
# - the 8-bit type: ui8 (fbgemm's quint8) for PyTorch, i8 for TFLite.
SHARED = [
    "qnn.quantize",
    "qnn.conv2d",
    "relay.nn.bias_add",
    "qnn.requantize",
    "<pool>",
    "qnn.dense",
    "relay.add",  # the bias, after qnn-dense-bias-as-add
    "qnn.requantize",
    "qnn.dequantize",
]


def pytorch_import() -> ModuleOp:
    from torch.ao.quantization import (
        DeQuantStub,
        QuantStub,
        convert,
        fuse_modules,
        get_default_qconfig,
        prepare,
    )

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.quant, self.dequant = QuantStub(), DeQuantStub()
            self.conv = torch.nn.Conv2d(IN_CHANNELS, CHANNELS, 3)
            self.relu = torch.nn.ReLU()
            self.pool = torch.nn.AdaptiveAvgPool2d(1)
            self.fc = torch.nn.Linear(CHANNELS, OUTPUTS)

        def forward(self, x):
            y = self.relu(self.conv(self.quant(x)))
            return self.dequant(self.fc(self.pool(y).flatten(1)))

    torch.backends.quantized.engine = "fbgemm"
    torch.manual_seed(0)
    shape = (1, IN_CHANNELS, SIZE, SIZE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = fuse_modules(Net().eval(), [["conv", "relu"]])
        model.qconfig = get_default_qconfig("fbgemm")
        prepare(model, inplace=True)
        for _ in range(8):
            model(torch.randn(shape))
        convert(model, inplace=True)
        traced = torch.jit.trace(model, torch.randn(shape))
    module, _ = xrelay.from_pytorch(traced, [("x", shape)])
    return module


def tflite_import() -> ModuleOp:
    import keras
    import tensorflow as tf

    i = keras.Input((SIZE, SIZE, IN_CHANNELS), batch_size=1)
    x = keras.layers.Conv2D(CHANNELS, 3, activation="relu")(i)
    x = keras.layers.GlobalAveragePooling2D()(x)
    model = keras.Model(i, keras.layers.Dense(OUTPUTS)(x))
    rng = np.random.default_rng(0)
    model.set_weights(
        [(0.5 * rng.standard_normal(w.shape)).astype(np.float32) for w in model.get_weights()]
    )

    def representative():
        data = np.random.default_rng(1)
        for _ in range(8):
            yield [data.standard_normal((1, SIZE, SIZE, IN_CHANNELS)).astype(np.float32)]

    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    module, _ = xrelay.from_tflite(converter.convert())
    return module


def canonical_ops(module: ModuleOp) -> list:
    """The main function's ops after canonicalization, constants and the return left out."""
    CanonicalizePass().apply(Context(), module)
    for name in QNN_CANONICALIZE:
        PASSES[name]()().apply(Context(), module)
    return [
        op
        for op in module.walk()
        if op.name not in ("builtin.module", "func.func", "func.return", "relay.constant")
    ]


def cut(names: list[str], start: int, stop: int) -> tuple[list[str], list[str]]:
    """`names` with [start, stop) replaced by one "<pool>", and the part cut out."""
    return names[:start] + ["<pool>"] + names[stop:], names[start:stop]


def test_canonical_qnn_ir_is_the_same_up_to_known_differences():
    pt_ops, tfl_ops = canonical_ops(pytorch_import()), canonical_ops(tflite_import())
    pt, tfl = [op.name for op in pt_ops], [op.name for op in tfl_ops]

    # input transpose: NHWC -> NCHW, on the quantized input
    assert tfl[1] == "relay.transpose" and "relay.transpose" not in pt
    del tfl[1]
    # pool: between the conv's requantize and qnn.dense
    pt, pt_pool = cut(pt, pt.index("qnn.requantize") + 1, pt.index("qnn.dense"))
    tfl, tfl_pool = cut(tfl, tfl.index("qnn.requantize") + 1, tfl.index("qnn.dense"))
    assert pt_pool == ["qnn.global_avg_pool2d", "relay.reshape"]
    assert "relay.sum" in tfl_pool and not any(n.startswith("qnn.") for n in tfl_pool)

    assert pt == tfl == SHARED
    for ops, narrow in ((pt_ops, "ui8"), (tfl_ops, "i8")):
        requantizes = [op for op in ops if op.name == "qnn.requantize"]
        assert [str(op.attrs.out_dtype) for op in requantizes] == [narrow, narrow]
        for op in ops:
            if op.name in ("qnn.conv2d", "qnn.dense"):  # integer weights
                assert str(op.operands[1].type.element_type) == "i8"
            if op.name in ("qnn.conv2d", "qnn.dense"):  # then the folded i32 bias
                (bias_add,) = [use.operation for use in op.results[0].uses]
                bias = bias_add.operands[1]
                assert bias.owner.name == "relay.constant"
                assert str(bias.type.element_type) == "i32"
