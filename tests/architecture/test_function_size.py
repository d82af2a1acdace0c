"""Extension points small enough to extend: no function in the package is longer than a screenful
or two (120 lines, docstring included), so a new rule, cause, sharding scheme or chain step is a
new small function beside the others, not a branch inside a long one."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "fabricplan"
MAX_LINES = 120

#: Functions allowed to be longer, each with its reason.
ALLOWED = {
    # numba compiles one loop; it must stay the same arithmetic in the same order as the numpy
    # loop (tests/sim/test_fluid_kernel.py), so it is not split into calls numba would not inline
    ("sim/fluid_tcp_kernel.py", "_tcp_steps"),
}


def _long_functions() -> list[tuple[str, str, int]]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_LINES:
                    found.append((str(path.relative_to(SRC)), node.name, lines))
    return found


def test_no_function_is_longer_than_the_limit():
    long = [f"{file}:{name} ({lines} lines)" for file, name, lines in _long_functions()
            if (file, name) not in ALLOWED]
    assert not long, long


def test_the_allowlist_names_only_functions_that_exist_and_are_long():
    present = {(file, name) for file, name, _ in _long_functions()}
    assert ALLOWED <= present, sorted(ALLOWED - present)
