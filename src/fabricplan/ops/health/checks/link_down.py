"""IB002 — the link went down (``link_downed``, ``link_down_events_phy``): any increase.

Any increment is fatal for a training job on that link (NVIDIA NVSentinel, fatal on delta > 0).

Passing::

    link_downed flat

Failing::

    link_downed +1
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.health.checks._common import (
    counter_window,
    health_finding,
    is_ethernet,
    is_ib,
    measured,
    num,
    rounded,
    unavailable,
)
from fabricplan.ops.lint.options import from_catalog
from fabricplan.ops.telemetry import PortTelemetry

ID = "IB002"
SEVERITY = "error"
SCOPE = "port"
TITLE = "Link down events"
OPTIONS: dict[str, str] = {"link_downed_max": "health.link_downed_max"}


def defaults(catalog: Any) -> dict[str, Any]:
    return from_catalog(OPTIONS, catalog)


def check(port: PortTelemetry, options: dict[str, Any], catalog: Any) -> Iterator[Any]:
    if not (is_ib(port) or is_ethernet(port)):
        return
    present = [s for s in (port.get("link_downed"), port.get("link_down_events_phy")) if s is not None]
    if not present:
        yield unavailable(ID, port.name, ["link_downed", "link_down_events_phy"], "no link-down counter read")
        return
    total = 0.0
    for series in present:
        w = counter_window(series)
        if w["total"] == w["total"]:
            total += w["total"]
        if w["total"] > options["link_downed_max"]:
            yield health_finding(ID, port.name, f"{series.counter} +{num(w['total'])}: the link went down",
                                 "check the cable and transceiver at both ends (mlxlink -d DEV, the switch port's "
                                 "log) and the jobs that used the link", rounded({"downs": w["total"],
                                                                                  "last_at": w["peak_at"]}),
                                 1.0 + w["total"], [series])
    yield measured(ID, port.name, "link_downs", total, "count", options["link_downed_max"])
