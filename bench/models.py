"""The benchmark's model set, built offline: an MLP, six `light` CNNs from the onnx package
(their ConstantOfShape weights materialized as seeded random initializers) and BERT-base
(transformers `BertConfig()`, random weights, sequence 128, `torch.onnx.export(dynamo=True)`).

Each builder returns (ONNX model, inputs by name). Models are cached as .onnx files. The
`light` models are the ones the test suite runs (`tests/e2e/onnx_backend/data_cases.py`):
the checkout is the editable `xrelay` package, so its tests are the package `xrelay.tests`.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference
from xrelay.tests.e2e.onnx_backend.data_cases import (
    collect,
    dynamic_batch,
    light_inputs,
    with_real_weights,
)

LIGHT = ["squeezenet", "shufflenet", "resnet50", "inception_v1", "densenet121", "vgg19"]
MODELS = ["mlp", *LIGHT, "bert_base"]
# the int8 set: the fp32 models above quantized by onnxruntime (QDQ, per-channel weights,
# opset 13; BERT-base dynamically), `--models int8` in bench/run.py
INT8 = ["mlp_int8", "squeezenet_int8", "resnet50_int8", "bert_base_int8"]


def mlp() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """784-2048-2048-10 with ReLUs, batch 128."""
    rng = np.random.default_rng(0)
    sizes = [784, 2048, 2048, 10]
    nodes, inits, prev = [], [], "x"
    for i, (k, n) in enumerate(itertools.pairwise(sizes)):
        w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
        b = (rng.standard_normal(n) * 0.1).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        out = f"h{i}" if i < len(sizes) - 2 else "y"
        nodes.append(
            helper.make_node("Gemm", [prev, f"w{i}", f"b{i}"], [f"g{i}" if out != "y" else "y"])
        )
        if out != "y":
            nodes.append(helper.make_node("Relu", [f"g{i}"], [out]))
        prev = out
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [128, 784])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [128, 10])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # what onnxruntime reads
    x = rng.standard_normal((128, 784)).astype(np.float32)
    return model, {"x": x}


def light(name: str) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    (case,) = [c for c in collect("light") if c.name == f"light_{name}"]
    model = with_real_weights(onnx.load(str(case.model_path)))
    inits = {t.name for t in model.graph.initializer}
    names = [v.name for v in model.graph.input if v.name not in inits]
    return model, dict(zip(names, light_inputs(model)))


def bert_base(cache: Path) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    path = cache / "bert_base.onnx"
    ids = np.random.default_rng(0).integers(0, 30522, (1, 128)).astype(np.int64)
    if not path.is_file():
        import os

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import torch
        import transformers

        torch.manual_seed(0)
        model = transformers.BertModel(transformers.BertConfig()).eval()
        cache.mkdir(parents=True, exist_ok=True)
        torch.onnx.export(
            model, (torch.from_numpy(ids),), str(path), dynamo=True, input_names=["input_ids"]
        )
    model = onnx.load(str(path))
    return model, {model.graph.input[0].name: ids}


# the models with a dynamic variant (`dynamic`), for bench/run.py --dynamic
DYNAMIC = {"resnet50": "batch", "bert_base": "batch, sequence"}


def dynamic(name: str, cache: Path) -> onnx.ModelProto:
    """`name` with dynamic dimensions: a light CNN with its batch axis a dim_param `N`;
    BERT-base exported with dynamic batch and sequence axes."""
    if name == "bert_base":
        return _bert_base_dynamic(cache)
    return dynamic_batch(name)


def _bert_base_dynamic(cache: Path) -> onnx.ModelProto:
    path = cache / "bert_base_dynamic.onnx"
    if not path.is_file():
        import os

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import torch
        import transformers

        torch.manual_seed(0)
        model = transformers.BertModel(transformers.BertConfig()).eval()
        ids = torch.zeros((1, 128), dtype=torch.int64)
        batch, seq = torch.export.Dim("batch"), torch.export.Dim("sequence", max=512)
        cache.mkdir(parents=True, exist_ok=True)
        torch.onnx.export(
            model,
            (ids,),
            str(path),
            dynamo=True,
            input_names=["input_ids"],
            dynamic_shapes={"input_ids": {0: batch, 1: seq}},
        )
    return onnx.load(str(path))


def _opset13(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model at opset 13 (onnxruntime's quantizer needs 10+; the light models are 9),
    with initializers no longer listed among the graph inputs."""
    from onnx import version_converter

    model = onnx.ModelProto.FromString(model.SerializeToString())
    if model.opset_import[0].version >= 13:
        return model
    inits = {t.name for t in model.graph.initializer}
    listed = {i.name for i in model.graph.input}
    for t in model.graph.initializer:  # the converter reads initializers' types as inputs
        if t.name not in listed:
            model.graph.input.append(helper.make_tensor_value_info(t.name, t.data_type, t.dims))
    model = version_converter.convert_version(model, 13)
    keep = [i for i in model.graph.input if i.name not in inits]
    del model.graph.input[:]
    model.graph.input.extend(keep)
    return model


def quantized(name: str, cache: Path) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """`name` (ending in `_int8`) quantized by onnxruntime: quantize_static (QDQ,
    per-channel int8 weights, uint8 activations, calibrated on 4 seeded random inputs) for
    the CNNs and the MLP; quantize_dynamic for BERT-base. Cached."""
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_dynamic,
        quantize_static,
    )

    base = name.removesuffix("_int8")
    model, inputs = build(base, cache)
    path = cache / f"{name}.onnx"
    if not path.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        source = cache / f"{base}_fp32_opset13.onnx"
        model = _opset13(model)
        del model.graph.value_info[:]  # the quantizer re-infers shapes
        if base == "mlp":
            model.ir_version = 8
        onnx.save(model, str(source))
        if base == "bert_base":
            quantize_dynamic(str(source), str(path), weight_type=QuantType.QInt8)
        else:
            rng = np.random.default_rng(1)
            feeds = [
                {k: rng.standard_normal(v.shape).astype(v.dtype) for k, v in inputs.items()}
                for _ in range(4)
            ]

            class Reader(CalibrationDataReader):
                def __init__(self) -> None:
                    self.it = iter(feeds)

                def get_next(self):
                    return next(self.it, None)

            quantize_static(
                str(source),
                str(path),
                Reader(),
                quant_format=QuantFormat.QDQ,
                per_channel=True,
                activation_type=QuantType.QUInt8,
                weight_type=QuantType.QInt8,
            )
    return onnx.load(str(path)), inputs


def build(name: str, cache: Path) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    if name.endswith("_int8"):
        return quantized(name, cache)
    if name == "mlp":
        return mlp()
    if name == "bert_base":
        return bert_base(cache)
    return light(name)


def gflop(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> float:
    """Multiply-adds x 2 of Conv, Gemm and MatMul, from shapes inferred for `inputs`."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    model.ir_version = max(model.ir_version, 4)  # initializers typed without graph inputs
    for value in model.graph.input:
        if value.name in inputs:
            dims = value.type.tensor_type.shape.dim
            del dims[:]
            for d in inputs[value.name].shape:
                dims.add().dim_value = d
    inferred = shape_inference.infer_shapes(model)
    shapes: dict[str, list[int]] = {}
    for v in (*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output):
        dims = v.type.tensor_type.shape.dim
        shapes[v.name] = [d.dim_value for d in dims]
    for t in inferred.graph.initializer:
        shapes[t.name] = list(t.dims)
    total = 0.0
    for node in inferred.graph.node:
        out = shapes.get(node.output[0])
        if not out or 0 in out:
            continue
        if node.op_type == "Conv":
            w = shapes[node.input[1]]
            total += 2 * np.prod(out) * np.prod(w[1:])
        elif node.op_type in ("Gemm", "MatMul"):
            a = shapes.get(node.input[0])
            if a:
                transposed = any(x.name == "transA" and x.i for x in node.attribute)
                k = a[-2] if transposed else a[-1]
                total += 2 * np.prod(out) * k
    return float(total) / 1e9
