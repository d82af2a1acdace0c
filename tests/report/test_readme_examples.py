"""The README's table of the bundled examples' answers is what `compare` gives today
(scripts/readme_examples.py writes it; this renders it again)."""

from __future__ import annotations

from project_paths import ROOT, load_script


def test_the_readme_examples_table_is_current():
    module = load_script("readme_examples")
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    written = text[text.index(module.BEGIN):text.index(module.END) + len(module.END)] + "\n"
    section, failures = module.render()
    assert not failures
    assert written == section, "run python scripts/readme_examples.py"
