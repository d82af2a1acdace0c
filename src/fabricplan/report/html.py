"""One self-contained, offline HTML page for `fabricplan compare --html`.

The page is the `compare.html.j2` template on the shared base layout and stylesheet
(`report/pages.py`); this module only gathers what it shows, from `compare_content` (the rows every
renderer shares) and `compare_charts` (the figures). plotly.js is inlined once in the page head;
every figure is a div with a stable id (`chart-step`, `chart-tco`, `chart-scale`, `chart-tornado`)
plus a small script that draws it. The page loads nothing from the network: no CDN, no web fonts.
All user text is escaped (the templates autoescape).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import plotly.graph_objects as go

from fabricplan.decide.models import CompareReport
from fabricplan.report import compare_charts as charts
from fabricplan.report import compare_content as content
from fabricplan.report import pages

PLOTLY_CONFIG = pages.PLOTLY_CONFIG

CHARTS: tuple[tuple[str, Callable[[CompareReport], go.Figure]], ...] = (
    ("chart-step", charts.step_time_figure),
    ("chart-tco", charts.tco_figure),
    ("chart-scale", charts.scale_figure),
    ("chart-tornado", charts.tornado_figure),
)


def figure_div(figure: go.Figure, div_id: str):
    """The figure as a div + drawing script; expects plotly.js already on the page."""
    return pages.figure_div(figure, div_id)


def recommendation_block(report: CompareReport) -> dict[str, Any]:
    """The recommendation callout: headline, close-call note, ranking, reasons, why not the others."""
    recommendation = report.recommendation
    mark = content.RECOMMENDED_MARK if content.feasible(report) else content.WARNING_MARK
    return {"attention": bool(recommendation.disagreements or recommendation.close_call), "mark": mark,
            "headline": content.recommendation_headline(report), "close_call": content.close_call_note(report),
            "ranking": list(recommendation.ranking), "reasons": list(recommendation.reasons),
            "why_not": list(recommendation.why_not.items()), "disagreements": list(recommendation.disagreements)}


def comparison_block(report: CompareReport) -> dict[str, Any]:
    """The comparison table: a column per fabric, the recommended one marked, the best of each row."""
    return {"fabrics": content.fabric_ids(report),
            "recommended": report.recommendation.recommended if content.feasible(report) else None,
            "rows": content.comparison_rows(report),
            "memory_legend": content.MEMORY_LEGEND if content.memory_flagged_jobs(report) else None}


def chart_blocks(report: CompareReport) -> list[dict[str, Any]]:
    """Each chart's markup, or the caption that says why it is missing."""
    missing = {"chart-scale": (not report.scale_curve, "No scale curve in this report."),
               "chart-tornado": (not report.sensitivity, "No sensitivity analysis in this report.")}
    blocks = []
    for div_id, build in CHARTS:
        absent, caption = missing.get(div_id, (False, ""))
        blocks.append({"markup": None, "missing": caption} if absent
                      else {"markup": figure_div(build(report), div_id), "missing": ""})
    return blocks


def table_blocks(report: CompareReport) -> list[dict[str, Any]]:
    """Uncertainty, designs considered, the rules' advice and tier boundaries (the ones with rows)."""
    tables = []
    if report.uncertainty is not None:
        tables.append((content.uncertainty_title(report), content.UNCERTAINTY_HEADERS, content.uncertainty_rows(report)))
    tables += [("Designs considered", content.DESIGN_HEADERS, content.design_rows(report)),
               (content.ADVICE_TITLE, content.ADVICE_HEADERS, content.advice_rows(report)),
               ("Tier boundaries", content.TIER_HEADERS, content.tier_rows(report))]
    return [{"title": title, "headers": headers, "rows": rows} for title, headers, rows in tables if rows]


def sensitivity_block(report: CompareReport) -> dict[str, Any] | None:
    if not report.sensitivity:
        return None
    rows = content.sensitivity_rows(report)
    cell_classes = [["flips" if row[5] == content.YES_MARK and column in (0, 5) else "" for column in range(len(row))]
                    for row in rows]
    return {"headers": content.sensitivity_headers(report), "rows": rows, "cell_classes": cell_classes}


def flips_block(report: CompareReport) -> dict[str, Any] | None:
    if report.what_would_change is None:
        return None
    return {"title": content.flip_title(report), "headers": content.FLIP_HEADERS,
            "rows": content.flip_rows(report) if report.what_would_change.flips else [],
            "smallest": content.smallest_flip_line(report)}


def compare_context(report: CompareReport) -> dict[str, Any]:
    """Everything `compare.html.j2` shows, as plain data (text cells; the figures' markup)."""
    blocks = chart_blocks(report)
    return {
        "title": f"Fabric comparison: {report.spec_name}",
        "command": "compare",
        "summary": content.summary_line(report),
        "recommended_mark": content.RECOMMENDED_MARK,
        "warning_mark": content.WARNING_MARK,
        "recommendation": recommendation_block(report),
        "comparison": comparison_block(report),
        "charts_full": blocks[:2],  # step time and TCO full width; the other two side by side
        "charts_paired": blocks[2:],
        "tables": table_blocks(report),
        "crossovers": ({"headers": content.CROSSOVER_HEADERS, "rows": content.crossover_rows(report)}
                       if report.crossovers else None),
        "sensitivity": sensitivity_block(report),
        "flips": flips_block(report),
        "rules": {"headers": content.RULE_HEADERS, "rows": content.rule_rows(report),
                  "row_classes": ["" if rule.fired else "not-fired" for rule in report.rules]},
        "sources": content.cited_sources(report),
        "sources_title": content.SOURCES_TITLE,
        "notes": list(report.notes),
    }


def compare_html(report: CompareReport) -> str:
    """The whole comparison as one self-contained HTML document (plotly.js inlined once)."""
    return pages.render("compare.html.j2", charts=True, **compare_context(report))
