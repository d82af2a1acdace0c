"""Helpers shared by the health checks: port kinds, window statistics, findings."""

from __future__ import annotations

import math
from datetime import UTC
from typing import Any

import numpy as np

from fabricplan.ops.health.results import Measurement, NotAvailable
from fabricplan.ops.lint.finding import Finding
from fabricplan.ops.telemetry import Increases, PortTelemetry, Series, increases

#: Counters that mark a port as an Ethernet (ethtool) port.
ETHERNET_COUNTERS = frozenset({"rx_pause", "rx_pause_duration", "tx_pause", "tx_pause_duration", "rx_discards_phy",
                               "rx_out_of_buffer", "rx_bytes_phy", "rx_packets_phy", "tx_packets_phy",
                               "tx_vport_rdma_unicast_packets", "rx_vport_rdma_unicast_packets",
                               "tx_pause_storm_warning_events", "tx_pause_storm_error_events", "rx_crc_errors_phy",
                               "link_down_events_phy", "rx_bytes", "tx_bytes"})
#: RDMA hw_counters (mlx5) that mark a port as an RDMA port.
RDMA_COUNTERS = frozenset({"np_cnp_sent", "np_ecn_marked_roce_packets", "rp_cnp_handled", "rp_cnp_ignored",
                           "packet_seq_err", "local_ack_timeout_err", "implied_nak_seq_err", "roce_adp_retrans",
                           "out_of_sequence", "out_of_buffer", "rnr_nak_retry_err", "duplicate_request",
                           "tx_vport_rdma_unicast_packets", "rx_vport_rdma_unicast_packets"})
#: InfiniBand port counters (sysfs ``counters/``, perfquery, exporters).
IB_COUNTERS = frozenset({"symbol_error", "link_downed", "link_error_recovery", "port_xmit_wait", "port_xmit_discards",
                         "port_rcv_errors", "excessive_buffer_overrun_errors", "local_link_integrity_errors",
                         "port_xmit_packets", "port_rcv_packets", "port_xmit_data", "port_rcv_data",
                         "port_xmit_data_bytes", "port_rcv_data_bytes", "VL15_dropped"})

#: Every counter some check reads (a live Prometheus is asked for these only).
USED_COUNTERS = ETHERNET_COUNTERS | RDMA_COUNTERS | IB_COUNTERS | frozenset({
    "rx_pause_transition", "rnr_nak_retry_err", "port_rcv_discards", "tx_bytes_phy"})  # bytes: the load (--spec)


def is_ethernet(port: PortTelemetry) -> bool:
    return port.has_any(ETHERNET_COUNTERS) or any(c.endswith("_phy") for (c, _p) in port.counters)


def is_rdma(port: PortTelemetry) -> bool:
    return port.has_any(RDMA_COUNTERS)


def is_ib(port: PortTelemetry) -> bool:
    return port.has_any(IB_COUNTERS)


def stamp(t_s: float) -> str:
    """A time as ISO 8601 UTC to the second."""
    from datetime import datetime

    if not math.isfinite(t_s):
        return "?"
    return datetime.fromtimestamp(t_s, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def num(x: float, digits: int = 3) -> str:
    """A number for a message: 3 significant digits, thousands separated."""
    if x is None or not math.isfinite(x):
        return "n/a"
    if x == 0:
        return "0"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def pct(x: float) -> str:
    return "n/a" if not math.isfinite(x) else f"{x * 100:.3g} %"


def unavailable(check_id: str, entity: str, missing: list[str], reason: str) -> NotAvailable:
    return NotAvailable(check_id, entity, missing, reason)


def measured(check_id: str, entity: str, metric: str, value: float, unit: str, threshold: float | None = None
             ) -> Measurement:
    return Measurement(check_id, entity, metric, float(value), unit, threshold)


def health_finding(check_id: str, entity: str, message: str, fix: str, evidence: dict[str, Any], score: float,
                   series: list[Series], severity: str | None = None,
                   limits: list[tuple[Series, float, str]] | None = None) -> Finding:
    """A health finding on ``series``; ``limits``: (series, threshold in its charted unit, what the threshold
    is) for the report's threshold lines (per second for a counter, us/s for a duration counter, us for RTT)."""
    item = Finding(rule_id=check_id, message=message, link=entity, fix=fix, evidence=evidence,
                   location=", ".join(sorted({s.source for s in series})) or None, score=_score(score),
                   series=[(s.entity, s.label) for s in series],
                   limits=[(s.entity, s.label, float(value), text) for s, value, text in limits or []] or None)
    if severity:
        item.max_severity = severity
    return item


def _score(x: float) -> float:
    return round(float(x), 6) if math.isfinite(x) else 1e9


def window(inc: Increases) -> dict[str, float]:
    """Mean and peak rates of one counter's increases over the window."""
    peak, peak_t = inc.peak_rate()
    return {"total": inc.total(), "seconds": inc.known_seconds(), "mean_per_s": inc.mean_rate(),
            "peak_per_s": peak, "peak_at": peak_t}


def counter_window(series: Series) -> dict[str, float]:
    return window(increases(series))


def rounded(evidence: dict[str, Any]) -> dict[str, Any]:
    """Evidence numbers rounded to 6 significant digits, times as ISO text."""
    out: dict[str, Any] = {}
    for key, value in evidence.items():
        if isinstance(value, (float, np.floating)):
            value = float(value)
            if key.endswith("_at") or key.endswith("_start"):
                out[key] = stamp(value)
            else:
                out[key] = float(f"{value:.6g}") if math.isfinite(value) else None
        else:
            out[key] = value
    return out
