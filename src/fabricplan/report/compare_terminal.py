"""Rich renderables for `fabricplan compare` in the terminal.

Every table is a `FitTable` (report/layout.py): it fits the terminal's width (80 columns when piped)
without cutting a number or a name, or prints one block per row. Long text (fabric names, rule
messages, crossover notes, citations) goes below the tables as wrapped lines, not into cells.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from fabricplan.decide.models import CompareReport
from fabricplan.report import compare_content as content
from fabricplan.report.layout import FitTable, Lines
from fabricplan.report.quotes import with_english


def comparison_table(report: CompareReport) -> RenderableType:
    """Metrics down, fabrics across (fabric ids as headers; their full names in a legend below)."""
    recommended = report.recommendation.recommended
    headers: list[str | Text] = [""]
    header_styles = ["bold"]
    for fabric in report.fabrics:
        mark = f"{content.RECOMMENDED_MARK} " if fabric.fabric == recommended and content.feasible(report) else ""
        headers.append(f"{mark}{fabric.fabric}")
        header_styles.append("bold green" if mark else "bold")
    rows = []
    for row in content.comparison_rows(report):
        if row.label == "fabric":  # full names go to the legend below
            continue
        best = row.best
        rows.append([Text(row.label, style="bold")] + [
            Text(value, style="bold green") if index in best else Text(value)
            for index, value in enumerate(row.formatted)])
    table = FitTable(headers, rows, title=f"Compare: {report.spec_name}, {content.summary_line(report)}",
                     justify=["left"] + ["right"] * len(report.fabrics), header_styles=header_styles)
    legend = Lines([(f"{fabric.fabric}: ", fabric.name) for fabric in report.fabrics], style="dim")
    keys = [Text("bold green = best value in the row", style="dim")]
    if content.memory_flagged_jobs(report):
        keys.append(Text(content.MEMORY_LEGEND, style="dim"))
    return Group(table, legend, *keys)


def recommendation_panel(report: CompareReport) -> Panel:
    recommendation = report.recommendation
    lines: list[RenderableType] = [Text(content.recommendation_headline(report),
                                        style="bold green" if content.feasible(report) else "bold red")]
    close_call = content.close_call_note(report)
    if close_call:
        lines.append(Text(f"{content.WARNING_MARK} {close_call}", style="bold yellow"))
    if recommendation.ranking:
        lines.append(Text(f"Ranking: {' > '.join(recommendation.ranking)}"))
    if recommendation.reasons:
        lines.append(Text("Why:", style="bold"))
        lines.append(Lines([("  • ", reason) for reason in recommendation.reasons]))
    if recommendation.why_not:
        lines.append(Text("Why not the others:", style="bold"))
        lines.append(Lines([("  • ", f"{fabric}: {reason}") for fabric, reason in recommendation.why_not.items()]))
    lines.append(Text(content.decided_by_line(report), style="bold"))
    if recommendation.disagreements:
        lines.append(Text(f"{content.WARNING_MARK} Rules and numbers disagree:", style="bold yellow"))
        lines.append(Lines([(f"  {content.WARNING_MARK} ", item) for item in recommendation.disagreements],
                           style="yellow"))
    return Panel(Group(*lines), title="Recommendation", title_align="left",
                 border_style="yellow" if recommendation.disagreements or recommendation.close_call else "green")


def rules_table(report: CompareReport, verbose: bool = False) -> RenderableType:
    """Rule id, fired or not and the rule in one line; what the fired rules found below the table.

    `verbose` adds, per rule, what it found and its full citation (quotes with an English rendering).
    """
    fired = [rule for rule in report.rules if rule.fired]
    rows = []
    for rule in report.rules:
        style = "" if rule.fired else "dim"
        effect = content.rule_effect(rule)
        says = rule.title if effect == "-" or not rule.fired else f"{rule.title} → {effect}"
        rows.append([Text(rule.id, style="bold" if rule.fired else "dim"),
                     Text("yes" if rule.fired else "no", style="bold" if rule.fired else "dim"),
                     Text(says, style=style)])
    title = f"Decision rules: {len(fired)} of {len(report.rules)} fired"
    parts: list[RenderableType] = [FitTable(("rule", "fired", "says"), rows, title=title)]
    shown = report.rules if verbose else fired
    if shown:
        parts.append(Text("What the rules found:" if verbose else "What the fired rules found:", style="bold"))
    items: list[tuple[str | Text, str | Text]] = []
    known = content.quote_translations(report)
    for rule in shown:
        items.append((f"  {rule.id}: ", rule.message))
        if verbose:
            items.append(("    source: ", Text(with_english(rule.citation, known), style="dim")))
    if items:
        parts.append(Lines(items))
    if verbose and report.sources:
        parts.append(Text(f"{content.SOURCES_TITLE}:", style="bold"))
        parts.append(Lines([(f"  {mark}", text) for mark, text in content.source_lines(report)], style="dim"))
    if not verbose:
        parts.append(Text("Citations and every rule's finding: --verbose, --markdown or --html.", style="dim"))
    return Group(*parts)


def crossovers_table(report: CompareReport) -> RenderableType:
    """One row per pair and crossing; the notes as numbered footnotes under the table."""
    rows = []
    footnotes: list[tuple[str, str]] = []
    for fabrics, gpus, below, above, note in content.crossover_rows(report):
        marker = ""
        if note:
            footnotes.append((f"[{len(footnotes) + 1}] ", note))
            marker = f"[{len(footnotes)}]"
        rows.append([fabrics, gpus, below, above, marker])
    headers = [*content.CROSSOVER_HEADERS[:4], "note"]
    table = FitTable(headers, rows, title="Crossovers (cost per useful GPU-hour vs GPU count)",
                     justify=["left", "right", "left", "left", "left"])
    return Group(table, Lines(footnotes, style="dim"))


def sensitivity_table(report: CompareReport) -> RenderableType:
    """Factor, its swing, the winner at each end, whether the winner flips and the change of the
    recommended fabric's deciding metric; the long column names in a legend."""
    recommended = report.recommendation.recommended
    rows = []
    for factor, low, high, winner_low, winner_high, flips, change in content.sensitivity_rows(report):
        flip_style = "bold red" if flips == content.YES_MARK else ""
        winners = winner_low if winner_low == winner_high else f"{winner_low} / {winner_high}"
        rows.append([Text(factor, style=flip_style), f"{low} / {high}", winners, Text(flips, style=flip_style),
                     change])
    table = FitTable(("factor", "low / high", "winner", "flips", "change"), rows,
                     title="Sensitivity (one factor at a time)",
                     justify=["left", "left", "left", "left", "right"])
    legend = Lines([("winner: ", "the cheapest per useful GPU-hour of the fabrics no rule rules out, at the low / high value (one name when both agree)"),
                    ("change: ", f"change of {recommended}'s {content.metric_label(report.deciding_metric)} "
                                 "at the low / high value")], style="dim")
    return Group(table, legend)


def flips_table(report: CompareReport) -> RenderableType:
    """Each assumption that flips the leader, smallest first, and the smallest in words below."""
    rows = [list(r) for r in content.flip_rows(report)]
    parts: list[RenderableType] = []
    if rows:
        parts.append(FitTable(("change that flips it", "size", "leader", "regret", "at end"), rows,
                              title=content.flip_title(report), justify=["left", "right", "left", "right", "right"]))
    line = content.smallest_flip_line(report)
    if line:
        parts.append(Lines([("", line)]))
    parts.append(Text("regret: how much more the current leader costs per useful GPU-hour than the new one, at "
                      "the flip / at the end of the searched range", style="dim"))
    return Group(*parts)


def uncertainty_table(report: CompareReport) -> RenderableType:
    return FitTable(content.UNCERTAINTY_HEADERS, [list(r) for r in content.uncertainty_rows(report)],
                    title=content.uncertainty_title(report), justify=["left", "right", "right", "right", "right"])


def designs_table(report: CompareReport, verbose: bool = False) -> RenderableType:
    """Designs considered, compact for 80 columns: the buildable ones in the table (style and verdict
    in numbered footnotes), the ones that cannot be built in one line per fabric. Without ``verbose``,
    per fabric the chosen design and the cheapest that differs from it in style and the cheapest that
    differs in switch model (what the search traded), the rest counted in one line."""
    rows, footnotes, unbuildable, hidden = [], [], [], 0
    chosen: dict[str, tuple[str, str]] = {}
    kept: dict[str, set[str]] = {}
    for fabric, switch, style, tiers, switches, _capex, metric, note in content.design_rows(report):
        if tiers == "-":
            unbuildable.append((f"  {fabric}: ", f"{switch}: {note.removeprefix('not buildable: ')}"))
            continue
        if not verbose:  # rows come chosen first, then cheapest first
            best_switch, best_style = chosen.setdefault(fabric, (switch, style))
            axes = kept.setdefault(fabric, set())
            axis = ("chosen" if (switch, style) == (best_switch, best_style) and not axes else
                    "style" if style != best_style and "style" not in axes else
                    "switch" if switch != best_switch and "switch" not in axes else None)
            if axis is None:
                hidden += 1
                continue
            axes.add(axis)
        footnotes.append((f"[{len(footnotes) + 1}] ", f"{style}; {note}"))
        rows.append([fabric, switch, tiers, switches, metric, f"[{len(footnotes)}]"])
    table = FitTable(("fabric", "switch", "tiers", "switches", "$/useful GPU-h", "note"), rows,
                     title="Designs considered (cheapest per useful GPU-hour chosen)",
                     justify=["left", "left", "right", "right", "right", "left"])
    parts: list[RenderableType] = [table, Lines(footnotes, style="dim")]
    if hidden:
        parts.append(Text(f"{hidden} more design{'s' if hidden > 1 else ''} considered: --verbose, --json, "
                          "--markdown or --html list them all.", style="dim"))
    if unbuildable:
        parts += [Text("Not buildable:", style="dim"), Lines(unbuildable, style="dim")]
    return Group(*parts)


def advice_table(report: CompareReport) -> RenderableType:
    """Fired advice rules in a narrow table; where each acts in the numbers as a line below."""
    rows = [[rule, favours, agrees] for rule, favours, agrees, _ in content.advice_rows(report)]
    table = FitTable(content.ADVICE_HEADERS[:3], rows, title=content.ADVICE_TITLE, justify=["left", "left", "left"])
    return Group(table, Lines([(f"  {rule}: ", mechanism) for rule, _, _, mechanism in content.advice_rows(report)],
                              style="dim"))


def tier_table(report: CompareReport) -> RenderableType:
    return FitTable(content.TIER_HEADERS, [list(r) for r in content.tier_rows(report)],
                    title="Tier boundaries of each chosen design (searched range)",
                    justify=["left", "left", "right", "right", "right"])


def compare_renderables(report: CompareReport, verbose: bool = False) -> list[RenderableType]:
    """Everything `fabricplan compare` prints: comparison, recommendation, uncertainty, designs,
    rules, crossovers, tier boundaries, sensitivity."""
    out: list[RenderableType] = [comparison_table(report), recommendation_panel(report)]
    if report.uncertainty is not None:
        out.append(uncertainty_table(report))
    if any(f.designs_considered for f in report.fabrics):
        out.append(designs_table(report, verbose=verbose))
    out.append(rules_table(report, verbose=verbose))
    if report.recommendation.advice:
        out.append(advice_table(report))
    if report.crossovers:
        out.append(crossovers_table(report))
    if report.tier_boundaries:
        out.append(tier_table(report))
    if report.sensitivity:
        out.append(sensitivity_table(report))
    if report.what_would_change is not None:
        out.append(flips_table(report))
    if report.options:  # issue 26: each option switched from how the spec builds it, through the same chain
        out.append(Lines([("option: ", option_line(u)) for u in report.options], style="dim"))
    if report.notes:
        out.append(Lines([("note: ", note) for note in report.notes], style="dim"))
    return out


def option_line(uplift) -> str:
    """``infiniband-ndr with SHARP (off as installed): step -1.2 % (job); cost per useful GPU-hour -0.8 %``,
    ``spectrum-x without adaptive routing (on as installed): ...``; where the step does not move, the
    reason instead of a bare +0.0 %."""
    label = {"sharp": "SHARP", "adaptive_routing": "adaptive routing"}.get(uplift.option, uplift.option)
    how = (f"with {label} (off as installed)" if getattr(uplift, "enabled", True)
           else f"without {label} (on as installed)")
    cost = f"cost per useful GPU-hour {uplift.cost_per_useful_gpu_hour_change:+.1%}"
    if getattr(uplift, "note", ""):
        return f"{uplift.fabric} {how}: no step-time change: {uplift.note}; {cost}"
    steps = ", ".join(f"{change:+.1%} ({job})" for job, change in uplift.step_time_change.items())
    return f"{uplift.fabric} {how}: step {steps}; {cost}"
