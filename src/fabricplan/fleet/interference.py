"""Every running job's traffic on the shared fabric at one instant, and what each job gets.

Each multi-node job opens its NCCL connections over its own nodes' NICs
(:func:`fabricplan.sim.collectives.pattern_connections`: rings per NIC column and channel for
data-parallel traffic, all-to-all peers for expert-parallel jobs); all jobs' connections are
routed together on the design's cabled fabric (:func:`fabricplan.sim.flowsim.route_connections`:
ECMP per queue pair, adaptive or sprayed) and share its links max-min fairly
(:func:`fabricplan.sim.maxmin.max_min_rates`). A connection's *share* is its rate over its
ideal (max-min over its host links only, what a non-blocking fabric gives); a job's **pace** is
the smallest share over its connections (a ring or an exchange moves at its slowest
connection: Patarasuk & Yuan 2009, as in :mod:`fabricplan.sim.flowsim`'s lockstep timing).

* **shared**: all running jobs together;
* **alone**: the job's own connections on the same paths (ECMP hashes are a function of the
  connection, so they do not change when other jobs leave; adaptive and sprayed routing
  re-balance, so the job is routed again by itself).

``alone / shared`` is the interference; ``1 / alone`` what the placement costs by itself. The
**bottleneck tier** of a job is where the link that limits its slowest connection sits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fabricplan.sim.collectives import pattern_connections
from fabricplan.sim.fabric import node_hosts
from fabricplan.sim.flowsim import host_link_mask, route_connections
from fabricplan.sim.maxmin import RELATIVE_TOLERANCE, max_min_rates

TIER_NAMES = ("nic-leaf", "leaf-spine", "spine-core", "core-super")


@dataclass(frozen=True)
class JobTraffic:
    """One job's connections (host ids)."""

    src: np.ndarray
    dst: np.ndarray


@dataclass(frozen=True)
class Paces:
    """Per job: pace shared and alone, the tier of its bottleneck link; per connection: rate and
    ideal [Gb/s] and the job it belongs to (for conservation checks)."""

    shared: np.ndarray
    alone: np.ndarray
    bottleneck_tier: tuple[str, ...]
    rate_gbps: np.ndarray
    ideal_gbps: np.ndarray
    job_of_connection: np.ndarray


def job_traffic(pattern: str, nodes, nics_per_node: int, *, channels_per_nic: int, peers: int,
                channels_per_peer: int, seed: int = 0) -> JobTraffic:
    """The connections a job of ``nodes`` (rank order) opens across them (module docstring)."""
    ranks = node_hosts(np.asarray(nodes, dtype=np.int64), nics_per_node)
    src, dst = pattern_connections(pattern, ranks, channels_per_nic=channels_per_nic, peers=peers,
                                   channels_per_peer=channels_per_peer, seed=seed)
    keep = src != dst
    return JobTraffic(src=np.asarray(src[keep], dtype=np.int64), dst=np.asarray(dst[keep], dtype=np.int64))


def _shares(network, routed, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    capacity = network.capacity_gbps
    rate = max_min_rates(n, routed.entry_flow, routed.entry_link, capacity, routed.entry_weight)
    hosts = host_link_mask(network)[routed.entry_link]
    ideal = max_min_rates(n, routed.entry_flow[hosts], routed.entry_link[hosts], capacity, routed.entry_weight[hosts])
    share = np.minimum(np.where(ideal > 0, rate / np.where(ideal > 0, ideal, 1.0), 1.0), 1.0)
    return rate, ideal, share


def _subset(routed, flows: np.ndarray):
    from fabricplan.sim.routing import Routed

    index = np.full(routed.n_flows, -1, dtype=np.int64)
    index[flows] = np.arange(len(flows))
    keep = index[routed.entry_flow] >= 0
    return Routed(len(flows), index[routed.entry_flow[keep]], routed.entry_link[keep], routed.entry_weight[keep],
                  routed.n_paths[flows])


def _bottleneck_tier(network, routed, rate: np.ndarray, flows: np.ndarray, share: np.ndarray) -> str:
    slowest = flows[np.argmin(share[flows])]
    load = routed.link_load(rate, network.n_links) / network.capacity_gbps
    entries = routed.entry_flow == slowest
    links = routed.entry_link[entries]
    link = links[np.argmax(load[links])]
    tier = int(min(network.node_tier[network.link_src[link]], network.node_tier[network.link_dst[link]]))
    return TIER_NAMES[min(tier, len(TIER_NAMES) - 1)]


def paces(network, jobs: list[JobTraffic], *, routing: str, qps: int, seed: int = 0) -> Paces:
    """Pace of every job shared and alone on ``network`` (module docstring). Jobs without network
    connections (one node) have pace 1 and no bottleneck."""
    sizes = np.array([len(job.src) for job in jobs], dtype=np.int64)
    owner = np.repeat(np.arange(len(jobs)), sizes)
    shared = np.ones(len(jobs))
    alone = np.ones(len(jobs))
    tiers = ["none"] * len(jobs)
    if sizes.sum() == 0:
        empty = np.zeros(0)
        return Paces(shared, alone, tuple(tiers), empty, empty, owner)
    src = np.concatenate([job.src for job in jobs])
    dst = np.concatenate([job.dst for job in jobs])
    routed = route_connections(network, src, dst, routing=routing, qps=qps, seed=seed)
    rate, ideal, share = _shares(network, routed, len(src))
    for j in np.flatnonzero(sizes):
        flows = np.flatnonzero(owner == j)
        shared[j] = float(share[flows].min())
        tiers[j] = _bottleneck_tier(network, routed, rate, flows, share) if shared[j] < 1.0 - RELATIVE_TOLERANCE else "none"
        if len(jobs) == 1:
            alone[j] = shared[j]
            continue
        own = _subset(routed, flows) if routing == "ecmp" else route_connections(
            network, jobs[j].src, jobs[j].dst, routing=routing, qps=qps, seed=seed)
        alone[j] = float(_shares(network, own, len(flows))[2].min())
    return Paces(shared=shared, alone=alone, bottleneck_tier=tuple(tiers), rate_gbps=rate, ideal_gbps=ideal,
                 job_of_connection=owner)
