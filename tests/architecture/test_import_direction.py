"""The one direction of imports (ARCHITECTURE.md): no package imports one it sits below.

Every ``import fabricplan.X`` / ``from fabricplan.X ...`` in a package's modules (top level and
inside functions) is read with ``ast``; a package may not name one that ARCHITECTURE.md puts above
it. The planning side never imports ``ops``, ``measure`` or ``sweep``; ``sim`` never imports ``perf``;
``decide`` reaches the models only through ``plan`` (the one chain).
The repository's ``validation/`` package (the models against published measurements) imports
``fabricplan``; nothing in ``src/fabricplan`` imports it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "fabricplan"
VALIDATION = ROOT / "validation"

#: package -> packages it must not import (the ones above it, and the branches beside it).
FORBIDDEN = {
    "units": {"io", "catalog", "topology", "spec", "design", "cost", "perf", "sim", "plan", "decide", "report", "ops",
              "measure", "sweep", "api", "cli", "fleet"},
    "io": {"catalog", "topology", "spec", "design", "cost", "perf", "sim", "plan", "decide", "report", "ops",
           "measure", "sweep", "api", "cli", "fleet"},
    "cache": {"catalog", "topology", "spec", "design", "cost", "perf", "sim", "plan", "decide", "report", "ops",
              "measure", "sweep", "api", "cli", "fleet"},
    "catalog": {"topology", "spec", "design", "cost", "perf", "sim", "plan", "decide", "report", "ops", "measure",
                "sweep", "api", "cli", "fleet"},
    "topology": {"spec", "design", "cost", "perf", "sim", "plan", "decide", "report", "ops", "measure", "sweep",
                 "api", "cli", "fleet"},
    "spec": {"design", "cost", "perf", "sim", "plan", "decide", "report", "ops", "measure", "sweep", "api", "cli", "fleet"},
    "design": {"cost", "perf", "sim", "plan", "decide", "report", "ops", "measure", "sweep", "api", "cli", "fleet"},
    "sim": {"cost", "perf", "plan", "decide", "report", "ops", "measure", "sweep", "api", "cli", "fleet"},
    "cost": {"perf", "fleet", "plan", "decide", "report", "ops", "measure", "sweep", "api", "cli"},
    "perf": {"cost", "fleet", "plan", "decide", "report", "ops", "measure", "sweep", "api", "cli"},
    "plan": {"decide", "report", "ops", "measure", "sweep", "api", "cli"},
    # the fleet composes design and sim for one design; plan (and api) sit above it
    "fleet": {"cost", "perf", "plan", "decide", "report", "ops", "measure", "sweep", "api", "cli"},
    # decide gets every number from the chain (plan): it summarises, ranks, applies rules and explains
    "decide": {"cost", "perf", "design", "topology", "sim", "fleet", "report", "ops", "measure", "sweep", "api", "cli"},
    "ops": {"design", "cost", "perf", "sim", "fleet", "plan", "decide", "report", "measure", "sweep", "api", "cli"},
    "measure": {"report", "ops", "sweep", "api", "cli", "decide"},
    "report": {"api", "cli", "sweep", "fleet"},
}


def _imported_modules(path: Path) -> list[str]:
    """Every absolute module name ``path`` imports (top level and inside functions)."""
    modules = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.append(node.module)
        elif isinstance(node, ast.Import):
            modules += [alias.name for alias in node.names]
    return modules


def _imported_packages(path: Path) -> set[str]:
    names = set()
    for module in _imported_modules(path):
        parts = module.split(".")
        if parts[0] == "fabricplan" and len(parts) > 1:
            names.add(parts[1])
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_only_below_it(package):
    root = SRC / package
    files = [root.with_suffix(".py")] if root.with_suffix(".py").is_file() else sorted(root.rglob("*.py"))
    assert files, package
    wrong = {f"{path.relative_to(SRC)} -> {name}" for path in files for name in _imported_packages(path)
             if name in FORBIDDEN[package]}
    assert not wrong, sorted(wrong)


def test_nothing_in_the_package_imports_validation():
    """validation/ sits outside the package (setuptools finds packages under src/ only) and above it."""
    files = sorted(SRC.rglob("*.py"))
    wrong = [f"{path.relative_to(SRC)} -> {module}" for path in files for module in _imported_modules(path)
             if module.split(".")[0] == "validation"]
    assert files and not wrong, wrong
    assert not (SRC / "validation").exists() and not (SRC / "perf" / "validation.py").exists()


def test_validation_imports_fabricplan_not_the_scripts_or_tests():
    files = sorted(VALIDATION.rglob("*.py"))
    imported = {module.split(".")[0] for path in files for module in _imported_modules(path)}
    assert "fabricplan" in imported
    assert not imported & {"scripts", "tests", "project_paths", "_sections"}, sorted(imported)
