"""IB004 — transmit waits far above the other ports' (``port_xmit_wait`` outlier).

``port_xmit_wait`` counts ticks a port had data but no credits to send; the tick is
device-specific, so only relative values mean anything (reference/ops_formats.md section 5). A
port whose mean rate is at least ``xmit_wait_outlier_ratio`` times the median of every port read
(and above ``xmit_wait_min_per_s``) is congested. Heuristic thresholds.

Passing::

    every port about 2,000 ticks/s

Failing::

    one port 90,000 ticks/s while the median is 2,000
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from fabricplan.ops.health.checks._common import counter_window, health_finding, measured, num, rounded
from fabricplan.ops.lint.options import from_catalog

ID = "IB004"
SEVERITY = "warning"
SCOPE = "fabric"
TITLE = "Transmit waits (port_xmit_wait) far above the other ports'"
OPTIONS: dict[str, str] = {"outlier_ratio": "health.xmit_wait_outlier_ratio",
                           "min_per_s": "health.xmit_wait_min_per_s"}


def defaults(catalog: Any) -> dict[str, Any]:
    return from_catalog(OPTIONS, catalog)


def check(fabric: Any, options: dict[str, Any], catalog: Any) -> Iterator[Any]:
    rates = []
    for port in fabric.ports:
        series = port.get("port_xmit_wait")
        if series is not None:
            w = counter_window(series)
            if w["mean_per_s"] == w["mean_per_s"]:
                rates.append((port, series, w))
    if len(rates) < 2:
        return
    median = float(np.median([w["mean_per_s"] for _p, _s, w in rates]))
    floor = max(options["min_per_s"], median * options["outlier_ratio"])
    for port, series, w in rates:
        if w["mean_per_s"] > floor:
            ratio = w["mean_per_s"] / median if median > 0 else float("inf")
            yield health_finding(ID, port.name, f"port_xmit_wait {num(w['mean_per_s'])} ticks/s, "
                                 f"{num(ratio)}x the median port ({num(median)} ticks/s)",
                                 "the port waits for credits: the downstream side is congested or slow; look at "
                                 "the peer port and the traffic pattern (incast, a hot spine)",
                                 rounded({"per_s_mean": w["mean_per_s"], "median_per_s": median,
                                          "peak_at": w["peak_at"]}),
                                 w["mean_per_s"] / floor, [series])
        yield measured(ID, port.name, "xmit_wait_per_s_mean", w["mean_per_s"], "ticks/s", floor)
