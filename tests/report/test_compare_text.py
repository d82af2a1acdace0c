"""Terminal and Markdown renderings of `fabricplan compare` carry the whole report."""

from __future__ import annotations

from rich.console import Console

from fabricplan.report import compare_content as content
from fabricplan.report.compare_terminal import compare_renderables
from fabricplan.report.markdown import compare_markdown, markdown_text

from .conftest import make_report


def render_terminal(report) -> str:
    console = Console(record=True, width=160, color_system=None)
    for renderable in compare_renderables(report):
        console.print(renderable)
    return console.export_text()


def test_markdown_has_every_fabric_rule_and_the_recommendation(compare_report):
    text = compare_markdown(compare_report)
    for fabric in compare_report.fabrics:
        assert fabric.fabric in text
    for rule in compare_report.rules:
        assert rule.id in text
    recommended = compare_report.recommendation.recommended
    assert f"**Recommended: {recommended}" in text
    assert f"★ {recommended}" in text  # the recommended column is marked
    assert "> [!WARNING]" in text and "Rules and numbers disagree" in text
    for row in compare_report.sensitivity:
        assert row.factor in text
    assert text.count("✓") == sum(row.flips for row in compare_report.sensitivity)


def test_markdown_tables_are_well_formed(compare_report):
    """Every table row has as many cells as its header: no stray pipes from user text."""
    tables: list[list[str]] = []
    previous = ""
    for line in compare_markdown(compare_report).splitlines():
        if line.startswith("|"):
            if not previous.startswith("|"):
                tables.append([])
            tables[-1].append(line)
        previous = line
    assert len(tables) == 4  # comparison, rules, crossovers, sensitivity
    for table in tables:
        widths = {len(row.replace("\\|", "").split("|")) for row in table}
        assert len(widths) == 1, table


def test_markdown_escapes_user_text():
    report = make_report(spec_name="lab | <b>x</b>", job_names={"llama3-70b-pretrain": "job|<i>"})
    text = compare_markdown(report)
    assert "<b>" not in text and "<i>" not in text
    assert "lab \\| &lt;b&gt;x&lt;/b&gt;" in text
    assert markdown_text("a|b\nc") == "a\\|b c"


def test_terminal_has_every_fabric_rule_and_the_recommendation(compare_report):
    text = render_terminal(compare_report)
    for fabric in compare_report.fabrics:
        assert fabric.fabric in text
    for rule in compare_report.rules:
        assert rule.id in text
    recommended = compare_report.recommendation.recommended
    assert f"Recommended: {recommended}" in text
    assert "⚠ Rules and numbers disagree" in text
    for crossover in compare_report.crossovers:
        assert f"{crossover.fabric_a} vs {crossover.fabric_b}" in text
    for row in compare_report.sensitivity:
        assert row.factor in text


def test_comparison_rows_mark_the_best_value(compare_report):
    rows = {row.label: row for row in content.comparison_rows(compare_report)}
    fabrics = content.fabric_ids(compare_report)
    cheapest = min(compare_report.fabrics, key=lambda f: f.cost_per_useful_gpu_hour_usd).fabric
    assert rows["cost per useful GPU-hour"].best == {fabrics.index(cheapest)}
    busiest = max(compare_report.fabrics, key=lambda f: f.weighted_gpu_utilisation).fabric
    assert rows["GPU utilisation (job-weighted)"].best == {fabrics.index(busiest)}
    assert rows["rank"].best == set()  # not a metric
    assert "(excluded by check.tcp-exposed-comm)" in rows["rank"].formatted[fabrics.index("ethernet-tcp")]


def test_close_call_is_flagged():
    report = make_report()
    report.recommendation.close_call = True
    assert "Close call" in compare_markdown(report)
    assert "Close call" in render_terminal(report)
