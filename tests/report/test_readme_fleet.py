"""The README's fleet example and design table are what `fabricplan fleet` prints today (scripts/readme_fleet.py)."""

from __future__ import annotations

from project_paths import ROOT, load_script


def _written(begin: str, end: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text[text.index(begin):text.index(end) + len(end)] + "\n"


def test_the_readme_fleet_example_is_current():
    module = load_script("readme_fleet")
    assert _written(module.BEGIN, module.END) == module.render()[0], "run python scripts/readme_fleet.py"


def test_the_readme_fleet_designs_table_is_current():
    module = load_script("readme_fleet")
    assert _written(module.DESIGNS_BEGIN, module.DESIGNS_END) == module.render_designs()[0], \
        "run python scripts/readme_fleet.py"
