"""IB003 — transmit discards above 100 per second (``port_xmit_discards``).

Packets the port dropped on transmit (head-of-queue timeout, port down): NVIDIA NVSentinel's
non-fatal threshold is 100/s; UFM raises an event at 200 in its 300 s window.

Passing::

    port_xmit_discards +3 in an hour

Failing::

    port_xmit_discards 450/s at peak
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.health.checks._common import (
    counter_window,
    health_finding,
    is_ib,
    measured,
    num,
    rounded,
    unavailable,
)
from fabricplan.ops.lint.options import from_catalog
from fabricplan.ops.telemetry import PortTelemetry

ID = "IB003"
SEVERITY = "warning"
SCOPE = "port"
TITLE = "Transmit discards (port_xmit_discards) below 100/s"
OPTIONS: dict[str, str] = {"port_xmit_discards_max_per_s": "health.port_xmit_discards_max_per_s"}


def defaults(catalog: Any) -> dict[str, Any]:
    return from_catalog(OPTIONS, catalog)


def check(port: PortTelemetry, options: dict[str, Any], catalog: Any) -> Iterator[Any]:
    if not is_ib(port):
        return
    series = port.get("port_xmit_discards")
    if series is None:
        yield unavailable(ID, port.name, ["port_xmit_discards"], "no transmit-discard counter read")
        return
    w = counter_window(series)
    limit = options["port_xmit_discards_max_per_s"]
    if w["peak_per_s"] > limit:
        yield health_finding(ID, port.name, f"port_xmit_discards {num(w['peak_per_s'])}/s at peak (+{num(w['total'])} "
                             f"in the window; limit {num(limit)}/s)",
                             "the port drops on transmit: look for a stuck or slow downstream port (credit "
                             "starvation, HOQ lifetime) and congestion on this link",
                             rounded({"discards": w["total"], "per_s_peak": w["peak_per_s"], "peak_at": w["peak_at"]}),
                             w["peak_per_s"] / max(limit, 1e-9), [series],
                             limits=[(series, limit, "port_xmit_discards_max_per_s")])
    yield measured(ID, port.name, "xmit_discards_per_s_peak", w["peak_per_s"], "1/s", limit)
