"""Chinese source titles: every one in the catalog has its English translation, and every output
(HTML, terminal, Markdown, JSON) shows the translation beside the original; the HTML marks the
Chinese text with its language so a CJK font from the stylesheet's stack draws it."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from rich.console import Console

import fabricplan as fp
from fabricplan.catalog import SECTIONS, load_catalog
from fabricplan.catalog.models import Source, has_cjk
from fabricplan.report.compare_terminal import rules_table
from fabricplan.report.html import compare_html
from fabricplan.report.markdown import compare_markdown
from fabricplan.report.quotes import catalog_translations, untranslated
from project_paths import EXAMPLES

CATALOG = load_catalog()


def cjk_sources():
    return [source for source in CATALOG.section("sources").values() if has_cjk(source.title)]


def test_every_cjk_source_title_in_the_catalog_has_an_english_translation():
    sources = cjk_sources()
    assert {source.id for source in sources} >= {"S1", "S2"}  # the two seed articles are in Chinese
    for source in sources:
        assert source.language.startswith("zh"), source.id
        assert source.title_en and len(source.title_en) > 10 and not has_cjk(source.title_en), source.id


def test_every_chinese_quote_in_the_catalog_data_has_a_translation():
    known = catalog_translations(CATALOG)
    quoted = [(section, entry_id, entry.source) for section in SECTIONS
              for entry_id, entry in CATALOG.section(section).items() if has_cjk(entry.source)]
    assert len(quoted) >= 10  # decision.yaml's thresholds quote the seeds
    for section, entry_id, text in quoted:
        assert untranslated(text, known) == [], (section, entry_id)
    for source in CATALOG.section("sources").values():
        assert all(q.text_en and not has_cjk(q.text_en) for q in source.quotes), source.id


def test_a_cjk_title_without_a_translation_is_refused():
    entry = {"id": "S9", "name": "x", "title": "新的文章", "publisher": "blog", "source": "the article", "date": "2026"}
    with pytest.raises(ValidationError, match="title_en"):
        Source.model_validate(entry)
    assert Source.model_validate({**entry, "title_en": "A new article"}).label() == "[S9] x (2026)"


@pytest.fixture(scope="module")
def report():
    return fp.compare(EXAMPLES / "mid-128-h100-existing-ethernet.yaml", quick=True)


def test_the_report_carries_the_cited_sources_with_their_translations(report):
    cited = {source.id: source for source in report.sources}
    assert set(cited) == {"S1", "S2"}
    for source in cjk_sources():
        assert (cited[source.id].title, cited[source.id].title_en) == (source.title, source.title_en)
    assert report.model_dump(mode="json")["sources"][0]["title_en"] == CATALOG.get("sources", "S1").title_en


def test_html_shows_each_title_marked_chinese_with_its_translation_beside_it(report):
    page = compare_html(report)
    for source in cjk_sources():
        assert (f'<span lang="zh">{source.title}</span> <span class="translation" lang="en">'
                f"({source.title_en})</span>") in page
    assert '<span lang="zh">对于百卡以下规模的训练集群，RoCE的TCO优势明显</span>' in page  # a quote in a citation


def test_terminal_and_markdown_print_the_translation_after_the_original(report):
    console = Console(width=80, record=True)
    console.print(rules_table(report, verbose=True))
    terminal = " ".join(console.export_text().split())
    markdown = compare_markdown(report)
    for source in cjk_sources():
        shown = f"[{source.id}] {source.title} ({source.title_en})"
        assert " ".join(shown.split()) in terminal
        assert shown in markdown


def test_catalog_show_prints_the_title_then_its_translation_and_each_quote_translated(cli):
    source = CATALOG.get("sources", "S1")
    result = cli("catalog", "show", "S1")
    assert result.code == 0
    text = " ".join(result.out.split())
    assert source.title in text and " ".join(source.title_en.split()) in text
    assert text.index(source.title) < text.index(source.title_en.split()[0] + " " + source.title_en.split()[1])
    first = source.quotes[0]
    assert " ".join(f"{first.text} [{first.text_en}]".split()) in text
    assert text.count(f"[{first.text_en}]") == 1  # translated once, not again inside a JSON dump
