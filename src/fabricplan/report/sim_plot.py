"""`fabricplan simulate --plot out.html`: sending rates, queues and paused ports over time (plotly).

The rates are drawn per group of flows (each job; its victim flows apart), as the group's median
and its p10-p90 band, not one line per flow: 16 crossing lines read as noise.

plotly loads only here (``--plot``); the figure is one self-contained HTML file (plotly.js inlined).
"""

from __future__ import annotations

from pathlib import Path

#: Program limit: queues drawn (the longest ones); more lines make the chart unreadable.
MAX_QUEUES_DRAWN = 12
#: Layout only: the band drawn around each flow group's median rate, and the groups' colours.
BAND_LOW_PERCENTILE = 10
BAND_HIGH_PERCENTILE = 90
GROUP_COLOURS = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#eeca3b", "#9d755d")


def flow_groups(result) -> dict[str, list[int]]:
    """The recorded flows' columns of the timeline by group: per job, its victims apart from the rest
    (``"<job>"``, ``"<job> victims"``), in job order."""
    import numpy as np

    recorded = np.asarray(result.fluid.timeline.get("flows", []), dtype=int)
    starts = np.cumsum([0] + [len(job.src) for job in result.jobs])
    groups: dict[str, list[int]] = {}
    for column, simulated in enumerate(recorded):
        flow = int(result.owner[simulated])
        index = int(result.job_of_flow[flow])
        job = result.jobs[index]
        victim = bool(np.asarray(job.victim)[flow - starts[index]]) if len(job.victim) else False
        groups.setdefault(f"{job.name} victims" if victim else job.name, []).append(column)
    order = {name: k for k, name in enumerate(n for job in result.jobs for n in (job.name, f"{job.name} victims"))}
    return dict(sorted(groups.items(), key=lambda kv: order.get(kv[0], len(order))))


def _rgba(colour: str, alpha: float) -> str:
    return f"rgba({int(colour[1:3], 16)},{int(colour[3:5], 16)},{int(colour[5:7], 16)},{alpha})"


def simulate_figure(result):
    """Three stacked panels from a recorded :class:`~fabricplan.sim.scenarios.ScenarioResult`: the
    sending rate of each group of flows (each job, its victims apart) as its median with a p10-p90
    band, the longest egress queues, the ports paused by PFC."""
    import numpy as np
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from fabricplan.sim.scenarios import node_name

    fl = result.fluid
    tl = fl.timeline
    t = np.asarray(tl.get("t_us", []))
    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.06,
                        subplot_titles=("Sending rate per flow group (Gb/s): median, shaded p10-p90 of its flows",
                                        "Egress queues (KB), the longest", "Ports paused by PFC"))
    rates = np.asarray(tl.get("rate_gbps", np.zeros((0, 0))))
    for k, (name, columns) in enumerate(flow_groups(result).items() if rates.size else ()):
        colour = GROUP_COLOURS[k % len(GROUP_COLOURS)]
        group = rates[:, columns]
        low, median, high = np.percentile(group, [BAND_LOW_PERCENTILE, 50, BAND_HIGH_PERCENTILE], axis=1)
        label = f"{name}: {len(columns)} flow{'s' if len(columns) != 1 else ''}"
        if len(columns) > 1:
            fig.add_trace(go.Scatter(x=np.concatenate([t, t[::-1]]), y=np.concatenate([high, low[::-1]]),
                                     fill="toself", mode="lines", line={"width": 0}, fillcolor=_rgba(colour, 0.2),
                                     name=f"{label} p10-p90", legendgroup=name, showlegend=False,
                                     hoverinfo="skip"), row=1, col=1)
        fig.add_trace(go.Scatter(x=t, y=median, mode="lines", name=label + (" (median)" if len(columns) > 1 else ""),
                                 legendgroup=name, line={"color": colour, "width": 2}), row=1, col=1)
    queues = np.asarray(tl.get("queue_kb", np.zeros((0, 0))))
    if queues.size:
        longest = np.argsort(-queues.max(axis=0))[:MAX_QUEUES_DRAWN]
        net = result.network
        P = fl.n_priorities
        for column in longest:
            qid = int(tl["queues"][column])
            link = qid // P
            label = f"{node_name(net, int(net.link_src[link]))}->{node_name(net, int(net.link_dst[link]))}"
            fig.add_trace(go.Scattergl(x=t, y=queues[:, column], mode="lines", name=label, legendgroup="queues",
                                       legendgrouptitle={"text": "queues"}), row=2, col=1)
    fig.add_trace(go.Scattergl(x=t, y=tl.get("paused_ports", []), mode="lines", name="paused ports",
                               legendgroup="pauses"), row=3, col=1)
    fig.update_yaxes(title_text="Gb/s", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text="KB", rangemode="tozero", row=2, col=1)
    fig.update_yaxes(title_text="ports", rangemode="tozero", row=3, col=1)
    fig.update_xaxes(title_text="time (us)", row=3, col=1)
    fig.update_layout(height=900, template="plotly_white", legend={"groupclick": "togglegroup"},
                      title=f"fabricplan simulate {','.join(j.name for j in result.jobs)} "
                            f"({fl.config.cc}, PFC {'on' if fl.config.uses_pfc else 'off'})")
    return fig


def write_plot(result, path: Path) -> None:
    """Write the figure to ``path`` (whole or not at all); an InputError naming the path if it cannot be written."""
    import plotly.io as pio
    from plotly.offline import get_plotlyjs

    html = pio.to_html(simulate_figure(result), include_plotlyjs=False, full_html=False)
    document = (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>fabricplan simulate</title>"
                f"<script type=\"text/javascript\">{get_plotlyjs()}</script></head><body>{html}</body></html>")
    from fabricplan.io import write_text_atomic

    write_text_atomic(path, document, what="plot")
