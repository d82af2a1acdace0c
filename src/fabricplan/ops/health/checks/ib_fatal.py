"""IB005 — counters whose every increment is fatal, and error rates above NVIDIA's limits.

Fatal on any increase (NVIDIA NVSentinel): ``excessive_buffer_overrun_errors``,
``local_link_integrity_errors``, ``rnr_nak_retry_err``. Non-fatal limits (same source):
``link_error_recovery`` > 5 per minute, ``port_rcv_errors`` > 10 per second (peak interval).

Passing::

    excessive_buffer_overrun_errors flat, port_rcv_errors 0.1/s

Failing::

    local_link_integrity_errors +2
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.health.checks._common import (
    counter_window,
    health_finding,
    is_ib,
    is_rdma,
    num,
    rounded,
    unavailable,
)
from fabricplan.ops.lint.options import from_catalog
from fabricplan.ops.telemetry import PortTelemetry

ID = "IB005"
SEVERITY = "error"
SCOPE = "port"
TITLE = "Fatal-on-increment counters and InfiniBand error rates"
OPTIONS: dict[str, str] = {"fatal_any_increment": "health.fatal_any_increment",
                           "link_error_recovery_max_per_min": "health.link_error_recovery_max_per_min",
                           "port_rcv_errors_max_per_s": "health.port_rcv_errors_max_per_s"}
_FIX = {"excessive_buffer_overrun_errors": "the receive buffer overran (flow control broken on the link): check VL "
                                           "arbitration and credits, and the cable",
        "local_link_integrity_errors": "the physical link is unreliable: replace the cable/transceiver",
        "rnr_nak_retry_err": "a receiver had no receive WQE and retries ran out: the application posts receives "
                             "too slowly",
        "link_error_recovery": "the link retrains: check the cable, transceiver and port (mlxlink)",
        "port_rcv_errors": "malformed packets arrive: check the cable and the sender's port"}


def defaults(catalog: Any) -> dict[str, Any]:
    return from_catalog(OPTIONS, catalog)


def check(port: PortTelemetry, options: dict[str, Any], catalog: Any) -> Iterator[Any]:
    if not (is_ib(port) or is_rdma(port)):
        return
    seen = False
    for name in options["fatal_any_increment"]:
        series = port.get(name)
        if series is None:
            continue
        seen = True
        w = counter_window(series)
        if w["total"] > 0:
            yield health_finding(ID, port.name, f"{name} +{num(w['total'])} (fatal on any increment)", _FIX.get(
                name, "check the link and the application"), rounded({"increase": w["total"], "last_at": w["peak_at"]}),
                10.0 + w["total"], [series])
    limits = (("link_error_recovery", options["link_error_recovery_max_per_min"] / 60.0, "per minute", 60.0),
              ("port_rcv_errors", options["port_rcv_errors_max_per_s"], "per second", 1.0))
    for name, limit_per_s, unit, scale in limits:
        series = port.get(name)
        if series is None:
            continue
        seen = True
        w = counter_window(series)
        if w["peak_per_s"] > limit_per_s:
            yield health_finding(ID, port.name, f"{name} {num(w['peak_per_s'] * scale)} {unit} at peak (limit "
                                 f"{num(limit_per_s * scale)} {unit})", _FIX[name],
                                 rounded({"increase": w["total"], "per_s_peak": w["peak_per_s"], "peak_at": w["peak_at"]}),
                                 w["peak_per_s"] / max(limit_per_s, 1e-12), [series], severity="warning",
                                 limits=[(series, limit_per_s, f"{name} limit ({num(limit_per_s * scale)} {unit})")])
    if not seen and is_ib(port):
        yield unavailable(ID, port.name, [*options["fatal_any_increment"], "link_error_recovery", "port_rcv_errors"],
                          "no InfiniBand error counter read")
