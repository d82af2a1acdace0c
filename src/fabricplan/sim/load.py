"""What a fabric should show at a given link utilisation: the fluid model under Poisson traffic.

``fabricplan health --spec`` compares observed tail RTT, PFC pauses and CNPs with these numbers.
One *load point* is one fluid run (:func:`fabricplan.sim.fluid.simulate_fluid`) on a small
two- or three-tier k-ary fat tree (``sim_load_fat_tree_k``) at the design's link rate, with the
design's flow and congestion control (``scenarios.PROFILE_CC``: RoCE PFC + DCQCN, InfiniBand
credits + CC, lossy TCP):

* **Traffic**: every host starts flows of ``sim_load_flow_bytes`` as a Poisson process of rate
  ``lambda = rho C / S`` (``rho`` the load, ``C`` the link rate in bytes/s, ``S`` the flow size) to
  a uniformly random other host, routed by ECMP (seeded), for ``sim_load_flow_times`` flow
  transmission times ``S / C``; the first ``sim_load_warmup_fraction`` of the run is discarded.
  Offered load on every host link is then ``rho`` (M/G/1-like arrivals of flows, Kleinrock,
  *Queueing Systems* vol. 1, 1975, section 5.6: a Poisson stream thinned uniformly stays Poisson).
* **Probe RTT tail**: a probe from ``a`` to ``b`` at time ``t`` waits in every switch egress queue
  of the forward path and of the return path: ``d(t) = sum_l q_l(t) / C_l``. Host NIC queues are
  left out (a latency probe runs on its own queue pair, which the NIC schedules round-robin with
  the bulk flows). ``queue_p999_us`` is the 0.999 quantile of ``d`` over every step after the
  warm-up and every host pair whose path crosses the design's number of switches.
* **Pauses**: ``pause_fraction`` is the mean, over host uplinks, of the time the leaf asserted
  PFC XOFF towards the host's NIC over the measured time (what the NIC's
  ``rx_prioN_pause_duration`` counts); 0 where the fabric has no PFC.
* **CNPs**: CNPs (DCQCN; BECNs with InfiniBand CC) per second per receiving host.

Results are memoised per (link rate, tiers, hops, mechanism, load bucket, catalog): a health run
needs at most ``1 / sim_load_bucket_step`` runs (about a second each at 400 Gb/s).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from fabricplan.errors import InputError

#: Program limit: loads above this are outside the experiment (queues grow without bound at 1).
MAX_LOAD = 0.99


@dataclass(frozen=True)
class LoadPoint:
    """What one fluid run at ``load`` measured (module docstring)."""

    load: float
    queue_p999_us: float        # p99.9 round-trip switch queueing delay of a probe [us]
    queue_p50_us: float
    pause_fraction: float       # mean paused fraction of a host uplink (PFC); 0 without PFC
    cnp_per_s: float            # CNPs (or BECNs) per second per receiving host
    credit_wait_fraction: float  # InfiniBand: host uplinks' fraction of time with data and no credit
    cc: str
    pfc: bool
    link_gbps: float
    tiers: int
    hops: int                   # switches a probe crosses
    flows: int
    offered_load: float         # flow bytes started / (hosts x run time x link rate): ~load
    simulated_us: float
    wall_s: float


def parameters(catalog=None) -> dict[str, float]:
    from fabricplan.sim.params import sim_parameter

    names = ("sim_load_flow_bytes", "sim_load_flow_times", "sim_load_warmup_fraction", "sim_load_fat_tree_k",
             "sim_load_bucket_step", "sim_load_max_bucket")
    return {name: sim_parameter(name, catalog) for name in names}


def buckets(catalog=None) -> list[float]:
    """The loads the experiment runs at: ``step, 2 step, ...`` up to ``sim_load_max_bucket``."""
    p = parameters(catalog)
    step, top = p["sim_load_bucket_step"], p["sim_load_max_bucket"]
    out = [round(step * i, 6) for i in range(1, int(math.floor(top / step + 1e-9)) + 1)]
    if not out or out[-1] < top - 1e-9:
        out.append(top)
    return out


def bucket_of(load: float, catalog=None) -> float:
    """The smallest bucket at or above ``load`` (the expectation is then never below what the
    observed load gives, so a finding is not an artefact of rounding); the top bucket above it."""
    if not math.isfinite(load) or load < 0:
        raise InputError(f"load must be a utilisation in 0..1, got {load!r}", location="--load")
    for b in buckets(catalog):
        if load <= b + 1e-9:
            return b
    return buckets(catalog)[-1]


_MEMO: dict[tuple, LoadPoint] = {}


def load_point(load: float, *, link_gbps: float, tiers: int = 2, hops: int = 3, cc: str = "dcqcn",
               pfc: bool = True, seed: int = 1, catalog=None) -> LoadPoint:
    """One fluid run at utilisation ``load`` (memoised; module docstring)."""
    if not (math.isfinite(load) and 0 < load <= MAX_LOAD):
        raise InputError(f"load must be in (0, {MAX_LOAD:g}], got {load!r}", location="--load")
    from fabricplan.sim.fluid import fluid_config

    # keyed by the numbers that shape the run (not the catalog object: each CLI call loads its own)
    key = (round(load, 6), float(link_gbps), int(tiers), int(hops), cc, bool(pfc), int(seed),
           tuple(sorted(parameters(catalog).items())), repr(fluid_config(catalog, cc=cc, pfc=pfc)))
    found = _MEMO.get(key)
    if found is None:
        found = _MEMO[key] = _run(load, link_gbps, tiers, hops, cc, pfc, seed, catalog)
    return found


def _run(load: float, link_gbps: float, tiers: int, hops: int, cc: str, pfc: bool, seed: int, catalog) -> LoadPoint:
    from fabricplan.sim.fluid import fluid_config, simulate_fluid
    from fabricplan.sim.network import HOST, Flows, fat_tree
    from fabricplan.sim.scenarios import route

    started = time.perf_counter()
    p = parameters(catalog)
    net = fat_tree(int(p["sim_load_fat_tree_k"]), tiers, link_gbps=link_gbps, catalog=catalog)
    hosts = net.n_hosts
    size = p["sim_load_flow_bytes"]
    flow_time_us = size * 8 / (link_gbps * 1e3)
    duration_us = p["sim_load_flow_times"] * flow_time_us
    warm_us = p["sim_load_warmup_fraction"] * duration_us
    rng = np.random.default_rng(seed)
    per_us = load / flow_time_us  # flow starts per us per host
    src, dst, start = [], [], []
    for h in range(hosts):
        gaps = rng.exponential(1.0 / per_us, int(per_us * duration_us * 1.5) + 16)
        t = np.cumsum(gaps)
        t = t[t < duration_us]
        d = rng.integers(0, hosts - 1, len(t))
        d[d >= h] += 1
        src.append(np.full(len(t), h))
        dst.append(d)
        start.append(t)
    src_a, dst_a, start_a = np.concatenate(src), np.concatenate(dst), np.concatenate(start)
    shares, owner = route(net, src_a, dst_a, "ecmp", seed)
    flows = Flows(src=shares.src, dst=shares.dst, size_bytes=size * shares.size_bytes, start_us=start_a[owner],
                  path_ptr=shares.path_ptr, path_links=shares.path_links)
    config = fluid_config(catalog, cc=cc, pfc=pfc, max_time_us=duration_us, record_every=1)
    result = simulate_fluid(net, flows, config)
    queue = np.asarray(result.timeline["queue_kb"], dtype=float) * 1e3   # steps x used queues [bytes]
    t_us = np.asarray(result.timeline["t_us"], dtype=float)
    used = np.unique(flows.path_links * result.n_priorities + result.priority[np.repeat(
        np.arange(len(flows.src)), np.diff(flows.path_ptr))]) // result.n_priorities
    keep = t_us >= warm_us
    if keep.sum() < 2:
        raise InputError("the load experiment measured nothing after its warm-up; raise sim_load_flow_times",
                         location="perf_defaults.sim_load_flow_times")
    cap_Bps = net.capacity_gbps[used] * 1e9 / 8
    from_switch = net.node_kind[net.link_src[used]] != HOST
    delay_us = queue[keep] / cap_Bps * 1e6 * from_switch          # steps x used links
    # probe paths: every ordered host pair whose path crosses ``hops`` switches (else every pair)
    a, b = np.meshgrid(np.arange(hosts), np.arange(hosts), indexing="ij")
    off = a != b
    a, b = a[off], b[off]
    fwd, fwd_owner = route(net, a, b, "ecmp", seed + 1)
    back, back_owner = route(net, b, a, "ecmp", seed + 1)
    column = {int(link): j for j, link in enumerate(used)}
    incidence = np.zeros((len(a), len(used)))
    lengths = np.zeros(len(a), dtype=int)
    for paths, owners in ((fwd, fwd_owner), (back, back_owner)):
        for i in range(len(paths.src)):
            links = paths.path_links[paths.path_ptr[i]:paths.path_ptr[i + 1]]
            if paths is fwd:
                lengths[owners[i]] = len(links) - 1   # switches crossed = links - 1
            for link in links:
                j = column.get(int(link))
                if j is not None:
                    incidence[owners[i], j] += paths.size_bytes[i]
    chosen = lengths == hops
    if not chosen.any():
        chosen = np.ones(len(a), dtype=bool)
    rtt_q = incidence[chosen] @ delay_us.T                     # pairs x steps
    uplinks = net.node_kind[net.link_src] == HOST
    paused = result.pause_us.reshape(-1, result.n_priorities)[uplinks].max(axis=1)
    credit = result.credit_wait_us.reshape(-1, result.n_priorities)[uplinks].max(axis=1)
    run_s = result.sim_time_us * 1e-6
    # pause and credit-wait totals cover the whole run; the warm-up pauses little (queues start empty)
    return LoadPoint(
        load=load, queue_p999_us=float(np.quantile(rtt_q, 0.999)), queue_p50_us=float(np.quantile(rtt_q, 0.5)),
        pause_fraction=float(paused.mean() * 1e-6 / run_s) if config.uses_pfc else 0.0,
        cnp_per_s=float(result.cnps.sum() / run_s / hosts),
        credit_wait_fraction=float(credit.mean() * 1e-6 / run_s) if config.uses_credits else 0.0,
        cc=config.cc, pfc=config.uses_pfc, link_gbps=float(link_gbps), tiers=int(tiers), hops=int(hops),
        flows=len(src_a), offered_load=float(len(src_a) * size / (hosts * duration_us * link_gbps * 1e3 / 8)),
        simulated_us=float(result.sim_time_us), wall_s=time.perf_counter() - started)
