"""The README's fleet example is what `fabricplan fleet` prints today (scripts/readme_fleet.py)."""

from __future__ import annotations

from project_paths import ROOT, load_script


def test_the_readme_fleet_example_is_current():
    module = load_script("readme_fleet")
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    written = text[text.index(module.BEGIN):text.index(module.END) + len(module.END)] + "\n"
    section, _ = module.render()
    assert written == section, "run python scripts/readme_fleet.py"


def test_the_readme_fleet_designs_table_is_current():
    module = load_script("readme_fleet")
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    written = text[text.index(module.DESIGNS_BEGIN):text.index(module.DESIGNS_END) + len(module.DESIGNS_END)] + "\n"
    section, _ = module.render_designs()
    assert written == section, "run python scripts/readme_fleet.py"
