"""RETX001 — RDMA retransmission rate (proxy) above 0.01 %.

Proxy (reference/ops_formats.md section 5): Δ(``packet_seq_err`` + ``local_ack_timeout_err`` +
``implied_nak_seq_err`` + ``roce_adp_retrans``) / Δ(``tx_vport_rdma_unicast_packets``), the
packets sent falling back to ``port_xmit_packets`` when the port has no vport counter. The 0.01 %
limit is the seed's operator heuristic (no authoritative source found). Evaluated per sampling
interval; the peak interval is compared.

Passing::

    +2 retransmit events per 1,000,000 packets sent (0.0002 %)

Failing::

    +500 retransmit events per 1,000,000 packets sent (0.05 %)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from fabricplan.ops.health.checks._common import health_finding, is_rdma, measured, num, pct, rounded, unavailable
from fabricplan.ops.lint.options import from_catalog
from fabricplan.ops.telemetry import PortTelemetry, align, increases, summed_increases

ID = "RETX001"
SEVERITY = "warning"
SCOPE = "port"
TITLE = "RDMA retransmission rate (proxy) below 0.01 %"
OPTIONS: dict[str, str] = {"retransmit_ratio_max": "health.retransmit_ratio_max",
                           "retransmit_counters": "health.retransmit_counters"}
_DENOMINATORS = ("tx_vport_rdma_unicast_packets", "port_xmit_packets")


def defaults(catalog: Any) -> dict[str, Any]:
    return from_catalog(OPTIONS, catalog)


def check(port: PortTelemetry, options: dict[str, Any], catalog: Any) -> Iterator[Any]:
    if not is_rdma(port):
        return
    parts = [port.get(c) for c in options["retransmit_counters"] if port.get(c) is not None]
    sent = next((port.get(c) for c in _DENOMINATORS if port.get(c) is not None), None)
    if not parts or sent is None:
        missing = ([] if parts else list(options["retransmit_counters"])) + ([] if sent else list(_DENOMINATORS))
        yield unavailable(ID, port.name, missing, "the retransmit proxy needs a retransmit counter and packets sent")
        return
    retx = summed_increases(parts)
    tx = increases(sent)
    tx_dv = tx.dv if np.array_equal(sent.t_s, parts[0].t_s) else align(tx, sent.t_s, parts[0].t_s)
    ok = (tx_dv > 0) & ~np.isnan(retx.dv) & ~np.isnan(tx_dv)
    if not ok.any():
        yield unavailable(ID, port.name, [sent.counter], "no packets sent in the window (the ratio is undefined)")
        return
    ratios = np.where(ok, retx.dv / np.where(ok, tx_dv, 1.0), np.nan)
    i = int(np.nanargmax(ratios))
    peak = float(ratios[i])
    mean = float(np.nansum(retx.dv[ok]) / np.nansum(tx_dv[ok]))
    limit = options["retransmit_ratio_max"]
    if peak > limit:
        dt = float(retx.dt[i])
        ev = {"retransmit_ratio_peak": peak, "retransmit_ratio_mean": mean, "peak_at": float(retx.t_end[i]),
              "retransmits_per_s_peak": float(retx.dv[i] / dt), "packets_sent_per_s_at_peak": float(tx_dv[i] / dt),
              "counters": [s.counter for s in parts], "packets_sent_counter": sent.counter}
        yield health_finding(
            ID, port.name, f"retransmission proxy {pct(peak)} at peak ({num(retx.dv[i] / dt)} retransmit events/s "
            f"over {num(tx_dv[i] / dt)} packets/s; window mean {pct(mean)}; limit {pct(limit)})",
            "find the lossy hop: check switch drops and PFC on the path (lossless class), link errors on both ends "
            "(symbol errors, CRC), and ACK timeouts (local_ack_timeout_err) from a slow or overloaded receiver",
            rounded(ev), peak / limit, [*parts, sent])
    yield measured(ID, port.name, "retransmit_ratio_peak", peak, "fraction", limit)
