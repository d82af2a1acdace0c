"""One self-contained, offline HTML page for `fabricplan compare --html`.

plotly.js is inlined once in the page head; every figure is a div with a stable id (`chart-step`,
`chart-tco`, `chart-scale`, `chart-tornado`) plus a small script that draws it. The page loads
nothing from the network: no CDN, no web fonts. All user text is escaped.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence

import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from fabricplan.decide.models import CompareReport
from fabricplan.report import compare_charts as charts
from fabricplan.report import compare_content as content

PLOTLY_CONFIG = {"responsive": True, "displaylogo": False}

CSS = """
:root { --ink: #1d2733; --muted: #5b6675; --line: #d8dde3; --good: #1e7b34; --warn: #8a5a00;
        --warn-bg: #fff6dd; --ok-bg: #eef8f0; }
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: var(--ink);
       margin: 0 auto; max-width: 1320px; padding: 24px 32px; line-height: 1.45; }
h1 { font-size: 1.7rem; margin: 0 0 4px; } h2 { font-size: 1.25rem; margin: 28px 0 10px; }
.summary { color: var(--muted); margin: 0 0 16px; }
.callout { border-left: 5px solid var(--good); background: var(--ok-bg); padding: 12px 18px; border-radius: 4px; }
.callout.attention { border-left-color: #d29b00; }
.callout .headline { font-size: 1.25rem; font-weight: 700; color: var(--good); margin: 0 0 6px; }
.warning { background: var(--warn-bg); color: var(--warn); border: 1px solid #f0d58a; border-radius: 4px;
           padding: 8px 14px; margin: 10px 0; }
.warning ul { margin: 4px 0; }
table { border-collapse: collapse; width: 100%; font-size: 0.92rem; margin: 6px 0 4px; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 9px; text-align: left; vertical-align: top; }
th { background: #f4f6f8; }
table.numbers td:not(:first-child), table.numbers th:not(:first-child) { text-align: right; }
td.best { font-weight: 700; color: var(--good); }
th.recommended { color: var(--good); }
tr.not-fired td { color: var(--muted); }
td.flips { color: #c0392b; font-weight: 700; }
.caption { color: var(--muted); font-size: 0.85rem; }
.chart { width: 100%; margin: 8px 0 18px; border: 1px solid var(--line); border-radius: 4px; }
.chart-pair { display: grid; grid-template-columns: 1fr; gap: 0 18px; }
@media (min-width: 1200px) { .chart-pair { grid-template-columns: 1fr 1fr; } }
footer { color: var(--muted); font-size: 0.8rem; margin-top: 32px; }
@media print {
  body { max-width: none; padding: 0; font-size: 10pt; }
  section, .chart, table { break-inside: avoid; }
  .chart-pair { grid-template-columns: 1fr; }
  .modebar-container { display: none; }
  .callout, .warning, th { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
""".strip()

# Redraw the charts at the paper's width when printing (plotly sizes them for the window).
PRINT_RESIZE_SCRIPT = """
window.addEventListener("beforeprint", function () {
  document.querySelectorAll(".js-plotly-plot").forEach(function (chart) { Plotly.Plots.resize(chart); });
});
""".strip()

CHARTS: tuple[tuple[str, Callable[[CompareReport], go.Figure]], ...] = (
    ("chart-step", charts.step_time_figure),
    ("chart-tco", charts.tco_figure),
    ("chart-scale", charts.scale_figure),
    ("chart-tornado", charts.tornado_figure),
)


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def html_table(headers: Sequence[str], rows: Sequence[Sequence[str]], css_class: str = "",
               row_classes: Sequence[str] | None = None, cell_classes: Sequence[Sequence[str]] | None = None) -> str:
    """A table from plain text cells (escaped here)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = []
    for index, row in enumerate(rows):
        row_class = f' class="{row_classes[index]}"' if row_classes and row_classes[index] else ""
        cells = []
        for column, cell in enumerate(row):
            cell_class = cell_classes[index][column] if cell_classes else ""
            attribute = f' class="{cell_class}"' if cell_class else ""
            cells.append(f"<td{attribute}>{esc(cell)}</td>")
        body.append(f"<tr{row_class}>{''.join(cells)}</tr>")
    table_class = f' class="{css_class}"' if css_class else ""
    return f"<table{table_class}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def comparison_section(report: CompareReport) -> str:
    recommended = report.recommendation.recommended if content.feasible(report) else None
    headers = "".join(
        f'<th class="recommended">{content.RECOMMENDED_MARK} {esc(fabric)}</th>' if fabric == recommended
        else f"<th>{esc(fabric)}</th>" for fabric in content.fabric_ids(report))
    body = []
    for row in content.comparison_rows(report):
        best = row.best
        cells = "".join(f'<td class="best">{esc(v)}</td>' if i in best else f"<td>{esc(v)}</td>"
                        for i, v in enumerate(row.formatted))
        body.append(f"<tr><td>{esc(row.label)}</td>{cells}</tr>")
    table = (f'<table class="numbers" id="comparison"><thead><tr><th></th>{headers}</tr></thead>'
             f"<tbody>{''.join(body)}</tbody></table>")
    memory = (f'<p class="caption">{esc(content.MEMORY_LEGEND)}</p>' if content.memory_flagged_jobs(report) else "")
    return (f'<section><h2>Comparison</h2>{table}'
            f'<p class="caption">Bold green: best value in the row.</p>{memory}</section>')


def _bullets(items: Sequence[str]) -> str:
    return "<ul>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>"


def recommendation_section(report: CompareReport) -> str:
    recommendation = report.recommendation
    attention = recommendation.disagreements or recommendation.close_call
    mark = f"{content.RECOMMENDED_MARK} " if content.feasible(report) else f"{content.WARNING_MARK} "
    parts = [f'<p class="headline">{mark}{esc(content.recommendation_headline(report))}</p>']
    close_call = content.close_call_note(report)
    if close_call:
        parts.append(f'<div class="warning">{content.WARNING_MARK} {esc(close_call)}</div>')
    if recommendation.ranking:
        parts.append(f"<p>Ranking: {esc(' > '.join(recommendation.ranking))}</p>")
    if recommendation.reasons:
        parts.append("<p><strong>Why</strong></p>" + _bullets([esc(r) for r in recommendation.reasons]))
    if recommendation.why_not:
        parts.append("<p><strong>Why not the others</strong></p>"
                     + _bullets([f"<strong>{esc(f)}</strong>: {esc(r)}" for f, r in recommendation.why_not.items()]))
    if recommendation.disagreements:
        parts.append(f'<div class="warning" id="disagreements"><strong>{content.WARNING_MARK} Rules and numbers '
                     f"disagree</strong>{_bullets([esc(d) for d in recommendation.disagreements])}</div>")
    css_class = "callout attention" if attention else "callout"
    return (f'<section><h2>Recommendation</h2><div class="{css_class}" id="recommendation">{"".join(parts)}</div>'
            "</section>")


def figure_div(figure: go.Figure, div_id: str) -> str:
    """The figure as a div + drawing script; expects plotly.js already on the page."""
    return pio.to_html(figure, include_plotlyjs=False, full_html=False, div_id=div_id, config=PLOTLY_CONFIG)


def _chart_block(report: CompareReport, div_id: str, build: Callable[[CompareReport], go.Figure]) -> str:
    if div_id == "chart-scale" and not report.scale_curve:
        return '<p class="caption">No scale curve in this report.</p>'
    if div_id == "chart-tornado" and not report.sensitivity:
        return '<p class="caption">No sensitivity analysis in this report.</p>'
    return f'<div class="chart">{figure_div(build(report), div_id)}</div>'


def charts_section(report: CompareReport) -> str:
    """Step time and TCO full width; the two single-panel charts side by side on wide screens."""
    blocks = [_chart_block(report, div_id, build) for div_id, build in CHARTS]
    full_width, paired = blocks[:2], blocks[2:]
    return ("<section><h2>Charts</h2>" + "".join(full_width)
            + f'<div class="chart-pair">{"".join(paired)}</div></section>')


def rules_section(report: CompareReport) -> str:
    row_classes = ["" if rule.fired else "not-fired" for rule in report.rules]
    return ("<section><h2>Decision rules</h2>"
            + html_table(content.RULE_HEADERS, content.rule_rows(report), row_classes=row_classes)
            + "</section>")


def _plain_section(title: str, headers, rows) -> str:
    if not rows:
        return ""
    return f"<section><h2>{esc(title)}</h2>" + html_table(headers, rows) + "</section>"


def extra_sections(report: CompareReport) -> str:
    """Uncertainty, designs considered, the rules' advice and tier boundaries."""
    parts = []
    if report.uncertainty is not None:
        parts.append(_plain_section(content.uncertainty_title(report), content.UNCERTAINTY_HEADERS,
                                    content.uncertainty_rows(report)))
    parts.append(_plain_section("Designs considered", content.DESIGN_HEADERS, content.design_rows(report)))
    parts.append(_plain_section(content.ADVICE_TITLE, content.ADVICE_HEADERS, content.advice_rows(report)))
    parts.append(_plain_section("Tier boundaries", content.TIER_HEADERS, content.tier_rows(report)))
    return "".join(parts)


def crossovers_section(report: CompareReport) -> str:
    if not report.crossovers:
        return ""
    return ("<section><h2>Crossovers</h2>"
            + html_table(content.CROSSOVER_HEADERS, content.crossover_rows(report)) + "</section>")


def sensitivity_section(report: CompareReport) -> str:
    if not report.sensitivity:
        return ""
    rows = content.sensitivity_rows(report)
    cell_classes = [["flips" if row[5] == content.YES_MARK and column in (0, 5) else "" for column in range(len(row))]
                    for row in rows]
    return ("<section><h2>Sensitivity</h2>"
            + html_table(content.sensitivity_headers(report), rows, cell_classes=cell_classes) + "</section>")


def flips_section(report: CompareReport) -> str:
    if report.what_would_change is None:
        return ""
    return (f"<section><h2>{esc(content.flip_title(report))}</h2>"
            + (html_table(content.FLIP_HEADERS, content.flip_rows(report)) if report.what_would_change.flips else "")
            + f"<p>{esc(content.smallest_flip_line(report))}</p></section>")


def notes_section(report: CompareReport) -> str:
    if not report.notes:
        return ""
    return "<section><h2>Notes</h2>" + _bullets([esc(note) for note in report.notes]) + "</section>"


def compare_html(report: CompareReport) -> str:
    """The whole comparison as one self-contained HTML document (plotly.js inlined once)."""
    title = f"Fabric comparison: {report.spec_name}"
    body = "".join([
        f"<header><h1>{esc(title)}</h1><p class=\"summary\">{esc(content.summary_line(report))}</p></header>",
        recommendation_section(report),
        comparison_section(report),
        charts_section(report),
        extra_sections(report),
        crossovers_section(report),
        sensitivity_section(report),
        flips_section(report),
        rules_section(report),
        notes_section(report),
        "<footer>Generated by fabricplan compare. Self-contained: works offline.</footer>",
    ])
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{esc(title)}</title><style>{CSS}</style>"
            f"<script type=\"text/javascript\">{get_plotlyjs()}</script></head>"
            f"<body>{body}<script type=\"text/javascript\">{PRINT_RESIZE_SCRIPT}</script></body></html>\n")
