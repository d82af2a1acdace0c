"""CC002 — CNP / ECN-mark rates per port (congestion signalled to senders).

Peak per-interval rate of ``np_cnp_sent`` (CNPs this port sent as a receiver),
``rp_cnp_handled`` (CNPs it acted on as a sender) and ``np_ecn_marked_roce_packets``. Above
``cnp_rate_max_per_s`` (heuristic) the port is congested most of the time: DCQCN is working but
the load or the incast pattern needs attention.

Passing::

    np_cnp_sent 200/s

Failing::

    np_cnp_sent 50,000/s
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.health.checks._common import (
    counter_window,
    health_finding,
    is_rdma,
    measured,
    num,
    rounded,
    unavailable,
)
from fabricplan.ops.lint.options import from_catalog
from fabricplan.ops.telemetry import PortTelemetry

ID = "CC002"
SEVERITY = "warning"
SCOPE = "port"
TITLE = "CNP and ECN-mark rates"
OPTIONS: dict[str, str] = {"cnp_rate_max_per_s": "health.cnp_rate_max_per_s"}
_COUNTERS = ("np_cnp_sent", "rp_cnp_handled", "np_ecn_marked_roce_packets")


def defaults(catalog: Any) -> dict[str, Any]:
    return from_catalog(OPTIONS, catalog)


def check(port: PortTelemetry, options: dict[str, Any], catalog: Any) -> Iterator[Any]:
    if not is_rdma(port):
        return
    present = [port.get(c) for c in _COUNTERS if port.get(c) is not None]
    if not present:
        yield unavailable(ID, port.name, list(_COUNTERS), "no CNP/ECN hw_counters read")
        return
    worst = 0.0
    for series in present:
        w = counter_window(series)
        if w["peak_per_s"] == w["peak_per_s"]:
            worst = max(worst, w["peak_per_s"]) if series.counter != "np_ecn_marked_roce_packets" else worst
        if series.counter != "np_ecn_marked_roce_packets" and w["peak_per_s"] > options["cnp_rate_max_per_s"]:
            ev = {"counter": series.counter, "per_s_peak": w["peak_per_s"], "per_s_mean": w["mean_per_s"],
                  "peak_at": w["peak_at"]}
            yield health_finding(
                ID, port.name, f"{series.counter} {num(w['peak_per_s'])}/s at peak (mean {num(w['mean_per_s'])}/s; "
                f"limit {num(options['cnp_rate_max_per_s'])}/s): the port is congested most of the time",
                "look for incast (many senders to this receiver) or an oversubscribed uplink; spread the job or "
                "tune DCQCN (rpg_min_dec_fac, rpg_time_reset)", rounded(ev),
                w["peak_per_s"] / options["cnp_rate_max_per_s"], [series],
                limits=[(series, options["cnp_rate_max_per_s"], "cnp_rate_max_per_s")])
    yield measured(ID, port.name, "cnp_per_s_peak", worst, "1/s", options["cnp_rate_max_per_s"])
