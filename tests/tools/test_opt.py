"""`xrelay-opt` and `xdsl-opt` on the dialect test files: round trips and diagnostics."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import xrelay

ROOT = Path(__file__).resolve().parents[2]
DIALECT_FILES = sorted(
    p
    for p in (ROOT / "tests" / "filecheck" / "dialects").rglob("*.mlir")
    if "invalid" not in p.name
)


def opt(
    *argv: str, stdin: str | None = None, tool: str = "xrelay.tools.opt"
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", tool, *argv],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def xdsl_opt(*argv: str) -> subprocess.CompletedProcess:
    code = "from xdsl.tools.xdsl_opt import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("path", DIALECT_FILES, ids=lambda p: p.name)
def test_custom_generic_custom_is_a_fixpoint(path: Path):
    custom = opt(str(path))
    assert custom.returncode == 0, custom.stderr
    generic = opt("--print-op-generic", stdin=custom.stdout)
    assert generic.returncode == 0, generic.stderr
    assert f'"{path.parent.name}.' in generic.stdout  # the dialect of the file's folder
    back = opt(stdin=generic.stdout)
    assert back.returncode == 0, back.stderr
    assert back.stdout == custom.stdout


@pytest.mark.parametrize("path", DIALECT_FILES, ids=lambda p: p.name)
def test_plain_xdsl_opt_parses_through_the_entry_point(path: Path):
    result = xdsl_opt(str(path))
    assert result.returncode == 0, result.stderr
    assert result.stdout == opt(str(path)).stdout


BAD = """func.func @f(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  %0 = relay.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
"""


def test_invalid_ir_is_one_line_with_location_and_exit_1(tmp_path: Path):
    path = tmp_path / "bad.mlir"
    path.write_text(BAD)
    result = opt(str(path))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"{path}:2:3: error: 'relay.add' op operand shapes are not broadcastable: "
        "tensor<2x3xf32>, tensor<4xf32>"
    ]


def test_verify_diagnostics_prints_to_stdout_and_exits_0(tmp_path: Path):
    path = tmp_path / "bad.mlir"
    path.write_text(BAD)
    result = opt(str(path), "--verify-diagnostics")
    assert result.returncode == 0
    assert "not broadcastable" in result.stdout


def test_syntax_error_is_located(tmp_path: Path):
    path = tmp_path / "syntax.mlir"
    path.write_text("func.func @f() {\n  %0 = relay.nosuchop : () -> ()\n  func.return\n}\n")
    result = opt(str(path))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith(f"{path}:2:")
    assert "relay.nosuchop is not registered" in result.stderr


def test_an_attribute_xdsl_cannot_represent_is_located():
    """Found by fuzzing: `array<i69: ...>` made xDSL raise NotImplementedError."""
    text = (
        "func.func @f(%x: tensor<1x4x9x9xf32>, %w: tensor<4x2x3x3xf32>) {\n"
        "  %t = relay.nn.conv2d_transpose %x, %w {output_padding = array<i69: 1, 1>} : "
        "(tensor<1x4x9x9xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x11x11xf32>\n"
        "  func.return\n}\n"
    )
    with pytest.raises(xrelay.ParseError, match=r"<string>:2:3: error: cannot represent"):
        xrelay.parse_module(text)


def test_a_bad_first_character_is_located():
    """Found by fuzzing (seed 12): xDSL's parser reads the first token as it is made,
    outside the `try` that turned its ParseError into ours."""
    text = "'func.func @f() {\n  func.return\n}\n"
    with pytest.raises(xrelay.ParseError, match=r"<string>:1:1: error: Unexpected character"):
        xrelay.parse_module(text)


def test_output_file_and_unknown_pass(tmp_path: Path):
    src = DIALECT_FILES[0]
    out = tmp_path / "out.mlir"
    result = opt(str(src), "-o", str(out))
    assert result.returncode == 0 and result.stdout == ""
    assert f"{src.parent.name}." in out.read_text()
    bad_pass = opt(str(src), "-p", "no-such-pass")
    assert bad_pass.returncode == 1
    assert "no-such-pass" in bad_pass.stderr and "Traceback" not in bad_pass.stderr


def test_missing_input_file():
    result = opt("/nonexistent/file.mlir")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "file.mlir" in result.stderr


@pytest.mark.parametrize(
    "pipeline, message",
    [
        ("winograd-convs{vector-width=4}", "winograd-convs: no vector width 4 (8 or 16)"),
        ("prepack-weights{vector-width=4}", "no GEMM micro-kernel for vector width 4 (8 or 16)"),
    ],
)
def test_a_vector_width_no_kernel_has_is_a_user_error(pipeline, message):
    src = Path(__file__).parents[1] / "filecheck" / "lowering" / "emit-runtime-direct.mlir"
    result = opt(str(src), "-p", pipeline)
    assert result.returncode == 1
    assert message in result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
