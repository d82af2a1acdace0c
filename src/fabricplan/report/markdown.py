"""GitHub-flavoured Markdown for `fabricplan compare --markdown`."""

from __future__ import annotations

from collections.abc import Sequence

from fabricplan.decide.models import CompareReport
from fabricplan.report import compare_content as content


def markdown_text(text: str) -> str:
    """Text safe inside a GFM table cell or line: no raw HTML, no column breaks, one line."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("|", "\\|").replace("\r", " ").replace("\n", " "))


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]],
                   align_right_from: int | None = None) -> list[str]:
    """A GFM table; columns from `align_right_from` on are right-aligned."""
    separators = ["---:" if align_right_from is not None and index >= align_right_from else "---"
                  for index in range(len(headers))]
    lines = ["| " + " | ".join(markdown_text(h) for h in headers) + " |", "| " + " | ".join(separators) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _comparison(report: CompareReport) -> list[str]:
    recommended = report.recommendation.recommended if content.feasible(report) else None
    headers = [""] + [f"{content.RECOMMENDED_MARK} {f}" if f == recommended else f
                      for f in content.fabric_ids(report)]
    rows = []
    for row in content.comparison_rows(report):
        best = row.best
        cells = [f"**{markdown_text(value)}**" if index in best else markdown_text(value)
                 for index, value in enumerate(row.formatted)]
        rows.append([markdown_text(row.label)] + cells)
    keys = ["", "_Bold: best value in the row._"]
    if content.memory_flagged_jobs(report):
        keys += ["", f"_{markdown_text(content.MEMORY_LEGEND)}_"]
    return markdown_table(headers, rows, align_right_from=1) + keys


def _recommendation(report: CompareReport) -> list[str]:
    recommendation = report.recommendation
    lines = ["## Recommendation", "", f"**{markdown_text(content.recommendation_headline(report))}**", ""]
    close_call = content.close_call_note(report)
    if close_call:
        lines += ["> [!WARNING]", f"> {markdown_text(close_call)}", ""]
    if recommendation.ranking:
        lines += [f"Ranking: {markdown_text(' > '.join(recommendation.ranking))}", ""]
    if recommendation.reasons:
        lines += ["Why:", ""] + [f"- {markdown_text(reason)}" for reason in recommendation.reasons] + [""]
    if recommendation.why_not:
        lines += ["Why not the others:", ""]
        lines += [f"- **{markdown_text(fabric)}**: {markdown_text(reason)}"
                  for fabric, reason in recommendation.why_not.items()] + [""]
    lines += [f"**{markdown_text(content.decided_by_line(report))}**", ""]
    if recommendation.disagreements:
        lines += ["> [!WARNING]", f"> {content.WARNING_MARK} **Rules and numbers disagree:**", ">"]
        lines += [f"> - {markdown_text(item)}" for item in recommendation.disagreements] + [""]
    return lines


def _section(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return [f"## {title}", ""] + markdown_table(headers, [[markdown_text(c) for c in row] for row in rows]) + [""]


def compare_markdown(report: CompareReport) -> str:
    """The whole comparison as one Markdown document."""
    lines = [f"# Fabric comparison: {markdown_text(report.spec_name)}", "",
             markdown_text(content.summary_line(report)), "", "## Comparison", ""]
    lines += _comparison(report) + [""]
    lines += _recommendation(report)
    if report.uncertainty is not None:
        lines += _section(content.uncertainty_title(report), content.UNCERTAINTY_HEADERS,
                          content.uncertainty_rows(report))
    if any(f.designs_considered for f in report.fabrics):
        lines += _section("Designs considered", content.DESIGN_HEADERS, content.design_rows(report))
    lines += _section("Decision rules", content.RULE_HEADERS, content.rule_rows(report))
    if report.sources:
        lines += [f"## {content.SOURCES_TITLE}", ""]
        lines += [f"- {markdown_text(mark + text)}" for mark, text in content.source_lines(report)] + [""]
    if report.recommendation.advice:
        lines += _section(content.ADVICE_TITLE, content.ADVICE_HEADERS, content.advice_rows(report))
    if report.crossovers:
        lines += _section("Crossovers", content.CROSSOVER_HEADERS, content.crossover_rows(report))
    if report.tier_boundaries:
        lines += _section("Tier boundaries", content.TIER_HEADERS, content.tier_rows(report))
    if report.sensitivity:
        lines += _section("Sensitivity", content.sensitivity_headers(report), content.sensitivity_rows(report))
    if report.what_would_change is not None:
        lines += _section(content.flip_title(report), content.FLIP_HEADERS, content.flip_rows(report))
        lines += [markdown_text(content.smallest_flip_line(report)), ""]
    if report.notes:
        lines += ["## Notes", ""] + [f"- {markdown_text(note)}" for note in report.notes] + [""]
    return "\n".join(lines).rstrip() + "\n"
