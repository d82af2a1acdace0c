"""CC001 — congestion control is not acting: ECN marks without CNPs, or CNPs ignored.

* ``np_ecn_marked_roce_packets`` grows but ``np_cnp_sent`` does not: the notification point is
  disabled on that priority (``ecn/roce_np/enable/N`` = 0), so senders never slow down;
* ``rp_cnp_ignored`` grows: CNPs arrive for a priority whose reaction point is disabled
  ("should not raise if RoCE congestion control was enabled", NVIDIA's counter description as
  node_exporter quotes it; reference/ops_formats.md section 4.2).

Passing::

    np_ecn_marked_roce_packets +5,000, np_cnp_sent +4,800, rp_cnp_ignored +0

Failing::

    np_ecn_marked_roce_packets +5,000, np_cnp_sent +0
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.health.checks._common import counter_window, health_finding, is_rdma, num, rounded, unavailable
from fabricplan.ops.telemetry import PortTelemetry

ID = "CC001"
SEVERITY = "warning"
SCOPE = "port"
TITLE = "Congestion control acting (ECN marks produce CNPs; no CNP ignored)"
OPTIONS: dict[str, str] = {}


def defaults(catalog: Any) -> dict[str, Any]:
    return {}


def check(port: PortTelemetry, options: dict[str, Any], catalog: Any) -> Iterator[Any]:
    if not is_rdma(port):
        return
    marked, sent, ignored = port.get("np_ecn_marked_roce_packets"), port.get("np_cnp_sent"), port.get("rp_cnp_ignored")
    if marked is None and ignored is None:
        yield unavailable(ID, port.name, ["np_ecn_marked_roce_packets", "np_cnp_sent", "rp_cnp_ignored"],
                          "no ECN/CNP hw_counters read")
        return
    if marked is not None and sent is None:
        yield unavailable(ID, port.name, ["np_cnp_sent"], "ECN marks are counted but CNPs sent are not")
    if marked is not None and sent is not None:
        m, s = counter_window(marked), counter_window(sent)
        if m["total"] > 0 and s["total"] == 0:
            yield health_finding(
                ID, port.name, f"{num(m['total'])} ECN-marked RoCE packets received but no CNP sent: the "
                "notification point is disabled, so senders never slow down",
                "enable the NP on the RoCE priority: echo 1 > /sys/class/net/IF/ecn/roce_np/enable/3 (and check "
                "fabricplan lint DCQCN001)", rounded({"ecn_marked": m["total"], "cnp_sent": s["total"]}),
                1.0 + m["total"], [marked, sent])
    if ignored is not None:
        w = counter_window(ignored)
        if w["total"] > 0:
            yield health_finding(
                ID, port.name, f"{num(w['total'])} CNPs ignored (rp_cnp_ignored): the reaction point is disabled "
                "on the priority the CNPs name", "enable the RP on the RoCE priority: echo 1 > "
                "/sys/class/net/IF/ecn/roce_rp/enable/3 (fabricplan lint DCQCN001)",
                rounded({"cnp_ignored": w["total"], "per_s_peak": w["peak_per_s"], "peak_at": w["peak_at"]}),
                1.0 + w["total"], [ignored])
