"""PFC001 — the peer pauses this port too much (PFC pause rate and paused-time fraction).

Per port and priority: paused fraction = Δ``rx_prioN_pause_duration`` [µs] / Δt [µs] and received
pause frames per second (``rx_prioN_pause``), both per sampling interval. A port whose peak
interval is above ``pfc_pause_fraction_max`` or ``pfc_pause_rate_max_per_s`` is flagged: the
seed's "a rise in PFC pauses means congestion control needs tuning". Thresholds are heuristics
(catalog ``ops_defaults.health``).

Passing::

    rx_prio3_pause_duration grows 1,000 µs per 15 s interval (0.007 % paused)

Failing::

    rx_prio3_pause_duration grows 3 s per 15 s interval (20 % paused)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.health.checks._common import (
    counter_window,
    health_finding,
    is_ethernet,
    measured,
    num,
    pct,
    rounded,
    unavailable,
)
from fabricplan.ops.lint.options import from_catalog
from fabricplan.ops.telemetry import PortTelemetry

ID = "PFC001"
SEVERITY = "warning"
SCOPE = "port"
TITLE = "PFC pause rate and paused-time fraction per port and priority"
OPTIONS: dict[str, str] = {"pause_fraction_max": "health.pfc_pause_fraction_max",
                           "pause_rate_max_per_s": "health.pfc_pause_rate_max_per_s"}


def defaults(catalog: Any) -> dict[str, Any]:
    return from_catalog(OPTIONS, catalog)


def check(port: PortTelemetry, options: dict[str, Any], catalog: Any) -> Iterator[Any]:
    if not is_ethernet(port):
        return
    prios = sorted(set(port.priorities("rx_pause_duration")) | set(port.priorities("rx_pause")))
    if not prios:
        yield unavailable(ID, port.name, ["rx_prioN_pause", "rx_prioN_pause_duration"],
                          "no per-priority pause counters (PFC disabled on every priority, or not exported)")
        return
    worst = 0.0
    for prio in prios:
        duration, frames = port.get("rx_pause_duration", prio), port.get("rx_pause", prio)
        ev: dict[str, Any] = {"priority": prio}
        problems, series, score, limits = [], [], 0.0, []
        if duration is not None:
            w = counter_window(duration)
            frac_peak, frac_mean = w["peak_per_s"] / 1e6, w["mean_per_s"] / 1e6
            ev.update(paused_fraction_mean=frac_mean, paused_fraction_peak=frac_peak, peak_at=w["peak_at"])
            if frac_peak == frac_peak:
                worst = max(worst, frac_peak)
            if frac_peak > options["pause_fraction_max"]:
                problems.append(f"paused {pct(frac_peak)} of an interval (mean {pct(frac_mean)}; "
                                f"limit {pct(options['pause_fraction_max'])})")
                score = max(score, frac_peak / options["pause_fraction_max"])
                series.append(duration)
                limits.append((duration, options["pause_fraction_max"] * 1e6,
                               f"pause_fraction_max ({pct(options['pause_fraction_max'])} paused)"))
        if frames is not None:
            w = counter_window(frames)
            ev.update(pause_frames_per_s_mean=w["mean_per_s"], pause_frames_per_s_peak=w["peak_per_s"])
            if w["peak_per_s"] > options["pause_rate_max_per_s"]:
                problems.append(f"receives {num(w['peak_per_s'])} pause frames/s at peak "
                                f"(limit {num(options['pause_rate_max_per_s'])})")
                score = max(score, w["peak_per_s"] / max(options["pause_rate_max_per_s"], 1e-9))
                series.append(frames)
                limits.append((frames, options["pause_rate_max_per_s"], "pause_rate_max_per_s"))
        if problems:
            yield health_finding(
                ID, port.name, f"priority {prio}: " + "; ".join(problems),
                "congestion control is not keeping queues below the PFC threshold: check ECN marking "
                "(WRED min/max below XOFF) and DCQCN on every sender (fabricplan lint), and look for an incast "
                "or a slow receiver behind this port", rounded(ev), score, series, limits=limits)
    yield measured(ID, port.name, "paused_fraction_peak", worst, "fraction", options["pause_fraction_max"])
