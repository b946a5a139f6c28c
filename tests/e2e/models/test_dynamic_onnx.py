"""Models with dynamic axes, imported without `shape=` and compiled once (one native build
for every shape): the `light` CNNs of the onnx package with a dynamic batch `N`, and a
small BERT exported from PyTorch with a
dynamic batch and sequence length (both exporters), each matching onnxruntime for several
shapes; then single converters on dynamic dimensions (Range, Slice, Tile, CumSum, masks,
attention) and the ones that refuse them."""

from __future__ import annotations

import os
import warnings

import numpy as np
import onnx
import pytest
import xrelay
from onnx import TensorProto, helper, numpy_helper
from xrelay.lowering.dynamic import DynamicLibrary

from ..onnx_backend.data_cases import dynamic_batch

ort = pytest.importorskip("onnxruntime")

rng = np.random.default_rng(0)


def session(model: onnx.ModelProto):
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def assert_matches(got: list[np.ndarray], want: list[np.ndarray], rtol=1e-3, atol=1e-4):
    """Same shapes, and values within rtol plus atol relative to the output's scale."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        scale = float(np.abs(w).max()) if w.size else 1.0
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol * max(scale, 1e-6))


def run_shapes(model: onnx.ModelProto, feeds_list: list[dict[str, np.ndarray]]) -> DynamicLibrary:
    """Import once, build once, run every set of inputs against onnxruntime; the library."""
    module, params = xrelay.from_onnx(model)
    lib = xrelay.build(module, params)
    ref = session(model)
    for feeds in feeds_list:
        assert_matches(lib.run(**feeds), ref.run(None, feeds))
    return lib


# --- light CNNs with a dynamic batch ---------------------------------------------------


def image_batches(model: onnx.ModelProto, batches: tuple[int, ...]) -> list[dict]:
    inits = {t.name for t in model.graph.initializer}
    (value,) = [v for v in model.graph.input if v.name not in inits]
    chw = [d.dim_value for d in value.type.tensor_type.shape.dim[1:]]
    return [{value.name: rng.standard_normal((n, *chw)).astype(np.float32)} for n in batches]


def check_cnn(name: str, batches: tuple[int, ...]) -> None:
    model = dynamic_batch(name)
    module, params = xrelay.from_onnx(model)
    assert '#relay.dims<"N">' in str(module.body.block.first_op.function_type)
    lib = xrelay.build(module, params)
    ref = session(model)
    for feeds in image_batches(model, batches):
        assert_matches(lib.run(**feeds), ref.run(None, feeds))
    assert lib.native is not None and lib.compiles == 1, lib.refused  # one build, any batch


def test_squeezenet_dynamic_batch():
    check_cnn("squeezenet", (1, 3))


@pytest.mark.slow
def test_resnet50_dynamic_batch():
    check_cnn("resnet50", (1, 3, 8))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["shufflenet", "inception_v1", "densenet121", "vgg19"])
def test_light_cnn_dynamic_batch(name):
    check_cnn(name, (1, 2))


def test_window_ops_with_a_dynamic_batch():
    """A stride-2 depthwise convolution (columns from even / odd halves), a padded max pool
    and an average pool without the padding's count (two passes over the unpadded input,
    the padding's border filled apart): one build for batch 1 and 3."""
    w = rng.standard_normal((6, 1, 3, 3)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], group=6, strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("MaxPool", ["c"], ["m"], kernel_shape=[3, 3], pads=[1, 0, 1, 1]),
        helper.make_node(
            "AveragePool", ["m"], ["y"], kernel_shape=[3, 2], strides=[1, 2], pads=[0, 1, 2, 0]
        ),
    ]
    model = model_of(nodes, {"x": ["N", 6, 11, 13]}, {"w": w})
    lib = run_shapes(model, inputs_of([(1, 6, 11, 13), (3, 6, 11, 13)]))
    assert lib.native is not None and lib.compiles == 1, lib.refused


# --- a small BERT with dynamic batch and sequence ---------------------------------------

BERT_SHAPES = [(b, s) for b in (1, 2) for s in (1, 7, 16)]


def export_bert(path, dynamo: bool, hidden: int = 64, layers: int = 2) -> onnx.ModelProto:
    """A 2-layer BERT (hidden 64, 4 heads, random weights), inputs `input_ids` and
    `attention_mask` of dynamic [batch, seq]."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    if dynamo:
        pytest.importorskip("onnxscript")
    torch.manual_seed(0)
    config = transformers.BertConfig(
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        intermediate_size=2 * hidden if hidden == 64 else 4 * hidden,
        vocab_size=100,
        max_position_embeddings=512,
    )
    bert = transformers.BertModel(config).eval()

    class Outputs(torch.nn.Module):  # positional inputs, tuple outputs
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask):
            out = self.bert(input_ids=input_ids, attention_mask=attention_mask)
            return out.last_hidden_state, out.pooler_output

    args = (torch.randint(0, 100, (2, 7)), torch.ones(2, 7, dtype=torch.int64))
    names = ["input_ids", "attention_mask"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if dynamo:
            batch, seq = torch.export.Dim("batch"), torch.export.Dim("seq")
            dims = {name: {0: batch, 1: seq} for name in names}
            torch.onnx.export(
                Outputs().eval(), args, str(path), dynamo=True, input_names=names,
                dynamic_shapes=dims,
            )  # fmt: skip
        else:
            dims = {name: {0: "batch", 1: "seq"} for name in names}
            torch.onnx.export(
                Outputs().eval(), args, str(path), dynamo=False, input_names=names,
                output_names=["last_hidden_state", "pooler_output"], dynamic_axes=dims,
                opset_version=17,
            )  # fmt: skip
    return onnx.load(str(path))


def bert_inputs(batch: int, seq: int) -> dict[str, np.ndarray]:
    """Token ids and a mask whose last row is padded after its first half."""
    mask = np.ones((batch, seq), np.int64)
    mask[-1, seq // 2 + 1 :] = 0
    return {"input_ids": rng.integers(0, 100, (batch, seq)), "attention_mask": mask}


@pytest.mark.parametrize(
    "dynamo", [True, pytest.param(False, marks=pytest.mark.slow)], ids=["dynamo", "legacy"]
)
def test_small_bert_dynamic_batch_and_sequence(tmp_path, dynamo):
    model = export_bert(tmp_path / "bert.onnx", dynamo)
    module, params = xrelay.from_onnx(model)
    signature = str(module.body.block.first_op.function_type)
    assert '#relay.dims<"batch", "seq">' in signature
    lib = xrelay.build(module, params)
    ref = session(model)
    for batch, seq in BERT_SHAPES:
        feeds = bert_inputs(batch, seq)
        assert_matches(lib.run(**feeds), ref.run(None, feeds), rtol=1e-4, atol=1e-5)
    assert lib.native is not None and lib.compiles == 1  # one build for every shape
    # the position embeddings are sliced to `seq`: longer sequences are refused, not wrong
    with pytest.raises(xrelay.Error, match=r"outside the range \[1, 512\] declared for .*'seq'"):
        lib.run(**bert_inputs(1, 513))


@pytest.mark.slow
def test_bert_hidden_256_four_layers_every_batch_and_sequence(tmp_path):
    """Issue 18's case: BertModel (hidden 256, 4 layers) exported with dynamic batch and
    sequence axes, imported and compiled once (one native build for every shape), against
    onnxruntime for batch x sequence in {1, 2, 4} x {1, 7, 128, 384}."""
    model = export_bert(tmp_path / "bert.onnx", dynamo=True, hidden=256, layers=4)
    module, params = xrelay.from_onnx(model)
    lib = xrelay.build(module, params)
    ref = session(model)
    shapes = [(b, s) for b in (1, 2, 4) for s in (1, 7, 128, 384)]
    for batch, seq in shapes:
        feeds = bert_inputs(batch, seq)
        assert_matches(lib.run(**feeds), ref.run(None, feeds), rtol=1e-3, atol=1e-4)
    assert lib.native is not None and lib.compiles == 1  # one build for every shape


def test_small_gpt2_compiles_once_for_every_batch_and_sequence(tmp_path):
    """GPT-2 (2 layers, hidden 64, random weights) exported with dynamic batch and sequence:
    one native build (its q/k/v split along the hidden axis takes run-time leading sizes),
    matching onnxruntime at several shapes."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("onnxscript")
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        n_embd=64, n_layer=2, n_head=4, vocab_size=100, n_positions=128
    )
    gpt2 = transformers.GPT2Model(config).eval()

    class Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gpt2 = gpt2

        def forward(self, ids, mask):
            out = self.gpt2(input_ids=ids, attention_mask=mask, use_cache=False)
            return out.last_hidden_state

    args = (torch.randint(0, 100, (2, 7)), torch.ones(2, 7, dtype=torch.int64))
    batch, seq = torch.export.Dim("batch"), torch.export.Dim("seq", max=128)
    path = tmp_path / "gpt2.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            Hidden(), args, str(path), dynamo=True, input_names=["ids", "mask"],
            dynamic_shapes={"ids": {0: batch, 1: seq}, "mask": {0: batch, 1: seq}},
        )  # fmt: skip
    model = onnx.load(str(path))
    feeds = []
    for b, s in [(1, 1), (2, 9), (1, 33)]:
        mask = np.ones((b, s), np.int64)
        mask[-1, s // 2 + 1 :] = 0
        feeds.append({"ids": rng.integers(0, 100, (b, s)), "mask": mask})
    lib = run_shapes(model, feeds)
    assert lib.native is not None and lib.compiles == 1, lib.refused


# --- single converters on dynamic dimensions --------------------------------------------


def model_of(nodes, inputs, inits=(), opset=17) -> onnx.ModelProto:
    """A graph of `nodes` with float inputs {name: dims} and one float output `y`."""
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, d) for n, d in inputs.items()],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in dict(inits).items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def shape_entry(node_prefix: str, source: str, axis: int, out: str) -> list[onnx.NodeProto]:
    """`out` = [Shape(source)[axis]] (what exporters emit for a dimension)."""
    return [
        helper.make_node("Shape", [source], [f"{node_prefix}_shape"]),
        helper.make_node("Gather", [f"{node_prefix}_shape", f"{node_prefix}_axis"], [out]),
    ]


def inputs_of(shapes: list[tuple[int, ...]]) -> list[dict[str, np.ndarray]]:
    return [{"x": rng.standard_normal(s).astype(np.float32)} for s in shapes]


def test_range_up_to_a_dynamic_dimension():
    """arange(n) + x, n the length of x: a Range whose limit is a symbol."""
    nodes = [
        *shape_entry("n", "x", 0, "n"),
        helper.make_node("Range", ["zero", "n", "one"], ["r"]),
        helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["x", "rf"], ["y"]),
    ]
    inits = {"n_axis": np.array(0), "zero": np.array(0), "one": np.array(1)}
    lib = run_shapes(model_of(nodes, {"x": ["n"]}, inits), inputs_of([(1,), (5,), (12,)]))
    assert lib.compiles == 1


def test_dimension_values_at_run_time():
    """The shape of a dynamic tensor as an output, and a dimension scaling a tensor."""
    nodes = [
        helper.make_node("Shape", ["x"], ["y"]),
        *shape_entry("n", "x", 1, "n"),
        helper.make_node("Cast", ["x"], ["xi"], to=TensorProto.INT64),
        helper.make_node("Mul", ["xi", "n"], ["z"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["m", "n"])],
        [helper.make_tensor_value_info(n, TensorProto.INT64, None) for n in "yz"],
        [numpy_helper.from_array(np.array(1), "n_axis")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    run_shapes(model, inputs_of([(2, 3), (4, 1)]))


def test_slice_of_a_constant_up_to_a_dynamic_dimension_bounds_the_symbol():
    """table[:seq] (position ids): seq is taken to fit, and a longer seq is refused."""
    nodes = [
        *shape_entry("s", "x", 1, "seq"),
        helper.make_node("Unsqueeze", ["seq", "zero_axis"], ["end"]),
        helper.make_node("Slice", ["table", "start", "end", "one_axis"], ["rows"]),
        helper.make_node("Add", ["x", "rows"], ["y"]),
    ]
    inits = {
        "s_axis": np.array(1),
        "zero_axis": np.array([0]),
        "one_axis": np.array([1]),
        "start": np.array([0]),
        "table": rng.standard_normal((1, 32)).astype(np.float32),
    }
    model = model_of(nodes, {"x": ["batch", "seq"]}, inits)
    lib = run_shapes(model, inputs_of([(2, 1), (3, 9), (1, 32)]))
    with pytest.raises(xrelay.Error, match=r"outside the range \[1, 32\]"):
        lib.run(x=np.zeros((1, 33), np.float32))


@pytest.mark.parametrize(
    "starts,ends,steps",
    [([1], [-1], [1]), ([-3], [2**62], [1]), ([2**62], [-(2**62)], [-1]), ([0], [2**62], [2])],
    ids=["inner", "tail", "reversed", "strided"],
)
def test_slice_along_a_dynamic_axis(starts, ends, steps):
    nodes = [helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])]
    inits = {"starts": starts, "ends": ends, "axes": [1], "steps": steps}
    model = model_of(nodes, {"x": [2, "n"]}, {k: np.array(v) for k, v in inits.items()})
    run_shapes(model, inputs_of([(2, 1), (2, 2), (2, 8)]))  # empty, one, many


def test_tile_by_a_dynamic_dimension_and_expand():
    """x [n, 2] tiled [1, n] times, then broadcast against [n, 1]."""
    nodes = [
        *shape_entry("n", "x", 0, "n"),
        helper.make_node("Concat", ["one", "n1"], ["reps"], axis=0),
        helper.make_node("Unsqueeze", ["n", "zero_axis"], ["n1"]),
        helper.make_node("Tile", ["x", "reps"], ["t"]),
        helper.make_node("Concat", ["n1", "one"], ["col"], axis=0),
        helper.make_node("Expand", ["x0", "col"], ["e"]),
        helper.make_node("Add", ["t", "e"], ["y"]),
    ]
    nodes.insert(2, nodes.pop(3))  # Unsqueeze before its use
    inits = {"n_axis": np.array(0), "one": np.array([1]), "zero_axis": np.array([0])}
    inits["x0"] = np.float32(0.5)
    model = model_of(nodes, {"x": ["n", 2]}, inits)
    run_shapes(model, inputs_of([(1, 2), (3, 2)]))


@pytest.mark.parametrize(
    "node,opset",
    [
        (helper.make_node("CumSum", ["x", "axis"], ["y"], exclusive=1), 17),
        (helper.make_node("Trilu", ["x", "k"], ["y"], upper=0), 17),
        (helper.make_node("Hardmax", ["x"], ["y"], axis=1), 17),
        (helper.make_node("EyeLike", ["x"], ["y"], k=1), 17),
    ],
    ids=["cumsum", "trilu", "hardmax", "eyelike"],
)
def test_index_masks_along_dynamic_axes(node, opset):
    inits = {"axis": np.array(1), "k": np.array(1)}
    used = {k: v for k, v in inits.items() if k in node.input}
    model = model_of([node], {"x": ["m", "n"]}, used, opset)
    run_shapes(model, inputs_of([(2, 3), (4, 1)]))


def test_causal_attention_over_a_dynamic_sequence():
    """Opset-23 Attention, causal, with a dynamic sequence length (the mask is built at
    run time)."""
    node = helper.make_node(
        "Attention", ["q", "k", "v"], ["y"], is_causal=1, q_num_heads=2, kv_num_heads=2
    )
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, "s", 8]) for n in "qkv"],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    feeds = [{n: rng.standard_normal((1, s, 8)).astype(np.float32) for n in "qkv"} for s in (1, 5)]
    try:
        session(model)
    except Exception:  # noqa: BLE001 - an onnxruntime without opset-23 Attention
        pytest.skip("onnxruntime does not run opset-23 Attention")
    run_shapes(model, feeds)


@pytest.mark.parametrize(
    "nodes,inits,message",
    [
        (
            [helper.make_node("Split", ["x"], ["y", "z"], axis=1, num_outputs=2)],
            {},
            r"Split along a dynamic axis with dynamic dimensions \[n\]",
        ),
        (
            [helper.make_node("Squeeze", ["x"], ["y"])],
            {},
            r"Squeeze without axes of input 0 \('x'\) with dynamic dimensions \[2, n\]",
        ),
        (
            [helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest")],
            {"scales": np.array([1.0, 2.0], np.float32)},
            r"Resize of a dynamic axis \(n\) by 2.0",
        ),
        (
            [
                *shape_entry("n", "x", 1, "n"),
                helper.make_node("Cast", ["n"], ["nf"], to=TensorProto.FLOAT),
                helper.make_node("Mul", ["x", "nf"], ["y"]),
            ],
            {"n_axis": np.array(1)},
            r"'Cast_2' \(Cast\): computes with dynamic dimensions",
        ),
    ],
    ids=["split", "squeeze", "resize", "float-cast"],
)
def test_dynamic_dimensions_a_converter_cannot_take_are_refused(nodes, inits, message):
    model = model_of(nodes, {"x": [2, "n"]}, inits, opset=18)
    with pytest.raises(xrelay.Error, match=message):
        xrelay.from_onnx(model)
