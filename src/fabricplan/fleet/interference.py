"""Every running job's traffic on the shared fabric at one instant, and what each job gets.

Each multi-node job opens its NCCL connections over its own nodes' NICs
(:func:`fabricplan.sim.collectives.pattern_connections`: rings per NIC column and channel for
data-parallel traffic, all-to-all peers for expert-parallel jobs); all jobs' connections are
routed together on the design's cabled fabric (:func:`fabricplan.sim.flowsim.route_connections`:
ECMP per queue pair, adaptive or sprayed) and share its links max-min fairly
(:func:`fabricplan.sim.maxmin.max_min_rates`) **job by job**: a ring or an exchange moves at its
slowest connection (Patarasuk & Yuan 2009, as in :mod:`fabricplan.sim.flowsim`'s lockstep
timing), so all of a job's connections run at the same share of their ideal (max-min over their
host links only, what a non-blocking fabric gives), its **pace**. Progressive filling raises the
jobs' paces together, each connection carrying ``pace x ideal``, and freezes a job when a link it
crosses saturates or its pace reaches 1: max-min fairness between lockstep jobs (a job held back
on one link does not take bandwidth it cannot use on its others).

* **shared**: all running jobs together;
* **alone**: the job's own connections on the same paths (ECMP hashes are a function of the
  connection, and spraying of the paths alone, so they do not change when other jobs leave):
  ``min(1, min over its links of capacity / its load at pace 1)``; adaptive routing re-balances,
  so the job is routed again by itself.

``alone / shared`` is the interference; ``1 / alone`` what the placement costs by itself. The
**bottleneck tier** of a job is where the link that limits its slowest connection sits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
    #: (job, link) pairs the jobs' traffic crosses (which jobs a failed part was carrying)
    entry_job: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    entry_link: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def jobs_crossing(self, links) -> np.ndarray:
        """Jobs with traffic on any of ``links``."""
        return np.unique(self.entry_job[np.isin(self.entry_link, np.asarray(links, dtype=np.int64))])


def job_traffic(pattern: str, nodes, nics_per_node: int, *, channels_per_nic: int, peers: int,
                channels_per_peer: int, seed: int = 0) -> JobTraffic:
    """The connections a job of ``nodes`` (rank order) opens across them (module docstring)."""
    ranks = node_hosts(np.asarray(nodes, dtype=np.int64), nics_per_node)
    src, dst = pattern_connections(pattern, ranks, channels_per_nic=channels_per_nic, peers=peers,
                                   channels_per_peer=channels_per_peer, seed=seed)
    keep = src != dst
    return JobTraffic(src=np.asarray(src[keep], dtype=np.int64), dst=np.asarray(dst[keep], dtype=np.int64))


def _ideal(network, routed, n: int) -> np.ndarray:
    """Each connection's rate on a non-blocking fabric: max-min over its host links only [Gb/s]."""
    hosts = host_link_mask(network)[routed.entry_link]
    return max_min_rates(n, routed.entry_flow[hosts], routed.entry_link[hosts], network.capacity_gbps,
                         routed.entry_weight[hosts])


def _job_entries(routed, owner: np.ndarray, ideal: np.ndarray, n_links: int):
    """(job, link, load at pace 1) entries: a job's connections' weights times their ideal rates, summed per link."""
    job = owner[routed.entry_flow]
    key = job * n_links + routed.entry_link
    unique, inverse = np.unique(key, return_inverse=True)
    load = np.bincount(inverse.ravel(), weights=routed.entry_weight * ideal[routed.entry_flow])
    return unique // n_links, unique % n_links, load


def _alone_paces(network, jobs_of_entry, links, load, n_jobs: int) -> np.ndarray:
    """A job by itself on these paths: ``min(1, min over its links of capacity / its load at pace 1)``."""
    pace = np.ones(n_jobs)
    positive = load > 0
    np.minimum.at(pace, jobs_of_entry[positive], network.capacity_gbps[links[positive]] / load[positive])
    return pace


def _bottleneck_tiers(network, jobs_of_entry, links, load, pace: np.ndarray, n_jobs: int) -> tuple[str, ...]:
    utilisation = np.bincount(links, weights=load * pace[jobs_of_entry], minlength=network.n_links)
    utilisation /= network.capacity_gbps
    tiers = []
    for j in range(n_jobs):
        mine = links[jobs_of_entry == j]
        if pace[j] >= 1.0 - RELATIVE_TOLERANCE or not len(mine):
            tiers.append("none")
            continue
        link = mine[np.argmax(utilisation[mine])]
        tier = int(min(network.node_tier[network.link_src[link]], network.node_tier[network.link_dst[link]]))
        tiers.append(TIER_NAMES[min(tier, len(TIER_NAMES) - 1)])
    return tuple(tiers)


def paces(network, jobs: list[JobTraffic], *, routing: str, qps: int, seed: int = 0) -> Paces:
    """Pace of every job shared and alone on ``network`` (module docstring). Jobs without network
    connections (one node) have pace 1 and no bottleneck."""
    sizes = np.array([len(job.src) for job in jobs], dtype=np.int64)
    owner = np.repeat(np.arange(len(jobs)), sizes)
    n_jobs = len(jobs)
    if sizes.sum() == 0:
        empty = np.zeros(0)
        return Paces(np.ones(n_jobs), np.ones(n_jobs), ("none",) * n_jobs, empty, empty, owner)
    src = np.concatenate([job.src for job in jobs])
    dst = np.concatenate([job.dst for job in jobs])
    routed = route_connections(network, src, dst, routing=routing, qps=qps, seed=seed)
    ideal = _ideal(network, routed, len(src))
    job_of, links, load = _job_entries(routed, owner, ideal, network.n_links)
    shared = max_min_rates(n_jobs, job_of, links, network.capacity_gbps, load, demand=np.ones(n_jobs))
    shared = np.where(sizes > 0, np.minimum(shared, 1.0), 1.0)
    if routing == "adaptive" and n_jobs > 1:  # the balancer re-balances a job routed by itself
        alone = np.ones(n_jobs)
        for j in np.flatnonzero(sizes):
            own = route_connections(network, jobs[j].src, jobs[j].dst, routing=routing, qps=qps, seed=seed)
            own_ideal = _ideal(network, own, len(jobs[j].src))
            own_of, own_links, own_load = _job_entries(own, np.zeros(len(jobs[j].src), dtype=np.int64), own_ideal,
                                                       network.n_links)
            alone[j] = _alone_paces(network, own_of, own_links, own_load, 1)[0]
    else:  # ECMP hashes and spraying do not depend on the other jobs: the same paths
        alone = _alone_paces(network, job_of, links, load, n_jobs)
    alone = np.maximum(alone, shared)  # max-min never gives a job more with others beside it
    return Paces(shared=shared, alone=alone,
                 bottleneck_tier=_bottleneck_tiers(network, job_of, links, load, shared, n_jobs),
                 rate_gbps=shared[owner] * ideal, ideal_gbps=ideal, job_of_connection=owner, entry_job=job_of,
                 entry_link=links)
