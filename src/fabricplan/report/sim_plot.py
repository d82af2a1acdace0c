"""`fabricplan simulate --plot out.html`: sending rates, queues and paused ports over time (plotly).

The rates are drawn per group of flows (each job; its victim flows apart), as the group's median
and its p10-p90 band over the flows still sending (a finished flow leaves its group), not one line
per flow: 16 crossing lines read as noise. Each flow's rate is
first averaged over a window of recorded steps (about `SMOOTHED_POINTS` across the run), so the
chart shows a sender's pace rather than its per-step bursts.

plotly loads only here (``--plot``); the figure is one self-contained HTML file (plotly.js inlined).
"""

from __future__ import annotations

from pathlib import Path

#: Program limit: queues drawn (the longest ones); more lines make the chart unreadable.
MAX_QUEUES_DRAWN = 12
#: Layout only: the band drawn around each flow group's median rate, and the groups' colours.
BAND_LOW_PERCENTILE = 10
BAND_HIGH_PERCENTILE = 90
#: About this many points across the run: each flow's rate is averaged over len(t) // SMOOTHED_POINTS steps.
SMOOTHED_POINTS = 200
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


def flow_rates(result):
    """(times [us], rate of each recorded flow [Gb/s] averaged over ``window`` recorded steps and NaN once
    the flow has finished, ``window``): what the rate panel's medians and bands are taken over."""
    import numpy as np

    fl = result.fluid
    tl = fl.timeline
    t = np.asarray(tl.get("t_us", []))
    rates = np.asarray(tl.get("rate_gbps", np.zeros((0, 0))), dtype=float)
    window = max(1, len(t) // SMOOTHED_POINTS) if rates.size else 1
    if window > 1:  # a sender's pace, not its per-step bursts
        rates = _moving_mean(rates, window)
    if rates.size:  # a flow that has finished is no longer in its group's median and band
        recorded = np.asarray(tl.get("flows", []), dtype=int)
        finished = np.asarray(fl.finish_us, dtype=float)[recorded]
        rates = np.where(t[:, None] > np.where(np.isnan(finished), np.inf, finished)[None, :], np.nan, rates)
    return t, rates, window


def _moving_mean(rates, window: int):
    """Each column's mean over the last ``window`` rows (fewer at the start)."""
    import numpy as np

    total = np.cumsum(rates, axis=0)
    shifted = np.vstack([np.zeros((window, rates.shape[1])), total[:-window]]) if len(total) > window else \
        np.zeros_like(total)
    counts = np.minimum(np.arange(1, len(rates) + 1), window)[:, None]
    return (total - shifted[:len(total)]) / counts


def _step_us(t) -> float:
    return float((t[-1] - t[0]) / (len(t) - 1)) if len(t) > 1 else 0.0


def _rgba(colour: str, alpha: float) -> str:
    return f"rgba({int(colour[1:3], 16)},{int(colour[3:5], 16)},{int(colour[5:7], 16)},{alpha})"


def simulate_figure(result):
    """Three stacked panels from a recorded :class:`~fabricplan.sim.scenarios.ScenarioResult`: the
    sending rate of each group of flows (each job, its victims apart) as its median with a p10-p90
    band, the longest egress queues, the ports paused by PFC."""
    import warnings

    import numpy as np
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from fabricplan.sim.scenarios import node_name

    fl = result.fluid
    tl = fl.timeline
    t, rates, window = flow_rates(result)
    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.06,
                        subplot_titles=("Sending rate per flow group (Gb/s): median, shaded p10-p90 of its flows still sending"
                                        + (f", each averaged over {window * _step_us(t):.3g} us" if window > 1 else ""),
                                        "Egress queues (KB), the longest", "Ports paused by PFC"))
    for k, (name, columns) in enumerate(flow_groups(result).items() if rates.size else ()):
        colour = GROUP_COLOURS[k % len(GROUP_COLOURS)]
        group = rates[:, columns]
        with warnings.catch_warnings():  # an instant after every flow of the group finished: a gap
            warnings.simplefilter("ignore", RuntimeWarning)
            low, median, high = np.nanpercentile(group, [BAND_LOW_PERCENTILE, 50, BAND_HIGH_PERCENTILE], axis=1)
        label = f"{name}: {len(columns)} flow{'s' if len(columns) != 1 else ''}"
        sending = ~np.isnan(median)
        if len(columns) > 1 and sending.any():
            ts, lows, highs = t[sending], low[sending], high[sending]
            fig.add_trace(go.Scatter(x=np.concatenate([ts, ts[::-1]]), y=np.concatenate([highs, lows[::-1]]),
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


def simulate_html(result) -> str:
    """The figure as a page on the reports' base layout and stylesheet (`chart_page.html.j2`)."""
    from fabricplan.report.pages import figure_div, render

    fl = result.fluid
    summary = (f"{', '.join(j.name for j in result.jobs)}: congestion control {fl.config.cc}, "
               f"PFC {'on' if fl.config.uses_pfc else 'off'}")
    return render("chart_page.html.j2", title="Congestion over time", command="simulate", charts=True,
                  summary=summary, chart=figure_div(simulate_figure(result), "chart-simulate"))


def write_plot(result, path: Path) -> None:
    """Write the page to ``path`` (whole or not at all); an InputError naming the path if it cannot be written."""
    from fabricplan.io import write_text_atomic

    write_text_atomic(path, simulate_html(result), what="plot")
