"""IB001 — symbol errors above the IBTA BER limit (120 per hour).

``symbol_error`` increases per hour of the window (extrapolated for windows under an hour) above
``symbol_error_max_per_hour`` violate the IBTA BER specification (NVIDIA NVSentinel's fatal PHY
threshold, docs/configuration/nic-health-monitor.md).

Passing::

    symbol_error +3 in 24 h

Failing::

    symbol_error +400 in 1 h
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

ID = "IB001"
SEVERITY = "error"
SCOPE = "port"
TITLE = "Symbol errors within the IBTA BER limit (120 per hour)"
OPTIONS: dict[str, str] = {"symbol_error_max_per_hour": "health.symbol_error_max_per_hour"}


def defaults(catalog: Any) -> dict[str, Any]:
    return from_catalog(OPTIONS, catalog)


def check(port: PortTelemetry, options: dict[str, Any], catalog: Any) -> Iterator[Any]:
    if not is_ib(port):
        return
    series = port.get("symbol_error")
    if series is None:
        yield unavailable(ID, port.name, ["symbol_error"], "no symbol error counter read")
        return
    w = counter_window(series)
    if w["seconds"] <= 0:
        yield unavailable(ID, port.name, ["symbol_error"], "fewer than two known readings")
        return
    per_hour = w["mean_per_s"] * 3600.0
    limit = options["symbol_error_max_per_hour"]
    if per_hour > limit:
        ev = {"symbol_errors": w["total"], "window_s": w["seconds"], "per_hour": per_hour, "peak_at": w["peak_at"]}
        yield health_finding(ID, port.name, f"{num(per_hour)} symbol errors per hour (+{num(w['total'])} in "
                             f"{num(w['seconds'] / 3600)} h; IBTA BER limit {num(limit)}/h)",
                             "reseat or replace the cable/transceiver on this link (check both ends with "
                             "mlxlink -d DEV -m and the eye/BER), then clear the counters (perfquery -R)",
                             rounded(ev), per_hour / max(limit, 1e-9), [series],
                             limits=[(series, limit / 3600.0, f"symbol_error_max_per_hour ({num(limit)}/h)")])
    yield measured(ID, port.name, "symbol_errors_per_hour", per_hour, "1/h", limit)
