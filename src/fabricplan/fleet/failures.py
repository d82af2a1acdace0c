"""Failures in the fleet: what one failed part does to the jobs running on the design.

A synchronous training job stops when a part it depends on fails (NCCL has no NIC fail-over: the
communicator errors and the job restarts from its checkpoint). Which parts a job depends on is
the design's, so the **blast radius** differs by design and by placement:

* a **NIC** or its **host link** (cable and optics): the job on that node stops;
* a **leaf**: every node with a NIC on it loses that NIC: a rail-optimised leaf holds one rail of
  a whole scalable unit, a ToR leaf every NIC of its rack; the jobs on those nodes stop;
* a **spine** or **core** switch, or a **fabric link** between switches: no host loses its only
  uplink, so no job stops; traffic is rerouted around it (InfiniBand: SHIELD's local fast link
  fault recovery, or with it off the subnet manager's sweep and new forwarding tables; Ethernet: BGP withdrawal with BFD, ECMP over the links left) and the
  jobs crossing that tier run in **degraded mode**, on fewer uplinks, until the part is repaired.
  A job stalls for the reroute and survives it when the reroute is shorter than NCCL's transport
  timeout (``4.096 us x 2^NCCL_IB_TIMEOUT`` per try, ``NCCL_IB_RETRY_CNT`` retries: NCCL's
  environment documentation), else it stops too.

:func:`failure_effects` fails the parts of each class one at a time on the running jobs of one
instant: every part of a class that only stops jobs (NIC, host link, leaf: the jobs on the nodes
that lose connectivity, averaged over all such parts), and a few seeded draws of each rerouted
class (the degraded paces from the flow-level simulation of the network without the failed part,
:func:`without`). Rates are the catalog's
``failure_rate_<class>_per_million_hours`` times the fabric's ``network_failure_multiplier``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fabricplan.sim.maxmin import RELATIVE_TOLERANCE
from fabricplan.sim.network import HOST, Network

HOURS_PER_MONTH = 8760.0 / 12  # a mean month: 365 days x 24 h / 12

#: failure class -> (catalog rate parameter, what it hits)
CLASSES = {
    "nic": ("failure_rate_nic_per_million_hours", "host"),
    "host_link": ("failure_rate_link_per_million_hours", "host"),
    "leaf": ("failure_rate_switch_per_million_hours", "switch"),
    "spine": ("failure_rate_switch_per_million_hours", "switch"),
    "core": ("failure_rate_switch_per_million_hours", "switch"),
    "fabric_link": ("failure_rate_link_per_million_hours", "cable"),
}
_TIER_OF_CLASS = {"leaf": 1, "spine": 2, "core": 3}


@dataclass(frozen=True)
class FailureEffect:
    """One failure class on one design at one instant (means over the draws)."""

    component: str
    count: int
    failures_per_month: float
    jobs_stopped: float
    gpus_stopped: float
    jobs_slowed: float
    pace_degraded: float
    reroute_s: float
    survives_reroute: bool
    repair_hours: float
    stopped_gpu_hours_per_month: float
    degraded_bandwidth_gpu_hours_per_month: float


def without(network: Network, *, switches=(), cables=()) -> Network:
    """``network`` with every link of the failed ``switches`` and both directions of the failed
    ``cables`` (link ids) removed; node ids unchanged."""
    switches = np.asarray(switches, dtype=np.int64)
    cables = np.asarray(cables, dtype=np.int64)
    keep = ~(np.isin(network.link_src, switches) | np.isin(network.link_dst, switches))
    if len(cables):
        reverse = network.reverse_links()
        keep[cables] = False
        keep[reverse[cables][reverse[cables] >= 0]] = False
    return Network(link_src=network.link_src[keep], link_dst=network.link_dst[keep],
                   capacity_gbps=network.capacity_gbps[keep], latency_us=network.latency_us[keep],
                   buffer_bytes=network.buffer_bytes[keep], node_kind=network.node_kind,
                   node_tier=network.node_tier, n_hosts=network.n_hosts)


def component_units(network: Network, component: str) -> np.ndarray:
    """The units of a failure class: host ids (NIC, host link), switch ids (leaf, spine, core) or
    one link id per cable between switches (its upward direction)."""
    tier = network.node_tier
    if component in ("nic", "host_link"):
        return np.arange(network.n_hosts)
    if component in _TIER_OF_CLASS:
        return np.flatnonzero((network.node_kind != HOST) & (tier == _TIER_OF_CLASS[component]))
    if component == "fabric_link":
        src, dst = network.link_src, network.link_dst
        return np.flatnonzero((network.node_kind[src] != HOST) & (network.node_kind[dst] != HOST) & (tier[dst] > tier[src]))
    raise ValueError(f"unknown failure class {component!r}")


def stranded_hosts(network: Network, component: str, unit: int) -> np.ndarray:
    """Hosts that lose every uplink when ``unit`` of ``component`` fails."""
    if component in ("nic", "host_link"):
        return np.array([unit], dtype=np.int64)
    if component == "leaf":
        src, dst = network.link_src, network.link_dst
        attached = np.unique(src[(dst == unit) & (network.node_kind[src] == HOST)])
        up_count = np.bincount(src[network.node_kind[src] == HOST], minlength=network.n_hosts)
        on_leaf = np.bincount(attached, minlength=network.n_hosts)
        return attached[up_count[attached] <= on_leaf[attached]]
    return np.zeros(0, dtype=np.int64)


def failure_mode(component: str, planes: int) -> str:
    """What a failed part of class ``component`` does to the jobs on it: ``stop`` (a NIC; on one plane
    a leaf or host link too: a host loses its only uplink on that rail), ``slow`` (a multi-plane leaf or
    host link: the NIC keeps its other planes, :func:`plane_port_pace`) or ``reroute`` (a spine, core or
    inter-switch link: traffic goes around it, and the jobs it carried stop only when the reroute
    outlasts NCCL's transport timeout). The one rule the fleet (:func:`failure_effects`) and compare's
    goodput (:func:`parts_that_stop`, :func:`parts_that_slow`) read."""
    if component == "nic":
        return "stop"
    if component in ("leaf", "host_link"):
        return "slow" if planes > 1 else "stop"
    return "reroute"


def _design_parts(size) -> dict[str, tuple[str, int]]:
    """Failure class -> (goodput class, count) of a sized design (all planes together)."""
    return {"nic": ("nic", size.endpoints if size.tiers > 0 else 0), "host_link": ("link", size.host_links),
            "leaf": ("switch", size.leaf_switches), "upper": ("switch", size.total_switches - size.leaf_switches),
            "fabric_link": ("link", size.total_links - size.host_links)}


def _parts_by_mode(size, modes: set[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for component, (kind, count) in _design_parts(size).items():
        if failure_mode("spine" if component == "upper" else component, size.planes) in modes:
            out[kind] = out.get(kind, 0) + count
    return out


def parts_that_stop(size, survives_reroute: bool) -> dict[str, int]:
    """The parts of a sized design whose failure stops the job on them, by goodput class (``nic``,
    ``switch``, ``link``; :func:`failure_mode`): the ``stop`` parts, and the ``reroute`` ones when the
    fabric's reroute does not beat NCCL's transport timeout."""
    stops = _parts_by_mode(size, {"stop"} if survives_reroute else {"stop", "reroute"})
    return {kind: stops.get(kind, 0) for kind in ("nic", "switch", "link")}


def parts_that_slow(size) -> dict[str, int]:
    """The parts whose failure slows the job instead of stopping it (:func:`failure_mode` ``slow``)."""
    return _parts_by_mode(size, {"slow"})


def reroute_survives(catalog, profile) -> bool:
    """The fabric's reroute of a switch or inter-switch link (``fleet_reroute_seconds_<family>``) is
    shorter than NCCL's transport timeout, so the jobs it carried stall and run on."""
    settings = _settings(catalog, profile)
    return settings["reroute_s"] < settings["timeout_s"]


def nccl_transport_timeout_s(unit_us, timeout_exponent, retries):
    """How long NCCL's InfiniBand/RoCE transport waits before it errors [s]:
    ``unit x 2^timeout x (retries + 1)`` (NCCL_IB_TIMEOUT, NCCL_IB_RETRY_CNT; the IBTA local ACK
    timeout unit, 4.096 us)."""
    return np.asarray(unit_us, dtype=float) * 2.0 ** np.asarray(timeout_exponent, dtype=float) * (
        np.asarray(retries, dtype=float) + 1.0) / 1e6


def failures_per_month(count, rate_per_million_hours, multiplier):
    """Expected failures of ``count`` parts in a month: ``count x rate / 10^6 x multiplier x 730 h``."""
    return np.asarray(count, dtype=float) * rate_per_million_hours / 1e6 * multiplier * HOURS_PER_MONTH


def _settings(catalog, profile) -> dict:
    value = catalog.perf_value
    family = profile.family
    return {"draws": int(value("fleet_failure_draws")),
            "reroute_s": float(value(f"fleet_reroute_seconds_{family}")),
            "timeout_s": float(nccl_transport_timeout_s(value("ib_local_ack_timeout_unit_us"),
                                                        value("nccl_ib_timeout"), value("nccl_ib_retry_cnt"))),
            "repair": {"host": float(value("fleet_repair_hours_link")), "cable": float(value("fleet_repair_hours_link")),
                       "switch": float(value("fleet_repair_hours_switch"))},
            "restart_h": float(catalog.parameter("restart_minutes").value.default) / 60.0,
            "multiplier": float(profile.costs.network_failure_multiplier.default) if profile.costs else 1.0}


def plane_port_pace(planes):
    """Pace of a NIC that lost its port on one of ``planes`` planes: ``(P - 1) / P`` of its bandwidth
    (its traffic fails over to the ports left: Alibaba HPN, SIGCOMM 2024, dual-ToR: one ToR or link
    failure leaves the host on the other plane, and the job runs on)."""
    planes = np.asarray(planes, dtype=float)
    return (planes - 1.0) / planes


def failure_effects(network: Network, running: list, node_gpus: int, nics_per_node: int, catalog, profile,
                    simulate, *, seed: int = 0, planes: int = 1) -> tuple[FailureEffect, ...]:
    """Effects of each failure class on the ``running`` jobs (``(instance, kind, nodes)`` triples)
    at one instant. ``simulate(network, jobs) -> paces`` runs the jobs on a network (the fleet's
    interference step, :class:`~fabricplan.fleet.interference.Paces`), so degraded paces come from the
    same model as the intact ones; a reroute slower than NCCL's transport timeout stops the jobs whose
    traffic crossed the failed part.

    A multi-plane design (``planes`` P > 1; ``network`` is one of its identical planes) has P times each
    class's parts. A leaf or host link takes one port of each NIC on it, which keeps its other planes:
    its jobs are slowed to :func:`plane_port_pace`, not stopped; a NIC still stops its job. A spine,
    core or fabric link is rerouted within its plane; each NIC's flows are split evenly over its planes
    (HPN pins a flow to one port), so a job runs at the pace of its slowest plane: the degraded pace of
    that plane, as simulated."""
    settings = _settings(catalog, profile)
    rng = np.random.default_rng(seed)
    node_job = np.full(network.n_hosts // max(nics_per_node, 1), -1, dtype=np.int64)
    for j, (_, _, nodes) in enumerate(running):
        node_job[nodes] = j
    intact = simulate(network, running) if running else None
    base = intact.shared if intact is not None else np.zeros(0)
    gpus = np.array([len(nodes) * node_gpus for _, _, nodes in running], dtype=float)
    out = []
    for component, (rate_name, hits) in CLASSES.items():
        units = component_units(network, component)
        if not len(units):
            continue
        rate = float(catalog.parameter(rate_name).value.default)
        # parts that only stop jobs are all counted (no simulation needed); rerouted ones are drawn
        mode = failure_mode(component, planes)
        stops_only = mode != "reroute" or not running
        port_only = mode == "slow"  # the NIC keeps its other planes
        draws = units if stops_only else rng.choice(units, size=min(settings["draws"], len(units)), replace=False)
        stopped, stopped_gpus, slowed, paces = [], [], [], []
        for unit in draws:
            hosts = stranded_hosts(network, component, int(unit))
            jobs = np.unique(node_job[hosts // nics_per_node])
            jobs = jobs[jobs >= 0]
            if port_only:
                stopped.append(0)
                stopped_gpus.append(0.0)
                slowed.append(len(jobs))
                share = float(gpus[jobs].sum() / gpus.sum()) if len(jobs) and gpus.sum() else 0.0
                paces.append(1.0 - share * (1.0 - float(plane_port_pace(planes))))
                continue
            stopped.append(len(jobs))
            stopped_gpus.append(float(gpus[jobs].sum()) if len(jobs) else 0.0)
            if stops_only:
                slowed.append(0)
                paces.append(1.0)
                continue
            degraded = without(network, switches=[unit] if hits == "switch" else [],
                               cables=[unit] if hits == "cable" else [])
            after = simulate(degraded, running).shared
            if settings["reroute_s"] >= settings["timeout_s"]:  # the jobs it carried time out before the reroute
                failed_links = np.flatnonzero(np.isin(network.link_src, [unit]) | np.isin(network.link_dst, [unit])) \
                    if hits == "switch" else np.array([unit, network.reverse_links()[unit]])
                carried = np.setdiff1d(intact.jobs_crossing(failed_links), jobs)
                stopped[-1] += len(carried)
                stopped_gpus[-1] += float(gpus[carried].sum())
            # a failure is never taken to help: after it, plain ECMP re-hashes every flow and can place
            # some better by chance; resilient hashing keeps the flows that did not cross the failed part
            relative = np.minimum(np.where(base > 0, after / np.where(base > 0, base, 1.0), 1.0), 1.0)
            hit = relative < 1.0 - RELATIVE_TOLERANCE
            slowed.append(int(hit.sum()))
            paces.append(float((gpus * relative).sum() / gpus.sum()) if gpus.sum() else 1.0)
        copies = 1 if component == "nic" else planes  # a NIC has a port on every plane; other parts are per plane
        per_month = float(failures_per_month(len(units) * copies, rate, settings["multiplier"]))
        repair = settings["repair"][hits]
        rerouted = mode == "reroute"
        survives = (not rerouted) or settings["reroute_s"] < settings["timeout_s"]
        stops = float(np.mean(stopped_gpus))
        degraded_share = 1.0 - float(np.mean(paces))
        out.append(FailureEffect(
            component=component, count=int(len(units)) * copies, failures_per_month=per_month,
            jobs_stopped=float(np.mean(stopped)), gpus_stopped=stops, jobs_slowed=float(np.mean(slowed)),
            pace_degraded=float(np.mean(paces)), reroute_s=settings["reroute_s"] if rerouted else 0.0,
            survives_reroute=bool(survives), repair_hours=repair,
            stopped_gpu_hours_per_month=per_month * stops * settings["restart_h"],
            degraded_bandwidth_gpu_hours_per_month=per_month * repair * float(gpus.sum()) * degraded_share))
    return tuple(out)
