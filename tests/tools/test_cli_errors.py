"""Command-line tools never print a traceback: any failure is one line on stderr and exit
status 1 (`--traceback` / XRELAY_TRACEBACK=1 shows it), and a run whose output cannot be
written fails before compiling."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import xrelay

EXAMPLE = Path(xrelay.__file__).parent / "examples" / "cnn.onnx"


def tool(module: str, *argv: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", module, *argv],
        check=False, capture_output=True, text=True,
        env={**os.environ, "XRELAY_CACHE_DIR": "off", **env},
    )  # fmt: skip


def one_line_error(done: subprocess.CompletedProcess, prog: str, message: str) -> None:
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: error:"), done.stderr
    assert message in lines[0], lines[0]


def test_opt_on_hostile_files(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_bytes(b"\xff\xfe\x00 func.func")
    one_line_error(tool("xrelay.tools.opt", str(bad)), "xrelay-opt", "not UTF-8")
    deep = tmp_path / "deep.mlir"
    deep.write_text("func.func @f() {" + "(" * 100_000 + "}")
    done = tool("xrelay.tools.opt", str(deep))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) <= 2  # the location line, and its caret
    huge = tmp_path / "huge.mlir"
    huge.write_text(
        "func.func @f() -> tensor<1099511627776xf32> {\n"
        "  %0 = relay.constant dense<1.0> : tensor<1099511627776xf32>\n"
        "  func.return %0 : tensor<1099511627776xf32>\n}\n"
    )
    done = tool("xrelay.tools.opt", str(huge))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr


def test_opt_on_malformed_string_literals(tmp_path):
    """An unclosed string literal or a bad escape after a long run of characters: xDSL's
    lexer regex backtracked exponentially on them (the fuzzing tier's seed 7 found it; 40
    characters did not finish in minutes). A one-line error naming the position now."""
    for text, message in [
        ('"test.op"() {a = "' + "a" * 60 + "\n", "1:18: error: string literal is not closed"),
        ('"test.op"() {a = "' + "a" * 60 + '\\q"} : () -> ()', "1:79: error: invalid escape"),
    ]:
        path = tmp_path / "bad.mlir"
        path.write_text(text)
        done = subprocess.run(
            [sys.executable, "-m", "xrelay.tools.opt", str(path)],
            check=False, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 1, done.stderr
        lines = done.stderr.strip().splitlines()  # file:line:col: error: ... (no traceback)
        assert len(lines) == 1 and lines[0].startswith(str(path)) and message in lines[0]
    # escapes the grammar allows, and quotes inside comments, still parse
    ok = '// a "quote\n"test.op"() {a = "x\\n\\t\\"\\\\\\4F"} : () -> ()\n'
    xrelay.parse_module(ok)


def test_traceback_on_request(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_bytes(b"\xff\xfe")
    done = tool("xrelay.tools.opt", str(bad), XRELAY_TRACEBACK="1")
    assert done.returncode == 1 and "Traceback" in done.stderr


def test_run_checks_the_output_folder_before_compiling(tmp_path):
    done = tool(
        "xrelay.tools.cli", "run", str(EXAMPLE), "--output", str(tmp_path / "no" / "o.npz"),
        XRELAY_TIME_PASSES="1",
    )  # fmt: skip
    one_line_error(done, "xrelay", "its folder does not exist")


def test_inspect_of_a_non_model(tmp_path):
    np.save(tmp_path / "a.npy", np.zeros(2))
    one_line_error(
        tool("xrelay.tools.cli", "inspect", str(tmp_path / "a.npy")), "xrelay", "not a model"
    )
