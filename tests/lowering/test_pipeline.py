"""One pipeline: `xrelay-opt -p lower-to-llvm -t llvm` prints the LLVM IR `xrelay.build`
compiles, and the pipeline stops after and resumes at every stage through the textual form."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest
import xrelay
from xrelay.dialects import relay
from xrelay.dialects.kernel import GemmAttr, GemmSpec, PackAttr, PackSpec
from xrelay.ir import make_context, parse_module
from xrelay.lowering.pipeline import STAGE_NAMES, lower
from xrelay.tools.opt import main as opt_main

ROOT = Path(__file__).resolve().parents[2]
# the module, not the function `xrelay.lowering.build` that the package re-exports
build_module = importlib.import_module("xrelay.lowering.build")

# f32 remainder lowers to arith.remf, an op xDSL's arith dialect lacks
REMAINDER = """
func.func @main(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %r = relay.floor_mod %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %m = relay.mod %r, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %m : tensor<4x8xf32>
}
"""


def imported_cnn() -> str:
    mod, _ = xrelay.from_onnx(ROOT / "examples" / "cnn.onnx")
    return str(mod)


def opt(tmp_path: Path, text: str, *argv: str) -> str:
    src, out = tmp_path / "in.mlir", tmp_path / "out.txt"
    src.write_text(text)
    opt_main([str(src), "-o", str(out), *argv])
    return out.read_text()


def build_ir(text: str, monkeypatch: pytest.MonkeyPatch, params=None) -> str:
    """The LLVM IR xrelay.build hands to the JIT for this module."""
    seen: list[str] = []
    original = build_module.llvm_module

    def capture(module):
        native = original(module)
        seen.append(str(native))
        return native

    monkeypatch.setattr(build_module, "llvm_module", capture)
    mod = parse_module(text)
    if params is None:
        _, params = xrelay.from_onnx(ROOT / "examples" / "cnn.onnx")
    xrelay.build(mod, params)
    assert len(seen) == 1
    return seen[0]


@pytest.mark.parametrize("model", ["cnn", "remainder"])
def test_opt_prints_what_build_compiles(model, tmp_path, monkeypatch):
    text = imported_cnn() if model == "cnn" else REMAINDER
    printed = opt(tmp_path, text, "-p", "lower-to-llvm", "-t", "llvm")
    compiled = build_ir(text, monkeypatch, params=None if model == "cnn" else {})
    assert printed.strip() == compiled.strip()
    if model == "cnn":  # the runtime GEMM and the arena are defined, not left undefined
        assert "define" in printed and "@xr_sgemm(" in printed
        assert "declare void @xr_sgemm" not in printed


@pytest.mark.parametrize("model", ["cnn", "remainder"])
def test_every_stage_stops_and_resumes_through_text(model, tmp_path):
    text = imported_cnn() if model == "cnn" else REMAINDER
    whole = opt(tmp_path, text, "-p", "lower-to-llvm", "-t", "llvm")
    for stage in STAGE_NAMES[:-1]:
        middle = opt(tmp_path, text, "-p", f"lower-to-llvm{{stop-after={stage}}}")
        rest = opt(tmp_path, middle, "-p", f"lower-to-llvm{{start-after={stage}}}", "-t", "llvm")
        assert rest == whole, f"resuming after {stage} changes the result"


def test_every_stage_is_a_registered_pass():
    from xdsl.universe import Universe

    passes = Universe.get_multiverse().all_passes  # xDSL's and xrelay's (the entry point)
    for stage in STAGE_NAMES:
        assert stage in passes, stage
    assert passes["select-kernels"]().name == "select-kernels"


def test_stage_options_parse_and_apply(tmp_path):
    text = imported_cnn()
    with_gemm = opt(tmp_path, text, "-p", "lower-to-llvm{stop-after=select-kernels}")
    without = opt(
        tmp_path, text, "-p", "inline-calls,select-kernels{enabled=false},prepack-weights"
    )
    assert "#kernel.gemm" in with_gemm
    assert "#kernel.gemm" not in without and "relay.nn.conv2d" in without


def test_kernel_attributes_round_trip():
    spec = GemmSpec(m=6, n=16, k=3, rsa=3, csa=1, batch=((2, 0, 5, 6, 0),), relu=True)
    pack = PackSpec(source="w.0", operand="b", rows=16, k=3, transpose=True)
    ctx = make_context()
    for attr in (GemmAttr(spec), PackAttr(pack)):
        module = parse_module(f'"test.op"() {{a = {attr}}} : () -> ()', ctx=ctx)
        assert next(iter(module.ops)).attributes["a"] == attr
    with pytest.raises(xrelay.Error, match="unexpected or repeated field 'q'"):
        parse_module('"test.op"() {a = #kernel.gemm<q = 1>} : () -> ()', ctx=ctx)


def test_unknown_stage_is_an_error():
    mod = parse_module(REMAINDER)
    with pytest.raises(xrelay.Error, match="unknown stage 'bufferise'"):
        lower(mod, stop_after="bufferise")


def test_a_function_runs_after_its_stage():
    """`after` (build: runtime_ahead after prepack-weights) sees the module as that stage
    left it, once; an unknown stage is an error."""
    mod = parse_module(REMAINDER)
    seen = []
    lower(mod, stop_after="bufferize", after={"relay-to-linalg": lambda m: seen.append(str(m))})
    assert len(seen) == 1 and "linalg.generic" in seen[0] and " relay." not in seen[0]
    with pytest.raises(xrelay.Error, match="unknown stage 'prepack'"):
        lower(parse_module(REMAINDER), after={"prepack": print})


def test_build_without_kernels_matches_with_kernels():
    mod, params = xrelay.from_onnx(ROOT / "examples" / "cnn.onnx")
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    name = xrelay.build(mod, params).signature.inputs[0].name
    with_gemm = xrelay.build(mod, params).run(**{name: x})[0]
    plain = xrelay.build(mod, params, kernels=False).run(**{name: x})[0]
    np.testing.assert_allclose(with_gemm, plain, rtol=1e-5, atol=1e-6)


def test_relay_module_is_unchanged_by_build():
    mod = parse_module(REMAINDER)
    before = str(mod)
    xrelay.build(mod)
    assert str(mod) == before
    assert any(isinstance(op, relay.FloorModOp) for op in mod.walk())


def test_llvm_target_on_unlowered_ir_is_one_line(tmp_path, capsys):
    src = tmp_path / "in.mlir"
    src.write_text(REMAINDER)
    with pytest.raises(SystemExit) as exit_info:
        opt_main([str(src), "-t", "llvm"])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert err.strip() == (
        "cannot translate to LLVM IR (run lower-to-llvm first): "
        "Conversion not implemented for op: func.func"
    )


@pytest.mark.parametrize("each", [False, True])
def test_invalid_ir_from_a_stage_is_reported(monkeypatch, each):
    """A build verifies once, after the last stage; XRELAY_VERIFY_EACH=1 verifies after
    every stage and names the first whose output is invalid."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import FunctionType
    from xdsl.passes import ModulePass
    from xrelay.lowering import pipeline

    class Break(ModulePass):  # main's type says it returns nothing: its return disagrees
        name = "break"

        def apply(self, ctx, op):
            for f in op.walk():
                if isinstance(f, func.FuncOp) and f.sym_name.data == "main":
                    f.function_type = FunctionType.from_lists(f.function_type.inputs.data, [])

    stages = list(pipeline.STAGES)
    stages.insert(stages.index(("fuse-elementwise", pipeline.FuseElementwise)), ("break", Break))
    monkeypatch.setattr(pipeline, "STAGES", stages)
    monkeypatch.setattr(pipeline, "STAGE_NAMES", [n for n, _ in stages])
    if each:
        monkeypatch.setenv("XRELAY_VERIFY_EACH", "1")
    module = parse_module(REMAINDER)
    with pytest.raises(xrelay.VerificationError) as info:
        lower(module, stop_after="fuse-elementwise")
    message = str(info.value)
    assert "'func.return' op" in message
    if each:
        assert message.endswith("(after stage 'break')")
    else:
        assert "after stage 'fuse-elementwise'; XRELAY_VERIFY_EACH=1 finds the first" in message
