"""The README's and the docs' command outputs, tables and inline figures are what the commands give today
(scripts/readme_commands.py renders them; this renders them again)."""

from __future__ import annotations

import re

import pytest

from project_paths import ROOT, load_script

MODULE = load_script("readme_commands")


@pytest.mark.parametrize("path", MODULE.DOCUMENTS, ids=lambda p: p.name)
def test_the_generated_parts_are_current(path):
    text = path.read_text(encoding="utf-8")
    rendered = MODULE.render(text, path)
    stale = [name for name in MODULE.COMMANDS if MODULE.COMMANDS[name].document == path
             and MODULE.block(name) not in text]
    stale += [m.group(1) for m in MODULE.FIGURE.finditer(text) if m.group(2) != MODULE.figure(m.group(1))]
    assert rendered == text, f"drifted: {stale or 'a table'}; run python scripts/readme_commands.py"


def test_every_figure_and_command_is_used_where_it_belongs():
    texts = {path: path.read_text(encoding="utf-8") for path in MODULE.DOCUMENTS}
    used = {m.group(1) for text in texts.values() for m in MODULE.FIGURE.finditer(text)}
    assert used == set(MODULE.FIGURES), "a FIGURES entry no document quotes, or a figure it does not know"
    for name, command in MODULE.COMMANDS.items():
        assert MODULE.markers(name)[0] in texts[command.document], name


def test_an_unknown_figure_is_an_error_not_a_pass():
    with pytest.raises(KeyError, match="no-such-figure"):
        MODULE.render("<!-- fig no-such-figure -->1.0 %<!-- /fig -->", ROOT / "elsewhere.md")


def test_excerpt_marks_what_it_left_out():
    lines = ["a", "b", "c", "d", "e", "f"]
    assert MODULE.excerpt(lines, ((0, 2), ("d", "f"))) == ["a", "b", "...", "d", "e", "..."]
    with pytest.raises(ValueError, match="'z'"):
        MODULE.excerpt(lines, (("z", 1),))


def test_a_generated_block_shows_what_the_command_printed():
    # The 100G collective: the command line and its 8 GiB row, from a run (not a copy).
    block = MODULE.block("collective-100g")
    assert block.splitlines()[2].startswith("$ fabricplan collective --op all_reduce")
    assert re.search(r"^8589934592 +[0-9.]+ ", block, re.MULTILINE)


def test_the_readme_quotes_no_sweep_or_changelog_history():
    # History of changes lives in CHANGELOG.md; the README describes today's tool.
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for phrase in ("changed the answers", "before → after", "This section used to say"):
        assert phrase not in text, phrase
