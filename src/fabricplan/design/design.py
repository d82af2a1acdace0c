"""One fabric design: the one place where a fabric choice becomes hardware, a sized topology and
the placement of each job's ranks.

``resolve(spec, catalog, fabric) -> FabricDesign``. Cost prices a design (:mod:`fabricplan.cost`),
perf reads its :class:`NetworkView` (:mod:`fabricplan.perf`) and never sizes a fabric again, and
decide computes no physics. Sizing is memoised on the design's inputs (cluster nodes, NICs per
node, radix, style, tiers, oversubscription, reserved ports): a ``compare`` that evaluates the same
design for many price or maturity cases sizes it once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from fabricplan import topology
from fabricplan.catalog import Catalog, FabricProfile, Gpu, Switch
from fabricplan.design.hardware import FabricHardware, built_options, effective_profile, resolve_hardware
from fabricplan.design.placement import FabricTopology, NetworkPlacement, place, switches_across
from fabricplan.errors import InputError
from fabricplan.spec import ClusterSpec, FabricChoice
from fabricplan.spec.models import GpuInline
from fabricplan.topology import FabricSize

GpuLike = Gpu | GpuInline

#: Where a sizing error's argument comes from in the spec.
SIZING_FIELDS = {"nodes": "cluster.gpus", "nics_per_node": "cluster.nics_per_node", "tiers": "topology.tiers",
                 "nics_per_host": "cluster.nics_per_node",
                 "oversubscription": "topology.oversubscription", "style": "topology.style",
                 "reserved_leaf_ports": "topology.reserved_leaf_ports", "radix": "fabrics",
                 "planes": "topology.planes"}


@lru_cache(maxsize=4096)
def _sized_or_error(nodes: int, nics_per_node: int, radix: int, style: str, tiers: int | None,
                    oversubscription: tuple[float, ...], reserved_leaf_ports: int, nics_per_host: int,
                    planes: int = 1) -> FabricSize | InputError:
    """``topology.size_fabric`` once per distinct design (FabricSize is immutable, so it is shared); a
    design that does not fit is remembered as its error (the design search asks about it again)."""
    try:
        return topology.size_fabric(nodes=nodes, nics_per_node=nics_per_node, radix=radix, style=style, tiers=tiers,
                                    oversubscription=oversubscription, reserved_leaf_ports=reserved_leaf_ports,
                                    nics_per_host=nics_per_host, planes=planes)
    except InputError as exc:
        return exc


def _sized(*args) -> FabricSize:
    """:func:`_sized_or_error`, raising a fresh copy of a remembered error."""
    result = _sized_or_error(*args)
    if isinstance(result, InputError):
        raise InputError(result.message, location=result.location)
    return result


def size_design(nodes: int, nics_per_node: int, radix: int, layout: FabricTopology,
                nics_per_host: int | None = None) -> FabricSize:
    """Size ``nodes`` nodes on radix-``radix`` switches as ``layout`` asks (memoised).

    A node is one NCCL node: on a multi-host NVLink domain (GB200 NVL72) the whole domain, with
    ``nics_per_node`` its hosts' NICs together (72) and ``nics_per_host`` one host's (4; default: the
    node is one host). Rail-optimised and fat-tree sizing count the domain's NICs as rails / ports;
    a ToR (``leaf_spine``) holds whole hosts, so each host of a domain takes its own ToR ports.
    """
    return _sized(nodes, nics_per_node, radix, layout.style, layout.tiers, tuple(layout.oversubscription),
                  layout.reserved_leaf_ports, nics_per_host or nics_per_node,
                  layout.planes)


def clear_cache() -> None:
    """Forget memoised sizings (tests that count sizing calls start from here)."""
    _sized_or_error.cache_clear()


@dataclass(frozen=True)
class NetworkView:
    """What the performance models read of a design: the GPU and node shape, the fabric profile as
    built (hardware overrides and port speed applied), its switch, and the sized fabric.

    ``placement(n_nodes)`` places a communicator of ``n_nodes`` nodes in the whole fabric
    (:func:`fabricplan.design.placement.place`), cached per view.
    """

    profile: FabricProfile
    switch: Switch
    gpu: GpuLike
    gpus: int
    gpus_per_node: int
    scale_up_domain: int
    nics_per_node: int
    size: FabricSize
    layout: FabricTopology
    #: GPUs per host when one NCCL node is a multi-host NVLink domain (``gpus_per_node`` and
    #: ``nics_per_node`` are then the domain's: 72 GPUs and 72 NICs on a GB200 NVL72 rack); None = one host.
    gpus_per_host: int | None = None
    #: What-if scale of the socket transport's modelled per-NIC bandwidth (the decision's bandwidth
    #: lever, ``fabricplan.plan.Levers.bandwidth_multiplier``; an RDMA profile's lever is its own
    #: ``effective_bandwidth_gbytes_per_s``): 1 = as modelled.
    socket_bandwidth_scale: float = 1.0

    @property
    def nodes(self) -> int:
        return max(self.gpus // max(self.gpus_per_node, 1), 1)

    def placement(self, n_nodes: int) -> NetworkPlacement:
        """Where ``n_nodes`` nodes of one communicator sit (rank-order packing; topology-aware
        scheduling from the spec)."""
        if n_nodes > max(self.size.nodes, 1) and n_nodes > 1:
            raise InputError(f"a communicator of {n_nodes} nodes does not fit this {self.size.nodes}-node "
                             "fabric", location="gpus")
        return place(n_nodes, self.size, aligned=self.layout.topology_aware_scheduling)

    def with_gpu(self, gpu: GpuLike) -> NetworkView:
        """The same network with another GPU (e.g. a what-if efficiency)."""
        return replace(self, gpu=gpu)


@dataclass(frozen=True)
class FabricDesign:
    """One fabric for one spec: hardware, sized topology, network view and job placements."""

    fabric: str
    choice: FabricChoice
    hardware: FabricHardware
    size: FabricSize
    network: NetworkView
    job_placements: dict[str, NetworkPlacement]

    @property
    def switches_across(self) -> int:
        """Switches on the longest shortest path of the whole fabric (1, 3, 5, 7 for 1-4 tiers)."""
        return switches_across(self.size.tiers)


def layout_of(spec: ClusterSpec) -> FabricTopology:
    """The spec's ``topology`` section and scheduling as one value object."""
    topo = spec.topology
    return FabricTopology(style=topo.style, oversubscription=tuple(topo.oversubscription),
                          reserved_leaf_ports=topo.reserved_leaf_ports,
                          tiers=None if topo.tiers == "auto" else int(topo.tiers),
                          cluster_nodes=spec.cluster.domains,
                          topology_aware_scheduling=spec.operations.topology_aware_scheduling,
                          planes=topo.plane_count)


def cluster_gpu(spec: ClusterSpec, catalog: Catalog) -> GpuLike:
    """The cluster's GPU: a catalog entry or the spec's inline description."""
    gpu = spec.cluster.gpu
    return catalog.gpu(gpu, field="cluster.gpu") if isinstance(gpu, str) else gpu


def _growth_layout(spec: ClusterSpec, radix: int, layout: FabricTopology) -> tuple[FabricTopology, str]:
    """With ``cluster.grow_to_gpus``: the tier count of the target size (unless the spec fixes
    ``topology.tiers``), so the first phase is built with the tiers the grown fabric needs and
    growing adds leaves and upper-tier switches without inserting a tier (``topology.tiers_needed``)."""
    cluster = spec.cluster
    grow = cluster.grow_to_gpus
    if grow is None or grow <= cluster.gpus:
        return layout, ""
    target_nodes = grow // cluster.domain_gpus
    tiers = topology.tiers_needed(nodes=target_nodes, nics_per_node=cluster.domain_nics, radix=radix,
                                  style=layout.style, oversubscription=tuple(layout.oversubscription),
                                  reserved_leaf_ports=layout.reserved_leaf_ports, nics_per_host=cluster.nics_per_node)
    now = layout.tiers
    if now is None:
        layout = replace(layout, tiers=max(tiers, 1))
    return layout, (f"planned growth to {grow:,} GPUs ({target_nodes:,} nodes) needs {tiers} tier(s) at radix "
                    f"{radix}: the first phase of {cluster.gpus:,} GPUs is built and costed with "
                    f"{layout.tiers} tier(s)")


def _check_server_domain(spec: ClusterSpec, catalog: Catalog) -> None:
    """A named server that is a multi-host NVLink domain (GB200 NVL72) needs the spec to say so."""
    cluster = spec.cluster
    if cluster.server is None:
        return
    server = catalog.server(cluster.server, field="cluster.server")
    host = server.gpus_per_host or server.gpus_per_server
    domain = server.nvlink_domain_gpus or server.gpus_per_server
    if domain > host and (cluster.domain_gpus != domain or cluster.gpus_per_node != host):
        raise InputError(f"server '{server.id}' is an NVLink domain of {domain} GPUs on {host}-GPU hosts; set "
                         f"gpus_per_node: {host}, nics_per_node: {server.included_nics * host // domain or 1} and "
                         f"nvlink_domain_gpus: {domain} (got gpus_per_node {cluster.gpus_per_node}, NVLink domain "
                         f"{cluster.domain_gpus})", location="cluster.nvlink_domain_gpus")


def resolve(spec: ClusterSpec, catalog: Catalog, fabric: str | FabricChoice) -> FabricDesign:
    """Turn one fabric choice of ``spec`` into hardware, a sized topology and placements.

    ``fabric`` is a profile id (plain profile, as a spec's ``fabrics`` list names it) or a
    :class:`FabricChoice` with hardware overrides. InputError/CatalogError for unknown parts, parts
    of the wrong family, a switch without the port speed, or a topology that cannot hold the cluster.
    """
    choice = FabricChoice(profile=fabric) if isinstance(fabric, str) else fabric
    _check_server_domain(spec, catalog)
    hardware = resolve_hardware(spec, catalog, choice)
    layout = layout_of(spec)
    cluster = spec.cluster
    try:
        layout, growth_note = _growth_layout(spec, hardware.radix, layout)
        size = size_design(cluster.domains, cluster.domain_nics, hardware.radix, layout, cluster.nics_per_node)
        if growth_note:
            size = replace(size, notes=size.notes + (growth_note,))
    except InputError as exc:  # the sizing's argument names -> the spec's field paths
        base, bracket, index = (exc.location or "").partition("[")
        field = SIZING_FIELDS[base] + bracket + index if base in SIZING_FIELDS else exc.location
        raise InputError(exc.message, location=field) from None
    if hardware.owned_switches and size.total_switches > hardware.owned_switches:
        raise InputError(
            f"the estate's {hardware.owned_switches} owned {hardware.switch.id} ({hardware.radix} free "
            f"{hardware.port_speed_gbps}G ports each) cannot carry this design: it needs {size.total_switches} "
            f"switches ({', '.join(f'{n} {t}' for t, n in size.switches_by_tier.items() if n)}); add switches to "
            "the estate or let the search build a new backend", location=f"estate.switches[{choice.reuse_estate}]")
    profile = effective_profile(catalog, choice, hardware.nic_speed_gbps)
    network = NetworkView(profile=profile, switch=hardware.switch, gpu=cluster_gpu(spec, catalog),
                          gpus=cluster.gpus, gpus_per_node=cluster.domain_gpus,
                          scale_up_domain=cluster.scale_up_gpus, nics_per_node=cluster.domain_nics,
                          size=size, layout=layout,
                          gpus_per_host=cluster.gpus_per_node if cluster.domain_gpus > cluster.gpus_per_node else None)
    placements = {}
    for job in spec.jobs:
        job_nodes = max((job.gpus or cluster.gpus) // cluster.domain_gpus, 1)
        placements[job.name] = network.placement(min(job_nodes, cluster.domains))
    return FabricDesign(fabric=profile.id, choice=choice, hardware=hardware, size=size, network=network,
                        job_placements=placements)


def bare_network(catalog: Catalog, fabric: str | FabricProfile, gpu: GpuLike, *, gpus: int, gpus_per_node: int,
                 nics_per_node: int, scale_up_domain: int | None = None,
                 layout: FabricTopology | None = None, radix: int | None = None,
                 gpus_per_host: int | None = None) -> NetworkView:
    """A network view without a spec (the ``collective`` command, notebooks): ``gpus`` GPUs on
    ``fabric`` (a profile id or a profile as built) with its default switch at the profile's link
    rate, sized as ``layout`` asks (default: non-blocking rail-optimised, aligned placement) for
    ``layout.cluster_nodes`` nodes (default: just these GPUs' nodes). The same radix and sizing
    rules as :func:`resolve`, so a switch without ports at the link rate is an InputError here too,
    unless the caller states the ``radix`` of a hypothetical switch at that rate.
    """
    if isinstance(fabric, str):  # a catalog id: the fabric as installed (its options' defaults)
        profile = catalog.fabric(fabric, field="fabric")
        profile = profile.model_copy(update=built_options(profile)) if built_options(profile) else profile
    else:
        profile = fabric
    layout = layout or FabricTopology()
    switch = catalog.switch(profile.hardware.switch, field=f"fabrics[{profile.id}].switch")
    radix = radix or switch.radix_at(profile.link_rate_gbps)
    if radix is None:
        speeds = ", ".join(f"{s}G" for s in sorted(switch.ports_by_speed_gbps))
        raise InputError(f"switch '{switch.id}' has no {profile.link_rate_gbps}G ports (it offers {speeds})",
                         location=f"fabrics[{profile.id}].switch")
    nodes = max(gpus // max(gpus_per_node, 1), 1)
    cluster_nodes = max(layout.cluster_nodes or nodes, nodes)
    hosts = gpus_per_node // gpus_per_host if gpus_per_host and gpus_per_node % gpus_per_host == 0 else 1
    size = size_design(cluster_nodes, nics_per_node, radix, layout,
                       nics_per_node // hosts if nics_per_node % hosts == 0 else None)
    return NetworkView(profile=profile, switch=switch, gpu=gpu, gpus=cluster_nodes * gpus_per_node,
                       gpus_per_node=gpus_per_node, scale_up_domain=scale_up_domain or gpus_per_node,
                       nics_per_node=nics_per_node, size=size, layout=layout,
                       gpus_per_host=gpus_per_host if gpus_per_host and gpus_per_host < gpus_per_node else None)
