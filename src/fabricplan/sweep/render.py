"""`fabricplan sweep report`: terminal tables, a JSON document and a self-contained HTML page
(plotly, loaded only for ``--html``) of a :class:`~fabricplan.sweep.analysis.SweepAnalysis`."""

from __future__ import annotations

import html
from dataclasses import asdict
from typing import Any

from rich.text import Text

from fabricplan.report.layout import FitTable
from fabricplan.sweep.analysis import SweepAnalysis

#: Layout only: rows of each Pareto front shown in the terminal, chart sizes.
FRONT_ROWS = 10
CHART_HEIGHT_PX = 520
MAP_HEIGHT_PX = 460
TIE_COLOUR = "#bdbdbd"  # a map cell where fabrics are recommended equally often


def _value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.4g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def _pick(items: list[Any], limit: int) -> list[Any]:
    """At most ``limit`` items, evenly spread, ends kept."""
    if len(items) <= limit:
        return items
    step = (len(items) - 1) / (limit - 1)
    return [items[round(k * step)] for k in range(limit)]


def summary_line(analysis: SweepAnalysis) -> str:
    counts = ", ".join(f"{fabric} {n:,}" for fabric, n in sorted(analysis.recommended_counts.items(),
                                                                  key=lambda kv: -kv[1]))
    return (f"{analysis.name}: {analysis.points:,} points ({analysis.failed:,} with an input error); "
            f"recommended: {counts or 'none'}")


def labels(analysis: SweepAnalysis) -> dict[str, str]:
    """Column -> a short header: the field name of a spec path, "<entry> <field>" of a catalog path
    (the column name where two would read the same)."""
    short = {}
    for path, column in analysis.axes.items():
        parts = path.split(".")
        short[column] = " ".join(parts[-2:]) if parts[0] == "catalog" and len(parts) > 2 else parts[-1]
    texts = list(short.values())
    return {c: (t if texts.count(t) == 1 else c) for c, t in short.items()}


def fabric_codes(analysis: SweepAnalysis) -> dict[str, str]:
    """A letter per fabric for the map (the legend above it names them)."""
    return {fabric: chr(ord("A") + k) if k < 26 else str(k) for k, fabric in enumerate(analysis.fabrics)}


def terminal_renderables(analysis: SweepAnalysis) -> list[Any]:
    out: list[Any] = [Text(summary_line(analysis))]
    names = labels(analysis)
    inputs = list(analysis.axes.values())
    out.append(Text("Axes: " + "; ".join(f"{names[c]} = {path}" for path, c in analysis.axes.items())))
    for fabric, front in analysis.fronts.items():
        headers = ("step time s", "USD / useful GPU-h", *(names[c] for c in inputs))
        rows = [[f"{point.step_time_s:.4g}", f"{point.cost_per_useful_gpu_hour_usd:.4f}",
                 *(_value(point.inputs[c]) for c in inputs)] for point in _pick(front, FRONT_ROWS)]
        table = FitTable(headers, rows, justify=["right"] * len(headers),
                         title=f"Pareto front, {fabric}: {len(front)} of {len(analysis.all_points[fabric][0]):,} "
                               "points (lower step time and cost per useful GPU-hour)")
        out.append(table)
    codes = fabric_codes(analysis)
    out.append(Text("Fabrics: " + ", ".join(f"{code} = {fabric}" for fabric, code in codes.items())))
    if analysis.recommended_map:
        xs = sorted({c.x for c in analysis.recommended_map}, key=_key)
        ys = sorted({c.y for c in analysis.recommended_map}, key=_key)
        cells = {(c.x, c.y): c for c in analysis.recommended_map}
        across = names.get(analysis.x or "", analysis.x)
        down = names.get(analysis.y or "", analysis.y or "-")
        rows = []
        for y in ys:
            row = [_value(y) if y is not None else ""]
            for x in xs:
                cell = cells.get((x, y))
                row.append("" if cell is None else "tie " + "/".join(codes[f] for f in cell.tied) if cell.tied
                           else codes[cell.recommended] if cell.share == 1 else
                           f"{codes[cell.recommended]} {cell.share:.0%}")
            rows.append(row)
        table = FitTable((down if analysis.y else "", *(_value(x) for x in xs)), rows,
                         justify=["right", *["center"] * len(xs)],
                         title=f"Recommended fabric (% = share of the cell's points when not all agree; tie: "
                               "as many points recommend each): "
                               f"{down} down, {across} across")
        out.append(table)
    across = names.get(analysis.x or "", analysis.x)
    headers = ("fabrics", names.get(analysis.y or "", "") if analysis.y else "", f"{across} at the crossover",
               "cheaper below", "cheaper above")
    rows = [[f"{codes[c.fabric_a]} / {codes[c.fabric_b]}", _value(c.y) if c.y is not None else "",
             _value(c.x), codes[c.leader_below], codes[c.leader_above]] for c in analysis.crossovers]
    table = FitTable(headers, rows, title=f"Crossovers: where the cheaper fabric changes along {across}")
    out.append(table if analysis.crossovers else Text(f"No crossover along {across}: the cheaper fabric of "
                                                      "each pair is the same everywhere."))
    return out


def _axis_title(analysis: SweepAnalysis, column: str | None) -> str:
    """The axis path of a column, escaped for a plotly label."""
    paths = {c: p for p, c in analysis.axes.items()}
    return html.escape(paths.get(column or "", column or ""))


def _key(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, (int, float)) else (1, str(value))


def analysis_document(analysis: SweepAnalysis) -> dict[str, Any]:
    """The analysis as JSON (no raw point clouds; gap medians keyed "x|y")."""
    doc = asdict(analysis)
    doc.pop("all_points")
    doc["gap"] = {pair: [{"x": x, "y": y, "gap": g} for (x, y), g in cells.items()]
                  for pair, cells in analysis.gap.items()}
    return doc


# --- HTML -----------------------------------------------------------------------------------------------

def pareto_figure(analysis: SweepAnalysis) -> Any:
    import plotly.graph_objects as go

    from fabricplan.report.colours import fabric_colour
    from fabricplan.report.compare_charts import FONT_FAMILY

    figure = go.Figure()
    for fabric in analysis.fabrics:
        colour = fabric_colour(fabric)
        steps, costs = analysis.all_points[fabric]
        name = html.escape(fabric)
        figure.add_trace(go.Scattergl(x=steps, y=costs, mode="markers", name=f"{name}: all points",
                                      marker={"color": colour, "size": 4, "opacity": 0.25}, legendgroup=name))
        front = analysis.fronts[fabric]
        figure.add_trace(go.Scatter(
            x=[p.step_time_s for p in front], y=[p.cost_per_useful_gpu_hour_usd for p in front],
            mode="lines+markers", name=f"{name}: Pareto front", legendgroup=name,
            line={"color": colour, "width": 2.5, "shape": "hv"}, marker={"color": colour, "size": 7},
            text=["<br>".join(f"{html.escape(k)} = {html.escape(_value(v))}" for k, v in p.inputs.items())
                  for p in front], hovertemplate="%{x:.3g} s, %{y:.4f} USD<br>%{text}<extra></extra>"))
    figure.update_layout(
        title={"text": f"Cost per useful GPU-hour vs step time, {html.escape(analysis.name)} "
                       f"({analysis.points:,} points)"},
        xaxis_title="step time of the main job [s]", yaxis_title="cost per useful GPU-hour [USD]",
        height=CHART_HEIGHT_PX, template="plotly_white", font={"family": FONT_FAMILY},
        legend={"orientation": "h", "y": -0.18}, margin={"l": 70, "r": 20, "t": 60, "b": 110})
    figure.update_xaxes(type="log")
    return figure


def _map_text(cell: Any) -> str:
    """A map cell's label: the fabric and its share, or the tied fabrics."""
    if cell.tied:
        return "tie " + "/".join(html.escape(f) for f in cell.tied)
    return f"{html.escape(cell.recommended)}<br>{cell.share:.0%}"


def map_figure(analysis: SweepAnalysis) -> Any:
    import plotly.graph_objects as go

    from fabricplan.report.colours import fabric_colour
    from fabricplan.report.compare_charts import FONT_FAMILY

    xs = sorted({c.x for c in analysis.recommended_map}, key=_key)
    ys = sorted({c.y for c in analysis.recommended_map}, key=_key)
    cells = {(c.x, c.y): c for c in analysis.recommended_map}
    fabrics = analysis.fabrics
    tie = len(fabrics)  # the z of a tied cell: one more band, in TIE_COLOUR
    z = [[(tie if cells[(x, y)].tied else fabrics.index(cells[(x, y)].recommended)) if (x, y) in cells else None
          for x in xs] for y in ys]
    text = [[_map_text(cells[(x, y)]) if (x, y) in cells else "" for x in xs] for y in ys]
    bands = [fabric_colour(fabric) for fabric in fabrics] + [TIE_COLOUR]
    n = len(bands)
    scale = []
    for k, colour in enumerate(bands):
        scale += [[k / n, colour], [(k + 1) / n, colour]]
    figure = go.Figure(go.Heatmap(
        x=[_value(x) for x in xs], y=[_value(y) if y is not None else "" for y in ys], z=z, zmin=-0.5,
        zmax=n - 0.5, colorscale=scale, showscale=False, text=text, texttemplate="%{text}",
        hovertemplate="%{text}<extra></extra>", xgap=1, ygap=1))
    figure.update_layout(title={"text": "Recommended fabric (and the share of points in the cell that agree; "
                                        "grey: a tie)"},
                         xaxis_title=_axis_title(analysis, analysis.x), yaxis_title=_axis_title(analysis, analysis.y),
                         height=MAP_HEIGHT_PX, template="plotly_white", font={"family": FONT_FAMILY},
                         xaxis={"type": "category"}, yaxis={"type": "category"})
    return figure


def gap_figure(analysis: SweepAnalysis, pair: str) -> Any:
    import plotly.graph_objects as go

    from fabricplan.report.compare_charts import FONT_FAMILY

    cells = analysis.gap[pair]
    xs = sorted({x for x, _y in cells}, key=_key)
    ys = sorted({y for _x, y in cells}, key=_key)
    z = [[cells.get((x, y)) for x in xs] for y in ys]
    a, b = pair.split("|")
    figure = go.Figure(go.Heatmap(
        x=[_value(x) for x in xs], y=[_value(y) if y is not None else "" for y in ys], z=z, zmid=0,
        colorscale="RdBu_r", colorbar={"title": {"text": "gap"}, "tickformat": ".0%"},
        texttemplate="%{z:.1%}", hovertemplate="%{z:.2%}<extra></extra>", xgap=1, ygap=1))
    figure.update_layout(title={"text": f"Crossover surface: cost of {html.escape(a)} / {html.escape(b)} - 1 "
                                        "(median over the other axes; the sign change is the crossover)"},
                         xaxis_title=_axis_title(analysis, analysis.x), yaxis_title=_axis_title(analysis, analysis.y),
                         height=MAP_HEIGHT_PX, template="plotly_white", font={"family": FONT_FAMILY},
                         xaxis={"type": "category"}, yaxis={"type": "category"})
    return figure


def sweep_html(analysis: SweepAnalysis) -> str:
    """One self-contained page (plotly.js inlined once) on the reports' base layout and stylesheet
    (`sweep.html.j2`): Pareto chart first, then the map and the crossover surfaces, and the
    crossovers as a table."""
    from fabricplan.report.pages import figure_div, render

    charts = [figure_div(pareto_figure(analysis), "chart-pareto")]
    if analysis.recommended_map:
        charts.append(figure_div(map_figure(analysis), "chart-map"))
    for k, pair in enumerate(analysis.gap):
        if analysis.gap[pair]:
            charts.append(figure_div(gap_figure(analysis, pair), f"chart-gap-{k}"))
    rows = [[f"{c.fabric_a} / {c.fabric_b}", _value(c.y) if c.y is not None else "", _value(c.x), c.leader_below,
             c.leader_above] for c in analysis.crossovers]
    headers = ["fabrics", analysis.y or "", f"{analysis.x} at the crossover", "cheaper below", "cheaper above"]
    return render("sweep.html.j2", title=f"Sweep: {analysis.name}", command="sweep report", charts=True,
                  summary=summary_line(analysis), chart_list=charts,
                  crossovers={"headers": headers, "rows": rows})
