"""PFC002 — PFC pause storm (the PFC watchdog's definition) or NIC pause-storm events.

A queue is stormed when it is paused for more than ``pfc_storm_pause_fraction`` (99 %, SONiC's
Mellanox criterion, sonic-swss PR #3036) of the watchdog's detection time
(``pfc_storm_detection_ms``, 200 ms, sonic-utilities ``pfcwd``). From counters sampled every Δt:
a run of consecutive intervals each paused at least 99 %, lasting at least the detection time.
Also any increase of the mlx5 ``tx_pause_storm_warning_events``/``tx_pause_storm_error_events``
(the NIC's own stall prevention fired; error events mean pause TX was disabled and drops follow).

Passing::

    rx_prio3_pause_duration grows 0.2 s per 1 s interval

Failing::

    rx_prio3_pause_duration grows 1 s per 1 s for 20 s (paused 100 %)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

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
from fabricplan.ops.telemetry import PortTelemetry, increases, runs

ID = "PFC002"
SEVERITY = "error"
SCOPE = "port"
TITLE = "PFC pause storm (paused > 99 % for the watchdog's detection time)"
OPTIONS: dict[str, str] = {"storm_pause_fraction": "health.pfc_storm_pause_fraction",
                           "detection_ms": "health.pfc_storm_detection_ms"}
_FIX = ("find the receiver that cannot drain (PCIe, host memory, a hung process) behind the paused port; make sure the "
        "PFC watchdog is on with action drop (sudo pfcwd start --action drop ports all detection-time 200) and NIC "
        "pfc_stall_prevention is set")


def defaults(catalog: Any) -> dict[str, Any]:
    return from_catalog(OPTIONS, catalog)


def check(port: PortTelemetry, options: dict[str, Any], catalog: Any) -> Iterator[Any]:
    if not is_ethernet(port):
        return
    prios = port.priorities("rx_pause_duration")
    events = [s for s in (port.get("tx_pause_storm_warning_events"), port.get("tx_pause_storm_error_events")) if s]
    if not prios and not events:
        yield unavailable(ID, port.name, ["rx_prioN_pause_duration", "tx_pause_storm_error_events"],
                          "no pause-duration counter and no NIC storm events: storms cannot be seen")
        return
    longest = 0.0
    need_s = options["detection_ms"] / 1000.0
    for prio in prios:
        series = port.get("rx_pause_duration", prio)
        inc = increases(series)
        if not len(inc.dv):
            continue
        fraction = inc.dv / (inc.dt * 1e6)
        stormed = np.nan_to_num(fraction, nan=0.0) >= options["storm_pause_fraction"]
        best = None
        for start, stop in runs(stormed):
            seconds = float(inc.dt[start:stop].sum())
            if seconds >= need_s and (best is None or seconds > best[0]):
                best = (seconds, start, stop)
        if best is None:
            continue
        seconds, start, stop = best
        longest = max(longest, seconds)
        mean = float(inc.dv[start:stop].sum() / (inc.dt[start:stop].sum() * 1e6))
        ev = {"priority": prio, "storm_seconds": seconds, "storm_start": float(inc.t_end[start] - inc.dt[start]),
              "storm_end_at": float(inc.t_end[stop - 1]), "paused_fraction_in_storm": mean,
              "detection_ms": options["detection_ms"], "storm_fraction": options["storm_pause_fraction"]}
        yield health_finding(
            ID, port.name, f"priority {prio}: pause storm, paused {pct(mean)} for {num(seconds)} s "
            f"(watchdog: > {pct(options['storm_pause_fraction'])} for {num(options['detection_ms'])} ms)",
            _FIX, rounded(ev), seconds / need_s, [series],
            limits=[(series, options["storm_pause_fraction"] * 1e6,
                     f"storm_pause_fraction ({pct(options['storm_pause_fraction'])} paused)")])
    for series in events:
        w = counter_window(series)
        if w["total"] > 0:
            ev = {"events": w["total"], "peak_at": w["peak_at"]}
            yield health_finding(ID, port.name, f"NIC counted {num(w['total'])} {series.counter.replace('_', ' ')}",
                                 _FIX, rounded(ev), 1.0 + w["total"], [series])
    yield measured(ID, port.name, "longest_storm_s", longest, "s", need_s)
