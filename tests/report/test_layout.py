"""report/layout.py: columns never narrower than their longest word; stacked blocks when they do not fit."""

from __future__ import annotations

from rich.console import Console

from fabricplan.catalog import load_catalog
from fabricplan.decide import compare
from fabricplan.report.compare_content import quote_translations
from fabricplan.report.layout import FitTable, Lines, fit_widths, plural, wrapped_lines
from fabricplan.report.quotes import catalog_translations, has_cjk, untranslated, with_english
from fabricplan.spec import load_spec
from tests.cli.test_terminal_80 import EXAMPLES


def render(renderable, width: int) -> str:
    console = Console(record=True, width=width, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_fit_widths_keeps_every_word_whole_and_saves_lines():
    cells = [["label", "a"], ["a long label here", "875,000,123"]]
    widths = fit_widths(cells, 30)
    assert widths == [17, 11]  # both fit without wrapping: no spare spent
    narrow = fit_widths(cells, 17)
    assert narrow is not None and narrow[1] == 11 and narrow[0] >= 5  # the number keeps its width
    assert fit_widths(cells, 15) is None  # "875,000,123" + "label" + "long"-sized words do not fit
    assert wrapped_lines("a long label here", 6) == 3


def test_fit_table_stacks_rows_when_columns_cannot_fit():
    names = [f"fabric-with-a-long-name-{i}" for i in range(5)]
    table = FitTable(["", *names], [["cost per useful GPU-hour", *[f"${i},875,000.12" for i in range(5)]]],
                     title="t")
    wide = render(table, 200)
    narrow = render(table, 80)
    assert "…" not in wide + narrow
    assert all(len(line) <= 80 for line in narrow.splitlines())
    for index, name in enumerate(names):  # one "name: value" line per fabric
        assert f"  {name}: ${index},875,000.12" in narrow
        assert name in wide


def test_lines_wrap_under_a_hanging_indent():
    text = render(Lines([("note: ", "word " * 30)]), 40)
    lines = text.splitlines()
    assert lines[0].startswith("note: word") and all(line.startswith("      word") for line in lines[1:])


def test_plural():
    assert [plural(1, "switch"), plural(24, "switch"), plural(1024, "GPU"), plural(1, "node")] == [
        "1 switch", "24 switches", "1,024 GPUs", "1 node"]


def test_every_chinese_quote_of_every_rule_has_an_english_rendering():
    catalog = load_catalog()
    citations = set()
    known = catalog_translations(catalog)  # the translations the catalog's sources hold
    for name in ("llama70b-1024-h100.yaml", "single-node-8-inference.yaml", "mid-128-h100-existing-ethernet.yaml"):
        report = compare(load_spec(EXAMPLES / name, catalog), catalog, search_scale=False, analyse_sensitivity=False)
        carried = quote_translations(report)  # and the ones the report carries with its sources
        for rule in report.rules:
            assert untranslated(rule.citation, carried) == [], rule.citation
            citations.add(rule.citation)
    assert any(has_cjk(c) for c in citations)
    for citation in citations:
        assert untranslated(citation, known) == [], citation
        for quote, english in known.items():
            if quote in citation and not any(quote in longer and longer in citation for longer in known
                                              if longer != quote):
                assert f"{quote} [{english}]" in with_english(citation, known)
    assert untranslated("x: 这是新的引文", known) == ["这是新的引文"]  # a new quote is caught
