"""What a `fabricplan compare` report shows, as formatted rows every renderer shares.

The terminal, Markdown and HTML renderers differ only in markup; the rows, labels, number formats
and "best value" marks come from here so the three outputs never disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from fabricplan.decide.models import CompareReport, FabricOutcome, RuleResult
from fabricplan.report.layout import plural
from fabricplan.report.quotes import translations, with_english
from fabricplan.report.tables import percent, usd

Better = Literal["lower", "higher"]

METRIC_LABELS: dict[str, str] = {
    "cost_per_useful_gpu_hour_usd": "cost per useful GPU-hour",
    "tco_usd": "TCO",
    "weighted_gpu_utilisation": "GPU utilisation",
    "weighted_mfu": "MFU",
    "weighted_goodput": "goodput after failures",
    "small_message_latency_us": "small-message latency",
}

# Deciding metrics where a larger value wins; every other metric (costs, times) is lower-is-better.
HIGHER_IS_BETTER_METRICS = frozenset({"weighted_gpu_utilisation", "weighted_mfu", "weighted_goodput",
                                      "useful_gpu_hours"})

YES_MARK = "✓"
NO_MARK = "✗"
RECOMMENDED_MARK = "★"
WARNING_MARK = "⚠"
RELAID_MARK = "*"
MEMORY_LEGEND = "* re-laid to fit in GPU memory, ⚠ over GPU memory (the notes say how)"


def usd_cents(value: float | None) -> str:
    """Money with cents, for per-hour prices: $2.47."""
    return "-" if value is None else f"${value:,.2f}"


def seconds(value: float | None) -> str:
    """A duration in s, or ms below one second."""
    if value is None:
        return "-"
    return f"{value:,.2f} s" if abs(value) >= 1 else f"{value * 1000:,.1f} ms"


def milliseconds(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f} ms"


def rate(value: float | None) -> str:
    """A rate per second with its thousands: 1,234/s."""
    return "-" if value is None else f"{value:,.0f}/s"


def microseconds(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f} µs"


def signed_percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:+.1f}%"


def metric_label(metric: str) -> str:
    return METRIC_LABELS.get(metric, metric.replace("_", " "))


def higher_is_better(metric: str) -> bool:
    return metric in HIGHER_IS_BETTER_METRICS


@dataclass(frozen=True)
class MetricRow:
    """One row of the comparison table: a label and one value per fabric (same order as the report)."""

    label: str
    formatted: list[str]
    values: list[float | None]
    better: Better | None = None

    @property
    def best(self) -> set[int]:
        """Indices of the fabrics with the best value (ties included); empty when nothing is comparable."""
        numbers = [(index, value) for index, value in enumerate(self.values) if value is not None]
        if self.better is None or len(numbers) < 2:
            return set()
        pick = min if self.better == "lower" else max
        best_value = pick(value for _, value in numbers)
        if all(value == best_value for _, value in numbers):
            return set()
        return {index for index, value in numbers if value == best_value}


def fabric_ids(report: CompareReport) -> list[str]:
    return [fabric.fabric for fabric in report.fabrics]


def fabric_by_id(report: CompareReport) -> dict[str, FabricOutcome]:
    return {fabric.fabric: fabric for fabric in report.fabrics}


def rank_of(report: CompareReport, fabric: FabricOutcome) -> int | None:
    """The fabric's rank: its own field when set, else its place in the recommendation's ranking."""
    if fabric.rank > 0:
        return fabric.rank
    ranking = report.recommendation.ranking
    return ranking.index(fabric.fabric) + 1 if fabric.fabric in ranking else None


def excluded_by(report: CompareReport) -> dict[str, list[str]]:
    """Fabric id -> ids of the fired rules that exclude it."""
    out: dict[str, list[str]] = {}
    for rule in report.rules:
        if rule.fired:
            for fabric in rule.excludes:
                out.setdefault(fabric, []).append(rule.id)
    return out


def rank_labels(report: CompareReport) -> list[str]:
    recommended = report.recommendation.recommended
    exclusions = excluded_by(report)
    labels = []
    for fabric in report.fabrics:
        rank = rank_of(report, fabric)
        label = "-" if rank is None else f"#{rank}"
        if fabric.fabric == recommended:
            label += (f" {RECOMMENDED_MARK} recommended" if feasible(report)
                      else " (best of none feasible)")
        if fabric.fabric in exclusions:
            label += f" (excluded by {', '.join(exclusions[fabric.fabric])})"
        labels.append(label)
    return labels


def job_names(report: CompareReport) -> list[str]:
    """Job names in first-seen order across fabrics."""
    names: list[str] = []
    for fabric in report.fabrics:
        for job in fabric.jobs:
            if job.job not in names:
                names.append(job.job)
    return names


Formatter = Callable[[float | None], str]


def _job_row(report: CompareReport, job_name: str, label: str, attribute: str, formatter: Formatter,
             better: Better) -> MetricRow:
    values: list[float | None] = []
    for fabric in report.fabrics:
        job = next((j for j in fabric.jobs if j.job == job_name), None)
        values.append(None if job is None else getattr(job, attribute))
    return MetricRow(label, [formatter(v) for v in values], values, better)


def _serving_row(report: CompareReport, job_name: str, label: str, attribute: str, formatter: Formatter,
                 better: Better | None) -> MetricRow:
    """A serving job's metric (``JobOutcome.serving``) per fabric."""
    values: list[float | None] = []
    for fabric in report.fabrics:
        job = next((j for j in fabric.jobs if j.job == job_name), None)
        serving = getattr(job, "serving", None)
        values.append(None if serving is None else float(getattr(serving, attribute)))
    return MetricRow(label, [formatter(v) for v in values], values, better)


def serving_job_names(report: CompareReport) -> set[str]:
    """Jobs of the report that are serving jobs (on some fabric)."""
    return {job.job for fabric in report.fabrics for job in fabric.jobs if getattr(job, "serving", None) is not None}


def serving_rows(report: CompareReport, name: str) -> list[MetricRow]:
    """A serving job's rows: what its users see (TTFT, TPOT, SLO attainment), its throughput per GPU
    and its cost per million output tokens."""
    return [
        _serving_row(report, name, f"TTFT: {name}", "ttft_ms", milliseconds, "lower"),
        _serving_row(report, name, f"TPOT: {name}", "tpot_ms", milliseconds, "lower"),
        _serving_row(report, name, f"within SLOs: {name}", "slo_attainment", percent, "higher"),
        _serving_row(report, name, f"tokens/s per GPU: {name}", "tokens_per_s_per_gpu", rate, "higher"),
        _serving_row(report, name, f"$ per M tokens: {name}", "cost_per_million_tokens_usd", usd_cents, "lower"),
    ]


def memory_flagged_jobs(report: CompareReport) -> set[str]:
    """Jobs that were re-laid to fit in GPU memory, or do not fit, on some fabric's design."""
    return {job.job for fabric in report.fabrics for job in fabric.jobs
            if not getattr(job, "fits_memory", True) or getattr(job, "memory_note", "")}


def _memory_cell(job) -> str:
    if job is None:
        return "-"
    mark = "" if job.fits_memory else f" {WARNING_MARK}"
    relaid = RELAID_MARK if job.memory_note.startswith("re-laid") else ""
    return f"{job.memory_per_gpu_gib:,.1f} GiB{relaid}{mark}"


def _memory_row(report: CompareReport, job_name: str) -> MetricRow:
    jobs = [next((j for j in fabric.jobs if j.job == job_name), None) for fabric in report.fabrics]
    return MetricRow(f"memory/GPU: {job_name}", [_memory_cell(j) for j in jobs], [None] * len(jobs))


def _row(label: str, values: list[float | None], formatter: Formatter, better: Better | None) -> MetricRow:
    return MetricRow(label, [formatter(v) for v in values], values, better)


def comparison_rows(report: CompareReport) -> list[MetricRow]:
    """The comparison table: one row per metric, one value per fabric."""
    fabrics = report.fabrics
    rows = [
        MetricRow("rank", rank_labels(report), [None] * len(fabrics)),
        MetricRow("fabric", [fabric.name for fabric in fabrics], [None] * len(fabrics)),
    ]
    flagged = memory_flagged_jobs(report)
    serving = serving_job_names(report)
    for name in job_names(report):
        if name in serving:
            rows += serving_rows(report, name)
            continue
        rows.append(_job_row(report, name, f"step time: {name}", "step_time_s", seconds, "lower"))
        rows.append(_job_row(report, name, f"exposed comm share: {name}", "exposed_comm_share", percent, "lower"))
        if name in flagged:
            rows.append(_memory_row(report, name))
    bases = {fabric.tco_basis for fabric in fabrics}
    tco_label = f"TCO ({'/'.join(sorted(bases))}, {report.horizon_years:g} yr)"
    rows += [
        _row("GPU utilisation (job-weighted)", [f.weighted_gpu_utilisation for f in fabrics], percent,
             "higher"),
        _row("MFU (job-weighted)", [f.weighted_mfu for f in fabrics], percent, "higher"),
        _row("goodput after failures", [f.weighted_goodput for f in fabrics], percent, "higher"),
        _row("small-message latency", [f.small_message_latency_us for f in fabrics], microseconds,
             "lower"),
        _row("network capex", [f.cost.network_capex_usd for f in fabrics], usd, "lower"),
        _row(tco_label, [f.tco_usd for f in fabrics], usd, "lower"),
        _row("network share of cluster capex", [f.cost.network_share_of_cluster_capex for f in fabrics],
             percent, None),
        _row("cost per useful GPU-hour", [f.cost_per_useful_gpu_hour_usd for f in fabrics], usd_cents,
             "lower"),
    ]
    return rows


def summary_line(report: CompareReport) -> str:
    return (f"{plural(report.gpus, 'GPU')}, {plural(len(report.fabrics), 'fabric')}, "
            f"{report.horizon_years:g}-year horizon, "
            f"deciding metric: {metric_label(report.deciding_metric)}")


def rule_effect(rule: RuleResult) -> str:
    """'favours a; disfavours b; excludes c' (empty parts left out; 'advice: ' first for an advice rule)."""
    parts = [f"{verb} {', '.join(fabrics)}" for verb, fabrics in
             (("favours", rule.favours), ("disfavours", rule.disfavours), ("excludes", rule.excludes)) if fabrics]
    if parts and getattr(rule, "role", "advice") == "advice":  # the seeds' claim: shown, never ranked on
        parts[0] = f"advice: {parts[0]}"
    return "; ".join(parts) or "-"


RULE_HEADERS = ("rule", "fired", "effect", "message", "citation")


def rule_rows(report: CompareReport) -> list[tuple[str, str, str, str, str]]:
    """Rule rows for Markdown and HTML: the full citation, each Chinese quote with its English rendering."""
    known = quote_translations(report)
    return [(rule.id, "yes" if rule.fired else "no", rule_effect(rule), rule.message, with_english(rule.citation, known))
            for rule in report.rules]


CROSSOVER_HEADERS = ("fabrics", "from GPUs", "leader below", "leader above", "note")


def _crossover_at(c) -> str:
    kind = getattr(c, "kind", "crossover")
    if kind == "no_clear_leader":
        first, last = c.from_gpus, c.to_gpus
        return f"unclear {first:,}" if first == last else f"unclear {first:,}-{last:,}"
    return "no change" if c.gpus is None else f"{c.gpus:,}"


def crossover_rows(report: CompareReport) -> list[tuple[str, str, str, str, str]]:
    return [(f"{c.fabric_a} vs {c.fabric_b}", _crossover_at(c),
             c.leader_below, c.leader_above or "-", c.note) for c in report.crossovers]


UNCERTAINTY_HEADERS = ("fabric", "p10", "p50", "p90", "best in")


def uncertainty_title(report: CompareReport) -> str:
    u = report.uncertainty
    return (f"Uncertainty: cost per useful GPU-hour over {u.draws:,} draws of the catalog's ranges "
            f"(seed {u.seed}; clear winner at >= {100 * u.threshold:.0f} %)")


def uncertainty_rows(report: CompareReport) -> list[tuple[str, str, str, str, str]]:
    u = report.uncertainty
    if u is None:
        return []
    return [(fabric.fabric, usd_cents(d.p10_usd), usd_cents(d.p50_usd), usd_cents(d.p90_usd),
             f"{100 * d.probability_best:.0f}%")
            for fabric in report.fabrics if (d := u.fabrics.get(fabric.fabric)) is not None]


DESIGN_HEADERS = ("fabric", "switch", "style", "tiers", "switches", "network capex", "cost / useful GPU-h", "verdict")


def _same_design(d) -> tuple:
    """What makes two buildable designs the same to the buyer: tiers, switch count, network capex and
    the deciding metric (e.g. every switch model and style of a single node: no switches at all)."""
    return (d.tiers, d.switches, round(d.network_capex_usd or 0.0, 2), round(d.cost_per_useful_gpu_hour_usd or 0.0, 6))


def design_rows(report: CompareReport) -> list[tuple[str, ...]]:
    """Every distinct design considered per fabric (switch model x style), the chosen one first.
    Buildable designs with the same tiers, switches, capex and cost are one row (the first, chosen
    if it is among them), its note saying how many options it stands for."""
    rows = []
    for fabric in report.fabrics:
        ordered = sorted(fabric.designs_considered, key=lambda d: (not d.chosen, d.cost_per_useful_gpu_hour_usd is None,
                                                                   d.cost_per_useful_gpu_hour_usd or 0))
        groups: dict[tuple, list] = {}
        for d in ordered:
            key = _same_design(d) if d.tiers is not None else (id(d),)
            groups.setdefault(key, []).append(d)
        for same in groups.values():
            d = same[0]
            note = d.note
            if len(same) > 1:
                switches = sorted({x.switch for x in same})
                styles = sorted({x.style.replace("_", " ") for x in same})
                note += (f" (the same design as {len(same) - 1} other option{'s' if len(same) > 2 else ''}: "
                         f"{len(switches)} switch model{'s' if len(switches) > 1 else ''} x {len(styles)} "
                         f"style{'s' if len(styles) > 1 else ''})")
            rows.append((fabric.fabric, d.switch, d.style.replace("_", " "), "-" if d.tiers is None else str(d.tiers),
                         "-" if d.switches is None else f"{d.switches:,}",
                         "-" if d.network_capex_usd is None else usd(d.network_capex_usd),
                         usd_cents(d.cost_per_useful_gpu_hour_usd), note))
    return rows


ADVICE_HEADERS = ("rule", "favours", "numbers agree", "acts through")
ADVICE_TITLE = "The seeds' advice beside the numbers (it does not rank)"


def advice_rows(report: CompareReport) -> list[tuple[str, ...]]:
    """Fired advice rules: what each favours, whether the numbers' choice agrees, and where its
    subject acts in the numbers (or why it is not modelled)."""
    return [(a.rule, ", ".join(a.favours) or "-", YES_MARK if a.agrees_with_numbers else NO_MARK, a.mechanism)
            for a in report.recommendation.advice]


def decided_by_line(report: CompareReport) -> str:
    r = report.recommendation
    if r.decided_by == "exclusions":
        return "Decided by exclusions: one fabric is left."
    return "Decided by the numbers; the seeds' rules of thumb are advice beside them."


TIER_HEADERS = ("fabric", "switch", "radix", "GPUs", "tiers above")


def tier_rows(report: CompareReport) -> list[tuple[str, ...]]:
    return [(b.fabric, b.switch, str(b.radix), f"{b.gpus:,}", str(b.tiers_above)) for b in report.tier_boundaries]


def sensitivity_headers(report: CompareReport) -> tuple[str, ...]:
    recommended = report.recommendation.recommended
    return ("factor", "low", "high", "winner (low)", "winner (high)", "flips",
            f"change of {recommended}'s {metric_label(report.deciding_metric)} (low / high)")


def sensitivity_rows(report: CompareReport) -> list[tuple[str, ...]]:
    recommended = report.recommendation.recommended
    rows = []
    for row in report.sensitivity:
        change = (f"{signed_percent(row.metric_change_low.get(recommended))} / "
                  f"{signed_percent(row.metric_change_high.get(recommended))}")
        rows.append((row.factor, row.low_label, row.high_label, row.winner_low, row.winner_high,
                     YES_MARK if row.flips else NO_MARK, change))
    return rows


FLIP_HEADERS = ("change that flips it", "size", "new leader", "regret", "at range end")


def flip_title(report: CompareReport) -> str:
    w = report.what_would_change
    return f"What would change the answer (against {w.leader}, one assumption at a time)"


def flip_rows(report: CompareReport) -> list[tuple[str, ...]]:
    """Per assumption that flips the numbers' leader: the change, its size, the new leader and the
    regret (how much more the leader costs per useful GPU-hour than the new one) at the flip and at
    the end of the searched range."""
    w = report.what_would_change
    if w is None:
        return []
    return [(f.change, "toggle" if f.unit == "toggle" else f"{100 * f.size:.1f}%", f.new_leader,
             f"{100 * f.regret:+.2f}%", f"{100 * f.regret_at_limit:+.1f}%") for f in w.flips]


def smallest_flip_line(report: CompareReport) -> str | None:
    w = report.what_would_change
    if w is None:
        return None
    if w.smallest is None:
        return f"No single assumption searched flips {w.leader}: " + "; ".join(w.no_flip) + "."
    f = w.smallest
    size = "switching it" if f.unit == "toggle" else f"a change of {100 * f.size:.1f} %"
    return (f"Smallest flip: {f.change} ({size}) makes {f.new_leader} the leader; {w.leader} then costs "
            f"{100 * f.regret:.2f} % (${f.regret_usd:,.4f}) more per useful GPU-hour, and "
            f"{100 * f.regret_at_limit:.1f} % more if the change goes to the end of the searched range.")


def feasible(report: CompareReport) -> bool:
    """Whether some fabric meets the spec's constraints (False: e.g. no fabric meets the latency SLA)."""
    return getattr(report.recommendation, "feasible", True)


def recommendation_headline(report: CompareReport) -> str:
    """'Recommended: X (name)', or, when no fabric meets the constraints, why not and the closest."""
    recommendation = report.recommendation
    if not feasible(report):
        reason = getattr(recommendation, "infeasible_reason", None) or "no fabric meets the spec's constraints"
        return f"No fabric meets the constraints: {reason}"
    fabric = fabric_by_id(report).get(recommendation.recommended)
    name = f" ({fabric.name})" if fabric else ""
    return f"Recommended: {recommendation.recommended}{name}"


def close_call_note(report: CompareReport) -> str | None:
    if not report.recommendation.close_call:
        return None
    ranking = report.recommendation.ranking
    u = report.uncertainty
    if u is not None:
        return (f"Close call: no fabric is the cheapest per useful GPU-hour with probability >= "
                f"{100 * u.threshold:.0f} % over the catalog's ranges ({u.leader} in {100 * u.leader_probability:.0f} "
                "% of the draws); ranked by the numbers all the same: the flips and the sensitivity table say what "
                "would change it.")
    pair = " and ".join(ranking[:2]) if len(ranking) >= 2 else "the top two fabrics"
    return (f"Close call: {pair} are within the close-call band on "
            f"{metric_label(report.deciding_metric)}; ranked by the numbers all the same: the flips and "
            f"the sensitivity table say what would change it.")


SOURCES_TITLE = "Sources the rules cite"


def quote_translations(report: CompareReport) -> dict[str, str]:
    """Quote -> English of the sources the report cites (the catalog's, carried by the report)."""
    return translations(report.sources)


def source_lines(report: CompareReport) -> list[tuple[str, str]]:
    """("[S1] ", "<title as published> (<English translation>), <publisher>, <date>, <url>") per source the
    rules cite: the terminal and Markdown print the translation after the original title."""
    return [(f"[{s.id}] ", ", ".join(part for part in (s.display(), s.publisher, s.date, s.url) if part))
            for s in report.sources]


def cited_sources(report: CompareReport) -> list:
    """The sources the rules cite, with their titles as the catalog holds them (original and English)."""
    return list(report.sources)
