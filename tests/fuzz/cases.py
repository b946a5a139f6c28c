"""Seeded generators of hostile inputs for the fuzzing tier: malformed ONNX models (small
valid seeds, then one mutation each), mutated textual IR (the lit tests' valid files), and
valid models run on bad inputs (wrong shapes and dtypes, NaN, out-of-range indices).

`generate(count, seed)` -> {case name: payload}. A payload is ("onnx", model bytes, feeds
or None, whether the feeds are the bad part) or ("ir", text). The same seed gives the same
cases.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F, I64 = TensorProto.FLOAT, TensorProto.INT64
FILECHECK = Path(__file__).resolve().parent.parent / "filecheck"


def _model(nodes, inputs, outputs, inits=(), opset=17) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def seeds() -> list[tuple[str, onnx.ModelProto]]:
    """Small valid models covering common ops, indexing ops and attributes."""
    n = helper.make_node
    w = np.random.default_rng(0).standard_normal((4, 3, 3, 3)).astype(np.float32)
    return [
        ("relu", _model([n("Relu", ["x"], ["y"])], [("x", F, [2, 3])], [("y", F, [2, 3])])),
        ("add", _model([n("Add", ["x", "b"], ["y"])], [("x", F, [2, 3]), ("b", F, [3])], [("y", F, [2, 3])])),
        ("softmax", _model([n("Softmax", ["x"], ["y"], axis=1)], [("x", F, [2, 5])], [("y", F, [2, 5])])),
        ("conv", _model([n("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
                        [("x", F, [1, 3, 6, 6])], [("y", F, [1, 4, 6, 6])], [("w", w)])),
        ("matmul", _model([n("MatMul", ["x", "m"], ["y"])], [("x", F, [3, 4]), ("m", F, [4, 2])], [("y", F, [3, 2])])),
        ("gather", _model([n("Gather", ["x", "i"], ["y"], axis=0)], [("x", F, [3, 4]), ("i", I64, [2])], [("y", F, [2, 4])])),
        ("gather_elements", _model([n("GatherElements", ["x", "i"], ["y"], axis=1)],
                                   [("x", F, [2, 3]), ("i", I64, [2, 2])], [("y", F, [2, 2])])),
        ("scatter_nd", _model([n("ScatterND", ["x", "i", "u"], ["y"])],
                              [("x", F, [4, 3]), ("i", I64, [2, 1]), ("u", F, [2, 3])], [("y", F, [4, 3])])),
        ("reshape", _model([n("Reshape", ["x", "s"], ["y"])], [("x", F, [2, 6])], [("y", F, [3, 4])],
                           [("s", np.array([3, 4], np.int64))])),
        ("concat", _model([n("Concat", ["x", "z"], ["y"], axis=0)], [("x", F, [2, 3]), ("z", F, [1, 3])], [("y", F, [3, 3])])),
        ("split", _model([n("Split", ["x"], ["a", "b"], axis=1, num_outputs=2)], [("x", F, [2, 4])],
                         [("a", F, [2, 2]), ("b", F, [2, 2])], opset=18)),
        ("unsqueeze", _model([n("Unsqueeze", ["x", "a"], ["y"])], [("x", F, [2, 3])], [("y", F, [2, 1, 3])],
                             [("a", np.array([1], np.int64))])),
        ("flatten", _model([n("Flatten", ["x"], ["y"], axis=1)], [("x", F, [2, 3, 4])], [("y", F, [2, 12])])),
        ("transpose", _model([n("Transpose", ["x"], ["y"], perm=[1, 0])], [("x", F, [2, 3])], [("y", F, [3, 2])])),
        ("pad", _model([n("Pad", ["x", "p"], ["y"])], [("x", F, [2, 3])], [("y", F, [4, 5])],
                       [("p", np.array([1, 1, 1, 1], np.int64))])),
        ("slice", _model([n("Slice", ["x", "s", "e"], ["y"])], [("x", F, [4, 5])], [("y", F, [2, 5])],
                         [("s", np.array([1], np.int64)), ("e", np.array([3], np.int64))])),
        ("reduce_sum", _model([n("ReduceSum", ["x", "a"], ["y"], keepdims=0)], [("x", F, [3, 4])], [("y", F, [3])],
                              [("a", np.array([1], np.int64))])),
        ("cast", _model([n("Cast", ["x"], ["y"], to=TensorProto.INT32)], [("x", F, [3])], [("y", TensorProto.INT32, [3])])),
        ("argmax", _model([n("ArgMax", ["x"], ["y"], axis=1, keepdims=0)], [("x", F, [2, 5])], [("y", I64, [2])])),
        ("topk", _model([n("TopK", ["x", "k"], ["v", "i"], axis=1)], [("x", F, [2, 5])],
                        [("v", F, [2, 2]), ("i", I64, [2, 2])], [("k", np.array([2], np.int64))])),
        ("where", _model([n("Where", ["c", "x", "z"], ["y"])],
                         [("c", TensorProto.BOOL, [3]), ("x", F, [3]), ("z", F, [3])], [("y", F, [3])])),
    ]  # fmt: skip


def feeds_for(model: onnx.ModelProto, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Valid random inputs of the declared shapes (indices in range)."""
    inits = {t.name for t in model.graph.initializer}
    out = {}
    for v in model.graph.input:
        if v.name in inits:
            continue
        t = v.type.tensor_type
        shape = [max(d.dim_value, 1) for d in t.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(t.elem_type)
        if dtype == np.bool_:
            out[v.name] = rng.random(shape) < 0.5
        elif np.issubdtype(dtype, np.integer):
            out[v.name] = rng.integers(0, 2, shape).astype(dtype)  # in range of every seed
        else:
            out[v.name] = rng.standard_normal(shape).astype(dtype)
    return out


# --- model mutations (each returns a mutated copy, or bytes) ------------------------------


def _copy(m: onnx.ModelProto) -> onnx.ModelProto:
    return onnx.ModelProto.FromString(m.SerializeToString())


def _node(m, r):
    return r.choice(list(m.graph.node))


def m_attr_value(m, r):
    node = _node(m, r)
    if node.attribute:
        a = r.choice(list(node.attribute))
        value = r.choice([0, -1, 7, 10, 2**31, -(2**40), 3])
        node.attribute.remove(a)
        node.attribute.append(helper.make_attribute(a.name, r.choice([value, float(value) + 0.5])))
    return m


def m_attr_drop(m, r):
    node = _node(m, r)
    if node.attribute:
        node.attribute.remove(r.choice(list(node.attribute)))
    return m


def m_attr_unknown(m, r):
    _node(m, r).attribute.append(helper.make_attribute("bogus_attr", r.randint(0, 5)))
    return m


def m_input_drop(m, r):
    node = _node(m, r)
    if node.input:
        del node.input[-1]
    return m


def m_input_extra(m, r):
    node = _node(m, r)
    node.input.append(node.input[0] if node.input else "x")
    return m


def m_input_undefined(m, r):
    node = _node(m, r)
    if node.input:
        node.input[r.randrange(len(node.input))] = "nowhere"
    return m


def m_output_twice(m, r):
    node = _node(m, r)
    m.graph.node.append(helper.make_node("Identity", [node.input[0]], [node.output[0]]))
    return m


def m_output_extra(m, r):
    _node(m, r).output.append("extra_out")
    return m


def m_dims(m, r):
    inputs = [v for v in m.graph.input if v.type.tensor_type.shape.dim]
    if inputs:
        dims = r.choice(inputs).type.tensor_type.shape.dim
        dims[r.randrange(len(dims))].dim_value = r.choice([0, -3, 2**40, 1, 9])
    return m


def m_rank(m, r):
    if m.graph.input:
        dims = m.graph.input[0].type.tensor_type.shape.dim
        if r.random() < 0.5 and dims:
            del dims[-1]
        else:
            dims.add().dim_value = 2
    return m


def m_elem_type(m, r):
    if m.graph.input:
        m.graph.input[r.randrange(len(m.graph.input))].type.tensor_type.elem_type = r.choice(
            [0, 999, TensorProto.STRING, TensorProto.COMPLEX64, TensorProto.DOUBLE]
        )
    return m


def m_initializer(m, r):
    if m.graph.initializer:
        t = r.choice(list(m.graph.initializer))
        choice = r.randrange(3)
        if choice == 0 and t.raw_data:
            t.raw_data = t.raw_data[: len(t.raw_data) // 2]
        elif choice == 1 and t.dims:
            t.dims[0] = -2
        else:
            t.data_type = 999
    return m


def m_opset(m, r):
    m.opset_import[0].version = r.choice([0, 1, 5, 99, 10**6])
    return m


def m_no_graph(m, r):
    m.ClearField("graph")
    return m


def m_op_type(m, r):
    _node(m, r).op_type = r.choice(["Relu", "NoSuchOp", "Conv", "Gemm", "", "relu"])
    return m


MODEL_MUTATIONS: list[Callable] = [
    m_attr_value, m_attr_drop, m_attr_unknown, m_input_drop, m_input_extra, m_input_undefined,
    m_output_twice, m_output_extra, m_dims, m_rank, m_elem_type, m_initializer, m_opset,
    m_no_graph, m_op_type,
]  # fmt: skip


def byte_mutation(data: bytes, r: random.Random) -> bytes:
    if r.random() < 0.5:
        return data[: r.randrange(len(data))]
    out = bytearray(data)
    for _ in range(r.randint(1, 4)):
        out[r.randrange(len(out))] = r.randrange(256)
    return bytes(out)


# --- bad run-time inputs ------------------------------------------------------------------


def bad_feeds(model: onnx.ModelProto, r: random.Random, rng) -> dict[str, np.ndarray]:
    feeds = feeds_for(model, rng)
    name = r.choice(list(feeds))
    x = feeds[name]
    kind = r.randrange(5)
    if kind == 0:
        feeds[name] = np.zeros((*x.shape, 2), x.dtype)  # rank
    elif kind == 1:
        feeds[name] = x.astype(np.float64 if x.dtype != np.float64 else np.float32)  # dtype
    elif kind == 2 and x.dtype.kind == "f":
        y = x.copy()
        y.flat[0] = r.choice([np.nan, np.inf, -np.inf])
        feeds[name] = y  # non-finite data: a value, not an error
    elif kind == 3 and x.dtype.kind == "i":
        y = x.copy()
        y.flat[0] = r.choice([5, -10, 9, 2**40])
        feeds[name] = y  # indices out of range
    else:
        feeds[name] = np.zeros(tuple(d + 1 for d in x.shape), x.dtype)  # shape
    return feeds


# --- textual IR mutations -----------------------------------------------------------------


def ir_seeds() -> list[str]:
    files = sorted((FILECHECK / "dialects").rglob("*.mlir"))
    texts = []
    for f in files:
        if "invalid" in f.name:
            continue
        body = "\n".join(
            line for line in f.read_text().splitlines() if not line.lstrip().startswith("//")
        )
        texts += [part for part in body.split("// -----") if "func.func" in part]
    return texts


def ir_mutation(text: str, r: random.Random) -> str:
    kind = r.randrange(6)
    if kind == 0:
        return text[: r.randrange(len(text))]
    if kind == 1:  # drop a token
        tokens = text.split(" ")
        del tokens[r.randrange(len(tokens))]
        return " ".join(tokens)
    if kind == 2:  # a character changed
        i = r.randrange(len(text))
        return text[:i] + r.choice("%@:<>(){}[]x0-9,=\"'\\\xff") + text[i + 1 :]
    if kind == 3:  # a misspelled attribute or a wrong number
        return text.replace("axis", "axsi", 1) if r.random() < 0.5 else text.replace("2", "-7", 1)
    if kind == 4:  # deep nesting
        return text + "\n" + "(" * r.choice([100, 5000, 100000])
    lines = text.splitlines()
    i = r.randrange(len(lines))
    lines.insert(i, lines[r.randrange(len(lines))])  # a duplicated line
    return "\n".join(lines)


def generate(count: int, seed: int = 0) -> dict[str, tuple]:
    """`count` cases: about half malformed models, a quarter bad inputs, a quarter IR."""
    r = random.Random(seed)
    rng = np.random.default_rng(seed)
    models = seeds()
    texts = ir_seeds()
    cases: dict[str, tuple] = {}
    for k in range(count):
        name, model = models[k % len(models)]
        roll = r.random()
        if roll < 0.45:
            mutation = r.choice(MODEL_MUTATIONS)
            mutated = mutation(_copy(model), r)
            payload = ("onnx", mutated.SerializeToString(), feeds_for(model, rng), False)
            cases[f"{k:04d}_{name}_{mutation.__name__}"] = payload
        elif roll < 0.55:
            payload = ("onnx", byte_mutation(model.SerializeToString(), r), None, False)
            cases[f"{k:04d}_{name}_bytes"] = payload
        elif roll < 0.75:
            feeds = bad_feeds(model, r, rng)
            cases[f"{k:04d}_{name}_feeds"] = ("onnx", model.SerializeToString(), feeds, True)
        else:
            cases[f"{k:04d}_ir"] = ("ir", ir_mutation(r.choice(texts), r))
    return cases
