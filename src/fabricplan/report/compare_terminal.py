"""Rich renderables for `fabricplan compare` in the terminal."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from fabricplan.decide.models import CompareReport
from fabricplan.report import compare_content as content


def _plain_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> Table:
    table = Table(title=title, title_justify="left", show_lines=False)
    for header in headers:
        table.add_column(header, overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table


def comparison_table(report: CompareReport) -> Table:
    recommended = report.recommendation.recommended
    table = Table(title=f"Compare: {report.spec_name}, {content.summary_line(report)}", title_justify="left")
    table.add_column("", style="bold")
    for fabric in report.fabrics:
        header = fabric.fabric
        if fabric.fabric == recommended:
            header = f"{content.RECOMMENDED_MARK} {header}"
        table.add_column(header, justify="right",
                         header_style="bold green" if fabric.fabric == recommended else "bold")
    for row in content.comparison_rows(report):
        best = row.best
        cells = [Text(value, style="bold green") if index in best else Text(value)
                 for index, value in enumerate(row.formatted)]
        table.add_row(row.label, *cells)
    table.caption = "bold green = best value in the row"
    return table


def recommendation_panel(report: CompareReport) -> Panel:
    recommendation = report.recommendation
    lines: list[Text] = [Text(content.recommendation_headline(report), style="bold green")]
    close_call = content.close_call_note(report)
    if close_call:
        lines.append(Text(f"{content.WARNING_MARK} {close_call}", style="bold yellow"))
    if recommendation.ranking:
        lines.append(Text(f"Ranking: {' > '.join(recommendation.ranking)}"))
    if recommendation.reasons:
        lines.append(Text("Why:", style="bold"))
        lines += [Text(f"  • {reason}") for reason in recommendation.reasons]
    if recommendation.why_not:
        lines.append(Text("Why not the others:", style="bold"))
        lines += [Text(f"  • {fabric}: {reason}") for fabric, reason in recommendation.why_not.items()]
    if recommendation.disagreements:
        lines.append(Text(f"{content.WARNING_MARK} Rules and numbers disagree:", style="bold yellow"))
        lines += [Text(f"  {content.WARNING_MARK} {item}", style="yellow") for item in recommendation.disagreements]
    return Panel(Group(*lines), title="Recommendation", title_align="left",
                 border_style="yellow" if recommendation.disagreements or recommendation.close_call else "green")


def rules_table(report: CompareReport) -> Table:
    table = Table(title="Decision rules", title_justify="left")
    for header in content.RULE_HEADERS:
        table.add_column(header, overflow="fold")
    for rule, row in zip(report.rules, content.rule_rows(report), strict=True):
        style = "" if rule.fired else "dim"
        fired = Text(row[1], style="bold" if rule.fired else "dim")
        table.add_row(Text(row[0], style=style), fired, Text(row[2], style=style), Text(row[3], style=style),
                      Text(row[4], style="dim"))
    return table


def crossovers_table(report: CompareReport) -> Table:
    return _plain_table("Crossovers (cost per useful GPU-hour vs GPU count)", content.CROSSOVER_HEADERS,
                        content.crossover_rows(report))


def sensitivity_table(report: CompareReport) -> Table:
    table = Table(title="Sensitivity (one factor at a time)", title_justify="left")
    for header in content.sensitivity_headers(report):
        table.add_column(header, overflow="fold")
    for row in content.sensitivity_rows(report):
        flips = row[5] == content.YES_MARK
        cells = [Text(cell, style="bold red" if flips and index in (0, 5) else "") for index, cell in enumerate(row)]
        table.add_row(*cells)
    return table


def compare_renderables(report: CompareReport) -> list[RenderableType]:
    """Everything `fabricplan compare` prints: comparison, recommendation, rules, crossovers, sensitivity."""
    out: list[RenderableType] = [comparison_table(report), recommendation_panel(report), rules_table(report)]
    if report.crossovers:
        out.append(crossovers_table(report))
    if report.sensitivity:
        out.append(sensitivity_table(report))
    out += [Text(f"note: {note}", style="dim") for note in report.notes]
    return out
