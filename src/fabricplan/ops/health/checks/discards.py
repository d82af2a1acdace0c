"""DROP001 — drops for lack of receive buffer: ``rx_discards_phy``, ``rx_out_of_buffer``, ``out_of_buffer``.

``rx_discards_phy`` counts packets the adapter dropped because it was congested (kernel mlx5
``counters.rst``); on a lossless class this means the PFC headroom is too small or PFC does not
match the peer. ``rx_out_of_buffer`` / hw ``out_of_buffer`` count packets with no receive WQE
posted (the application or driver is slow). Limit: ``discards_max_per_s`` (0: a lossless class
drops nothing; heuristic).

Passing::

    rx_discards_phy flat

Failing::

    rx_discards_phy +1,200 in the window
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.health.checks._common import (
    counter_window,
    health_finding,
    is_ethernet,
    is_rdma,
    measured,
    num,
    rounded,
    unavailable,
)
from fabricplan.ops.lint.options import from_catalog
from fabricplan.ops.telemetry import PortTelemetry

ID = "DROP001"
SEVERITY = "warning"
SCOPE = "port"
TITLE = "Discards and out-of-buffer drops"
OPTIONS: dict[str, str] = {"discards_max_per_s": "health.discards_max_per_s"}
_COUNTERS = ("rx_discards_phy", "rx_out_of_buffer", "out_of_buffer")
_FIX = {"rx_discards_phy": "the port buffer overflowed: check PFC is enabled on this priority on both ends and the "
                           "headroom (fabricplan headroom / lint HDRM001-002)",
        "rx_out_of_buffer": "no receive buffer was posted in time: raise the RX ring (ethtool -G IF rx 8192) or "
                            "find the stalled consumer",
        "out_of_buffer": "a QP had no receive WQE posted: the application posts receives too slowly (or uses SRQ "
                         "too small)"}


def defaults(catalog: Any) -> dict[str, Any]:
    return from_catalog(OPTIONS, catalog)


def check(port: PortTelemetry, options: dict[str, Any], catalog: Any) -> Iterator[Any]:
    if not (is_ethernet(port) or is_rdma(port)):
        return
    present = [port.get(c) for c in _COUNTERS if port.get(c) is not None]
    if not present:
        yield unavailable(ID, port.name, list(_COUNTERS), "no discard or out-of-buffer counter read")
        return
    worst = 0.0
    for series in present:
        w = counter_window(series)
        if w["peak_per_s"] == w["peak_per_s"]:
            worst = max(worst, w["peak_per_s"])
        if w["total"] > 0 and w["peak_per_s"] > options["discards_max_per_s"]:
            ev = {"counter": series.counter, "dropped": w["total"], "per_s_peak": w["peak_per_s"],
                  "per_s_mean": w["mean_per_s"], "peak_at": w["peak_at"]}
            yield health_finding(ID, port.name, f"{series.counter} +{num(w['total'])} in the window "
                                 f"(peak {num(w['peak_per_s'])}/s)", _FIX[series.counter], rounded(ev),
                                 1.0 + w["peak_per_s"], [series],
                                 limits=[(series, options["discards_max_per_s"], "discards_max_per_s")])
    yield measured(ID, port.name, "drops_per_s_peak", worst, "1/s", options["discards_max_per_s"])
