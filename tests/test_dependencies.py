"""Every third-party module the package imports is a declared dependency or belongs to a
frontend or tool that users opt into (an extra, or a package they bring: torch, tflite,
onnxruntime). A non-editable install has only what pyproject.toml declares: sympy, used
by every model with a dynamic dimension, was missing from it."""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

import xrelay

ROOT = Path(xrelay.__file__).parent
# module -> the distribution that provides it, where the names differ
DISTRIBUTIONS = {"ml_dtypes": "ml_dtypes"}
# imported only by frontends and tools a user opts into (the frontend's docs name them)
OPTIONAL = {"torch", "tflite", "onnxruntime", "setuptools"}
NOT_PACKAGED = {"tests", "bench", "build", "examples"}


def imported_modules() -> dict[str, set[str]]:
    """Top-level third-party module -> the package files that import it."""
    found: dict[str, set[str]] = {}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in NOT_PACKAGED or rel.parts[0].startswith("."):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ("xrelay", "__future__"):
                    found.setdefault(top, set()).add(str(rel))
    return found


def declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = set()
    for spec in project["dependencies"]:
        name = spec.split(";")[0]
        for sep in "=<>!~[ ":
            name = name.split(sep)[0]
        names.add(name.strip().lower().replace("-", "_"))
    return names


def test_every_imported_module_is_declared_or_optional():
    deps = declared()
    missing = {
        module: sorted(files)[:3]
        for module, files in imported_modules().items()
        if DISTRIBUTIONS.get(module, module).lower() not in deps and module not in OPTIONAL
    }
    assert not missing, f"imported but not in pyproject.toml's dependencies: {missing}"
