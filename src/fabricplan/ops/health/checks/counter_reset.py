"""CNT001 — a counter went backwards (reset) in the window.

A counter below its previous reading was cleared (driver reload, ``perfquery -R``, a reboot); its
increase over that interval is counted from zero, as Prometheus's ``rate()`` does. Reported so
that the rates around the reset are read with care.

Passing::

    rx_prio3_pause 100, 180, 260

Failing::

    rx_prio3_pause 100, 180, 12   (reset between the 2nd and 3rd reading)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.health.checks._common import health_finding, rounded, stamp
from fabricplan.ops.telemetry import PortTelemetry, increases

ID = "CNT001"
SEVERITY = "info"
SCOPE = "port"
TITLE = "Counter reset (went backwards)"
OPTIONS: dict[str, str] = {}


def defaults(catalog: Any) -> dict[str, Any]:
    return {}


def check(port: PortTelemetry, options: dict[str, Any], catalog: Any) -> Iterator[Any]:
    reset = []
    for series in port.counters.values():
        if series.from_rate:
            if series.resets_seen:
                reset.append((series, series.resets_seen, None))
            continue
        resets = increases(series).resets
        if len(resets):
            reset.append((series, len(resets), float(series.t_s[resets[0]])))
    if reset:
        names = ", ".join(f"{s.label} ({n}x{'' if t is None else ', first at ' + stamp(t)})" for s, n, t in reset[:5])
        more = f" and {len(reset) - 5} more" if len(reset) > 5 else ""
        yield health_finding(ID, port.name, f"counters reset: {names}{more}; increases across a reset count from 0",
                             "find what cleared them (driver reload, perfquery -R, reboot); rates over the reset "
                             "interval may be low", rounded({"counters": [s.label for s, _n, _t in reset]}), 1.0,
                             [s for s, _n, _t in reset[:5]])
