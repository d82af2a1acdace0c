"""The catalog is passed explicitly below the API (ARCHITECTURE.md, issue 25 "No silent bundled catalog").

``fabricplan.api`` and the CLI resolve the catalog once (the bundled data plus the user's
``--catalog`` overlays) and pass it down. A model function that defaulted to the bundled catalog
would silently drop those overlays when a caller forgot to pass it, so below the API no function
may:

* declare a ``catalog`` parameter (or a dataclass field) whose default is ``None``;
* load a catalog itself: ``default_catalog()``, or ``load_catalog()`` without overlay files;
* fall back when given none: ``catalog or ...``, ``if catalog is None``.

Every module of ``src/fabricplan`` is read with ``ast``. The allowlist is the API, the CLI, the
catalog package itself (it defines the loaders), and two simulator modules that are being
restructured separately (their signatures stay as they are for now; a None there still fails in
the accessors they call).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "fabricplan"

#: Paths (relative to src/fabricplan) where the catalog may be optional or loaded.
ALLOWED_PATHS = (
    "api.py",  # the public API: catalog=None is the documented "bundled catalog", resolved once per call
    "cli/",  # the commands load the catalog with the user's overlays once
    "catalog/",  # the loaders themselves (load_catalog, default_catalog, require_catalog)
)

#: (path, function) below the API that reads the bundled catalog on purpose, and why.
ALLOWED_FUNCTIONS = {
    ("ops/lint/options.py", "from_catalog"):
        "the bundled value is the type an overlay's value is checked against, never a value used",
}

LOADERS = ("default_catalog", "load_catalog")


def _is_catalog_name(name: str) -> bool:
    return name == "catalog" or name.endswith("_catalog")


def _is_none(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _name_of(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def violations(source: str, where: str = "<source>") -> list[tuple[str, int, str, str]]:
    """``(where, line, enclosing function, what)`` of every optional catalog, self-loaded catalog
    and fallback in ``source``."""
    found: list[tuple[str, int, str, str]] = []

    def visit(node: ast.AST, function: str) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name
            args = node.args
            positional = args.posonlyargs + args.args
            defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
            for arg, default in [*zip(positional, defaults), *zip(args.kwonlyargs, args.kw_defaults)]:
                if _is_catalog_name(arg.arg) and _is_none(default):
                    found.append((where, node.lineno, function, f"parameter {arg.arg}=None"))
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                        and _is_catalog_name(item.target.id) and _is_none(item.value)):
                    found.append((where, item.lineno, node.name, f"field {item.target.id} = None"))
        elif isinstance(node, ast.Call):
            name = _name_of(node.func)
            if name == "default_catalog" or (name == "load_catalog" and not node.args and not node.keywords):
                found.append((where, node.lineno, function, f"{name}() call"))
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            first = _name_of(node.values[0])
            if first is not None and _is_catalog_name(first):
                found.append((where, node.lineno, function, f"'{first} or ...' fallback"))
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            left = _name_of(node.left)
            if left is not None and _is_catalog_name(left) and any(_is_none(c) for c in node.comparators):
                found.append((where, node.lineno, function, f"'{left} is None' test"))
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(ast.parse(source), "<module>")
    return found


def _modules() -> list[tuple[str, Path]]:
    return [(path.relative_to(SRC).as_posix(), path) for path in sorted(SRC.rglob("*.py"))]


def test_the_check_finds_each_kind_of_fallback():
    bad = '''
from dataclasses import dataclass

def a(x, catalog=None): ...
def b(x, *, catalog: "Catalog | None" = None): ...
def c(x, catalog):
    catalog = catalog or default_catalog()
def d(x, catalog):
    if catalog is None:
        catalog = load_catalog()
def e(x, row_catalog=None): ...

@dataclass
class Case:
    catalog: object = None
'''
    kinds = sorted((function, what) for _, _, function, what in violations(bad))
    assert kinds == [("Case", "field catalog = None"), ("a", "parameter catalog=None"),
                     ("b", "parameter catalog=None"), ("c", "'catalog or ...' fallback"),
                     ("c", "default_catalog() call"), ("d", "'catalog is None' test"),
                     ("d", "load_catalog() call"), ("e", "parameter row_catalog=None")]
    good = '''
def f(x, catalog):
    return catalog.perf_value(x)
def g(paths, overlays):
    return load_catalog(overlays)
def h(x, *, catalog, other=None): ...
'''
    assert violations(good) == []


def test_no_function_below_the_api_defaults_or_falls_back_to_the_bundled_catalog():
    found = []
    for rel, path in _modules():
        if rel.startswith(ALLOWED_PATHS):
            continue
        found += [v for v in violations(path.read_text(encoding="utf-8"), rel)
                  if (rel, v[2]) not in ALLOWED_FUNCTIONS]
    assert not found, "pass the catalog explicitly (api/cli resolve it once):\n" + "\n".join(
        f"  {where}:{line} in {function}: {what}" for where, line, function, what in found)


def test_every_allowed_function_still_needs_it():
    """An allowlist entry whose function no longer reads the bundled catalog is stale: remove it."""
    for (rel, function), reason in ALLOWED_FUNCTIONS.items():
        hits = [v for v in violations((SRC / rel).read_text(encoding="utf-8"), rel) if v[2] == function]
        assert hits, f"{rel} {function} no longer reads the bundled catalog ({reason}): drop it from ALLOWED_FUNCTIONS"


def test_the_allowed_paths_exist():
    for prefix in ALLOWED_PATHS:
        assert (SRC / prefix).exists(), f"{prefix} is gone: drop it from ALLOWED_PATHS"


def test_the_catalog_accessors_reject_none_instead_of_loading_the_bundled_one(tmp_path):
    from fabricplan.ops import defaults
    from fabricplan.perf import nccl_tuner
    from fabricplan.perf.params import perf_parameter, perf_table, perf_value
    from fabricplan.sim.params import sim_parameter
    from fabricplan.spec.load import load_spec

    spec = tmp_path / "cluster.yaml"
    spec.write_text("cluster: {gpu: h100-sxm, gpus: 16}\n", encoding="utf-8")
    calls = {
        "perf_value": lambda: perf_value("tp_overlap_efficiency", None),
        "perf_parameter": lambda: perf_parameter("tp_overlap_efficiency", None),
        "perf_table": lambda: perf_table("pcie_x16_gbytes_per_s", None),
        "sim_parameter": lambda: sim_parameter("sim_link_gbps", None),
        "ops value": lambda: defaults.value("lint.roce_dscp", None),
        "ops group": lambda: defaults.group("headroom.sonic.asic", None),
        "ops where": lambda: defaults.where("lint.roce_dscp", None),
        "tuner_constants": lambda: nccl_tuner.tuner_constants("2.30.7", catalog=None),
        "load_spec": lambda: load_spec(spec, None),
    }
    for name, call in calls.items():
        with pytest.raises(TypeError, match="needs the catalog"):
            call()
        assert name  # each accessor raised rather than answering with the bundled number


def test_a_model_given_the_users_overlay_uses_it(tmp_path):
    """The point of passing the catalog: the overlay's number reaches the model, the bundled one
    stays where it was (NCCL's socket inline limit of 2.27+: bundled 128 B, here 64 B)."""
    from fabricplan.catalog import load_catalog
    from fabricplan.perf.socket_transport import socket_inline_bytes

    overlay = tmp_path / "mine.yaml"
    overlay.write_text("perf_defaults:\n  parameters:\n    socket_inline_bytes:\n      value: 64\n"
                       "      source: test overlay\n      date: 2026-01-01\n", encoding="utf-8")
    mine, bundled = load_catalog([overlay]), load_catalog()
    tcp = bundled.fabric("ethernet-tcp")
    assert socket_inline_bytes(tcp, "2.30.7", catalog=mine) == 64
    assert socket_inline_bytes(tcp, "2.30.7", catalog=bundled) == 128
    assert socket_inline_bytes(tcp, "2.17.1", catalog=mine) == 0  # no inlining before 2.27
