"""The onnx package's backend test data directories as cases: model + inputs + expected
outputs, read straight from the installed package (nothing is downloaded)."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

DATA_ROOT = Path(os.path.dirname(onnx.__file__)) / "backend" / "test" / "data"


@dataclass(frozen=True)
class DataCase:
    suite: str
    name: str
    model_path: Path

    def data_sets(self) -> list[tuple[list[np.ndarray], list[np.ndarray]]]:
        """(inputs, expected outputs) per data set, in the model's order."""
        sets = []
        folder = self.model_path.parent
        for ds in sorted(folder.glob("test_data_set_*")):
            ins = [_read(p) for p in sorted(ds.glob("input_*.pb"), key=_index)]
            outs = [_read(p) for p in sorted(ds.glob("output_*.pb"), key=_index)]
            sets.append((ins, outs))
        if self.suite == "light":
            outs = [_read(folder / f"{self.name}_output_0.pb")]
            sets.append((light_inputs(onnx.load(str(self.model_path))), outs))
        return sets


def light_inputs(model: onnx.ModelProto) -> list[np.ndarray]:
    """The inputs the onnx runner feeds a `light` model: arange(n) / n in the input's shape
    (as `Runner.generate_dummy_data(random=False)`), for each non-initializer input."""
    inits = {t.name for t in model.graph.initializer}
    arrays = []
    for value in model.graph.input:
        if value.name in inits:
            continue
        shape = tuple(d.dim_value if d.HasField("dim_value") else 1 for d in value.type.tensor_type.shape.dim)
        n = int(np.prod(shape))
        arrays.append((np.arange(n).reshape(shape) / n).astype(np.float32))
    return arrays


def _index(p: Path) -> int:
    return int(p.stem.rsplit("_", 1)[1])


def _read(path: Path) -> np.ndarray:
    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(t)


def collect(suite: str) -> list[DataCase]:
    root = DATA_ROOT / suite
    if suite == "light":
        return [
            DataCase(suite, Path(p).stem, Path(p)) for p in sorted(glob.glob(str(root / "*.onnx")))
        ]
    return [
        DataCase(suite, d.name, d / "model.onnx")
        for d in sorted(root.iterdir())
        if (d / "model.onnx").is_file()
    ]


def with_real_weights(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """A `light` model with its ConstantOfShape weights replaced by seeded random
    initializers (scaled by fan-in; vectors in [0.5, 1.5) so variances stay positive), and
    the input of every Softmax exposed as an extra output, so a comparison sees real logits."""
    rng = np.random.default_rng(seed)
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    shapes = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    keep = []
    for node in graph.node:
        if node.op_type != "ConstantOfShape":
            keep.append(node)
            continue
        shape = tuple(int(d) for d in shapes[node.input[0]])
        if len(shape) == 1:
            value = rng.uniform(0.5, 1.5, shape)
        else:
            value = rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))
        graph.initializer.append(numpy_helper.from_array(value.astype(np.float32), node.output[0]))
    del graph.node[:]
    graph.node.extend(keep)
    used = {name for node in graph.node for name in node.input}
    live = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(live)
    inputs = [v for v in graph.input if v.name in used or v.name not in shapes]
    del graph.input[:]
    graph.input.extend(inputs)
    for node in graph.node:
        if node.op_type == "Softmax":
            graph.output.append(onnx.helper.make_tensor_value_info(node.input[0], 1, None))
    return model


def dynamic_batch(name: str) -> onnx.ModelProto:
    """The `light_<name>` model with real weights, its data input's and outputs' batch
    dimension the dim_param `N`, no value_info, and every Reshape target that hard-codes a
    batch of 1 ([1, 2048]) reading it from its input instead ([0, 2048]): the models were
    exported for batch 1, so without that onnxruntime cannot run other batches either."""
    (case,) = [c for c in collect("light") if c.name == f"light_{name}"]
    model = with_real_weights(onnx.load(str(case.model_path)))
    graph = model.graph
    inits = {t.name for t in graph.initializer}
    for value in [*graph.input, *graph.output]:
        dims = value.type.tensor_type.shape.dim
        if value.name not in inits and len(dims):
            dims[0].Clear()
            dims[0].dim_param = "N"
    del graph.value_info[:]
    targets = {node.input[1] for node in graph.node if node.op_type == "Reshape"}
    for i, tensor in enumerate(graph.initializer):
        if tensor.name in targets:
            target = numpy_helper.to_array(tensor).copy()
            if target[0] == 1:
                target[0] = 0
                graph.initializer[i].CopyFrom(numpy_helper.from_array(target, tensor.name))
    return model
