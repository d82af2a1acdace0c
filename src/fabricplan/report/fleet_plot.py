"""`fabricplan fleet --html out.html`: each job kind's pace over the sampled instants, shared and
alone, and the fragmentation (leaf groups spanned over the fewest possible), per fabric (plotly).

plotly loads only here; the page is one self-contained HTML file (plotly.js inlined). Colours
follow the job kind (the same kind has the same colour on every panel).
"""

from __future__ import annotations

from pathlib import Path

#: plotly's qualitative palette "Plotly" (10 colours), assigned to job kinds in spec order.
PALETTE = ("#636EFA", "#EF553B", "#00CC96", "#AB63FA", "#FFA15A", "#19D3F3", "#FF6692", "#B6E880", "#FF97FF",
           "#FECB52")


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


def fleet_figure(results: dict):
    """Two panels per fabric: pace over time (shared solid, alone dotted) and leaves over fewest."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fabrics = list(results)
    titles = [t for fabric in fabrics for t in (f"{fabric}: pace of each job kind (shared solid, alone dotted)",
                                                f"{fabric}: leaf groups spanned / fewest possible")]
    fig = make_subplots(rows=2 * len(fabrics), cols=1, vertical_spacing=0.08 / max(len(fabrics), 1),
                        subplot_titles=titles)
    kinds = [k.name for k in next(iter(results.values())).kinds] if results else []
    colour = {kind: PALETTE[i % len(PALETTE)] for i, kind in enumerate(kinds)}
    for index, fabric in enumerate(fabrics):
        result = results[fabric]
        row = 2 * index + 1
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
    first = next(iter(results.values()), None)
    policy = f"policy {first.policy}, {first.horizon_days:g} days" if first else ""
    fig.update_layout(height=520 * max(len(fabrics), 1), title=f"fabricplan fleet ({policy})")
    return fig


def write_fleet_html(results: dict, path: Path) -> None:
    """Write the page to ``path`` (whole or not at all)."""
    import plotly.io as pio
    from plotly.offline import get_plotlyjs

    from fabricplan.io import write_text_atomic

    html = pio.to_html(fleet_figure(results), include_plotlyjs=False, full_html=False)
    document = (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>fabricplan fleet</title>"
                f"<script type=\"text/javascript\">{get_plotlyjs()}</script></head><body>{html}</body></html>")
    write_text_atomic(path, document, what="fleet report")
