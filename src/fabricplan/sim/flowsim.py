"""Flow-level simulation of a traffic pattern: route, max-min rates, completion times, efficiency.

The *ideal* of every connection is what it would get on a perfect fabric: max-min over its host
links only (the NICs and the leaf ports facing them), so collisions, oversubscription and
routing show up as the share of that ideal a connection reaches.

* **Lockstep** patterns (NCCL ring and tree collectives: a pipelined collective moves at the pace
  of its slowest connection, Patarasuk & Yuan 2009): every connection runs at the same share of
  its ideal, the smallest ``rate / ideal`` over connections; that share is the collective's
  efficiency. The spread of ``rate / ideal`` is reported as the tail (what unsynchronised flows
  would see).
* **Independent** transfers (``timing="flows"``: permutation, incast): each connection drains at
  max-min rates recomputed at every completion (:func:`fabricplan.sim.maxmin.completion_times`);
  efficiency = ideal completion of the last byte / simulated completion of the last byte, and
  the flow completion times (FCT) give the tail.
* **Drain** (``timing="drain"``: the all-to-all exchange, whose connections reuse capacity others
  free): the exchange ends when its busiest link has carried its bytes, ``max_l bytes_l / C_l``
  (the makespan lower bound of any work-conserving schedule, which max-min with recomputation
  approaches); efficiency = the same bound over host links / this one. FCTs are those of the
  first max-min allocation (no recomputation), so thousands of connections stay cheap.

Per-packet routing (``adaptive`` with ``granularity="packet"``, ``spray``) adds to each flow's
completion the wait of its last packet behind the backlog of the downlinks it crosses
(:func:`fabricplan.sim.routing.downlink_backlog_packets`: packet-scale collisions the upstream
choices cannot see), when ``packet_bytes`` (bytes per packet on the wire) is given. With
``startup="tcp"`` (comparison with TCP packet-level runs, not the RDMA default) a flow also pays
TCP's start-up: :func:`tcp_startup_us`.

FCTs add the round-trip propagation of the path (the scenario convention: a flow completes when
its last byte is acknowledged); serialisation per hop, queues and congestion control are the
fluid model's business (:mod:`fabricplan.sim` dynamics), not this one's.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from fabricplan.errors import InputError
from fabricplan.sim.maxmin import BYTES_PER_US_PER_GBPS, completion_times, max_min_rates
from fabricplan.sim.network import HOST, Network
from fabricplan.sim.routing import Routed, downlink_backlog_packets, downlink_fan_in, route

PER_PACKET = ("adaptive", "spray")
STARTUPS = ("none", "tcp")

LOCKSTEP = ("ring", "tree")
DRAIN = ("all_to_all",)
TIMINGS = ("lockstep", "drain", "flows")


def _stats(values: np.ndarray) -> dict[str, float]:
    values = np.asarray(values, dtype=float)
    if not len(values):
        return {"mean": 0.0, "p50": 0.0, "p99": 0.0, "max": 0.0}
    return {"mean": float(values.mean()), "p50": float(np.percentile(values, 50)),
            "p99": float(np.percentile(values, 99)), "max": float(values.max())}


@dataclass(frozen=True)
class FlowResult:
    """One pattern on one network with one routing (module docstring). ``efficiency`` is the
    pattern's share of its ideal; ``flow_efficiency`` the spread of per-connection shares
    (``p1`` is the 1st percentile: the tail); ``fct_us`` mean/p50/p99/max; times in us."""

    pattern: str
    routing: str
    connections: int
    timing: str
    efficiency: float
    flow_efficiency: dict[str, float]
    fct_us: dict[str, float]
    ideal_time_us: float
    time_us: float
    goodput_gbps: float
    max_link_utilisation: float
    equal_cost_paths: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def host_link_mask(network: Network) -> np.ndarray:
    """Links with a host at either end (the NIC side of the fabric)."""
    kind = network.node_kind
    return (kind[network.link_src] == HOST) | (kind[network.link_dst] == HOST)


def tcp_startup_us(size_bytes, rate_gbps, rtt_us, *, initial_window_bytes: float, packet_bytes: float,
                   switches) -> np.ndarray:
    """Time [us] a TCP transfer of ``size_bytes`` at ``rate_gbps`` takes beyond ``size / rate``
    plus one round trip of propagation ``rtt_us`` (what the max-min model already counts):

    * the handshake: one round trip before the first byte (RFC 9293, 3.5);
    * slow start: from ``initial_window_bytes`` (RFC 6928) the window doubles per round trip
      (RFC 5681, 3.1) and the sender idles for ``rtt - window / rate`` each round until the
      window covers the bandwidth-delay product;
    * store and forward: one packet's serialisation per switch on the path (``switches``).
    Arrays broadcast."""
    size = np.asarray(size_bytes, dtype=float)
    speed = np.maximum(np.asarray(rate_gbps, dtype=float), 1e-300) * BYTES_PER_US_PER_GBPS
    rtt = np.asarray(rtt_us, dtype=float)
    size, speed, rtt = np.broadcast_arrays(size, speed, rtt)
    idle = np.zeros(size.shape)
    window = np.full(size.shape, float(initial_window_bytes))
    sent = np.zeros(size.shape)
    for _ in range(64):  # rounds of slow start (the window doubles: 64 rounds cover any size)
        active = (sent < size) & (window < speed * rtt)
        if not active.any():
            break
        burst = np.minimum(window, size - sent)
        idle = np.where(active & (sent + burst < size), idle + rtt - burst / speed, idle)
        sent = np.where(active, sent + burst, sent)
        window = np.where(active, window * 2.0, window)
    return rtt + idle + np.asarray(switches, dtype=float) * packet_bytes / speed


def simulate_routed(network: Network, routed: Routed, size_bytes, *, pattern: str = "flows", routing: str = "ecmp",
                    timing: str = "flows", granularity: str = "packet", packet_bytes: float | None = None,
                    startup: str = "none", initial_window_bytes: float = 0.0) -> FlowResult:
    """Rates, completion times and efficiency of routed connections (module docstring)."""
    n = routed.n_flows
    if n == 0:
        raise InputError("the pattern has no network connections", location="pattern")
    size = np.broadcast_to(np.asarray(size_bytes, dtype=float), (n,)).copy()
    capacity = network.capacity_gbps
    hosts = host_link_mask(network)[routed.entry_link]
    ideal_args = (routed.entry_flow[hosts], routed.entry_link[hosts], capacity, routed.entry_weight[hosts])
    rate = max_min_rates(n, routed.entry_flow, routed.entry_link, capacity, routed.entry_weight)
    ideal = max_min_rates(n, *ideal_args)
    share = np.where(ideal > 0, rate / np.where(ideal > 0, ideal, 1.0), 1.0)
    share = np.minimum(share, 1.0)
    rtt = 2.0 * np.bincount(routed.entry_flow, weights=routed.entry_weight * network.latency_us[routed.entry_link],
                            minlength=n)
    if timing not in TIMINGS:
        raise InputError(f"unknown timing '{timing}'; known: {', '.join(TIMINGS)}", location="timing")
    if startup not in STARTUPS:
        raise InputError(f"unknown start-up '{startup}'; known: {', '.join(STARTUPS)}", location="startup")
    if timing == "lockstep":
        pace = float(share.min())
        ideal_fct = size / (ideal * BYTES_PER_US_PER_GBPS)
        fct = ideal_fct / max(pace, 1e-300)
        efficiency = pace
    elif timing == "drain":
        bytes_on = np.bincount(routed.entry_link, weights=routed.entry_weight * size[routed.entry_flow],
                               minlength=network.n_links) / (capacity * BYTES_PER_US_PER_GBPS)
        ideal_fct = size / (ideal * BYTES_PER_US_PER_GBPS)
        fct = size / (np.maximum(rate, 1e-300) * BYTES_PER_US_PER_GBPS)
        drain, ideal_drain = float(bytes_on.max()), float(bytes_on[host_link_mask(network)].max())
        efficiency = ideal_drain / drain if drain > 0 else 1.0
    else:
        ideal_fct = completion_times(size, *ideal_args)
        fct = completion_times(size, routed.entry_flow, routed.entry_link, capacity, routed.entry_weight)
        if packet_bytes and (routing == "spray" or (routing == "adaptive" and granularity == "packet")):
            fct = fct + _downlink_wait_us(network, routed, rate, fct, packet_bytes)
        if startup == "tcp":
            switches = np.bincount(routed.entry_flow, weights=routed.entry_weight
                                   * (network.node_kind[network.link_dst[routed.entry_link]] != HOST), minlength=n)
            fct = fct + tcp_startup_us(size, rate, rtt, initial_window_bytes=initial_window_bytes,
                                       packet_bytes=packet_bytes or 0.0, switches=switches)
        efficiency = float(ideal_fct.max() / fct.max()) if np.isfinite(fct.max()) else 0.0
    fct_total = fct + rtt
    time_us = float(fct_total.max())
    load = routed.link_load(rate, network.n_links)
    return FlowResult(
        pattern=pattern, routing=routing, connections=n, timing=timing, efficiency=float(min(efficiency, 1.0)),
        flow_efficiency={**_stats(share), "p1": float(np.percentile(share, 1)), "min": float(share.min())},
        fct_us=_stats(fct_total), ideal_time_us=float((ideal_fct + rtt).max()), time_us=time_us,
        goodput_gbps=float(size.sum() * 8 / 1e3 / time_us) if time_us > 0 else 0.0,
        max_link_utilisation=float((load / capacity).max()),
        equal_cost_paths=_stats(routed.n_paths))


def simulate(network: Network, src, dst, size_bytes, *, pattern: str = "flows", routing: str = "ecmp", qps: int = 1,
             seed: int = 0, granularity: str = "packet", timing: str | None = None,
             packet_bytes: float | None = None, startup: str = "none", initial_window_bytes: float = 0.0) -> FlowResult:
    """Route ``src[i] -> dst[i]`` (:func:`fabricplan.sim.routing.route`) and simulate them.
    ``timing`` (module docstring) defaults to ``lockstep`` for ``ring``/``tree``, ``drain`` for
    ``all_to_all``, else ``flows``."""
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    keep = src != dst  # a host to itself never touches the network
    src, dst = src[keep], dst[keep]
    size = np.broadcast_to(np.asarray(size_bytes, dtype=float), keep.shape)[keep]
    if timing is None:
        timing = "lockstep" if pattern in LOCKSTEP else "drain" if pattern in DRAIN else "flows"
    routed = route_connections(network, src, dst, routing=routing, qps=qps, seed=seed, granularity=granularity)
    return simulate_routed(network, routed, size, pattern=pattern, routing=routing, timing=timing,
                           granularity=granularity, packet_bytes=packet_bytes, startup=startup,
                           initial_window_bytes=initial_window_bytes)


def route_connections(network: Network, src, dst, *, routing: str = "ecmp", qps: int = 1, seed: int = 0,
                      granularity: str = "packet") -> Routed:
    """:func:`fabricplan.sim.routing.route` of ``src[i] -> dst[i]``; with adaptive routing each
    connection's demand is what it would carry on a perfect fabric (max-min over its host links,
    the same allocation as the ideal of :func:`simulate_routed`), which the balancer spreads."""
    demand = None
    if routing == "adaptive":  # balance what each connection would carry on a perfect fabric
        ideal_routes = route(network, src, dst, routing="spray")
        hosts = host_link_mask(network)[ideal_routes.entry_link]
        demand = max_min_rates(len(src), ideal_routes.entry_flow[hosts], ideal_routes.entry_link[hosts],
                               network.capacity_gbps, ideal_routes.entry_weight[hosts])
    return route(network, src, dst, routing=routing, qps=qps, seed=seed, granularity=granularity, demand=demand)


def _downlink_wait_us(network: Network, routed: Routed, rate: np.ndarray, fct: np.ndarray,
                      packet_bytes: float) -> np.ndarray:
    """Per flow, the wait [us] of its last packet behind the downlinks' per-packet backlog (module
    docstring): over the downlinks it crosses, the expected backlog of each (its load under the
    first max-min rates, for as many packet times as the flow lasts) in that link's packet times."""
    fan_in = downlink_fan_in(network)[routed.entry_link]
    down = fan_in >= 2
    if not down.any():
        return np.zeros(routed.n_flows)
    capacity = network.capacity_gbps
    load = routed.link_load(rate, network.n_links) / capacity
    link = routed.entry_link[down]
    packet_us = packet_bytes / (capacity[link] * BYTES_PER_US_PER_GBPS)
    flow = routed.entry_flow[down]
    backlog = downlink_backlog_packets(load[link], fan_in[down], np.where(np.isfinite(fct[flow]), fct[flow], 0.0)
                                       / packet_us)
    return np.bincount(flow, weights=routed.entry_weight[down] * backlog * packet_us, minlength=routed.n_flows)
