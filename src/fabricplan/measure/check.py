"""Model vs measured: how far a cluster's nccl-tests curves fall from what its design should give,
and which causes the model says explain the gap.

Per measured row the design's model time (:func:`fabricplan.perf.collectives.collective_time` on the
spec's design, SHARP as the design has it) is set beside the measured one; ``ratio = t_model /
t_measured`` (= measured busbw / modelled busbw). Per collective and rank count the verdict reads the
largest size (bandwidth) and the smallest (latency) against ``perf_defaults``
``measured_pass_fraction`` and ``measured_latency_pass_fraction``.

Likely causes are ranked *from the model*: each cause is a change of the design (a slower NIC, a NIC
across the CPU, no GPUDirect RDMA, no SHARP, ECMP collisions, a congested uplink, a slower host
stack, more switch hops), its size fitted within its physical range where it has one, and scored
by the share of the squared log error it removes, ``1 - SSR_cause / SSR_design``. What the logs say
weighs in: a perftest bandwidth at line rate weakens "NIC below speed", ``via NET/IB/0/GDRDMA``
lines rule out missing GPUDirect RDMA, CollNet lines rule out "SHARP not engaged".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from fabricplan.errors import InputError
from fabricplan.measure.fit import FitRow, _prepare, measured_rows
from fabricplan.measure.records import MeasurementLog

#: The ranking's settings, in the catalog (``perf_defaults``): the weight of a cause the logs confirm
#: or contradict (1 when they say nothing), and the smallest share of the gap a further cause must add.
EVIDENCE_CONFIRMS = "check_measured_evidence_confirms_weight"
EVIDENCE_CONTRADICTS = "check_measured_evidence_contradicts_weight"
MIN_INCREMENT = "check_measured_min_cause_share"
# The candidate grids the cause search tries (search settings, not physical defaults; the magnitudes of
# the causes themselves are perf_defaults numbers with sources):
#: Link rates (Gb/s) a NIC may have trained at below the design's: the Ethernet and InfiniBand lane
#: rates (IEEE 802.3 25/50/100/200/400/800GbE; IBTA EDR 100, HDR 200, NDR 400, XDR 800).
LOWER_LINK_RATES_GBPS = (25, 50, 100, 200, 400, 800)
#: Congested-uplink shares of the design's bandwidth tried (a 1.5:1 .. 4:1 squeeze).
UPLINK_SQUEEZES = (1.5, 2.0, 3.0, 4.0)
#: Extra host-stack latency per message tried [us], roughly logarithmic from 0.5 to 500 us.
HOST_LATENCY_EXTRAS_US = (0.5, 1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 75, 100, 150, 200, 300, 500)
#: Extra switches on the path tried (one more switch tier up and down: 2; two: 4).
EXTRA_HOPS = (2, 4)

OPERATION_TITLES = {"all_reduce": "all-reduce", "all_gather": "all-gather", "reduce_scatter": "reduce-scatter",
                    "all_to_all": "all-to-all", "send_recv": "send/recv", "broadcast": "broadcast", "reduce": "reduce"}


def size_text(size: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


@dataclass(frozen=True)
class CheckPoint:
    where: str
    operation: str
    n_gpus: int
    ranks_per_node: int
    size_bytes: int
    measured_us: float
    model_us: float
    algorithm: str
    factor: float  # busbw / algbw

    @property
    def ratio(self) -> float:
        """Measured busbw / modelled busbw (= model time / measured time)."""
        return self.model_us / self.measured_us

    @property
    def measured_busbw(self) -> float:
        return self.size_bytes / (self.measured_us * 1000.0) * self.factor

    @property
    def model_busbw(self) -> float:
        return self.size_bytes / (self.model_us * 1000.0) * self.factor


@dataclass(frozen=True)
class Verdict:
    operation: str
    n_gpus: int
    large_size: int
    bandwidth_ratio: float
    small_size: int
    latency_ratio: float  # model time / measured time at the smallest size
    bandwidth_ok: bool
    latency_ok: bool


@dataclass(frozen=True)
class Cause:
    key: str
    title: str
    kind: str  # "bandwidth" or "latency" (or both)
    explained: float  # share of the squared log error the cause removes on top of those ranked before it (0..1)
    score: float  # explained x evidence weight
    detail: str
    evidence: str = ""
    applicable: bool = True
    alone: float = 0.0  # share it would remove as the only fault
    weight: float = 1.0  # what the logs say: > 1 confirms, < 1 contradicts


@dataclass(frozen=True)
class CheckResult:
    system: object
    points: tuple[CheckPoint, ...]
    verdicts: tuple[Verdict, ...]
    causes: tuple[Cause, ...]
    summary: str
    passed: bool
    bandwidth_threshold: float
    latency_threshold: float
    left_out: tuple[FitRow, ...] = field(default_factory=tuple)


def _points(system, catalog, rows: list[FitRow], values: dict | None = None) -> list[float]:
    model_catalog = catalog.with_values(values) if values else catalog
    network = system.network(model_catalog)
    return [system.collective(model_catalog, r.operation, r.size_bytes, r.n_gpus, r.ranks_per_node,
                              algorithm=r.algorithm, protocol=r.protocol, network=network).time_us for r in rows]


def _ssr(times: list[float], rows: list[FitRow]) -> float:
    return sum(math.log(t / r.measured_us) ** 2 for t, r in zip(times, rows))


@dataclass(frozen=True)
class _State:
    """The design with the faults accepted so far: catalog values at their paths, SHARP on or off."""

    values: tuple  # ((path, value), ...)
    collnet: bool

    def get(self, path: str, default: float) -> float:
        return dict(self.values).get(path, default)

    def with_values(self, **changes) -> _State:
        values = dict(self.values)
        values.update(changes.get("values", {}))
        return _State(tuple(values.items()), changes.get("collnet", self.collnet))


@dataclass(frozen=True)
class _CauseSpec:
    key: str
    title: str
    kind: str
    candidates: object  # state -> [(new state, label)]
    detail: object  # (label, state before) -> str
    weight: float = 1.0
    evidence: str = ""
    applicable: bool = True
    why_not: str = ""


def _state_ssr(system, catalog, rows, state: _State) -> float:
    variant = replace(system, collnet=state.collnet) if state.collnet != system.collnet else system
    try:
        return _ssr(_points(variant, catalog, rows, dict(state.values)), rows)
    except InputError:
        return math.inf


def rank_causes(system, catalog, rows: list[FitRow], logs: list[MeasurementLog]) -> list[Cause]:
    """Causes ranked greedily: the one whose change of the design removes the largest share of the
    gap (weighted by what the logs say) first, then the next one on top of it, and so on; each
    cause's ``explained`` is its own increment. Causes that add less than the catalog's
    ``check_measured_min_cause_share`` follow with the share they would add on top of those accepted."""
    from fabricplan.perf.params import perf_parameter

    min_increment = perf_parameter(MIN_INCREMENT, catalog)
    specs = _cause_specs(system, catalog, rows, logs)
    base_ssr = _ssr([r.model_us for r in rows], rows)
    if base_ssr <= 0:
        return []
    state = _State((), system.collnet)
    current = base_ssr
    remaining = [c for c in specs if c.applicable]
    ranked: list[Cause] = []
    alone: dict[str, float] = {}
    while remaining:
        trials = []
        for spec in remaining:
            best = (None, None, math.inf)
            for candidate, label in spec.candidates(state):
                ssr = _state_ssr(system, catalog, rows, candidate)
                if ssr < best[2]:
                    best = (candidate, label, ssr)
            gain = max(0.0, (current - best[2]) / base_ssr) if best[0] is not None else 0.0
            trials.append((gain * spec.weight, gain, spec, best, state))
        if not alone:
            alone = {t[2].key: t[1] for t in trials}
        trials.sort(key=lambda t: (-t[0], -alone[t[2].key], t[2].key))
        score, gain, spec, (new_state, label, ssr), before = trials[0]
        if gain < min_increment:
            for score, gain, spec, (_s, label, _rest), before in trials:
                ranked.append(Cause(spec.key, spec.title, spec.kind, gain, score,
                                    spec.detail(label, before) if label is not None else "", spec.evidence,
                                    alone=alone[spec.key], weight=spec.weight))
            break
        ranked.append(Cause(spec.key, spec.title, spec.kind, gain, score, spec.detail(label, before), spec.evidence,
                            alone=alone[spec.key], weight=spec.weight))
        state, current = new_state, ssr
        remaining.remove(spec)
    ranked += [Cause(c.key, c.title, c.kind, 0.0, 0.0, c.why_not, c.evidence, applicable=False)
               for c in specs if not c.applicable]
    return ranked


@dataclass(frozen=True)
class _Evidence:
    """What every candidate cause reads: the design, the paths it varies and what the logs say."""

    system: object
    catalog: object
    network: object
    profile: object
    rows: list
    logs: list
    bw_path: str
    lat_path: str
    confirms: float
    contradicts: float

    def bw(self, state: _State) -> float:
        return state.get(self.bw_path, self.profile.effective_bandwidth_gbytes_per_s)

    def host(self, state: _State) -> float:
        return state.get(self.lat_path, self.profile.host_stack_latency_us)

    def param(self, name: str) -> float:
        from fabricplan.perf.params import perf_parameter

        return perf_parameter(name, self.catalog)

    @property
    def debug(self) -> list:
        return [run.debug for log in self.logs for run in log.nccl_runs]


def _nic_speed(ev: _Evidence) -> _CauseSpec:
    """A NIC below speed: the per-NIC bandwidth of a lower link rate (ib_write_bw confirms or contradicts)."""
    design_rate = ev.profile.link_rate_gbps
    lower = [r for r in LOWER_LINK_RATES_GBPS if r < design_rate]
    perftest_bw = [row.bw_average_gbits_per_s for log in ev.logs for run in log.perftest_runs if run.kind == "bw"
                   for row in run.rows if row.bw_average_gbits_per_s]
    pass_fraction = ev.param("measured_pass_fraction")
    weight, evidence = 1.0, ""
    if perftest_bw:
        best_bw = max(perftest_bw)
        if best_bw < pass_fraction * design_rate:
            weight, evidence = ev.confirms, (f"ib_write_bw reaches {best_bw:.0f} Gb/s, below "
                                             f"{pass_fraction:.0%} of the design's {design_rate}G")
        else:
            weight, evidence = ev.contradicts, f"ib_write_bw reaches {best_bw:.0f} Gb/s of {design_rate}G"
    return _CauseSpec(
        "nic_speed", "a NIC below speed (link trained at a lower rate, or a slower NIC than the design's)", "bandwidth",
        lambda st: [(st.with_values(values={ev.bw_path: ev.bw(st) * r / design_rate}), r) for r in lower],
        lambda r, st: f"the curve fits {r}G NICs ({ev.bw(st) * r / design_rate:.1f} GB/s per NIC) instead of {design_rate}G",
        weight, evidence, applicable=bool(lower), why_not="no lower link rate")


def _pcie_numa(ev: _Evidence) -> _CauseSpec:
    """PCIe/NUMA placement: the remote-NIC bandwidth share and latency of perf_defaults."""
    numa_bw = ev.param("numa_remote_nic_bandwidth_fraction")
    numa_lat = ev.param("numa_remote_nic_latency_us")
    return _CauseSpec(
        "pcie_numa", "PCIe/NUMA placement (GPU and NIC not under one PCIe switch: traffic crosses the CPU)", "both",
        lambda st: [(st.with_values(values={ev.bw_path: ev.bw(st) * numa_bw, ev.lat_path: ev.host(st) + numa_lat}),
                     "numa")],
        lambda _l, _st: (f"per-NIC bandwidth x {numa_bw:g} and +{numa_lat:g} us per step (check `nvidia-smi topo -m`: "
                         "GPU-NIC should be PIX/PXB)"))


def _no_gdr(ev: _Evidence) -> _CauseSpec:
    """Missing GPUDirect RDMA (NCCL's channel lines say whether GDRDMA is used)."""
    gdr_bw = ev.param("no_gdr_bandwidth_fraction")
    gdr_lat = ev.param("no_gdr_latency_us")
    gdr_seen = [d.gdr for d in ev.debug if d.gdr is not None]
    weight, evidence = 1.0, ""
    if gdr_seen and all(gdr_seen):
        weight, evidence = ev.contradicts, "channels run via NET/.../GDRDMA (log)"
    elif gdr_seen and not any(gdr_seen):
        weight, evidence = ev.confirms, "channels run via NET/IB without /GDRDMA (log)"
    return _CauseSpec(
        "no_gdr", "missing GPUDirect RDMA (nvidia-peermem not loaded, NCCL_NET_GDR_LEVEL, ACS/IOMMU)", "both",
        lambda st: [(st.with_values(values={ev.bw_path: ev.bw(st) * gdr_bw, ev.lat_path: ev.host(st) + gdr_lat}),
                     "gdr")],
        lambda _l, _st: (f"per-NIC bandwidth x {gdr_bw:g} and +{gdr_lat:g} us per step (look for 'GDRDMA' in "
                         "NCCL_DEBUG=INFO channel lines)"), weight, evidence)


def _sharp(ev: _Evidence) -> _CauseSpec:
    """SHARP not engaged, where the design has in-network reduction (NCCL's collnet channels in the log)."""
    sharp_design = bool(ev.profile.in_network_reduction) and ev.system.collnet
    collnet_seen = [d.collnet for d in ev.debug if d.collnet is not None]
    weight, evidence = 1.0, ""
    if any(collnet_seen):
        weight, evidence = ev.contradicts, "CollNet/SHARP seen in the log"
    elif collnet_seen:
        weight, evidence = ev.confirms, "NCCL built 0 collnet channels (log)"
    return _CauseSpec(
        "sharp", "SHARP (in-network reduction) not engaged (NCCL_COLLNET_ENABLE, the SHARP plugin, aggregation "
                 "managers)", "bandwidth",
        lambda st: [(st.with_values(collnet=False), "off")] if st.collnet else [],
        lambda _l, _st: "the design's all-reduce assumes SHARP/CollNet; the curve is the design's without it",
        weight, evidence, applicable=sharp_design, why_not="the design has no in-network reduction")


def _crossing(ev: _Evidence):
    """(whether the communicator crosses the leaf tier, its placement, why not when it does not)."""
    crosses, placement = False, None
    if ev.network is not None:
        nodes = max((r.nodes for r in ev.rows), default=1)
        try:
            placement = ev.network.placement(nodes)
            crosses = placement.tiers > 1
        except InputError:
            crosses = False
    where = "no spec: where the nodes sit is unknown" if ev.network is None else \
        "the communicator sits under one leaf (no uplink on its path)"
    return crosses, placement, where


def _ecmp(ev: _Evidence) -> _CauseSpec:
    """ECMP hash collisions, only where the communicator crosses the leaf tier."""
    from fabricplan.perf.ecmp import ecmp_efficiency

    crosses, placement, where = _crossing(ev)
    uplinks = max(getattr(placement, "leaf_uplinks", 1) or 1, 2)
    collision = ecmp_efficiency(uplinks, uplinks)
    return _CauseSpec(
        "ecmp", "ECMP hash collisions (flows of one job sharing an uplink)", "bandwidth",
        lambda st: [(st.with_values(values={ev.bw_path: ev.bw(st) * collision}), "ecmp")],
        lambda _l, _st: f"static hashing of {uplinks} flows onto {uplinks} uplinks keeps {collision:.0%} of the bandwidth",
        applicable=ev.profile.routing == "ecmp" and crosses,
        why_not="adaptive routing" if ev.profile.routing != "ecmp" else where)


def _uplink(ev: _Evidence) -> _CauseSpec:
    """A congested uplink (a squeeze of the design's bandwidth), only where the communicator crosses the leaf tier."""
    crosses, _placement, where = _crossing(ev)
    return _CauseSpec(
        "uplink", "a congested uplink (oversubscribed or shared with other jobs)", "bandwidth",
        lambda st: [(st.with_values(values={ev.bw_path: ev.bw(st) / k}), k) for k in UPLINK_SQUEEZES],
        lambda k, _st: f"the curve fits a {k:g}:1 squeeze", applicable=crosses, why_not=where)


def _host_latency(ev: _Evidence) -> _CauseSpec:
    """Host stack latency (continuous); perftest's one-way latency against the design's point-to-point one."""
    weight, evidence = 1.0, ""
    lat_rows = [(row.t_typical_us or row.t_avg_us, row.size_bytes, run.tool) for log in ev.logs
                for run in log.perftest_runs if run.kind == "lat" for row in run.rows
                if (row.t_typical_us or row.t_avg_us)]
    if lat_rows:
        from fabricplan.perf.latency import point_to_point_latency

        measured, size, tool = min(lat_rows, key=lambda r: (r[1], r[0]))
        switch = ev.network.switch.port_to_port_latency_ns if ev.network is not None else 0.0
        designed = point_to_point_latency(ev.profile, switch, 1, size, catalog=ev.catalog).total_us
        if measured * ev.param("measured_latency_pass_fraction") > designed:
            weight, evidence = ev.confirms, f"{tool} {measured:.2f} us one-way, the design's {designed:.2f} us"
        else:
            evidence = (f"{tool} {measured:.2f} us one-way, as designed ({designed:.2f} us): the extra time is above "
                        "the verbs layer (NCCL proxy thread, CPU power states)")
    return _CauseSpec(
        "host_latency", "host-side latency (NIC interrupt moderation, CPU power states, a slow NCCL proxy thread, "
                        "an extra software layer such as a container network)", "latency",
        lambda st: [(st.with_values(values={ev.lat_path: ev.host(st) + d}), d) for d in HOST_LATENCY_EXTRAS_US],
        lambda d, _st: f"the curve fits +{d:g} us per message on the host stack", weight, evidence)


def _hops(ev: _Evidence) -> _CauseSpec:
    """More switch hops than designed: each extra switch's port-to-port latency and a cable's propagation."""
    switch_ns = ev.network.switch.port_to_port_latency_ns if ev.network is not None else 0.0
    cable_ns = ev.param("switch_link_length_m") * ev.param("fibre_propagation_ns_per_m")
    return _CauseSpec(
        "hops", "more switch hops than designed (nodes placed across pods; topology-unaware scheduling)", "latency",
        lambda st: [(st.with_values(values={ev.lat_path: ev.host(st) + n * (switch_ns + cable_ns) / 1000.0}), n)
                    for n in EXTRA_HOPS],
        lambda n, _st: f"+{n} switches (+{n * (switch_ns + cable_ns) / 1000.0:.2f} us per step)",
        applicable=ev.network is not None, why_not="no spec: the design's hop count is unknown")


#: The candidate causes, in their reporting order; a new cause is one function ``_Evidence -> _CauseSpec`` here.
CAUSES = (_nic_speed, _pcie_numa, _no_gdr, _sharp, _ecmp, _uplink, _host_latency, _hops)


def _cause_specs(system, catalog, rows: list[FitRow], logs: list[MeasurementLog]) -> list[_CauseSpec]:
    """The candidate causes of a gap, each a change of the design with its size range and log evidence."""
    from fabricplan.perf.params import perf_parameter

    network = system.network(catalog)
    profile = network.profile if network is not None else system.profile(catalog)
    fid = system.fabric_id
    evidence = _Evidence(system=system, catalog=catalog, network=network, profile=profile, rows=rows, logs=logs,
                         bw_path=f"fabrics.{fid}.effective_bandwidth_gbytes_per_s",
                         lat_path=f"fabrics.{fid}.host_stack_latency_us",
                         confirms=perf_parameter(EVIDENCE_CONFIRMS, catalog),
                         contradicts=perf_parameter(EVIDENCE_CONTRADICTS, catalog))
    return [cause(evidence) for cause in CAUSES]


def check_measured(logs: list[MeasurementLog], catalog, system, *, bandwidth_threshold: float | None = None,
                   latency_threshold: float | None = None) -> CheckResult:
    """Model vs measured for every nccl-tests row of ``logs`` on ``system``'s design."""
    from fabricplan.perf.collectives import bus_bandwidth_factor
    from fabricplan.perf.latency import perf_parameter

    bw_threshold = bandwidth_threshold if bandwidth_threshold is not None else \
        perf_parameter("measured_pass_fraction", catalog)
    lat_threshold = latency_threshold if latency_threshold is not None else \
        perf_parameter("measured_latency_pass_fraction", catalog)
    from fabricplan.measure.fit import _Model

    # The design as specified: the NCCL choice is the model's (the log's forced algorithm is kept).
    model = _Model(system, catalog)
    rows = _prepare(measured_rows(logs), model)
    used = [r for r in rows if r.reason is None]
    if not used:
        reasons = sorted({r.reason for r in rows if r.reason}) or ["the logs hold no nccl-tests rows"]
        raise InputError(f"nothing to check: {reasons[0]}", location=logs[0].file if logs else None)
    points = [CheckPoint(r.where, r.operation, r.n_gpus, r.ranks_per_node, r.size_bytes, r.measured_us,
                         float(r.model_us), r.model_algorithm or "", bus_bandwidth_factor(r.operation, r.n_gpus))
              for r in used]
    groups: dict[tuple[str, int], list[CheckPoint]] = {}
    for p in points:
        groups.setdefault((p.operation, p.n_gpus), []).append(p)
    verdicts = []
    for (op, n), pts in groups.items():
        large = max(pts, key=lambda p: p.size_bytes)
        small = min(pts, key=lambda p: p.size_bytes)
        large_pts = [p for p in pts if p.size_bytes == large.size_bytes]
        small_pts = [p for p in pts if p.size_bytes == small.size_bytes]
        bw_ratio = sum(p.ratio for p in large_pts) / len(large_pts)
        lat_ratio = sum(p.ratio for p in small_pts) / len(small_pts)
        verdicts.append(Verdict(op, n, large.size_bytes, bw_ratio, small.size_bytes, lat_ratio,
                                bw_ratio >= bw_threshold, lat_ratio >= lat_threshold))
    causes = rank_causes(system, catalog, used, logs)
    passed = all(v.bandwidth_ok and v.latency_ok for v in verdicts)
    from fabricplan.perf.params import perf_parameter

    summary = _summary(verdicts, causes, bw_threshold, lat_threshold, perf_parameter(MIN_INCREMENT, catalog))
    return CheckResult(system, tuple(points), tuple(verdicts), tuple(causes), summary, passed, bw_threshold,
                       lat_threshold, tuple(r for r in rows if r.reason is not None))


def _look_at(causes: list[Cause], kinds: tuple[str, ...], min_increment: float) -> str:
    # Causes the logs contradict stay in the table, not in the verdict.
    picked = [c for c in causes if c.applicable and c.explained >= min_increment and c.weight >= 1.0
              and c.kind in kinds][:3]
    if not picked:
        return "no modelled cause explains it"
    first, *rest = picked
    return "; ".join([f"{first.title.split(' (')[0]} ({first.explained:.0%} of the gap)",
                      *(f"then {c.title.split(' (')[0]} (+{c.explained:.0%})" for c in rest)])


def _summary(verdicts: list[Verdict], causes: list[Cause], bw_threshold: float, lat_threshold: float,
             min_increment: float) -> str:
    worst_bw = min(verdicts, key=lambda v: v.bandwidth_ratio)
    worst_lat = min(verdicts, key=lambda v: v.latency_ratio)
    title = OPERATION_TITLES.get(worst_bw.operation, worst_bw.operation)
    if not worst_bw.bandwidth_ok:
        return (f"{title} busbw at {size_text(worst_bw.large_size)} is {worst_bw.bandwidth_ratio:.0%} of what "
                f"this design should give — look at: {_look_at(causes, ('bandwidth', 'both'), min_increment)}")
    if not worst_lat.latency_ok:
        lat_title = OPERATION_TITLES.get(worst_lat.operation, worst_lat.operation)
        return (f"{lat_title} time at {size_text(worst_lat.small_size)} is {1 / worst_lat.latency_ratio:.1f}x what "
                f"this design should give (bandwidth is fine: {worst_bw.bandwidth_ratio:.0%} at "
                f"{size_text(worst_bw.large_size)}) — look at: {_look_at(causes, ('latency', 'both'), min_increment)}")
    return (f"within the design: {title} busbw at {size_text(worst_bw.large_size)} is {worst_bw.bandwidth_ratio:.0%} "
            f"of the model (threshold {bw_threshold:.0%}); small-message time {1 / worst_lat.latency_ratio:.2f}x the "
            f"model (limit {1 / lat_threshold:.2f}x)")
