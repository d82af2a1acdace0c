"""`fabricplan simulate --plot out.html`: sending rates, queues and paused ports over time (plotly).

plotly loads only here (``--plot``); the figure is one self-contained HTML file (plotly.js inlined).
"""

from __future__ import annotations

from pathlib import Path

#: Program limit: queues drawn (the longest ones); more lines make the chart unreadable.
MAX_QUEUES_DRAWN = 12


def simulate_figure(result):
    """Three stacked panels from a recorded :class:`~fabricplan.sim.scenarios.ScenarioResult`."""
    import numpy as np
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from fabricplan.sim.scenarios import node_name

    fl = result.fluid
    tl = fl.timeline
    t = np.asarray(tl.get("t_us", []))
    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.06,
                        subplot_titles=("Sending rate per flow (Gb/s)", "Egress queues (KB), the longest",
                                        "Ports paused by PFC"))
    rates = np.asarray(tl.get("rate_gbps", np.zeros((0, 0))))
    for column, flow in enumerate(np.asarray(tl.get("flows", []))):
        src, dst = int(fl.flows.src[flow]), int(fl.flows.dst[flow])
        fig.add_trace(go.Scattergl(x=t, y=rates[:, column], mode="lines", name=f"flow {flow} h{src}->h{dst}",
                                   legendgroup="rates", showlegend=column < 16), row=1, col=1)
    queues = np.asarray(tl.get("queue_kb", np.zeros((0, 0))))
    if queues.size:
        longest = np.argsort(-queues.max(axis=0))[:MAX_QUEUES_DRAWN]
        net = result.network
        P = fl.n_priorities
        for column in longest:
            qid = int(tl["queues"][column])
            link = qid // P
            label = f"{node_name(net, int(net.link_src[link]))}->{node_name(net, int(net.link_dst[link]))}"
            fig.add_trace(go.Scattergl(x=t, y=queues[:, column], mode="lines", name=label, legendgroup="queues"),
                          row=2, col=1)
    fig.add_trace(go.Scattergl(x=t, y=tl.get("paused_ports", []), mode="lines", name="paused ports",
                               legendgroup="pauses"), row=3, col=1)
    fig.update_xaxes(title_text="time (us)", row=3, col=1)
    fig.update_layout(height=900, title=f"fabricplan simulate {','.join(j.name for j in result.jobs)} "
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
