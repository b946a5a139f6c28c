"""Models quantized by onnxruntime (quantize_static in QDQ and QOperator formats,
quantize_dynamic) against onnxruntime itself.

onnxruntime runs with `session.x64quantprecision=1`: its default uint8 x int8 kernel on AVX2
machines without VNNI (this one) adds pairs of products in saturating int16 (pmaddubsw), so
its default results are off the exact integer sums by up to tens of steps (measured: 27 on
the MLP), while its high-precision mode computes them exactly, as xrelay does. Weights
use the full int8 range. QDQ models run in onnxruntime as written (basic optimizations).
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import xrelay
from onnx import numpy_helper

ort = pytest.importorskip("onnxruntime")
quantization = pytest.importorskip("onnxruntime.quantization")

from . import onnx_models

FORMATS = ["qdq", "qoperator", "dynamic"]


class Reader(quantization.CalibrationDataReader):
    def __init__(self, feeds: list[dict[str, np.ndarray]]) -> None:
        self.items = iter(feeds)

    def get_next(self):
        return next(self.items, None)


@pytest.fixture(scope="module")
def float_models(tmp_path_factory):
    d = tmp_path_factory.mktemp("float")
    bert_path, bert_inputs = onnx_models.bert(d / "bert.onnx")
    return {
        "cnn": (onnx_models.cnn(d / "cnn.onnx"), {}),
        "mlp": (onnx_models.mlp(d / "mlp.onnx"), {}),
        "bert": (bert_path, bert_inputs),
    }


def feeds(path, fixed: dict[str, np.ndarray], seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for i in ort.InferenceSession(str(path)).get_inputs():
        out[i.name] = (
            fixed[i.name] if i.name in fixed else rng.standard_normal(i.shape).astype(np.float32)
        )
    return out


def quantize(path, fixed, fmt: str, out):
    if fmt == "dynamic":
        quantization.quantize_dynamic(str(path), str(out), weight_type=quantization.QuantType.QInt8)
    else:
        quantization.quantize_static(
            str(path),
            str(out),
            Reader([feeds(path, fixed, seed) for seed in range(8)]),
            quant_format=quantization.QuantFormat.QDQ
            if fmt == "qdq"
            else quantization.QuantFormat.QOperator,
            activation_type=quantization.QuantType.QUInt8,
            weight_type=quantization.QuantType.QInt8,
        )
    return out


def output_steps(model: onnx.ModelProto) -> list[float | None]:
    """Per graph output, the quantization step when a DequantizeLinear with a constant
    scale produces it (None for float outputs)."""
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    steps = []
    for out in model.graph.output:
        producer = next(n for n in model.graph.node if out.name in n.output)
        scale = inits.get(producer.input[1]) if producer.op_type == "DequantizeLinear" else None
        steps.append(None if scale is None else float(scale))
    return steps


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", ["cnn", "mlp", "bert"])
def test_matches_onnxruntime(float_models, tmp_path, name, fmt):
    path, fixed = float_models[name]
    qpath = quantize(path, fixed, fmt, tmp_path / f"{name}_{fmt}.onnx")
    inputs = feeds(path, fixed, seed=100)
    options = ort.SessionOptions()
    options.add_session_config_entry("session.x64quantprecision", "1")
    if fmt == "qdq":
        # a QDQ graph run as written (dequantize -> float op -> quantize), the format's own
        # meaning; onnxruntime's fusion of it into integer kernels fails to initialize the
        # BERT in high-precision mode (1.31: "Attempt to replace the existing tensor")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    want = ort.InferenceSession(str(qpath), options).run(None, inputs)

    module, params = xrelay.from_onnx(str(qpath))
    names = [op.name for op in module.walk()]
    # the products run on integers, not as float emulation
    assert any(n in names for n in ("qnn.conv2d", "qnn.dense")), names
    assert "relay.nn.conv2d" not in names and "relay.nn.dense" not in names
    if fmt != "dynamic":
        assert "relay.nn.matmul" not in names and "relay.nn.batch_matmul" not in names
    got = xrelay.build(module, params=params).run(**inputs)

    assert len(got) == len(want)
    for g, w, step in zip(got, want, output_steps(onnx.load(str(qpath)))):
        assert g.shape == w.shape and g.dtype == w.dtype
        err = float(np.abs(g.astype(np.float64) - w).max())
        if step is not None:  # a quantized output: at most one step (measured: 0)
            assert err <= step * 1.0001, (err, step)
        else:  # float results after integer products: float rounding only
            assert err <= 1e-5 * max(1.0, float(np.abs(w).max())), err


def _q_model(node, inits):
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)],
        initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


def test_zero_scale_is_an_error_naming_the_node():
    from onnx import helper

    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q0")
    model = _q_model(node, {"s": np.float32(0.0), "z": np.uint8(3)})
    with pytest.raises(xrelay.Error, match=r"ONNX node 'q0' \(QuantizeLinear\): .*scale 0\.0"):
        xrelay.from_onnx(model)


def test_per_axis_length_mismatch_is_an_error_naming_the_node():
    from onnx import helper

    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q1", axis=1)
    scales = np.array([0.1, 0.2], np.float32)  # the axis has 3 channels
    model = _q_model(node, {"s": scales, "z": np.zeros(2, np.uint8)})
    with pytest.raises(
        xrelay.Error, match=r"ONNX node 'q1'.*per-axis zero point has 2 entries but the axis has 3"
    ):
        xrelay.from_onnx(model)
