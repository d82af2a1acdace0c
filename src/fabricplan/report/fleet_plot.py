"""`fabricplan fleet --html out.html`: each job kind's pace over the sampled instants, shared and
alone, the fragmentation (leaf groups spanned over the fewest possible) and the busiest instant's
placement (which job sits on which node of which leaf group), per fabric (plotly).

plotly loads only here; the page is one self-contained HTML file (plotly.js inlined). Colours
follow the job kind (the same kind has the same colour on every panel).
"""

from __future__ import annotations

from pathlib import Path

#: plotly's qualitative palette "Plotly" (10 colours), assigned to job kinds in spec order.
PALETTE = ("#636EFA", "#EF553B", "#00CC96", "#AB63FA", "#FFA15A", "#19D3F3", "#FF6692", "#B6E880", "#FF97FF",
           "#FECB52")


def colour_of(index: int) -> str:
    """The colour of the job kind at ``index`` (spec order)."""
    return PALETTE[index % len(PALETTE)]


def _series(result, attribute: str):
    """Per job kind: (instants [h], node-weighted mean of ``attribute`` over its runs at each instant)."""
    out: dict[str, tuple[list[float], list[float]]] = {}
    for sample in result.samples:
        by_kind: dict[str, list] = {}
        for job in sample.jobs:
            by_kind.setdefault(job.kind, []).append(job)
        for kind, jobs in by_kind.items():
            weight = sum(j.nodes for j in jobs)
            value = sum(j.nodes * attribute(j) for j in jobs) / weight
            xs, ys = out.setdefault(kind, ([], []))
            xs.append(sample.t_hours)
            ys.append(value)
    return out


def occupancy_grid(result):
    """The busiest instant's placement as a grid: one row per leaf group, one column per node slot in
    it, the job kind's index (-1 free); and the kinds' names."""
    import numpy as np

    leaf = np.asarray(result.leaf_of_node, dtype=np.int64)
    kind = np.asarray(result.kind_of_node, dtype=np.int64)
    if not len(leaf):
        return np.zeros((0, 0)), []
    width = int(np.bincount(leaf).max())
    grid = np.full((int(leaf.max()) + 1, width), np.nan)
    slot = np.zeros(len(leaf), dtype=np.int64)
    order = np.argsort(leaf, kind="stable")
    starts = np.searchsorted(leaf[order], leaf[order])
    slot[order] = np.arange(len(leaf)) - starts
    grid[leaf, slot] = kind
    return grid, [k.name for k in result.kinds]


def fleet_figure(results: dict):
    """Three panels per fabric: pace over time (shared solid, alone dotted), leaves over fewest, and
    the busiest instant's placement (leaf groups x nodes, coloured by job kind)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fabrics = list(results)
    titles = [t for fabric in fabrics for t in (f"{fabric}: pace of each job kind (shared solid, alone dotted)",
                                                f"{fabric}: leaf groups spanned / fewest possible",
                                                f"{fabric}: placement at the busiest instant (row: leaf group; "
                                                "colour: job kind; blank: free)")]
    fig = make_subplots(rows=3 * len(fabrics), cols=1, vertical_spacing=0.1 / max(len(fabrics), 1),
                        subplot_titles=titles)
    kinds = [k.name for k in next(iter(results.values())).kinds] if results else []
    colour = {kind: colour_of(i) for i, kind in enumerate(kinds)}
    for index, fabric in enumerate(fabrics):
        result = results[fabric]
        row = 3 * index + 1
        shared = _series(result, lambda j: j.pace_shared)
        alone = _series(result, lambda j: j.pace_alone)
        spread = _series(result, lambda j: j.leaves / j.fewest_leaves)
        for kind in kinds:
            if kind not in shared:
                continue
            fig.add_trace(go.Scatter(x=shared[kind][0], y=shared[kind][1], mode="lines+markers", name=kind,
                                     legendgroup=kind, showlegend=index == 0, line={"color": colour[kind]}),
                          row=row, col=1)
            fig.add_trace(go.Scatter(x=alone[kind][0], y=alone[kind][1], mode="lines", name=f"{kind} alone",
                                     legendgroup=kind, showlegend=False,
                                     line={"color": colour[kind], "dash": "dot"}), row=row, col=1)
            fig.add_trace(go.Scatter(x=spread[kind][0], y=spread[kind][1], mode="lines+markers", name=kind,
                                     legendgroup=kind, showlegend=False, line={"color": colour[kind]}),
                          row=row + 1, col=1)
        fig.update_yaxes(title_text="pace (share of NIC rate)", range=[0, 1.05], row=row, col=1)
        fig.update_yaxes(title_text="leaves / fewest", rangemode="tozero", row=row + 1, col=1)
        fig.update_xaxes(title_text="time (hours)", row=row + 1, col=1)
        grid, names = occupancy_grid(result)
        if grid.size:
            n = max(len(names), 1)
            scale = [pair for i in range(n) for pair in ([i / n, colour_of(i)], [(i + 1) / n, colour_of(i)])]
            fig.add_trace(go.Heatmap(z=grid, zmin=-0.5, zmax=n - 0.5, colorscale=scale, showscale=False,
                                     customdata=[[names[int(v)] if v == v else "free" for v in r] for r in grid],
                                     hovertemplate="leaf group %{y}, slot %{x}: %{customdata}<extra></extra>"),
                          row=row + 2, col=1)
            fig.update_yaxes(title_text="leaf group", autorange="reversed", row=row + 2, col=1)
            fig.update_xaxes(title_text="node in the leaf group", row=row + 2, col=1)
    first = next(iter(results.values()), None)
    policy = f"policy {first.policy}, {first.horizon_days:g} days" if first else ""
    fig.update_layout(height=860 * max(len(fabrics), 1), title=f"fabricplan fleet ({policy})")
    return fig


def fleet_summary(results: dict) -> str:
    """The page's one line: the fabrics, the policy and the horizon."""
    first = next(iter(results.values()), None)
    if first is None:
        return "No fabric."
    return (f"{', '.join(results)}: policy {first.policy}, {first.horizon_days:g} days, "
            f"{len(first.samples)} sampled instants")


def fleet_html(results: dict) -> str:
    """The page on the reports' base layout and stylesheet (`chart_page.html.j2`)."""
    from fabricplan.report.pages import figure_div, render

    return render("chart_page.html.j2", title="Job mix on the shared fabric", command="fleet", charts=True,
                  summary=fleet_summary(results), chart=figure_div(fleet_figure(results), "chart-fleet"))


def write_fleet_html(results: dict, path: Path) -> None:
    """Write the page to ``path`` (whole or not at all)."""
    from fabricplan.io import write_text_atomic

    write_text_atomic(path, fleet_html(results), what="fleet report")
