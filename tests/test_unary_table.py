"""The unary table (relay.UNARY_TABLE) and the ops added through it (tan, log1p, log2, log10,
expm1, trunc): the readers of the table agree with it, the new ops compute what numpy,
onnxruntime and torch compute, and the converter registries refuse a second converter for
an op instead of letting one silently win."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import xrelay
from onnx import TensorProto, helper
from xrelay.dialects import relay
from xrelay.errors import Error
from xrelay.frontends.onnx import registry as onnx_registry
from xrelay.frontends.pytorch import registry as aten_registry
from xrelay.lowering import to_llvm
from xrelay.lowering.relay_to_linalg.elementwise import HAND_WRITTEN_UNARY

MATH_ROWS = [row for row in relay.UNARY_TABLE if row.math is not None]

# --- the table and its readers ---------------------------------------------------------------


@pytest.mark.parametrize("row", MATH_ROWS, ids=lambda row: row.op.name)
def test_math_row_lowers_to_llvm_one_way(row):
    """A row's math op reaches LLVM through exactly one route: libm by the row's names, or
    an instruction, intrinsic or handler of to-llvm (then the row names no libm function)."""
    native = row.math in to_llvm.FLOAT_INTRINSICS or row.math in to_llvm.HANDLERS
    assert native != (row.libm is not None), f"{row.op.name}: {row.math.name} lowers {native=}"
    if row.libm is not None:
        assert to_llvm.LIBM[row.math] == row.libm


@pytest.mark.parametrize("row", MATH_ROWS, ids=lambda row: row.op.name)
def test_math_row_is_float_only(row):
    """Math ops compute floats: an op that accepts integers needs a hand-written body."""
    assert row.op.FLOAT_ONLY, f"{row.op.name} accepts integers but lowers to {row.math.name}"


def test_hand_written_bodies_are_the_rows_without_a_math_op():
    without_math = {row.op for row in relay.UNARY_TABLE if row.math is None}
    assert set(HAND_WRITTEN_UNARY) == without_math


def test_rows_agree_on_a_shared_math_op():
    libm: dict[type, tuple[str, str] | None] = {}
    for row in MATH_ROWS:
        assert libm.setdefault(row.math, row.libm) == row.libm, row.math.name


# --- the new ops, numerically ----------------------------------------------------------------

rng = np.random.default_rng(0)

# op -> (numpy function, inputs in its domain); the inputs near 0 tell log1p and expm1 from
# log(1 + x) and exp(x) - 1, which lose every digit there in float32
NEW_OPS = {
    "tan": (np.tan, rng.uniform(-1.5, 1.5, (3, 7))),
    "log1p": (np.log1p, np.concatenate([rng.uniform(-0.99, 3.0, 18), [1e-7, -3e-8, 0.0]])),
    "log2": (np.log2, np.concatenate([rng.uniform(1e-3, 100.0, 19), [1.0, 1024.0]])),
    "log10": (np.log10, np.concatenate([rng.uniform(1e-3, 100.0, 19), [1.0, 1000.0]])),
    "expm1": (np.expm1, np.concatenate([rng.uniform(-3.0, 3.0, 18), [1e-7, -3e-8, 0.0]])),
    "trunc": (np.trunc, np.concatenate([rng.uniform(-5.0, 5.0, 17), [-2.5, -0.5, 0.5, 2.0]])),
}


def unary_module(name: str, shape: tuple[int, ...], elem: str):
    t = f"tensor<{'x'.join(map(str, shape))}x{elem}>"
    return xrelay.parse_module(
        f"func.func @main(%x: {t}) -> {t} {{\n"
        f"  %0 = relay.{name} %x : ({t}) -> {t}\n"
        f"  func.return %0 : {t}\n"
        "}"
    )


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("name", list(NEW_OPS))
def test_new_op_jit_and_reference_match_numpy(name, dtype):
    fn, values = NEW_OPS[name]
    x = values.astype(dtype)
    module = unary_module(name, x.shape, {"float32": "f32", "float64": "f64"}.get(dtype, "f16"))
    want = fn(x.astype(np.float64)).astype(dtype)
    rtol = {"float32": 1e-6, "float64": 1e-12, "float16": 1e-3}[dtype]
    (got,) = xrelay.build(module).run(x)
    (ref,) = xrelay.create_executor("debug", module).run(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0)
    np.testing.assert_allclose(ref, want, rtol=rtol, atol=0)


@pytest.mark.parametrize("row", MATH_ROWS, ids=lambda row: row.op.name)
def test_math_row_on_f32_and_f64_in_one_module(row):
    """Regression: an intrinsic used on f32 and f64 in one module was declared once, untyped,
    and the second use failed to build ("Type of #1 arg mismatch: float != double")."""
    name = row.op.name.removeprefix("relay.")
    text = (
        "func.func @main(%a: tensor<5xf32>, %b: tensor<5xf64>) -> (tensor<5xf32>, tensor<5xf64>) {\n"
        f"  %0 = relay.{name} %a : (tensor<5xf32>) -> tensor<5xf32>\n"
        f"  %1 = relay.{name} %b : (tensor<5xf64>) -> tensor<5xf64>\n"
        "  func.return %0, %1 : tensor<5xf32>, tensor<5xf64>\n"
        "}"
    )
    module = xrelay.parse_module(text)
    a = np.linspace(0.1, 0.9, 5).astype(np.float32)
    got = xrelay.build(module).run(a=a, b=a.astype(np.float64))
    want = xrelay.create_executor("debug", module).run(a=a, b=a.astype(np.float64))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


def test_power_on_f32_and_f64_in_one_module():
    """The binary intrinsic (llvm.pow) had the same untyped declaration."""
    module = xrelay.parse_module(
        "func.func @main(%a: tensor<3xf32>, %b: tensor<3xf64>) -> (tensor<3xf32>, tensor<3xf64>) {\n"
        "  %0 = relay.power %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n"
        "  %1 = relay.power %b, %b : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>\n"
        "  func.return %0, %1 : tensor<3xf32>, tensor<3xf64>\n"
        "}"
    )
    a = np.array([1.5, 2.0, 3.0], np.float32)
    got = xrelay.build(module).run(a=a, b=a.astype(np.float64))
    np.testing.assert_allclose(got[0], a**a, rtol=1e-6)
    np.testing.assert_allclose(got[1], a.astype(np.float64) ** a, rtol=1e-12)


def onnx_tan_model(opset: int) -> onnx.ModelProto:
    node = helper.make_node("Tan", ["x"], ["y"], name="tan")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 7])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("opset", [7, 13, 22])
def test_onnx_tan_imports_as_relay_tan_and_matches_onnxruntime(opset):
    ort = pytest.importorskip("onnxruntime")
    model = onnx_tan_model(opset)
    module, params = xrelay.from_onnx(model)
    ops = [op.name for op in module.walk() if op.name.startswith("relay.")]
    assert ops == ["relay.tan"]  # not the old sin / cos composite
    x = NEW_OPS["tan"][1].astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"x": x})
    (got,) = xrelay.build(module, params=params).run(x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)


TORCH_CASES = {
    "tan": lambda torch: torch.tan,
    "log1p": lambda torch: torch.log1p,
    "log2": lambda torch: torch.log2,
    "log10": lambda torch: torch.log10,
    "expm1": lambda torch: torch.expm1,
    "trunc": lambda torch: torch.trunc,
    "fix": lambda torch: torch.fix,
}


@pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning")
@pytest.mark.parametrize("path", ["exported", "traced"])
@pytest.mark.parametrize("name", list(TORCH_CASES))
def test_pytorch_op_matches_torch(name, path):
    torch = pytest.importorskip("torch")
    fn = TORCH_CASES[name](torch)

    class Fn(torch.nn.Module):
        def forward(self, x):
            return fn(x)

    source = "trunc" if name == "fix" else name
    x = torch.from_numpy(NEW_OPS[source][1].astype(np.float32))
    model = Fn().eval()
    with torch.no_grad():
        want = model(x).numpy()
    if path == "exported":
        module, params = xrelay.from_exported_program(torch.export.export(model, (x,)))
    else:
        traced = torch.jit.trace(model, (x,))
        module, params = xrelay.from_pytorch(traced, [("x", (tuple(x.shape), "float32"))])
    (got,) = xrelay.build(module, params=params).run(x.numpy())
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)


def test_pytorch_float_unary_promotes_integers():
    torch = pytest.importorskip("torch")

    class Fn(torch.nn.Module):
        def forward(self, x):
            return torch.log2(x)

    x = torch.arange(1, 9, dtype=torch.int64)
    module, params = xrelay.from_exported_program(torch.export.export(Fn(), (x,)))
    (got,) = xrelay.build(module, params=params).run(x.numpy())
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, torch.log2(x).numpy(), rtol=1e-6)


# --- registries refuse a second converter ---------------------------------------------------


@pytest.fixture
def onnx_converters(monkeypatch):
    """The ONNX registry on a copy of its table, so registrations here do not leak."""
    table = {key: list(entries) for key, entries in onnx_registry.CONVERTERS.items()}
    monkeypatch.setattr(onnx_registry, "CONVERTERS", table)
    return table


@pytest.fixture
def aten_converters(monkeypatch):
    table = dict(aten_registry.CONVERTERS)
    monkeypatch.setattr(aten_registry, "CONVERTERS", table)
    return table


def probe(b):
    return None


def other_probe(b):
    return None


def test_onnx_second_converter_for_the_same_since_raises(onnx_converters):
    onnx_registry.onnx_op("Probe", since=3, domain="test.domain")(probe)
    with pytest.raises(
        Error,
        match=r"two converters for ONNX test\.domain\.Probe from opset 3: "
        r".*\.probe \(since=3\) and .*\.other_probe \(since=3\); remove one",
    ):
        onnx_registry.onnx_op("Probe", since=3, domain="test.domain")(other_probe)
    assert onnx_registry.lookup("Probe", 5, "test.domain") is probe


def test_onnx_default_domain_aliases_claim_the_same_op(onnx_converters):
    onnx_registry.onnx_op("Probe", since=1)(probe)
    with pytest.raises(Error, match=r"two converters for ONNX Probe from opset 1"):
        onnx_registry.onnx_op("Probe", since=1, domain="ai.onnx")(other_probe)


def test_onnx_since_below_the_ops_introduction_claims_its_first_version(onnx_converters):
    """The case of the issue: the table registers Tan (since 1); a composite registered
    "since 7", the version that introduced Tan, would have won for every model."""
    assert onnx_registry.lookup("Tan", 7).__name__ == "_unary"
    with pytest.raises(Error, match=r"two converters for ONNX Tan from opset 7: .*_unary"):
        onnx_registry.onnx_op("Tan", since=7)(other_probe)


def test_onnx_later_versions_of_an_op_may_have_their_own_converter(onnx_converters):
    onnx_registry.onnx_op("Probe", since=1, domain="test.domain")(probe)
    onnx_registry.onnx_op("Probe", since=9, domain="test.domain")(other_probe)
    assert onnx_registry.lookup("Probe", 8, "test.domain") is probe
    assert onnx_registry.lookup("Probe", 9, "test.domain") is other_probe


def test_aten_second_converter_for_a_name_raises(aten_converters):
    with pytest.raises(
        Error,
        match=r"two converters for aten::tan: .*\.float_unary and .*\.other_probe; remove one",
    ):
        aten_registry.aten_op("probe_op", "tan")(other_probe)
    assert aten_registry.lookup("aten::probe_op") is None  # all names or none
    aten_registry.aten_op("probe_op")(probe)
    with pytest.raises(Error, match=r"two converters for aten::probe_op"):
        aten_registry.aten_op("probe_op")(other_probe)
    assert aten_registry.lookup("aten::probe_op") is probe
