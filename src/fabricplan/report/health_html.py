"""``fabricplan health --html``: one self-contained page (plotly.js inlined once) with the ranked
findings, the per-port table and a time-series chart of the counters behind each finding (their
per-interval rate; RTT samples as they are). This module imports plotly: import it only for --html."""

from __future__ import annotations

import html as htmllib
from datetime import UTC

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from fabricplan.ops.health.engine import HealthResult
from fabricplan.ops.telemetry import SAMPLE, Series, increases
from fabricplan.report.health_output import TABLE_COLUMNS, _show, model_lines, port_rows, summary

#: Program limit: charts drawn (the worst findings first); the rest are listed without a chart.
MAX_CHARTS = 40
_CSS = ("body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse}"
        "td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}td:first-child,th:first-child"
        "{text-align:left}.error{color:#b00}.warning{color:#a60}.info{color:#06a}.ok{color:#080}"
        ".finding{margin:1em 0}.fix{color:#060}")


def _esc(text: object) -> str:
    return htmllib.escape(str(text))


def _series_index(result: HealthResult) -> dict[tuple[str, str], Series]:
    return {(s.entity, s.label): s for s in result.telemetry.series}


def _trace(series: Series) -> go.Scatter:
    from datetime import datetime

    if series.kind == SAMPLE:
        x, y, name = series.t_s, series.values, f"{series.label} [us]"
    else:
        inc = increases(series)
        x, y = inc.t_end, inc.dv / inc.dt
        name = f"{series.label} [/s]" if not series.counter.endswith("_duration") else f"{series.label} [us/s]"
    if len(x) > 5000:  # thin long series for the page (every k-th point, peaks kept)
        k = int(np.ceil(len(x) / 5000))
        idx = np.unique(np.concatenate((np.arange(0, len(x), k), [int(np.nanargmax(y))] if np.isfinite(y).any() else [])))
        x, y = x[idx.astype(int)], y[idx.astype(int)]
    times = [datetime.fromtimestamp(float(t), tz=UTC) for t in x]
    return go.Scatter(x=times, y=[None if not np.isfinite(v) else float(v) for v in y], mode="lines", name=name)


def health_html(result: HealthResult) -> str:
    """The health report as one HTML document."""
    s = summary(result)
    index = _series_index(result)
    parts = [f"<h1>fabricplan health</h1><p>{s['ports']} ports, {s['rtt_pairs']} RTT pairs, {_esc(s['start'])} .. "
             f"{_esc(s['end'])}: <b>{s['error']} errors, {s['warning']} warnings, {s['info']} info</b>"
             f"{'' if result.findings else ' - healthy on what was measured'}; "
             f"{s['checks_not_available']} checks not available"
             + (f"; {s['ports_not_measured']} more ports not measured (one reading per counter)"
                if s["ports_not_measured"] else "") + ".</p>"]
    if result.model is not None:
        parts.append("<h2>Against the model</h2><ul>" + "".join(f"<li>{_esc(line)}</li>" for line in model_lines(result))
                     + "</ul>")
    charts = 0
    parts.append("<h2>Findings, worst first</h2>")
    for entity, items in result.ranked():
        jobs = result.jobs_by_entity.get(entity)
        label = f"{entity} (job: {', '.join(jobs)})" if jobs else entity
        parts.append(f"<h3>{_esc(label)}</h3>")
        for item in items:
            parts.append(f"<div class='finding'><span class='{item.severity}'>{item.severity.upper()}</span> "
                         f"<b>{_esc(item.rule_id)}</b> {_esc(item.message)}<br><span class='fix'>do: "
                         f"{_esc(item.fix)}</span>")
            traces = [index[key] for key in (item.series or []) if key in index]
            if traces and charts < MAX_CHARTS:
                figure = go.Figure([_trace(t) for t in traces])
                figure.update_layout(height=280, margin={"l": 50, "r": 20, "t": 30, "b": 40},
                                     title={"text": f"{item.rule_id} {entity}", "font": {"size": 13}},
                                     legend={"orientation": "h"})
                parts.append(pio.to_html(figure, include_plotlyjs=False, full_html=False,
                                         div_id=f"chart-{charts}", config={"displaylogo": False}))
                charts += 1
            parts.append("</div>")
    rows = port_rows(result)
    parts.append("<h2>Per port</h2><table><tr><th>port</th>"
                 + "".join(f"<th>{_esc(h)}</th>" for _c, _m, h, _w in TABLE_COLUMNS) + "<th>status</th></tr>")
    for entity, row in rows.items():
        cells = []
        for cid, metric, _h, how in TABLE_COLUMNS:
            cells.append(_show(row[metric], how) if metric in row else ("n/a" if f"{cid}:na" in row else "-"))
        parts.append(f"<tr><td>{_esc(entity)}</td>" + "".join(f"<td>{_esc(c)}</td>" for c in cells)
                     + f"<td class='{row['worst']}'>{_esc(row['worst'])}</td></tr>")
    parts.append("</table>")
    if result.unavailable:
        parts.append("<h2>Not available</h2><ul>" + "".join(
            f"<li>{_esc(n.check_id)} on {_esc(n.entity)}: {_esc(n.reason)}</li>" for n in result.unavailable[:500])
            + "</ul>")
    if result.notes:  # what was set aside and why (single readings, unusable rates), each naming its source
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_esc(note)}</li>" for note in result.notes[:500]) + "</ul>")
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>fabricplan health</title>"
            f"<style>{_CSS}</style><script type=\"text/javascript\">{get_plotlyjs()}</script></head><body>"
            + "".join(parts) + "</body></html>")
