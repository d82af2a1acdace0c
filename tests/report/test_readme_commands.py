"""The README's short command outputs are what the commands print today (scripts/readme_commands.py)."""

from __future__ import annotations

from project_paths import ROOT, load_script


def test_the_readme_command_blocks_are_current():
    module = load_script("readme_commands")
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for name in module.COMMANDS:
        begin, end = module.markers(name)
        written = text[text.index(begin):text.index(end) + len(end)]
        assert written == module.block(name), "run python scripts/readme_commands.py"
