"""Against the model: what the design should show at the observed load.

The planning side fills a :class:`LoadModel` (``fabricplan.api.expected_under_load``: the spec's
design, its fabric's flow and congestion control, and the fluid model of ``sim/load.py``); this
module only holds it and measures the load the telemetry shows, so ``ops`` never imports the
planning side. The load of a port is its link utilisation over the window,
``max(mean tx, mean rx) bytes/s x 8 / link rate`` from its byte counters; an RTT pair takes the
busiest port of its two hosts, else the mean over every port read; ``--load`` overrides both.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from fabricplan.ops.telemetry import PortTelemetry, increases

#: Byte counters a port's load is read from, in order of preference: (tx, rx, bytes per unit).
#: mlx5 ``*_bytes_phy`` count every byte on the wire (RDMA included; plain ``tx_bytes`` does not
#: see RDMA traffic, which bypasses the kernel); IB ``port_xmit_data`` counts 4-octet words
#: (IBA PortCounters; reference/ops_formats.md section 4.3); exporters convert it to bytes.
BYTE_COUNTERS = (("tx_bytes_phy", "rx_bytes_phy", 1.0), ("port_xmit_data_bytes", "port_rcv_data_bytes", 1.0),
                 ("port_xmit_data", "port_rcv_data", 4.0), ("tx_bytes", "rx_bytes", 1.0))


@dataclass(frozen=True)
class Expected:
    """What the design should give at ``load`` (simulated at ``bucket``)."""

    load: float
    bucket: float
    rtt_p999_us: float                  # unloaded RTT + the p99.9 queueing delay at this load
    unloaded_rtt_us: float
    pause_fraction: float | None        # None: the fabric has no PFC
    cnp_per_s: float | None             # RoCE DCQCN CNPs per host; None elsewhere (BECNs: becn_per_s)
    credit_wait_fraction: float | None  # None: no credits (Ethernet)
    ecn_marks_per_s: float | None = None  # ECN-marked (RoCE) or FECN-marked (IB CC) packets/s per host
    becn_per_s: float | None = None     # InfiniBand CC: BECNs per second per host


def expected_of(point, *, load: float, bucket: float, unloaded_rtt_us: float) -> Expected:
    """What a simulated load ``point`` (``sim.load.LoadPoint``: its ``cc``, ``pfc``, queueing and
    counter rates) says the design shows at ``load``: the unloaded RTT plus the p99.9 queueing delay,
    and the counters its mechanism has (pauses with PFC; CNPs with DCQCN, BECNs with IB CC; credit
    waits on InfiniBand; ECN or FECN marks with either CC), None for the ones it has not."""
    cc = point.cc
    return Expected(load=load, bucket=bucket, rtt_p999_us=unloaded_rtt_us + point.queue_p999_us,
                    unloaded_rtt_us=unloaded_rtt_us, pause_fraction=point.pause_fraction if point.pfc else None,
                    cnp_per_s=point.cnp_per_s if cc == "dcqcn" else None,
                    becn_per_s=point.cnp_per_s if cc == "ib-cc" else None,
                    credit_wait_fraction=point.credit_wait_fraction if cc in ("ib-credit", "ib-cc") else None,
                    ecn_marks_per_s=point.ecn_marks_per_s if cc in ("dcqcn", "ib-cc") else None)


@dataclass
class LoadModel:
    """The design's expectations as a function of load (memoised per load bucket by the caller)."""

    fabric: str
    mechanism: str                      # e.g. "RoCE lossless (PFC + DCQCN)"
    link_gbps: float
    unloaded_rtt_us: float
    source: str
    at: Callable[[float], Expected]
    load: float | None = None           # --load: the stated utilisation for every port and pair
    unloaded_source: str = ""           # where the unloaded RTT comes from (api.expected_rtt_us)


@dataclass(frozen=True)
class Load:
    value: float
    source: str                         # "--load", "byte counters (tx_bytes_phy)", "mean of 12 ports"


def port_load(port: PortTelemetry, link_gbps: float) -> Load | None:
    """The port's utilisation over the window from its byte counters (None without them)."""
    for tx_name, rx_name, unit in BYTE_COUNTERS:
        rates = []
        for name in (tx_name, rx_name):
            series = port.get(name)
            if series is not None:
                rate = increases(series).mean_rate()
                if math.isfinite(rate):
                    rates.append(rate)
        if rates:
            return Load(max(rates) * unit * 8 / (link_gbps * 1e9), f"byte counters ({tx_name}/{rx_name})")
    return None


def loads(ports: list[PortTelemetry], model: LoadModel) -> tuple[dict[str, Load], Load | None]:
    """Each port's load and the fabric's (mean over the ports with byte counters), or the
    stated ``--load`` for all."""
    if model.load is not None:
        stated = Load(model.load, "--load")
        return {p.name: stated for p in ports}, stated
    out = {}
    for port in ports:
        found = port_load(port, model.link_gbps)
        if found is not None:
            out[port.name] = found
    if not out:
        return out, None
    mean = sum(v.value for v in out.values()) / len(out)
    return out, Load(mean, f"mean utilisation of the {len(out)} port{'s' if len(out) != 1 else ''} with byte counters")


def pct(x: float) -> str:
    return f"{x * 100:.3g} %"
