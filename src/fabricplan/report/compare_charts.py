"""Plotly figures for the `fabricplan compare` HTML report: step time, TCO, scale curve, sensitivity.

Pure functions `report -> Figure`. User text (spec, job and fabric names) is HTML-escaped before it
goes into a figure, because plotly.js interprets a subset of HTML tags in labels.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from fabricplan.cost.bom import CATEGORIES
from fabricplan.decide.models import CompareReport, FabricOutcome, JobOutcome, SensitivityRow
from fabricplan.report import colours
from fabricplan.report import compare_content as content
from fabricplan.report.tables import usd

# Layout only: colours, sizes and fonts.
FONT_FAMILY = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"
COMPUTE_COLOUR = "#4c78a8"
BUBBLE_COLOUR = "#bab0ac"
OTHER_COLOUR = "#e0e0e0"
COMM_COLOURS = {"tp": "#f58518", "pp": "#e45756", "dp": "#eeca3b", "ep": "#b279a2", "cp": "#ff9da6"}
EXTRA_COMM_COLOURS = ("#9d755d", "#72b7b2", "#54a24b")
CAPEX_COLOURS = {"switches": "#08519c", "nics": "#3182bd", "optics": "#6baed6", "cables": "#bdd7e7"}
OPEX_COLOURS = {"energy": "#a63603", "colocation": "#e6550d", "support": "#fd8d3c", "operations": "#fdbe85",
                "licences": "#feedde"}
SERVER_COLOURS = {"capex": "#525252", "opex": "#a3a3a3", "network": "#2a9d8f"}
LOW_CASE_COLOUR = "#6baed6"
HIGH_CASE_COLOUR = "#fd8d3c"
FLIP_COLOUR = "#c0392b"
MARKER_COLOUR = "#555555"
COMM_KIND_ORDER = ("tp", "pp", "dp", "ep", "cp")
CHART_HEIGHT_PX = 420
TORNADO_ROW_HEIGHT_PX = 40
LEGEND_MARGIN_PX = 100  # room for an x-axis title and a legend below the plot
LEGEND_ONLY_MARGIN_PX = 80  # room for a legend below category labels
# A step-time remainder below this share of the step is rounding, not a missing term.
STEP_REMAINDER_TOLERANCE = 1e-6
CROSSOVER_LABEL_STEP = 0.07
MAX_SCALE_TICKS = 8
LOG_AXIS_PADDING = 0.08  # decades of empty axis left and right of the outermost point
# A sensitivity case moving the lead by less than this is floating-point noise: "no effect".
LEAD_UNCHANGED_TOLERANCE = 1e-9
TORNADO_CASE_FONT_PX = 11
TORNADO_TOP_MARGIN_PX = 100  # title, subtitle and the base-lead label above the plot
# The scale chart's y range: fabrics more than this many times dearer (relative to the cheapest) than all
# closer ones are left above it (named in the subtitle); at least this many percent shown; padding.
FAR_FABRIC_FACTOR = 3.0
MIN_RELATIVE_RANGE_PCT = 2.0
RELATIVE_RANGE_PADDING = 0.08
BAND_ALPHA = 0.18
SCALE_TOP_MARGIN_PX = 95  # the scale chart's title and subtitle
SUBTITLE_LINE_PX = 16  # each further subtitle line


def escaped(text: str) -> str:
    return html.escape(text, quote=False)


def fabric_colours(report: CompareReport) -> dict[str, str]:
    """Each fabric's colour (report/colours.py: by its id, the same in every report)."""
    return colours.fabric_colours([fabric.fabric for fabric in report.fabrics])


def _base_layout(figure: go.Figure, title: str, height: int, bottom_margin: int = LEGEND_MARGIN_PX) -> go.Figure:
    figure.update_layout(
        title={"text": title, "x": 0.01, "xanchor": "left"},
        template="plotly_white",
        height=height,
        font={"family": FONT_FAMILY, "size": 13},
        margin={"l": 70, "r": 30, "t": 80, "b": bottom_margin},
        legend={"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0, "xanchor": "left", "x": 0},
        hoverlabel={"font": {"family": FONT_FAMILY}},
    )
    return figure


# (a) step time ------------------------------------------------------------------------------------

def _comm_kinds(report: CompareReport) -> list[str]:
    seen = {kind for fabric in report.fabrics for job in fabric.jobs for kind in job.exposed_comm_s}
    return [kind for kind in COMM_KIND_ORDER if kind in seen] + sorted(seen - set(COMM_KIND_ORDER))


def _comm_colour(kind: str, kinds: list[str]) -> str:
    if kind in COMM_COLOURS:
        return COMM_COLOURS[kind]
    extras = [k for k in kinds if k not in COMM_COLOURS]
    return EXTRA_COMM_COLOURS[extras.index(kind) % len(EXTRA_COMM_COLOURS)]


def step_time_figure(report: CompareReport) -> go.Figure:
    """Step time of each job on each fabric, stacked: compute, pipeline bubble, exposed comm by kind."""
    jobs = content.job_names(report)
    kinds = _comm_kinds(report)
    figure = make_subplots(rows=1, cols=max(1, len(jobs)), subplot_titles=[escaped(j) for j in jobs],
                           horizontal_spacing=0.08)
    fabric_labels = [escaped(f.fabric) for f in report.fabrics]
    segments: list[tuple[str, str, Callable[[JobOutcome], float]]] = [
        ("compute", COMPUTE_COLOUR, lambda job: job.compute_s),
        ("pipeline bubble", BUBBLE_COLOUR, lambda job: job.bubble_s),
    ]
    segments += [(f"exposed comm: {kind}", _comm_colour(kind, kinds),
                  lambda job, kind=kind: job.exposed_comm_s.get(kind, 0.0)) for kind in kinds]

    def remainder(job: JobOutcome) -> float:
        parts = job.compute_s + job.bubble_s + sum(job.exposed_comm_s.values())
        rest = job.step_time_s - parts
        return rest if rest > STEP_REMAINDER_TOLERANCE * job.step_time_s else 0.0

    all_jobs = [job for fabric in report.fabrics for job in fabric.jobs]
    segments.append(("other", OTHER_COLOUR, remainder))
    # Leave out segments no job has (e.g. no pipeline parallelism), so the legend lists only what is drawn.
    segments = [segment for segment in segments if any(segment[2](job) > 0 for job in all_jobs)]
    for column, job_name in enumerate(jobs, start=1):
        per_fabric = [next((j for j in f.jobs if j.job == job_name), None) for f in report.fabrics]
        for label, colour, value_of in segments:
            values = [value_of(job) if job else None for job in per_fabric]
            steps = [job.step_time_s if job else None for job in per_fabric]
            shares = [f"{100 * v / s:.1f}% of step" if v is not None and s else "" for v, s in zip(values, steps)]
            figure.add_trace(go.Bar(
                x=fabric_labels, y=values, name=label, marker_color=colour, legendgroup=label,
                showlegend=column == 1, customdata=shares,
                hovertemplate=f"{label}: %{{y:.3f}} s (%{{customdata}})<extra>%{{x}}</extra>",
            ), row=1, col=column)
        totals = [job.step_time_s if job else None for job in per_fabric]
        figure.add_trace(go.Scatter(
            x=fabric_labels, y=totals, mode="text", text=[content.seconds(t) for t in totals],
            textposition="top center", showlegend=False, hoverinfo="skip", cliponaxis=False,
        ), row=1, col=column)
        figure.update_yaxes(title_text="step time (s)" if column == 1 else None, rangemode="tozero",
                            row=1, col=column)
    figure.update_layout(barmode="stack")
    return _base_layout(figure, "Step time per job: compute, bubble and exposed communication", CHART_HEIGHT_PX,
                        LEGEND_ONLY_MARGIN_PX)


# (b) TCO ------------------------------------------------------------------------------------------

def _stacked_panel(figure: go.Figure, labels: list[str], segments: list[tuple[str, str, list[float]]],
                   totals: list[float], col: int) -> None:
    """One stacked-bar panel: a bar per (name, colour, values) segment and the total above each stack."""
    for name, colour, values in segments:
        figure.add_trace(go.Bar(
            x=labels, y=values, name=name, marker_color=colour, legendgroup=name,
            text=[usd(v) for v in values], hovertemplate=f"{name}: %{{text}}<extra>%{{x}}</extra>",
            textposition="none",
        ), row=1, col=col)
    figure.add_trace(go.Scatter(x=labels, y=totals, mode="text", text=[usd(v) for v in totals],
                                textposition="top center", showlegend=False, hoverinfo="skip", cliponaxis=False),
                     row=1, col=col)


def tco_figure(report: CompareReport) -> go.Figure:
    """TCO per fabric stacked by category; with servers priced, a second panel puts the network in context."""
    fabrics = report.fabrics
    labels = [escaped(f.fabric) for f in fabrics]
    horizon = report.horizon_years
    with_servers = any(f.cost.servers is not None for f in fabrics)
    titles = ["Network TCO by category"] + (["Cluster TCO: network vs servers"] if with_servers else [])
    figure = make_subplots(rows=1, cols=len(titles), subplot_titles=titles, horizontal_spacing=0.12)
    network_segments: list[tuple[str, str, list[float]]] = [
        (f"capex: {category}", CAPEX_COLOURS.get(category, MARKER_COLOUR),
         [f.cost.capex_usd.get(category, 0.0) for f in fabrics]) for category in CATEGORIES
    ]
    for field, key in (("energy_usd", "energy"), ("colocation_usd", "colocation"), ("support_usd", "support"),
                       ("operations_usd", "operations"), ("licences_usd", "licences")):
        network_segments.append((f"opex {horizon:g} yr: {key}", OPEX_COLOURS[key],
                                 [getattr(f.cost.opex_usd_per_year, field) * f.cost.horizon_years
                                  for f in fabrics]))
    network_totals = [f.cost.network_tco_usd for f in fabrics]
    _stacked_panel(figure, labels, [seg for seg in network_segments if any(seg[2])], network_totals, col=1)
    if with_servers:
        server_segments = [
            ("network TCO (all categories)", SERVER_COLOURS["network"], network_totals),
            ("servers: capex", SERVER_COLOURS["capex"],
             [f.cost.servers.capex_usd if f.cost.servers else 0.0 for f in fabrics]),
            (f"servers: opex {horizon:g} yr", SERVER_COLOURS["opex"],
             [f.cost.servers.opex_usd_per_year * f.cost.horizon_years if f.cost.servers else 0.0 for f in fabrics]),
        ]
        _stacked_panel(figure, labels, server_segments, [f.cost.cluster_tco_usd for f in fabrics], col=2)
    figure.update_yaxes(title_text=f"USD over {horizon:g} years", tickprefix="$", row=1, col=1)
    if with_servers:
        figure.update_yaxes(tickprefix="$", row=1, col=2)
    figure.update_layout(barmode="stack")
    return _base_layout(figure, f"Total cost of ownership over {horizon:g} years", CHART_HEIGHT_PX,
                        LEGEND_ONLY_MARGIN_PX)


# (c) scale curve ----------------------------------------------------------------------------------

def _relative_curves(report: CompareReport) -> tuple[list[int], dict[str, list[float | None]],
                                                     dict[str, list[tuple[float, float] | None]]]:
    """The scale curve relative to the cheapest fabric at each size, in percent above it: per fabric its
    values and (where the Monte Carlo ran) the p10-p90 of how far above the cheapest of the same draw it
    is (`ScalePoint.excess_band`: what moves every fabric alike does not widen it), over the sorted GPU
    counts."""
    points = sorted(report.scale_curve, key=lambda point: point.gpus)
    gpus = [point.gpus for point in points]
    values: dict[str, list[float | None]] = {f.fabric: [] for f in report.fabrics}
    bands: dict[str, list[tuple[float, float] | None]] = {f.fabric: [] for f in report.fabrics}
    for point in points:
        costs = point.cost_per_useful_gpu_hour_usd
        best = min(costs.values(), default=None)
        for fabric in values:
            cost, band = costs.get(fabric), point.excess_band.get(fabric)
            usable = best is not None and best > 0
            values[fabric].append(100 * (cost / best - 1) if usable and cost is not None else None)
            bands[fabric].append((100 * band[0], 100 * band[1]) if band else None)
    return gpus, values, bands


def _close_range(values: dict[str, list[float | None]]) -> tuple[float, float, list[str]]:
    """The y range that shows the fabrics close to the best readably, and the fabrics far above it.

    Fabrics in order of their largest excess; the range ends before the first one more than
    `FAR_FABRIC_FACTOR` times the excess of all below it (with at least `MIN_RELATIVE_RANGE_PCT`).
    The lines set the range; a band wider than it is cut at its edge.
    """
    def top(fabric: str) -> float:
        return max((v for v in values[fabric] if v is not None), default=0.0)

    def bottom(fabric: str) -> float:
        return min([0.0] + [v for v in values[fabric] if v is not None])

    order = sorted(values, key=top)
    shown, far = [], []
    for fabric in order:
        ceiling = max([MIN_RELATIVE_RANGE_PCT] + [top(f) for f in shown])
        if shown and top(fabric) > FAR_FABRIC_FACTOR * ceiling:
            far = order[order.index(fabric):]
            break
        shown.append(fabric)
    high = max([MIN_RELATIVE_RANGE_PCT] + [top(f) for f in shown])
    low = min(bottom(f) for f in shown) if shown else 0.0
    pad = RELATIVE_RANGE_PADDING * (high - low)
    return low - pad, high + pad, far


def _hex_rgba(colour: str, alpha: float) -> str:
    red, green, blue = (int(colour[k:k + 2], 16) for k in (1, 3, 5))
    return f"rgba({red},{green},{blue},{alpha})"


def scale_figure(report: CompareReport) -> go.Figure:
    """Cost per useful GPU-hour against GPU count (log x) relative to the cheapest fabric at each size
    (so close fabrics do not overlap under a far dearer one), each fabric's Monte Carlo p10-p90 band where
    the curve has draws, the crossovers and each fabric's tier boundaries marked."""
    figure = go.Figure()
    colours = fabric_colours(report)
    points = sorted(report.scale_curve, key=lambda point: point.gpus)
    gpus, relative, bands = _relative_curves(report)
    y_low, y_high, far = _close_range(relative)
    for fabric in report.fabrics:
        name, colour = escaped(fabric.fabric), colours[fabric.fabric]
        band = [(g, b) for g, b in zip(gpus, bands[fabric.fabric]) if b is not None]
        if band:
            xs = [g for g, _ in band]
            figure.add_trace(go.Scatter(
                x=xs + xs[::-1], y=[b[1] for _, b in band] + [b[0] for _, b in band][::-1], fill="toself",
                mode="lines", line={"width": 0}, fillcolor=_hex_rgba(colour, BAND_ALPHA), legendgroup=name,
                name=f"{name}: p10-p90", showlegend=False, hoverinfo="skip"))
        costs = [point.cost_per_useful_gpu_hour_usd.get(fabric.fabric) for point in points]
        suffix = " (above the range shown)" if fabric.fabric in far else ""
        figure.add_trace(go.Scatter(
            x=gpus, y=relative[fabric.fabric], mode="lines+markers", name=name + suffix, legendgroup=name,
            line={"color": colour, "width": 2.5}, customdata=[c if c is not None else float("nan") for c in costs],
            hovertemplate="%{x:,} GPUs: $%{customdata:.2f} per useful GPU-hour, %{y:+.1f}% vs the cheapest"
                          "<extra>" + name + "</extra>",
        ))
    # (x, label, line dash, label height as a share of the plot): the cluster's own size at the bottom,
    # crossovers stacked from the top so labels at the same GPU count do not overlap.
    # Crossovers that involve the recommended fabric are marked, one dashed line per GPU count with a
    # short label (the count) and the full story on hover; all crossovers are listed in the table.
    markers = [(report.gpus, f"this cluster: {report.gpus:,} GPUs", f"this cluster: {report.gpus:,} GPUs",
                "dot", 0.0)]
    recommended = report.recommendation.recommended
    by_gpus: dict[int, list[str]] = {}
    for c in report.crossovers:
        if c.gpus is not None and recommended in (c.fabric_a, c.fabric_b):
            by_gpus.setdefault(c.gpus, []).append(
                f"{escaped(c.leader_above or '?')} overtakes {escaped(c.leader_below)}")
    markers += [(gpus_at, f"{'; '.join(texts)} from {gpus_at:,} GPUs", f"{gpus_at:,}", "dash",
                 1.0 - CROSSOVER_LABEL_STEP * (index % 2))
                for index, (gpus_at, texts) in enumerate(sorted(by_gpus.items()))]
    # Tier boundaries of each fabric's chosen design: where it needs another switch tier.
    tiers_at: dict[int, list[str]] = {}
    for b in getattr(report, "tier_boundaries", []):
        tiers_at.setdefault(b.gpus, []).append(f"{escaped(b.fabric)}: {b.tiers_above} tiers above")
    markers += [(gpus_at, f"tier boundary at {gpus_at:,} GPUs: {'; '.join(texts)}", f"{gpus_at:,} tier",
                 "dashdot", 0.5 - CROSSOVER_LABEL_STEP * (index % 2))
                for index, (gpus_at, texts) in enumerate(sorted(tiers_at.items()))]
    for x, hover, label, dash, height in markers:
        figure.add_trace(go.Scatter(
            x=[x, x], y=[y_low, y_high], mode="lines", line={"color": MARKER_COLOUR, "dash": dash, "width": 1.2},
            name=hover, showlegend=False, hovertemplate=hover + "<extra></extra>",
        ))
        # Labels right of their line in the left half of the axis, left of it in the right half.
        in_right_half = bool(gpus) and math.log10(x) > (math.log10(gpus[0]) + math.log10(gpus[-1])) / 2
        figure.add_annotation(x=math.log10(x), y=height, yref="paper", yanchor="bottom" if height == 0 else "top",
                              text=label, hovertext=hover, showarrow=False,
                              xanchor="right" if in_right_half else "left",
                              xshift=-4 if in_right_half else 4, font={"size": 11, "color": MARKER_COLOUR},
                              bgcolor="rgba(255,255,255,0.85)")
    x_values = gpus + [x for x, _, _, _, _ in markers]
    # An explicit range: plotly would otherwise widen the axis to fit the annotations' text.
    x_range = [math.log10(min(x_values)) - LOG_AXIS_PADDING, math.log10(max(x_values)) + LOG_AXIS_PADDING]
    tick_step = math.ceil(len(gpus) / MAX_SCALE_TICKS) if gpus else 1
    ticks = gpus[::tick_step]
    figure.update_xaxes(type="log", range=x_range, title_text="GPUs (log scale)", tickvals=ticks,
                        ticktext=[f"{g:,}" for g in ticks])
    figure.update_yaxes(type="linear", title_text="above the cheapest", ticksuffix="%",
                        range=[y_low, y_high], zeroline=True)
    lines = ["vs the cheapest fabric at each size" + (
        " · shaded: Monte Carlo p10-p90" if any(b for series in bands.values() for b in series) else "")]
    if far:
        lines.append("above the range: " + ", ".join(
            f"{escaped(f)} (up to {max(v for v in relative[f] if v is not None):+.0f}%)" for f in far))
    subtitle = "<br>".join(f"<sup>{line}</sup>" for line in lines)
    figure = _base_layout(figure, f"Cost per useful GPU-hour vs cluster size<br>{subtitle}", CHART_HEIGHT_PX)
    figure.update_layout(margin={"t": SCALE_TOP_MARGIN_PX + SUBTITLE_LINE_PX * (len(lines) - 1)})
    return figure


# (d) sensitivity tornado --------------------------------------------------------------------------

def _metric_value(fabric: FabricOutcome, metric: str) -> float:
    value = getattr(fabric, metric, None)
    return float(value) if isinstance(value, int | float) else fabric.cost_per_useful_gpu_hour_usd


def recommended_lead(report: CompareReport, changes: dict[str, float] | None = None,
                     excluded: list[str] | None = None) -> float | None:
    """How far the recommended fabric is ahead of its best non-excluded rival on the deciding metric.

    Relative to the recommended fabric's value; negative means a rival is ahead. `changes` applies a
    relative change per fabric (a sensitivity case), `excluded` that case's ruled-out fabrics
    (default: the base case's). None when there is no rival.
    """
    changes = changes or {}
    metric = report.deciding_metric
    excluded = content.excluded_by(report) if excluded is None else excluded
    recommended_id = report.recommendation.recommended
    values = {f.fabric: _metric_value(f, metric) * (1 + changes.get(f.fabric, 0.0)) for f in report.fabrics}
    if recommended_id not in values:
        return None
    rivals = [v for fabric, v in values.items() if fabric != recommended_id and fabric not in excluded]
    if not rivals:
        return None
    ours = values[recommended_id]
    if content.higher_is_better(metric):
        best = max(rivals)
        return (ours - best) / best if best else None
    best = min(rivals)
    return (best - ours) / ours if ours else None


def _tornado_label(row: SensitivityRow) -> str:
    """Factor name (bold with a warning mark when it flips the ranking) over its low and high case."""
    name = escaped(row.factor)
    name = f"<b>{content.WARNING_MARK} {name}</b>" if row.flips else name
    cases = f"low {escaped(row.low_label)} · high {escaped(row.high_label)}"
    return f"{name}<br><span style='font-size:{TORNADO_CASE_FONT_PX}px;color:{MARKER_COLOUR}'>{cases}</span>"


def tornado_figure(report: CompareReport) -> go.Figure:
    """Per factor, the recommended fabric's lead in the low and high case around its base lead."""
    figure = go.Figure()
    recommended = escaped(report.recommendation.recommended)
    base = recommended_lead(report) or 0.0
    cases = []
    for row in report.sensitivity:
        low = recommended_lead(report, row.metric_change_low, row.excluded_low)
        high = recommended_lead(report, row.metric_change_high, row.excluded_high)
        cases.append((row, base if low is None else low, base if high is None else high))
    cases.sort(key=lambda case: max(abs(case[1] - base), abs(case[2] - base)))  # widest swing at the top
    labels = [_tornado_label(row) for row, _, _ in cases]
    for name, colour, index, label_of, winner_of in (
            ("low case", LOW_CASE_COLOUR, 1, lambda r: r.low_label, lambda r: r.winner_low),
            ("high case", HIGH_CASE_COLOUR, 2, lambda r: r.high_label, lambda r: r.winner_high)):
        leads = [case[index] for case in cases]
        figure.add_trace(go.Bar(
            y=labels, x=[100 * (lead - base) for lead in leads], base=100 * base, orientation="h", name=name,
            marker={"color": colour, "line": {"color": [FLIP_COLOUR if row.flips else colour for row, _, _ in cases],
                                              "width": 2}},
            customdata=[[escaped(label_of(row)), f"{100 * lead:+.2f}%", escaped(winner_of(row))]
                        for (row, _, _), lead in zip(cases, leads)],
            hovertemplate="%{customdata[0]}: lead %{customdata[1]}, winner %{customdata[2]}<extra>" + name
                          + "</extra>",
        ))
    unchanged = [label for label, (_, low, high) in zip(labels, cases)
                 if abs(low - base) < LEAD_UNCHANGED_TOLERANCE and abs(high - base) < LEAD_UNCHANGED_TOLERANCE]
    if unchanged:
        figure.add_trace(go.Scatter(y=unchanged, x=[100 * base] * len(unchanged), mode="text",
                                    text=["no effect"] * len(unchanged), textposition="middle right",
                                    textfont={"color": MARKER_COLOUR, "size": 11}, showlegend=False,
                                    hoverinfo="skip", cliponaxis=False))
    figure.add_vline(x=100 * base, line={"color": MARKER_COLOUR, "width": 1.5})
    figure.add_annotation(x=100 * base, y=1, yref="paper", yanchor="bottom", showarrow=False,
                          text=f"base lead {100 * base:+.2f}%", font={"size": 11, "color": MARKER_COLOUR})
    figure.add_vline(x=0, line={"color": FLIP_COLOUR, "width": 1.5, "dash": "dash"})
    metric = content.metric_label(report.deciding_metric)
    figure.update_layout(barmode="overlay")
    figure.update_xaxes(title_text=f"{recommended}'s lead over the best rival (%)", ticksuffix="%", zeroline=False)
    height = TORNADO_TOP_MARGIN_PX + LEGEND_MARGIN_PX + TORNADO_ROW_HEIGHT_PX * max(1, len(cases))
    title = (f"Sensitivity: {recommended}'s lead on {metric}<br><sup>bars: low and high case per factor · "
             f"{content.WARNING_MARK} bold: flips the ranking · left of the dashed line a rival leads</sup>")
    figure = _base_layout(figure, title, max(height, CHART_HEIGHT_PX // 2))
    figure.update_layout(margin={"t": TORNADO_TOP_MARGIN_PX})
    return figure
