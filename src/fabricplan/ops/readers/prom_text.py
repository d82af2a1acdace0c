"""Prometheus exposition text (node_exporter ``node_infiniband_*`` / ``node_ethtool_*`` and
``infiniband_exporter``) into ``ops.telemetry``, and the metric-name mapping the live Prometheus
reader shares.

A file holds one or more scrapes. Each sample's time is its own timestamp (milliseconds, the
exposition format's optional last field) or the ``# time=...`` comment before the scrape (a comment
Prometheus ignores); ``# host=...`` (or an ``instance``/``host``/``hostname``/``node`` label) names
the host, else the file's stem. Metric names (reference/ops_formats.md section 4.4):

* ``node_infiniband_<name>{device,port}``: mapped to the sysfs name (``port_transmit_wait_total``
  -> ``port_xmit_wait``; ``np_cnp_packets_sent_total`` -> ``np_cnp_sent`` ...);
* ``node_ethtool_<name>{device}``: node_exporter turned ``rx``/``tx`` into ``received``/``transmitted``;
  turned back (``received_prio3_pause_duration`` -> ``rx_pause_duration``, priority 3);
* ``infiniband_{hca,switch}_port_<name>{guid,port}``: mapped to the sysfs name; host is the
  ``name``/``switch`` label or the GUID.

The text is parsed by the official client library (``prometheus_client.parser``, imported when a
file is read); what it leaves lax is checked as the format states (one value, an integer millisecond
timestamp), and its refusals name the file and line. Other metrics are skipped. node_exporter reads the 32-bit sysfs ``counters/`` files, so its
InfiniBand port counters carry the IBA field widths (a counter at ``2^w - 1`` is saturated).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from fabricplan.errors import InputError, printable
from fabricplan.ops import defaults
from fabricplan.ops.readers._common import canonical_ethtool, check_u64, parse_time, read_text
from fabricplan.ops.telemetry import SeriesBuilder, Telemetry

_MILLISECONDS = re.compile(r"-?\d{1,16}")
_HEADER = re.compile(r"^#\s*(?:fabricplan\s+)?((?:[A-Za-z_]+=\S+\s*)+)$")
_PAIR = re.compile(r"([A-Za-z_]+)=(\S+)")

#: node_exporter infiniband collector metric -> sysfs name (collector/infiniband_linux.go).
NODE_INFINIBAND = {
    "link_downed_total": "link_downed", "link_error_recovery_total": "link_error_recovery",
    "local_link_integrity_errors_total": "local_link_integrity_errors",
    "excessive_buffer_overrun_errors_total": "excessive_buffer_overrun_errors",
    "port_constraint_errors_received_total": "port_rcv_constraint_errors",
    "port_constraint_errors_transmitted_total": "port_xmit_constraint_errors",
    "port_data_received_bytes_total": "port_rcv_data_bytes", "port_data_transmitted_bytes_total": "port_xmit_data_bytes",
    "port_discards_received_total": "port_rcv_discards", "port_discards_transmitted_total": "port_xmit_discards",
    "port_errors_received_total": "port_rcv_errors", "port_packets_received_total": "port_rcv_packets",
    "port_packets_transmitted_total": "port_xmit_packets", "port_transmit_wait_total": "port_xmit_wait",
    "port_receive_remote_physical_errors_total": "port_rcv_remote_physical_errors",
    "port_receive_switch_relay_errors_total": "port_rcv_switch_relay_errors", "symbol_error_total": "symbol_error",
    "vl15_dropped_total": "VL15_dropped",
    "duplicate_requests_packets_total": "duplicate_request", "implied_nak_seq_errors_total": "implied_nak_seq_err",
    "local_ack_timeout_errors_total": "local_ack_timeout_err", "np_cnp_packets_sent_total": "np_cnp_sent",
    "np_ecn_marked_roce_packets_received_total": "np_ecn_marked_roce_packets",
    "out_of_buffer_drops_total": "out_of_buffer", "out_of_sequence_packets_received_total": "out_of_sequence",
    "packet_sequence_errors_total": "packet_seq_err", "rnr_nak_retry_packets_received_total": "rnr_nak_retry_err",
    "roce_adp_retransmits_total": "roce_adp_retrans", "roce_adp_retransmits_timeout_total": "roce_adp_retrans_to",
    "roce_slow_restart_used_total": "roce_slow_restart", "roce_slow_restart_cnps_total": "roce_slow_restart_cnps",
    "roce_slow_restart_total": "roce_slow_restart_trans", "rp_cnp_packets_handled_total": "rp_cnp_handled",
    "rp_cnp_ignored_packets_received_total": "rp_cnp_ignored", "rx_icrc_encapsulated_errors_total": "rx_icrc_encapsulated",
}
#: infiniband_exporter ``infiniband_{hca,switch}_port_<name>`` -> sysfs name.
IB_EXPORTER = {
    "symbol_error_total": "symbol_error", "link_downed_total": "link_downed",
    "link_error_recovery_total": "link_error_recovery", "receive_errors_total": "port_rcv_errors",
    "receive_remote_physical_errors_total": "port_rcv_remote_physical_errors",
    "receive_switch_relay_errors_total": "port_rcv_switch_relay_errors", "transmit_discards_total": "port_xmit_discards",
    "transmit_constraint_errors_total": "port_xmit_constraint_errors",
    "receive_constraint_errors_total": "port_rcv_constraint_errors",
    "local_link_integrity_errors_total": "local_link_integrity_errors",
    "excessive_buffer_overrun_errors_total": "excessive_buffer_overrun_errors", "transmit_wait_total": "port_xmit_wait",
    "transmit_data_bytes_total": "port_xmit_data_bytes", "receive_data_bytes_total": "port_rcv_data_bytes",
    "transmit_packets_total": "port_xmit_packets", "receive_packets_total": "port_rcv_packets",
}
#: node_exporter's fixed ethtool names (``rx_bytes`` -> ``node_ethtool_received_bytes_total``).
_ETHTOOL_FIXED = {"received_bytes_total": "rx_bytes", "received_packets_total": "rx_packets",
                  "received_errors_total": "rx_errors", "received_dropped_total": "rx_dropped",
                  "transmitted_bytes_total": "tx_bytes", "transmitted_packets_total": "tx_packets",
                  "transmitted_errors_total": "tx_errors"}
_HOST_LABELS = ("host", "hostname", "node", "nodename", "instance")


def ethtool_name(stat: str) -> str:
    """node_exporter's ethtool metric suffix back to the ethtool stat (``received_prio3_pause`` ->
    ``rx_prio3_pause``; the collector maps ``(^|_)rx(_|$)`` to ``received`` and tx likewise)."""
    if stat in _ETHTOOL_FIXED:
        return _ETHTOOL_FIXED[stat]
    name = re.sub(r"(^|_)received(_|$)", r"\1rx\2", stat)
    return re.sub(r"(^|_)transmitted(_|$)", r"\1tx\2", name)


def host_of(labels: dict[str, str], fallback: str) -> str:
    for key in _HOST_LABELS:
        if labels.get(key):
            value = labels[key]
            return value.rsplit(":", 1)[0] if key == "instance" and value.count(":") == 1 else value
    return fallback


def map_metric(name: str, labels: dict[str, str], host: str, catalog: Any
               ) -> tuple[str, str, str, str, int | None, int | None] | None:
    """``(counter, host, device, port, priority, width_bits)`` of one exporter metric, None if unused
    (IBA counter widths from ``catalog``)."""
    widths = defaults.value("health.ib_counter_width_bits", catalog)
    if name.startswith("node_infiniband_"):
        counter = NODE_INFINIBAND.get(name[len("node_infiniband_"):])
        if counter is None:
            return None
        width = widths.get(counter) if counter in widths else None
        return counter, host_of(labels, host), labels.get("device", "?"), labels.get("port", ""), None, width
    if name.startswith("node_ethtool_"):
        counter, prio = canonical_ethtool(ethtool_name(name[len("node_ethtool_"):]))
        return counter, host_of(labels, host), labels.get("device", "?"), "", prio, None
    for prefix in ("infiniband_hca_port_", "infiniband_switch_port_"):
        if name.startswith(prefix):
            counter = IB_EXPORTER.get(name[len(prefix):])
            if counter is None:
                return None
            owner = labels.get("name") or labels.get("switch") or labels.get("hca") or labels.get("guid") or host
            return counter, owner, labels.get("guid", "?"), labels.get("port", ""), None, None
    return None


def _tail_fields(line: str, labelled: bool) -> list[str]:
    """The fields after the name and labels of a sample line the library accepted (``value`` and
    perhaps ``timestamp``): after the last ``}`` (a valid value or timestamp holds none), else after
    the name."""
    return line[line.rfind("}") + 1:].split() if labelled else line.split()[1:]


def _check_fields(line: str, stamp: float | None, where: str) -> float | None:
    """What the library leaves lax, as the format states it: one value and at most one timestamp,
    the timestamp integer milliseconds (``-?\\d{1,16}``); the timestamp in seconds."""
    fields = _tail_fields(line, "{" in line)
    if len(fields) not in (1, 2):
        raise InputError(f"expected 'name{{labels}} value [timestamp_ms]', got '{printable(line, 60)}'",
                         location=where)
    if len(fields) == 2:
        if not _MILLISECONDS.fullmatch(fields[1]):
            raise InputError(f"timestamp must be integer milliseconds, got '{printable(fields[1], 30)}'",
                             location=where)
        return int(fields[1]) / 1000.0
    return stamp


def _samples(text: str, path: Path | str, state: dict[str, Any]):
    """Every sample of exposition ``text`` as parsed by the official client library
    (``prometheus_client.parser.text_fd_to_metric_families``), with ``state`` (``line``: the line
    number, ``time`` / ``host``: the last ``# time=... host=...`` header) set for each sample as it
    is yielded. The library gets the sample lines alone: with no ``# TYPE`` line it yields each
    sample at once, as an untyped singleton, so its ``_total`` renaming of counters never applies
    and the line of every sample (and of the one it refuses) is known. Its ``ValueError`` becomes
    one InputError naming ``path:line``."""
    from prometheus_client.parser import text_fd_to_metric_families

    def lines():
        for number, line in enumerate(text.splitlines(), 1):
            stripped = line.strip()
            if not stripped:
                continue
            state["line"] = number
            if stripped.startswith("#"):
                head = _HEADER.match(stripped)
                if head:
                    pairs = dict(_PAIR.findall(head.group(1)))
                    if "time" in pairs:
                        state["time"] = parse_time(pairs["time"], f"{path}:{number}")
                    state["host"] = pairs.get("host", state["host"])
                continue
            state["text"] = stripped
            yield stripped

    try:
        for family in text_fd_to_metric_families(lines()):
            yield from family.samples
    except (ValueError, IndexError) as exc:  # the library's refusal of a line (IndexError: a stray quote)
        reason = printable(str(exc), 80) or f"cannot read '{printable(state.get('text', ''), 60)}'"
        raise InputError(f"not Prometheus exposition text ('name{{labels}} value [timestamp_ms]'): {reason}",
                         location=f"{path}:{state['line']}") from None


def read_exposition(path: Path | str, catalog: Any) -> Telemetry:
    """Scrapes of exposition text (see the module docstring) into the telemetry model (IBA counter
    widths from ``catalog``), parsed by the official client library (:func:`_samples`)."""
    text = read_text(path)
    builder = SeriesBuilder()
    state: dict[str, Any] = {"line": 0, "time": None, "host": Path(path).stem}
    used = 0
    seen = 0
    for sample in _samples(text, path, state):
        where = f"{path}:{state['line']}"
        name, labels, value = sample.name, dict(sample.labels), sample.value
        stamp = _check_fields(state["text"], sample.timestamp, where)
        seen += 1
        mapped = map_metric(name, labels, state["host"], catalog)
        if mapped is None:
            continue
        if not math.isfinite(value) or value < 0:
            raise InputError(f"counter {name} must be finite and >= 0, got {value}", location=where)
        check_u64(value, where, f"counter {name}")
        t = stamp if stamp is not None else state["time"]
        if t is None:
            raise InputError(f"sample of {name} has no time: add a timestamp or a '# time=...' line before the scrape",
                             location=where)
        counter, owner, device, port, prio, width = mapped
        builder.add(counter, owner, device, port, prio, t, float(value), str(path), where=where, width_bits=width)
        used += 1
    if seen == 0:
        raise InputError("no samples: expected Prometheus exposition text ('name{labels} value')", location=str(path))
    if used == 0:
        raise InputError("no node_infiniband_*, node_ethtool_* or infiniband_*_port_* metrics in the file",
                         location=str(path))
    return Telemetry(builder.build(), [str(path)])
