"""``fabricplan health --html``: one self-contained page (plotly.js inlined once) with the ranked
findings, the per-port table and a time-series chart of the counters behind each finding (their
per-interval rate; RTT samples as they are), a panel per unit with the unit on its axis and the
check's threshold as a dashed line; a finding whose counters have nothing to draw gets a note, not an
empty chart. This module imports plotly: import it only for --html."""

from __future__ import annotations

import html as htmllib
from datetime import UTC

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from fabricplan.ops.health.engine import HealthResult
from fabricplan.ops.telemetry import SAMPLE, Series, increases
from fabricplan.report.health_output import TABLE_COLUMNS, _show, model_lines, port_rows, summary
from fabricplan.report.pages import figure_div, render

#: Program limit: charts drawn (the worst findings first); the rest are listed without a chart.
MAX_CHARTS = 40
#: Layout only: a chart panel's height, the threshold lines' colour, the y-axis title of each unit.
CHART_HEIGHT_PX = 280
LIMIT_COLOUR = "#c0392b"
AXIS_TITLES = {"us": "RTT (µs)", "%": "paused (% of the time)", "/s": "rate (per s)"}
US_PER_S_TO_PERCENT = 1e-4  # µs of a duration counter per s of wall time, as a share of the time in %

def _esc(text: object) -> str:
    return htmllib.escape(str(text))


def _series_index(result: HealthResult) -> dict[tuple[str, str], Series]:
    return {(s.entity, s.label): s for s in result.telemetry.series}


def unit_of(series: Series) -> str:
    """The unit a series is charted in: RTT samples as they are (us), a duration counter's increase
    per second as the share of the time (%: us/s / 10^4), any other counter's increase per second (/s)."""
    if series.kind == SAMPLE:
        return "us"
    return "%" if series.counter.endswith("_duration") else "/s"


def _scale(series: Series) -> float:
    """From the series' rate (and the checks' limits, us/s for a duration counter) to its charted unit."""
    return US_PER_S_TO_PERCENT if unit_of(series) == "%" else 1.0


def _points(series: Series) -> tuple[list, list]:
    """(times, values) as charted: the samples, or the counter's per-interval rate; long series thinned."""
    from datetime import datetime

    if series.kind == SAMPLE:
        x, y = series.t_s, series.values
    else:
        inc = increases(series)
        x, y = inc.t_end, inc.dv / inc.dt * _scale(series)
    if len(x) > 5000:  # thin long series for the page (every k-th point, peaks kept)
        k = int(np.ceil(len(x) / 5000))
        idx = np.unique(np.concatenate((np.arange(0, len(x), k), [int(np.nanargmax(y))] if np.isfinite(y).any() else [])))
        x, y = x[idx.astype(int)], y[idx.astype(int)]
    times = [datetime.fromtimestamp(float(t), tz=UTC) for t in x]
    return times, [None if not np.isfinite(v) else float(v) for v in y]


def finding_figure(item, index: dict[tuple[str, str], Series]) -> go.Figure | None:
    """The chart of one finding: a panel per unit of its series, each series' threshold (from the check's
    SLO) as a dashed line; None when no series has a value to draw (e.g. a single reading)."""
    drawn = [(index[key], _points(index[key])) for key in (item.series or []) if key in index]
    drawn = [(series, points) for series, points in drawn if any(v is not None for v in points[1])]
    if not drawn:
        return None
    units = list(dict.fromkeys(unit_of(series) for series, _ in drawn))
    figure = make_subplots(rows=len(units), cols=1, shared_xaxes=True, vertical_spacing=0.12)
    limits = {(entity, label): (value, text) for entity, label, value, text in (item.limits or [])}
    for series, (x, y) in drawn:
        row = units.index(unit_of(series)) + 1
        figure.add_trace(go.Scatter(x=x, y=y, mode="lines", name=f"{series.label} [{unit_of(series)}]"),
                         row=row, col=1)
        limit = limits.get((series.entity, series.label))
        if limit is not None and x:
            value, text = limit[0] * _scale(series), limit[1]
            figure.add_trace(go.Scatter(x=[x[0], x[-1]], y=[value, value], mode="lines",
                                        name=f"limit: {text} = {value:.4g} {unit_of(series)}",
                                        line={"color": LIMIT_COLOUR, "dash": "dash", "width": 1.5},
                                        hovertemplate=f"limit {value:.4g} {unit_of(series)}<extra>{_esc(text)}</extra>"),
                             row=row, col=1)
    for row, unit in enumerate(units, start=1):
        figure.update_yaxes(title_text=AXIS_TITLES.get(unit, unit), rangemode="tozero", row=row, col=1)
    figure.update_xaxes(title_text="time (UTC)", row=len(units), col=1)
    figure.update_layout(height=CHART_HEIGHT_PX * len(units), margin={"l": 70, "r": 20, "t": 30, "b": 40},
                         title={"text": f"{_esc(item.rule_id)} {_esc(item.link)}", "font": {"size": 13}},
                         template="plotly_white", legend={"orientation": "h"})
    return figure


def health_context(result: HealthResult) -> dict:
    """What `health.html.j2` shows: the summary, the model's lines, the findings by entity (worst
    first, each with its chart or a note why it has none), the per-port table, what was not available."""
    index = _series_index(result)
    charts = 0
    groups = []
    for entity, items in result.ranked():
        jobs = result.jobs_by_entity.get(entity)
        findings = []
        for item in items:
            chart, no_chart = None, False
            if item.series and charts < MAX_CHARTS:
                figure = finding_figure(item, index)
                if figure is None:
                    no_chart = True
                else:
                    chart = figure_div(figure, f"chart-{charts}")
                    charts += 1
            findings.append({"severity": item.severity, "rule_id": item.rule_id, "message": item.message,
                             "fix": item.fix, "chart": chart, "no_chart": no_chart})
        groups.append({"label": f"{entity} (job: {', '.join(jobs)})" if jobs else entity, "findings": findings})
    ports = []
    for entity, row in port_rows(result).items():
        cells = [_show(row[metric], how) if metric in row else ("n/a" if f"{cid}:na" in row else "-")
                 for cid, metric, _h, how in TABLE_COLUMNS]
        ports.append({"entity": entity, "cells": cells, "worst": row["worst"]})
    return {"title": "Fabric health", "command": "health", "s": summary(result),
            "healthy": not result.findings,
            "model_lines": model_lines(result) if result.model is not None else None,
            "groups": groups, "port_headers": [h for _c, _m, h, _w in TABLE_COLUMNS], "ports": ports,
            "unavailable": [f"{n.check_id} on {n.entity}: {n.reason}" for n in result.unavailable[:500]],
            "notes": list(result.notes[:500])}  # what was set aside and why, each naming its source


def health_html(result: HealthResult) -> str:
    """The health report as one HTML document (the shared base layout and stylesheet)."""
    return render("health.html.j2", charts=True, **health_context(result))
