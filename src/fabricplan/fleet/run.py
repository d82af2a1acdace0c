"""One fleet run on one design: arrivals, placements, the shared fabric at sampled instants.

:func:`run_fleet` draws the spec's job arrivals (:mod:`~fabricplan.fleet.arrivals`) from a warm-up
of ``fleet_warmup_mean_durations`` mean job durations before the horizon, places them with the
policy (:mod:`~fabricplan.fleet.schedule`), and at ``samples`` evenly spaced instants of the
horizon routes every running multi-node job's connections together on the design's cabled fabric
(:mod:`~fabricplan.fleet.interference`). Instants with the same running jobs are simulated once.
At the busiest instant it fails parts of each class one at a time
(:mod:`~fabricplan.fleet.failures`: jobs stopped, jobs slowed in degraded mode, GPU-hours lost
per month at the catalog's failure rates). It also answers what else would recover: the same arrivals under the ``packed`` policy, and the
same placements under the other routing (adaptive where the profile hashes with ECMP, ECMP where
it routes adaptively) and, under ECMP, with ``fleet_alternative_qps`` queue pairs per connection
hashed separately (NCCL_IB_QPS_PER_CONNECTION with the switches hashing on the QP: Meta's
E-ECMP with QP scaling, Gangidi et al., SIGCOMM 2024), each at the same instants.

Reported per job kind: instances arrived and started, mean wait, the GPU-time-weighted pace
shared and alone (1 = every connection at its NICs' rate), the leaf groups a job spans over the
fewest it could, and how often each tier holds the bottleneck; for the fleet: offered and
achieved utilisation and the node-weighted mean pace.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from fabricplan.errors import InputError
from fabricplan.fleet.arrivals import JobKind, draw_arrivals, job_kinds, mean_duration_hours
from fabricplan.fleet.failures import failure_effects
from fabricplan.fleet.interference import TIER_NAMES, job_traffic, paces
from fabricplan.fleet.schedule import Layout, Timeline, layout_of, policy_function, schedule
from fabricplan.sim.params import sim_parameter

HOURS_PER_DAY = 24.0
#: Program limits (sanity bounds on a fleet run): ten years of fleet time, instants simulated, queue
#: pairs per connection (NCCL opens a handful; hundreds only multiply the routing work), runs drawn.
MAX_DAYS = 3650
MAX_SAMPLES = 1000
MAX_QPS = 256
MAX_ARRIVALS = 2_000_000


@dataclass(frozen=True)
class FleetJob:
    """One running instance at a sampled instant."""

    instance: int
    kind: str
    nodes: int
    leaves: int
    fewest_leaves: int
    pace_shared: float
    pace_alone: float
    bottleneck_tier: str


@dataclass(frozen=True)
class FleetSample:
    """The fleet at one instant [hours]: busy nodes and the running instances."""

    t_hours: float
    busy_nodes: int
    jobs: tuple[FleetJob, ...]


@dataclass(frozen=True)
class KindSummary:
    name: str
    nodes: int
    share: float
    arrived: int
    started: int
    mean_wait_hours: float
    pace_shared: float
    pace_alone: float
    pace_shared_p10: float
    leaves_over_fewest: float
    bottleneck_share: dict[str, float]


@dataclass(frozen=True)
class FleetResult:
    fabric: str
    design: str
    policy: str
    routing: str
    qps: int
    horizon_days: float
    seed: int
    cluster_nodes: int
    offered_utilisation: float
    achieved_utilisation: float
    mean_pace: float
    kinds: tuple[KindSummary, ...]
    samples: tuple[FleetSample, ...]
    alternatives: dict[str, float] = field(default_factory=dict)
    failures: tuple = ()
    failure_instant_hours: float | None = None
    #: The busiest sampled instant's placement: per node its leaf group and the index of the job kind
    #: running on it (-1: free), the fragmentation picture of the HTML report.
    snapshot_hours: float | None = None
    leaf_of_node: tuple[int, ...] = ()
    kind_of_node: tuple[int, ...] = ()
    simulated_instants: int = 0
    notes: tuple[str, ...] = ()


def traffic_settings(catalog) -> dict:
    """The NCCL connection settings a job's traffic is built with (channels per NIC, all-to-all peers)."""
    return {"channels_per_nic": int(sim_parameter("nccl_channels_per_nic", catalog)),
            "peers": int(sim_parameter("nccl_alltoall_peers_in_flight", catalog)),
            "channels_per_peer": int(sim_parameter("nccl_channels_per_net_peer", catalog))}


class _Sampler:
    """Simulates the running set of an instant once per distinct set (and routing)."""

    def __init__(self, network, kinds, arrivals, nics_per_node: int, seed: int, settings: dict):
        self.network, self.kinds, self.arrivals = network, kinds, arrivals
        self.nics, self.seed, self.settings = nics_per_node, seed, settings
        self.memo: dict = {}

    def jobs_at(self, timeline: Timeline, t: float, routing: str, qps: int, layout: Layout) -> tuple[FleetJob, ...]:
        running = [int(i) for i in timeline.running(t)]
        key = (routing, qps, tuple((i, timeline.nodes[i].tobytes()) for i in running))
        if key not in self.memo:
            kinds = [self.kinds[int(self.arrivals.kind[i])] for i in running]
            traffic = [job_traffic(k.pattern, timeline.nodes[i], self.nics, seed=self.seed + i, **self.settings)
                       for i, k in zip(running, kinds)]
            result = paces(self.network, traffic, routing=routing, qps=qps, seed=self.seed)
            self.memo[key] = tuple(
                FleetJob(instance=i, kind=k.name, nodes=k.nodes, leaves=layout.leaves_spanned(timeline.nodes[i]),
                         fewest_leaves=layout.fewest_leaves(k.nodes), pace_shared=float(result.shared[j]),
                         pace_alone=float(result.alone[j]), bottleneck_tier=result.bottleneck_tier[j])
                for j, (i, k) in enumerate(zip(running, kinds)))
        return self.memo[key]


def _weighted_pace(samples, attribute: str = "pace_shared") -> float:
    weights = np.array([job.nodes for s in samples for job in s.jobs], dtype=float)
    values = np.array([getattr(job, attribute) for s in samples for job in s.jobs], dtype=float)
    return float((weights * values).sum() / weights.sum()) if weights.sum() > 0 else 1.0


def _summaries(kinds: tuple[JobKind, ...], arrivals, timeline: Timeline, samples, horizon: float):
    inside = arrivals.arrive_hours >= 0
    out = []
    for index, kind in enumerate(kinds):
        mine = inside & (arrivals.kind == index)
        started = mine & np.isfinite(timeline.start_hours)
        waits = timeline.start_hours[started] - arrivals.arrive_hours[started]
        jobs = [job for s in samples for job in s.jobs if job.kind == kind.name]
        shared = np.array([job.pace_shared for job in jobs]) if jobs else np.ones(1)
        tiers = [job.bottleneck_tier for job in jobs]
        out.append(KindSummary(
            name=kind.name, nodes=kind.nodes, share=kind.share, arrived=int(mine.sum()), started=int(started.sum()),
            mean_wait_hours=float(waits.mean()) if len(waits) else 0.0,
            pace_shared=float(shared.mean()), pace_alone=float(np.mean([j.pace_alone for j in jobs])) if jobs else 1.0,
            pace_shared_p10=float(np.percentile(shared, 10)),
            leaves_over_fewest=float(np.mean([j.leaves / j.fewest_leaves for j in jobs])) if jobs else 1.0,
            bottleneck_share={t: tiers.count(t) / len(tiers) for t in (*TIER_NAMES, "none") if tiers.count(t)}))
    return tuple(out)


def _achieved(timeline: Timeline, arrivals, kinds, horizon: float, cluster_nodes: int) -> float:
    start = np.clip(timeline.start_hours, 0.0, horizon)
    end = np.clip(timeline.end_hours, 0.0, horizon)
    nodes = np.array([kinds[int(k)].nodes for k in arrivals.kind], dtype=float)
    busy = (np.maximum(end - start, 0.0) * nodes).sum()
    return float(busy / (horizon * cluster_nodes))


def run_fleet(design, spec, catalog, *, policy: str | Callable | None = None, routing: str | None = None,
              days: float | None = None, samples: int | None = None, seed: int = 0, qps: int | None = None,
              alternatives: bool = True,
              with_failures: bool = True, network=None) -> FleetResult:
    """The fleet of ``spec``'s job mix on ``design`` (a :class:`~fabricplan.design.FabricDesign`;
    module docstring). ``policy`` defaults to the spec's (``operations.scheduler_policy``, else
    ``packed`` with topology-aware scheduling and ``random`` without), ``routing`` to the fabric
    profile's, ``days`` and ``samples`` to the catalog's ``fleet_horizon_days`` and
    ``fleet_sample_instants``."""
    from fabricplan.sim.fabric import design_network

    size = design.size
    if size.tiers < 1:
        raise InputError("a single node has no scale-out fabric for jobs to share", location="cluster.gpus")
    policy = policy if policy is not None else spec_policy(spec)
    policy_name, _ = policy_function(policy)
    profile = design.network.profile
    routing = routing or ("adaptive" if profile.routing == "adaptive" else "ecmp")
    qps = int(qps if qps is not None else sim_parameter("nccl_ib_qps_per_connection", catalog))
    if not 1 <= qps <= MAX_QPS:
        raise InputError(f"queue pairs per connection must be 1 to {MAX_QPS}, got {qps}", location="--qps")
    days = float(days if days is not None else catalog.perf_value("fleet_horizon_days"))
    n_samples = int(samples if samples is not None else catalog.perf_value("fleet_sample_instants"))
    if not 0 < days <= MAX_DAYS:
        raise InputError(f"the fleet's horizon must be more than 0 and at most {MAX_DAYS:,} days (ten years), "
                         f"got {days:g}", location="--days")
    if not 1 <= n_samples <= MAX_SAMPLES:
        raise InputError(f"a fleet run samples 1 to {MAX_SAMPLES} instants, got {n_samples}", location="--samples")
    if seed < 0:
        raise InputError(f"the seed must be 0 or more, got {seed}", location="--seed")
    horizon = days * HOURS_PER_DAY
    network = network or design_network(size, link_gbps=design.hardware.port_speed_gbps, catalog=catalog)
    layout = layout_of(network, size.nics_per_node)
    kinds = job_kinds(spec, catalog)
    sigma = float(catalog.perf_value("fleet_job_duration_lognormal_sigma"))
    longest = max((float(mean_duration_hours(k.duration_hours, sigma)) for k in kinds), default=1.0)
    warmup = float(catalog.perf_value("fleet_warmup_mean_durations")) * longest
    arrivals = draw_arrivals(kinds, layout.nodes, start_hours=-warmup, end_hours=horizon, sigma=sigma, seed=seed,
                             limit=MAX_ARRIVALS)
    timeline = schedule(arrivals, kinds, layout, policy, end_hours=horizon, seed=seed)
    instants = (np.arange(n_samples) + 0.5) / n_samples * horizon
    settings = traffic_settings(catalog)
    sampler = _Sampler(network, kinds, arrivals, size.nics_per_node, seed, settings)

    def sampled(line: Timeline, how: str, queue_pairs: int = qps) -> tuple[FleetSample, ...]:
        out = []
        for t in instants:
            jobs = sampler.jobs_at(line, float(t), how, queue_pairs, layout)
            out.append(FleetSample(t_hours=float(t), busy_nodes=int(sum(j.nodes for j in jobs)), jobs=jobs))
        return tuple(out)

    main = sampled(timeline, routing)
    other: dict[str, float] = {}
    if alternatives:
        flip = "ecmp" if routing != "ecmp" else "adaptive"
        other[f"routing {flip}"] = _weighted_pace(sampled(timeline, flip))
        more = int(catalog.perf_value("fleet_alternative_qps"))
        if routing == "ecmp" and more > qps:
            other[f"ecmp, {more} QPs per connection"] = _weighted_pace(sampled(timeline, "ecmp", more))
        if policy_name != "packed":
            packed = schedule(arrivals, kinds, layout, "packed", end_hours=horizon, seed=seed)
            other["policy packed"] = _weighted_pace(sampled(packed, routing))
    failures, failure_t = (), None
    busiest = max(range(len(main)), key=lambda i: main[i].busy_nodes)
    kind_of_node = np.full(layout.nodes, -1, dtype=np.int64)
    names = [k.name for k in kinds]
    for job in main[busiest].jobs:
        kind_of_node[timeline.nodes[job.instance]] = names.index(job.kind)
    if with_failures and any(s.jobs for s in main):
        failure_t = main[busiest].t_hours
        running = [(j.instance, j.kind, timeline.nodes[j.instance]) for j in main[busiest].jobs]
        traffic = {i: job_traffic(kinds[int(arrivals.kind[i])].pattern, nodes, size.nics_per_node, seed=seed + i,
                                  **settings) for i, _, nodes in running}

        def simulate(net, jobs):
            return paces(net, [traffic[i] for i, _, _ in jobs], routing=routing, qps=qps, seed=seed)

        failures = failure_effects(network, running, spec.cluster.gpus_per_node, size.nics_per_node, catalog,
                                   profile, simulate, seed=seed, planes=size.planes)
    notes = []
    if not any(s.jobs for s in main):
        notes.append("no job was running at any sampled instant")
    return FleetResult(
        fabric=profile.id, design=f"{design.hardware.switch.id} {size.style}, {size.tiers} tiers", policy=policy_name,
        routing=routing, qps=qps, horizon_days=days, seed=seed, cluster_nodes=layout.nodes,
        offered_utilisation=float(sum(k.share for k in kinds)),
        achieved_utilisation=_achieved(timeline, arrivals, kinds, horizon, layout.nodes),
        mean_pace=_weighted_pace(main), kinds=_summaries(kinds, arrivals, timeline, main, horizon), samples=main,
        alternatives=other, failures=failures, failure_instant_hours=failure_t,
        snapshot_hours=main[busiest].t_hours, leaf_of_node=tuple(int(v) for v in layout.leaf_of_node),
        kind_of_node=tuple(int(v) for v in kind_of_node), simulated_instants=len(sampler.memo), notes=tuple(notes))


def spec_policy(spec) -> str:
    """The spec's scheduler policy: ``operations.scheduler_policy``, else packed or random from
    ``operations.topology_aware_scheduling``."""
    operations = spec.operations
    chosen = getattr(operations, "scheduler_policy", None)
    if chosen:
        return chosen
    return "packed" if operations.topology_aware_scheduling else "random"
