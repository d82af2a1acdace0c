"""PFCWD001 — the switch's PFC watchdog detected a pause storm (SONiC ``show pfcwd stats``).

Per switch port and queue: the increase of ``pfcwd_storm_detected``
(``PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED``) over the window; any increase is a storm the watchdog
acted on (by default it drops the queue's traffic until the storm ends: ``pfcwd_tx_drop``,
``pfcwd_rx_drop``). A storm is a queue paused for more than 99 % of the detection time
(sonic-swss PR #3036; reference/ops_formats.md section 5), so one is always an error; the
threshold ``pfcwd_storms_max`` (0) is in the catalog.

Passing::

    Ethernet4:3 storms detected 2 -> 2 over the window

Failing::

    Ethernet0:3 storms detected 0 -> 1, 300 packets dropped
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.health.checks._common import counter_window, health_finding, measured, num, rounded, unavailable
from fabricplan.ops.lint.options import from_catalog
from fabricplan.ops.telemetry import PortTelemetry

ID = "PFCWD001"
SEVERITY = "error"
SCOPE = "port"
TITLE = "PFC watchdog storms detected on a switch queue"
OPTIONS: dict[str, str] = {"storms_max": "health.pfcwd_storms_max"}
_COUNTERS = ("pfcwd_storm_detected", "pfcwd_storm_restored", "pfcwd_tx_ok", "pfcwd_tx_drop", "pfcwd_rx_ok",
             "pfcwd_rx_drop")


def defaults(catalog: Any) -> dict[str, Any]:
    return from_catalog(OPTIONS, catalog)


def check(port: PortTelemetry, options: dict[str, Any], catalog: Any) -> Iterator[Any]:
    if not port.has_any(_COUNTERS):
        return
    queues = sorted({p for c in _COUNTERS for p in port.priorities(c)})
    worst = 0.0
    evaluated = False
    for queue in queues:
        detected = port.get("pfcwd_storm_detected", queue)
        if detected is None:
            yield unavailable(ID, port.name, ["pfcwd_storm_detected"],
                              f"queue {queue}: the watchdog's storm count is N/A (queue not polled)")
            continue
        w = counter_window(detected)
        storms = w["total"]
        if storms != storms:
            continue
        evaluated = True
        worst = max(worst, storms)
        if storms > options["storms_max"]:
            dropped = {}
            series = [detected]
            for name in ("pfcwd_tx_drop", "pfcwd_rx_drop"):
                s = port.get(name, queue)
                if s is not None:
                    total = counter_window(s)["total"]
                    if total == total:
                        dropped[f"{name}_packets"] = total
                        if total > 0:
                            series.append(s)
            lost = sum(dropped.values())
            yield health_finding(
                ID, port.name, f"queue {queue}: the PFC watchdog detected {num(storms)} pause "
                f"storm{'s' if storms != 1 else ''}" + (f" and dropped {num(lost)} packets" if lost else ""),
                "a device behind this switch port keeps the queue paused (a stuck NIC or host): find it (the peer "
                "of this port), drain or reset it; the watchdog drops the queue's traffic while it lasts",
                rounded({"queue": queue, "storms": storms, "peak_at": w["peak_at"], **dropped}), storms + 1.0, series)
    if evaluated:
        yield measured(ID, port.name, "pfcwd_storms", worst, "storms", options["storms_max"])
