"""docs/api.md runs: every ``python`` block, in order, in one namespace, from the repository root."""

from __future__ import annotations

import re

from project_paths import ROOT

BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def test_api_page_examples_run(monkeypatch, capsys):
    blocks = BLOCK.findall((ROOT / "docs" / "api.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 5
    monkeypatch.chdir(ROOT)
    namespace: dict = {"__name__": "api_doc"}
    for index, code in enumerate(blocks):
        exec(compile(code, f"docs/api.md[block {index}]", "exec"), namespace)  # noqa: S102 - our own docs
    printed = capsys.readouterr().out
    assert "per useful GPU-hour" in printed and "busbw" in printed


def test_public_names_are_typed_functions():
    import inspect

    import fabricplan as fp

    for name in ("load_spec", "compare", "design", "cost", "collective_time", "step_time", "lint", "headroom",
                 "calibrate", "check_measured", "health"):
        function = getattr(fp, name)
        assert callable(function), name
        signature = inspect.signature(function)
        assert signature.return_annotation is not inspect.Signature.empty, name
