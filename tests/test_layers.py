"""Imports point one way (DESIGN.md, "Layers"): every import of every source module, including
imports inside functions and under TYPE_CHECKING, read with `ast` and checked against the
layer table below.

    errors, dialects                 <- everything may import these
    ir, signature                    <- everything above dialects (they never import upward)
    reference (the numpy oracle)     <- transforms and frontends, to fold known values
    frontends, transforms            <- never each other
    lowering                         <- never reference: the oracle must not share its code
    tools, universe, relay (the Relay  <- import anything
    API facade), dynamo (torch.compile),
    xrelay/__init__
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE_THE_PACKAGE = {"tests", "bench", "examples", "build", "xrelay.egg-info"}

CORE = {"errors", "dialects", "ir", "signature"}
MAY_IMPORT: dict[str, set[str]] = {
    "errors": {"errors"},
    "dialects": {"errors", "dialects"},
    "ir": {"errors", "dialects", "signature"},
    "signature": {"errors", "dialects", "ir"},
    # The oracle evaluates dialect ops; it knows nothing of how they are imported or lowered.
    "reference": CORE | {"reference"},
    # Folding values known at compile (or import) time evaluates ops with the oracle.
    "transforms": CORE | {"transforms", "reference"},
    "frontends": CORE | {"frontends", "reference"},
    "lowering": CORE | {"transforms", "lowering"},
}


def layer(module: str) -> str | None:
    """The layer of a dotted xrelay module name (`xrelay.lowering.jit` -> `lowering`)."""
    parts = module.split(".")
    if parts[0] != "xrelay":
        return None
    return parts[1] if len(parts) > 1 else "xrelay"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["xrelay", *parts])


def source_modules() -> list[Path]:
    return sorted(
        path
        for path in ROOT.rglob("*.py")
        if path.relative_to(ROOT).parts[0] not in OUTSIDE_THE_PACKAGE
        and not any(part.startswith(".") for part in path.relative_to(ROOT).parts)
    )


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, dotted module) for every import in the file; relative imports made absolute,
    `from package import module` counted as importing the package."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                found.append((node.lineno, ".".join(base + ([node.module] if node.module else []))))
            elif node.module is not None:
                found.append((node.lineno, node.module))
    return found


def violations(path: Path) -> list[str]:
    own = layer(module_name(path))
    allowed = MAY_IMPORT.get(own or "")
    if allowed is None:  # tools, universe, relay (the Relay API facade), the public API
        return []
    rel = path.relative_to(ROOT)
    return [
        f"{rel}:{line}: {own} imports {target}"
        for line, target in imported_modules(path)
        if layer(target) not in (None, *allowed)
    ]


def test_the_package_is_scanned():
    names = {module_name(p) for p in source_modules()}
    assert {"xrelay.ir", "xrelay.lowering.relay_to_linalg.nn", "xrelay.dialects.qnn"} <= names
    assert not any(n.startswith(("xrelay.tests", "xrelay.bench")) for n in names)


def test_relative_and_nested_imports_are_read():
    found = {target for _, target in imported_modules(ROOT / "dialects/qnn/compute.py")}
    assert "xrelay.dialects.qnn.base" in found
    nested = {target for _, target in imported_modules(ROOT / "dialects/relay/base.py")}
    assert "xrelay.dialects.relay.canonicalize" in nested  # inside a method


def test_imports_point_one_way():
    broken = [v for path in source_modules() for v in violations(path)]
    if broken:
        pytest.fail("imports against the layers (DESIGN.md):\n" + "\n".join(broken), False)
