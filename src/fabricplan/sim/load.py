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
* **CNPs and marks**: CNPs (DCQCN; BECNs with InfiniBand CC) and ECN-marked packets (FECNs) per
  second per receiving host.

Results are kept per (link rate, tiers, hops, mechanism, load bucket and every catalog number the
run reads): in the process, and on disk in fabricplan's cache folder (:mod:`fabricplan.cache`:
``$FABRICPLAN_CACHE_DIR``, else the user cache folder, ``off`` turns it off; size bounded), keyed also by
the text of this module and of the fluid model, so a changed model never reads an old entry. A
health run needs at most ``1 / sim_load_bucket_step`` runs (0.3-2 s each at 400 Gb/s) the first time
a design is judged at those loads, none after.
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
    ecn_marks_per_s: float      # ECN-marked (FECN on InfiniBand CC) packets per second per receiving host
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


def parameters(catalog) -> dict[str, float]:
    from fabricplan.sim.params import sim_parameter

    names = ("sim_load_flow_bytes", "sim_load_flow_times", "sim_load_warmup_fraction", "sim_load_fat_tree_k",
             "sim_load_bucket_step", "sim_load_max_bucket")
    return {name: sim_parameter(name, catalog) for name in names}


def buckets(catalog) -> list[float]:
    """The loads the experiment runs at: ``step, 2 step, ...`` up to ``sim_load_max_bucket``."""
    p = parameters(catalog)
    step, top = p["sim_load_bucket_step"], p["sim_load_max_bucket"]
    out = [round(step * i, 6) for i in range(1, int(math.floor(top / step + 1e-9)) + 1)]
    if not out or out[-1] < top - 1e-9:
        out.append(top)
    return out


def bucket_of(load: float, catalog) -> float:
    """The smallest bucket at or above ``load`` (the expectation is then never below what the
    observed load gives, so a finding is not an artefact of rounding); the top bucket above it."""
    if not math.isfinite(load) or load < 0:
        raise InputError(f"load must be a utilisation in 0..1, got {load!r}", location="--load")
    for b in buckets(catalog):
        if load <= b + 1e-9:
            return b
    return buckets(catalog)[-1]


class LoadCurve:
    """The load points of one design (link rate, tiers, hops, flow and congestion control) by load
    bucket, each simulated once: :meth:`at` gives the point of the smallest bucket at or above a
    utilisation (:func:`bucket_of`). ``batch`` (default) simulates every bucket in one run the first
    time one is needed (loads read from counters usually span many); without it, only the bucket
    asked for (a stated load)."""

    def __init__(self, *, link_gbps: float, tiers: int, hops: int, cc: str, pfc: bool, catalog,
                 batch: bool = True) -> None:
        self.link_gbps, self.tiers, self.hops, self.cc, self.pfc = link_gbps, tiers, hops, cc, pfc
        self.catalog, self.batch = catalog, batch
        self.buckets = buckets(catalog)
        self._points: dict[float, LoadPoint] = {}

    def at(self, utilisation: float) -> tuple[float, LoadPoint]:
        """(bucket, its load point) for ``utilisation``; InputError when it is not a load."""
        bucket = bucket_of(utilisation, self.catalog)
        if bucket not in self._points:
            wanted = self.buckets if self.batch else [bucket]
            points = load_points(wanted, link_gbps=self.link_gbps, tiers=self.tiers, hops=self.hops, cc=self.cc,
                                 pfc=self.pfc, catalog=self.catalog)
            self._points.update(zip(wanted, points, strict=True))
        return bucket, self._points[bucket]


_MEMO: dict[tuple, LoadPoint] = {}


def _key(load: float, link_gbps: float, tiers: int, hops: int, cc: str, pfc: bool, seed: int, catalog) -> tuple:
    from fabricplan.sim.fluid import fluid_config

    # the numbers that shape the run (not the catalog object: each CLI call loads its own)
    return (round(load, 6), float(link_gbps), int(tiers), int(hops), cc, bool(pfc), int(seed),
            tuple(sorted(parameters(catalog).items())), repr(fluid_config(catalog, cc=cc, pfc=pfc)))


def load_point(load: float, *, link_gbps: float, tiers: int = 2, hops: int = 3, cc: str = "dcqcn",
               pfc: bool = True, seed: int = 1, catalog) -> LoadPoint:
    """One load point (module docstring), from the caches or one fluid run."""
    return load_points([load], link_gbps=link_gbps, tiers=tiers, hops=hops, cc=cc, pfc=pfc, seed=seed,
                       catalog=catalog)[0]


def load_points(loads: list[float], *, link_gbps: float, tiers: int = 2, hops: int = 3, cc: str = "dcqcn",
                pfc: bool = True, seed: int = 1, catalog) -> list[LoadPoint]:
    """Load points at each of ``loads``: from the process memo, else the disk cache, else all the
    missing ones in **one** fluid run (one copy of the fat tree per load, side by side and
    unconnected: the same dynamics per copy as a run of its own, at a fraction of the cost of
    separate runs, since a step's cost is mostly numpy's per-call overhead)."""
    for load in loads:
        if not (isinstance(load, (int, float)) and math.isfinite(load) and 0 < load <= MAX_LOAD):
            raise InputError(f"load must be in (0, {MAX_LOAD:g}], got {load!r}", location="--load")
    keys = [_key(load, link_gbps, tiers, hops, cc, pfc, seed, catalog) for load in loads]
    missing = []
    for load, key in zip(loads, keys, strict=True):
        if key not in _MEMO:
            found = _read(_cache_path(key))
            if found is None:
                missing.append((load, key))
            else:
                _MEMO[key] = found
    if missing:
        todo = sorted({load for load, _k in missing})
        points = _run(todo, link_gbps, tiers, hops, cc, pfc, seed, catalog)
        for load, key in missing:
            point = points[todo.index(load)]
            _MEMO[key] = point
            _write(_cache_path(key), point)
    return [_MEMO[key] for key in keys]


def _cache_path(key: tuple):
    import hashlib
    from pathlib import Path

    from fabricplan.cache import cache_dir

    folder = cache_dir()
    if folder is None:
        return None
    here = Path(__file__).resolve().parent
    try:
        code = "".join((here / name).read_text(encoding="utf-8") for name in ("load.py", "fluid.py", "network.py",
                                                                              "routing.py", "scenarios.py"))
    except OSError:
        return None
    digest = hashlib.sha256((repr(key) + "\0" + code + "\0" + np.__version__).encode("utf-8")).hexdigest()[:24]
    return folder / f"sim_load.{digest}.json"


def _read(path) -> LoadPoint | None:
    import json

    from fabricplan.cache import read_bytes

    data = read_bytes(path)
    if data is None:
        return None
    try:
        return LoadPoint(**json.loads(data))
    except Exception:  # noqa: BLE001 - an unreadable or stale entry only costs the speed-up
        return None


def _write(path, point: LoadPoint) -> None:
    """Store one load point in the disk cache, atomically; a failure only costs the speed-up."""
    import json
    from dataclasses import asdict

    from fabricplan.cache import write_bytes

    write_bytes(path, json.dumps(asdict(point)).encode("utf-8"))


def _traffic(load: float, hosts: int, flow_time_us: float, duration_us: float, rng) -> tuple:
    """Poisson flow starts of every host at ``load`` to uniformly random other hosts."""
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
    return np.concatenate(src), np.concatenate(dst), np.concatenate(start)


def _copies(net, n: int):
    """``n`` unconnected copies of ``net`` as one network: hosts of every copy first (copy ``c``'s
    host ``h`` is ``c H + h``), then their switches; copy ``c``'s link ``l`` is ``c L + l``."""
    from fabricplan.sim.network import Network

    hosts, nodes = net.n_hosts, net.n_nodes
    switches = nodes - hosts

    def node(c: int, ids: np.ndarray) -> np.ndarray:
        return np.where(ids < hosts, c * hosts + ids, n * hosts + c * switches + (ids - hosts))

    return Network(link_src=np.concatenate([node(c, net.link_src) for c in range(n)]),
                   link_dst=np.concatenate([node(c, net.link_dst) for c in range(n)]),
                   capacity_gbps=np.tile(net.capacity_gbps, n), latency_us=np.tile(net.latency_us, n),
                   buffer_bytes=np.tile(net.buffer_bytes, n),
                   node_kind=np.concatenate([np.tile(net.node_kind[:hosts], n), np.tile(net.node_kind[hosts:], n)]),
                   node_tier=np.concatenate([np.tile(net.node_tier[:hosts], n), np.tile(net.node_tier[hosts:], n)]),
                   n_hosts=n * hosts)


def _run(loads: list[float], link_gbps: float, tiers: int, hops: int, cc: str, pfc: bool, seed: int,
         catalog) -> list[LoadPoint]:
    from fabricplan.sim.fluid import fluid_config, simulate_fluid
    from fabricplan.sim.network import HOST, Flows, fat_tree
    from fabricplan.sim.scenarios import route

    started = time.perf_counter()
    p = parameters(catalog)
    net = fat_tree(int(p["sim_load_fat_tree_k"]), tiers, link_gbps=link_gbps, catalog=catalog)
    hosts, n_links, copies = net.n_hosts, net.n_links, len(loads)
    size = p["sim_load_flow_bytes"]
    flow_time_us = size * 8 / (link_gbps * 1e3)
    duration_us = p["sim_load_flow_times"] * flow_time_us
    warm_us = p["sim_load_warmup_fraction"] * duration_us
    ptrs, links, starts, sizes, copy_of_flow, n_flows = [np.zeros(1, dtype=np.int64)], [], [], [], [], []
    for c, load in enumerate(loads):
        # each load's traffic from its own seeded generator: a load's flows do not depend on the others
        rng = np.random.default_rng([seed, int(round(load * 1e6))])
        src, dst, start = _traffic(load, hosts, flow_time_us, duration_us, rng)
        shares, owner = route(net, src, dst, "ecmp", seed)
        ptrs.append(shares.path_ptr[1:] + ptrs[-1][-1])
        links.append(shares.path_links + c * n_links)
        starts.append(start[owner])
        sizes.append(size * shares.size_bytes)
        copy_of_flow.append(np.full(len(shares.src), c))
        n_flows.append(len(src))
    union = _copies(net, copies)
    copy_of_flow_a = np.concatenate(copy_of_flow)
    flows = Flows(src=np.zeros(len(copy_of_flow_a), dtype=np.int64), dst=np.zeros(len(copy_of_flow_a), dtype=np.int64),
                  size_bytes=np.concatenate(sizes), start_us=np.concatenate(starts), path_ptr=np.concatenate(ptrs),
                  path_links=np.concatenate(links))
    config = fluid_config(catalog, cc=cc, pfc=pfc, max_time_us=duration_us, record_every=1)
    result = simulate_fluid(union, flows, config)
    P = result.n_priorities
    queue = np.asarray(result.timeline["queue_kb"], dtype=float) * 1e3   # steps x used queues [bytes]
    t_us = np.asarray(result.timeline["t_us"], dtype=float)
    entry_flow = np.repeat(np.arange(len(copy_of_flow_a)), np.diff(flows.path_ptr))
    used_q = np.unique(flows.path_links * P + result.priority[entry_flow])
    used = used_q // P
    keep = t_us >= warm_us
    if keep.sum() < 2:
        raise InputError("the load experiment measured nothing after its warm-up; raise sim_load_flow_times",
                         location="perf_defaults.sim_load_flow_times")
    cap_Bps = union.capacity_gbps[used] * 1e9 / 8
    from_switch = union.node_kind[union.link_src[used]] != HOST
    delay_us = queue[keep] / cap_Bps * 1e6 * from_switch          # steps x used queues
    # probe paths on one copy: every ordered host pair whose path crosses ``hops`` switches (else all)
    a, b = np.meshgrid(np.arange(hosts), np.arange(hosts), indexing="ij")
    off = a != b
    a, b = a[off], b[off]
    fwd, fwd_owner = route(net, a, b, "ecmp", seed + 1)
    back, back_owner = route(net, b, a, "ecmp", seed + 1)
    probe = np.zeros((len(a), n_links))
    lengths = np.zeros(len(a), dtype=int)
    for paths, owners, forward in ((fwd, fwd_owner, True), (back, back_owner, False)):
        for i in range(len(paths.src)):
            path = paths.path_links[paths.path_ptr[i]:paths.path_ptr[i + 1]]
            if forward:
                lengths[owners[i]] = len(path) - 1   # switches crossed = links - 1
            probe[owners[i], path] += paths.size_bytes[i]
    chosen = lengths == hops
    if not chosen.any():
        chosen = np.ones(len(a), dtype=bool)
    probe = probe[chosen]
    run_s = result.sim_time_us * 1e-6
    uplinks = net.node_kind[net.link_src] == HOST
    paused_q = result.pause_us.reshape(-1, P).max(axis=1)
    credit_q = result.credit_wait_us.reshape(-1, P).max(axis=1)
    wall = time.perf_counter() - started
    out = []
    for c, load in enumerate(loads):
        mine = (used // n_links) == c
        incidence = probe[:, used[mine] % n_links]              # pairs x this copy's used queues
        rtt_q = incidence @ delay_us[:, mine].T                  # pairs x steps
        local = slice(c * n_links, (c + 1) * n_links)
        paused, credit = paused_q[local][uplinks], credit_q[local][uplinks]
        in_copy = copy_of_flow_a == c
        # pause and credit-wait totals cover the whole run; the warm-up pauses little (queues start empty)
        out.append(LoadPoint(
            load=load, queue_p999_us=float(np.quantile(rtt_q, 0.999)), queue_p50_us=float(np.quantile(rtt_q, 0.5)),
            pause_fraction=float(paused.mean() * 1e-6 / run_s) if config.uses_pfc else 0.0,
            cnp_per_s=float(result.cnps[in_copy].sum() / run_s / hosts),
            ecn_marks_per_s=float(result.ecn_marks[in_copy].sum() / run_s / hosts),
            credit_wait_fraction=float(credit.mean() * 1e-6 / run_s) if config.uses_credits else 0.0,
            cc=config.cc, pfc=config.uses_pfc, link_gbps=float(link_gbps), tiers=int(tiers), hops=int(hops),
            flows=int(n_flows[c]),
            offered_load=float(n_flows[c] * size / (hosts * duration_us * link_gbps * 1e3 / 8)),
            simulated_us=float(result.sim_time_us), wall_s=wall / copies))
    return out
