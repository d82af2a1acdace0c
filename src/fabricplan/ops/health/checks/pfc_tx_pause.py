"""PFC003 — the NIC itself sends PFC pause frames (the host cannot drain its receive buffer).

Any growth of ``tx_prioN_pause`` on a NIC port above ``tx_pause_rate_max_per_s`` (0) means the
host side (PCIe, memory, the receiving process) is slower than the wire (reference/ops_formats.md
section 5, derived signals; heuristic).

Passing::

    tx_prio3_pause flat

Failing::

    tx_prio3_pause grows 40 frames/s
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.health.checks._common import (
    counter_window,
    health_finding,
    is_ethernet,
    measured,
    num,
    rounded,
    unavailable,
)
from fabricplan.ops.lint.options import from_catalog
from fabricplan.ops.telemetry import PortTelemetry

ID = "PFC003"
SEVERITY = "warning"
SCOPE = "port"
TITLE = "NIC sends PFC pause frames (host cannot drain)"
OPTIONS: dict[str, str] = {"tx_pause_rate_max_per_s": "health.tx_pause_rate_max_per_s"}


def defaults(catalog: Any) -> dict[str, Any]:
    return from_catalog(OPTIONS, catalog)


def check(port: PortTelemetry, options: dict[str, Any], catalog: Any) -> Iterator[Any]:
    if not is_ethernet(port):
        return
    prios = port.priorities("tx_pause")
    if not prios:
        yield unavailable(ID, port.name, ["tx_prioN_pause"], "no per-priority transmitted-pause counter")
        return
    worst = 0.0
    for prio in prios:
        series = port.get("tx_pause", prio)
        w = counter_window(series)
        if w["peak_per_s"] == w["peak_per_s"]:
            worst = max(worst, w["peak_per_s"])
        if w["peak_per_s"] > options["tx_pause_rate_max_per_s"]:
            ev = {"priority": prio, "pause_frames_sent": w["total"], "per_s_peak": w["peak_per_s"],
                  "per_s_mean": w["mean_per_s"], "peak_at": w["peak_at"]}
            yield health_finding(
                ID, port.name, f"priority {prio}: the NIC sent {num(w['total'])} pause frames "
                f"(peak {num(w['peak_per_s'])}/s): the host does not drain its receive buffer",
                "check the host side: PCIe link width/speed (lspci -vv), NUMA placement of the NIC and the job, "
                "memory bandwidth, and whether the receiving process stalls", rounded(ev),
                1.0 + w["peak_per_s"], [series],
                limits=[(series, options["tx_pause_rate_max_per_s"], "tx_pause_rate_max_per_s")])
    yield measured(ID, port.name, "tx_pause_per_s_peak", worst, "1/s", options["tx_pause_rate_max_per_s"])
