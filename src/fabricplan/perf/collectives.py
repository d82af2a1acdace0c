"""Collective communication time on a fabric: NCCL's cost model fed from the catalog.

A fabric profile and a GPU become the inputs NCCL's tuner would see (:class:`Communicator`):

* Intra-node: ``nvlink_links x NCCL's per-link NVLink bandwidth`` [GB/s] (A100 12 x 20 = 240,
  H100 18 x 20.6 = 370.8).
* Inter-node: ``k`` NICs per node (``min(nics_per_node, ranks per node)``), each at the fabric's
  effective bandwidth (e.g. NDR 47 GB/s) times the routing efficiency (static ECMP hash collisions
  from :mod:`fabricplan.perf.ecmp`, mostly removed by adaptive routing); ``max(k, 2)`` channels.
  Ring graphs run intra and inter at the same per-channel speed; tree, CollNet and NVLS graphs
  may run intra-node at up to twice the inter speed (NCCL's search rule), which is why 2-node
  Tree/NVLSTree/CollNet can show a busbw above the NIC line rate.
* Achieved time: NCCL's estimate for the chosen algorithm/protocol, redone for the channels and
  threads NCCL launches and plus the store-and-forward of LL/LL128 steps at network hops
  (:func:`fabricplan.perf.nccl_tuner.network_step_delay_us`); NCCL's own estimate, which drives the
  choice, is kept in ``nccl_estimate_us``.
* ``latencyInter``: the fabric's extra point-to-point latency over the InfiniBand profile that
  NCCL's constants were tuned on (0 for InfiniBand, ~0.7 us per switch hop for RoCE, ~9 us for
  kernel TCP).

* Topology (:class:`FabricTopology`, the spec's ``topology`` section): the style sets how many
  nodes share a leaf (rail-optimised: a scalable unit, NIC *i* of each node on rail leaf *i*;
  ToR ``leaf_spine``/``fat_tree``: a rack, all NICs of a node on one leaf) and the realised
  oversubscription of each tier caps the traffic that must cross it (:func:`oversubscription_factor`).

AllReduce, AllGather, ReduceScatter, Broadcast and Reduce use NCCL's tuner
(:mod:`fabricplan.perf.nccl_tuner`); SendRecv is modelled as a 2-rank Broadcast and AllToAll as
parallel point-to-point transfers (each GPU through its own NIC, "Alltoall cannot aggregate the
bandwidth of multiple NICs", sjeaugey, NVIDIA/nccl-tests#267).

Output follows nccl-tests: ``algbw = size / time``, ``busbw = algbw x factor`` with factor
``2(n-1)/n`` (AllReduce), ``(n-1)/n`` (AllGather, ReduceScatter, AllToAll) and 1 otherwise.

References
----------
.. [1] NVIDIA/nccl-tests doc/PERFORMANCE.md (algbw/busbw definitions).
.. [2] NVIDIA/nccl src/graph/tuning.cc, src/graph/topo.h, src/graph/search.cc.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import lru_cache

from fabricplan.errors import InputError
from fabricplan.perf import nccl_tuner
from fabricplan.perf.ecmp import routed_efficiency
from fabricplan.perf.latency import perf_parameter, perf_table, point_to_point_latency
from fabricplan.perf.nccl_tuner import Communicator, Graph

OPERATIONS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "send_recv")
# ECMP traffic pattern of each NCCL graph (and of the p2p AllToAll): see routing_efficiency.
GRAPH_TRAFFIC_PATTERN = {"ring": "ring", "tree": "tree", "nvls": "tree", "collnet": "ring", "p2p": "all_to_all"}


def bus_bandwidth_factor(operation: str, n_ranks: int) -> float:
    """nccl-tests busbw/algbw factor: 2(n-1)/n AllReduce; (n-1)/n AG, RS, AllToAll; else 1."""
    if operation == "all_reduce":
        return 2.0 * (n_ranks - 1) / n_ranks
    if operation in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n_ranks - 1) / n_ranks
    return 1.0


def gpu_compute_capability(gpu) -> int:
    """Compute capability x10 from the catalog field, else from the architecture name
    (``architecture_compute_capability`` in ``nccl_tuner.yaml``)."""
    value = getattr(gpu, "compute_capability", None)
    if value:
        return int(value)
    table = nccl_tuner.architecture_compute_capabilities()
    try:
        return table[gpu.architecture]
    except KeyError:
        raise InputError(f"unknown GPU architecture '{gpu.architecture}'; known: "
                         f"{', '.join(table)} (or set compute_capability)",
                         location="gpu.architecture") from None


def nvlink_gbytes_per_link_bidirectional(compute_capability: int) -> float:
    """Hardware NVLink bandwidth per link, both directions [GB/s] (``perf_defaults.yaml``).

    The entry for the highest listed capability <= ``compute_capability`` (the lowest listed one
    for older GPUs), as NCCL's own per-link table is looked up (src/graph/topo.h).
    """
    table = {int(cc): float(v) for cc, v in perf_table("nvlink_gbytes_per_link_bidirectional").items()}
    eligible = [cc for cc in table if cc <= compute_capability]
    return table[max(eligible)] if eligible else table[min(table)]


def nvlink_bus_bandwidth_gbytes_per_s(gpu) -> float:
    """NCCL's intra-node bus bandwidth per GPU [GB/s]: NVLink links x NCCL's per-link bandwidth."""
    cc = gpu_compute_capability(gpu)
    links = getattr(gpu, "nvlink_links", None)
    if links is None:
        per_link = nvlink_gbytes_per_link_bidirectional(cc)
        links = round(gpu.nvlink_bandwidth_gbytes_per_s / per_link)
    return links * nccl_tuner.nvlink_bw_per_link_gbytes_per_s(cc)


def _intra_node_bandwidth_gbytes_per_s(gpu) -> float:
    """NVLink bus bandwidth [GB/s] for ranks sharing a node; InputError for a GPU without NVLink."""
    nvlink = nvlink_bus_bandwidth_gbytes_per_s(gpu)
    if nvlink <= 0:
        raise InputError(f"GPU '{getattr(gpu, 'id', 'gpu')}' has no NVLink (0 links or 0 GB/s); the collective "
                         "model needs NVLink between GPUs of one node (use 1 GPU per node for PCIe-only GPUs)",
                         location="gpu.nvlink_bandwidth_gbytes_per_s")
    return nvlink


@dataclass(frozen=True)
class FabricTopology:
    """The cluster fabric a communicator runs on: the spec's ``topology`` section and the cluster size.

    ``style``, ``oversubscription`` (down:up per tier: leaf, spine), ``reserved_leaf_ports`` and
    ``tiers`` (None = auto) are what the cost side passes to ``topology.size_fabric`` for
    ``cluster_nodes`` nodes (None = just the communicator's nodes). ``topology_aware_scheduling``:
    jobs are packed onto whole leaf groups in rank order (True, the placement the ECMP model
    assumes) or land on arbitrary leaves (False). The defaults are a non-blocking rail-optimised
    fabric with aligned placement.
    """

    style: str = "rail_optimized"
    oversubscription: tuple[float, ...] = (1.0, 1.0)
    reserved_leaf_ports: int = 0
    tiers: int | None = None
    cluster_nodes: int | None = None
    topology_aware_scheduling: bool = True


@dataclass(frozen=True)
class NetworkPlacement:
    """Where a communicator's nodes sit in the fabric (for ECMP, oversubscription and hop counts).

    ``nodes_per_leaf``: nodes whose NIC of one rail shares a leaf (rail-optimised: the scalable
    unit; ToR: the rack); ``leaf_uplinks``: uplinks per leaf; ``tiers``: switch tiers the job spans
    (1 = one switch). ``nodes_per_pod``: nodes under one pod's spines (0 without a pod tier);
    ``oversubscription``: the fabric's realised down:up ratio per tier with uplinks (leaf, spine, ..;
    empty = non-blocking); ``nics_per_leaf``: NICs of one node on one leaf (1 for rails, all of them
    for a ToR); ``aligned``: the communicator fills whole leaf groups in rank order.
    """

    tiers: int = 1
    nodes_per_leaf: int = 1
    leaf_uplinks: int = 1
    nodes_per_pod: int = 0
    oversubscription: tuple[float, ...] = ()
    nics_per_leaf: int = 1
    aligned: bool = True


def _nodes_per_leaf(size, nics_per_node: int) -> int:
    """Whole nodes under one leaf group: the style's servers per leaf (rail SU, ToR rack), else
    (``fat_tree``, NIC ports filled in order) host ports // NICs per node; at least 1."""
    if size.servers_per_leaf:
        return size.servers_per_leaf
    return max(size.leaf_host_ports_max // nics_per_node, 1)


def _nodes_per_pod(size, nics_per_node: int, nodes_per_leaf: int) -> int:
    """Nodes under one pod's spines of a 3+ tier fabric (0 otherwise): a rail pod holds
    ``leaves_per_pod / rails`` scalable units, a ToR/fat-tree pod ``leaves_per_pod`` leaves."""
    if size.tiers < 3 or not size.leaves_per_pod:
        return 0
    leaf_groups = size.leaves_per_pod // nics_per_node if size.style == "rail_optimized" else size.leaves_per_pod
    return max(leaf_groups, 1) * nodes_per_leaf


@lru_cache(maxsize=1024)
def placement_for(n_nodes: int, nics_per_node: int, radix: int, style: str = "rail_optimized",
                  oversubscription: tuple[float, ...] = (1.0, 1.0), reserved_leaf_ports: int = 0,
                  cluster_nodes: int | None = None, cluster_tiers: int | None = None,
                  aligned: bool = True) -> NetworkPlacement:
    """Place ``n_nodes`` on the smallest fabric of this design that holds them (topology.size_fabric).

    Tiers spanned come from that fabric (the communicator packed in rank order; at least 2 when
    it spans the cluster's ToRs); the leaf group, the leaf's uplinks, the realised oversubscription
    per tier and the pod size from the whole cluster's fabric, sized with the same inputs as the cost side (``cluster_nodes``, ``cluster_tiers``;
    None = the communicator's own fabric). InputError (from size_fabric) for an impossible design.
    """
    from fabricplan.topology import size_fabric

    if n_nodes <= 1:
        return NetworkPlacement(aligned=aligned)
    design = dict(nics_per_node=nics_per_node, radix=radix, style=style,
                  oversubscription=tuple(float(r) for r in oversubscription),
                  reserved_leaf_ports=reserved_leaf_ports)
    size = size_fabric(nodes=n_nodes, **design)
    whole = size
    if (cluster_nodes is not None and cluster_nodes != n_nodes) or cluster_tiers is not None:
        whole = size_fabric(nodes=max(cluster_nodes or n_nodes, n_nodes), tiers=cluster_tiers, **design)
    nics_per_leaf = 1 if style == "rail_optimized" else nics_per_node
    ratios = tuple(float(r) for r in whole.oversubscription_effective)
    per_leaf = _nodes_per_leaf(whole, nics_per_node) if whole.tiers >= 2 else n_nodes
    tiers = size.tiers
    if tiers == 1 and n_nodes > per_leaf:  # fits one switch alone, but spans the cluster's ToRs
        tiers = 2
    if tiers == 1:
        return NetworkPlacement(1, n_nodes, 1, nics_per_leaf=nics_per_leaf, aligned=aligned)
    return NetworkPlacement(tiers, per_leaf, max(whole.leaf_uplinks, 1),
                            nodes_per_pod=_nodes_per_pod(whole, nics_per_node, per_leaf),
                            oversubscription=ratios, nics_per_leaf=nics_per_leaf, aligned=aligned)


def crossing_share(pattern: str, n_nodes: int, block_nodes: int, aligned: bool = True) -> float:
    """Share of the traffic a block's nodes send that leaves the block (a leaf group or a pod) [0-1].

    The same flow counts as the ECMP model (:func:`routing_efficiency`), for a communicator of
    ``n_nodes`` nodes packed in rank order, ``m = block_nodes`` of them per block:

    * ``ring``: one ring hop per channel leaves a block, out of ``m`` hops that start in it: ``1/m``
      (rail-aligned rings stay on their rail leaf inside a scalable unit; under a ToR a ring leaves
      every rack, so ``m`` is only the servers per ToR). CollNet/SHARP counts as ring: the leaf
      reduces its hosts' data and sends one stream up.
    * ``tree``: every node's tree connections are taken to leave the block, ``1`` (as the ECMP
      count; conservative: a rank-ordered binary tree would cross about once per block).
    * ``all_to_all``: the share of remote peers outside the block, ``(n - m) / (n - 1)`` (PXN keeps
      rail-optimised traffic on the destination's rail, so peers in the same SU stay local).

    0 when the communicator fits in one block. Without topology-aware scheduling
    (``aligned=False``) a communicator that spans blocks is taken to have its ring neighbours and
    peers under other leaves: share 1 for every pattern.
    """
    if n_nodes <= block_nodes or block_nodes < 1:
        return 0.0
    if not aligned:
        return 1.0
    if pattern == "ring":
        return 1.0 / block_nodes
    if pattern == "tree":
        return 1.0
    if pattern == "all_to_all":
        return (n_nodes - block_nodes) / (n_nodes - 1)
    raise InputError(f"unknown traffic pattern '{pattern}'; known: ring, tree, all_to_all")


def oversubscription_factor(placement: NetworkPlacement, pattern: str, n_nodes: int) -> float:
    """Share of the per-NIC bandwidth left when the traffic crossing oversubscribed tiers is capped.

    A tier with realised down:up ratio ``r`` (``FabricSize.oversubscription_effective``; r = d/u,
    d host/down ports at the line rate, u uplinks) carries at most ``d x B / r`` up, i.e. 1/r of its
    hosts' bandwidth. If every node under it runs the collective and a share ``s`` of their
    traffic must leave (:func:`crossing_share`), that traffic asks for ``s x d x B``; a synchronous
    collective runs at the pace of its slowest hop, so every rank's inter-node bandwidth scales by

        f = min(1, 1 / (r x s))      per crossed tier (leaf -> spine, spine -> core); the minimum over tiers

    (capacity over demand at a saturated link; fat-tree oversubscription, Al-Fares et al.,
    SIGCOMM 2008 §2.1; Leiserson, IEEE Trans. Comput. 34(10), 1985). ``s = 1`` gives the plain
    ``1/r``; traffic that stays under one leaf (``s = 0``) is unaffected, as is every pattern at
    1:1 (``r <= 1``).
    """
    if placement.tiers <= 1 or not placement.oversubscription:
        return 1.0
    factor = 1.0
    for ratio, block in zip(placement.oversubscription, (placement.nodes_per_leaf, placement.nodes_per_pod)):
        share = crossing_share(pattern, n_nodes, block, placement.aligned) if block else 0.0
        if share > 0 and ratio * share > 1.0:
            factor = min(factor, 1.0 / (ratio * share))
    return factor


def routing_efficiency(fabric, placement: NetworkPlacement, pattern: str, n_nodes: int) -> float:
    """Share of the per-NIC bandwidth left after ECMP collisions and oversubscribed uplinks.

    ``ecmp x oversubscription_factor``. Flows crossing a leaf's uplinks: ring = channels per NIC
    (each ring leaves a leaf group once), tree = every node under the leaf, all_to_all = every node
    to every remote node, each times the NCCL queue pairs per connection and the NICs of one node on
    the leaf (1 for rails, all for a ToR). 1 when the job fits under one leaf.
    """
    if placement.tiers <= 1 or n_nodes <= placement.nodes_per_leaf:
        return 1.0
    per_connection = int(perf_parameter("nccl_ib_qps_per_connection"))
    channels = int(perf_parameter("nccl_channels_per_nic"))
    remote_nodes = max(n_nodes - placement.nodes_per_leaf, 1)
    flows = {"ring": channels, "tree": placement.nodes_per_leaf * channels,
             "all_to_all": placement.nodes_per_leaf * remote_nodes}[pattern] * per_connection
    ecmp = routed_efficiency(flows * max(placement.nics_per_leaf, 1), placement.leaf_uplinks,
                             fabric.routing == "adaptive",
                             perf_parameter("adaptive_routing_residual_collision_fraction"))
    return ecmp * oversubscription_factor(placement, pattern, n_nodes)


def latency_inter_us(fabric, reference_fabric, switch_ns: float, reference_switch_ns: float, switches: int) -> float:
    """Extra one-way latency of ``fabric`` over the reference (InfiniBand) fabric [us], >= 0."""
    mine = point_to_point_latency(fabric, switch_ns, switches).total_us
    reference = point_to_point_latency(reference_fabric, reference_switch_ns, switches).total_us
    return max(mine - reference, 0.0)


def build_communicator(n_ranks: int, ranks_per_node: int, gpu, fabric, *, nics_per_node: int,
                       per_nic_bandwidth_gbytes_per_s: float | None = None,
                       placement: NetworkPlacement | None = None, latency_inter: float = 0.0,
                       cpu_vendor: str = "intel") -> Communicator:
    """NCCL's view (graphs, channels, bandwidths) of ``n_ranks`` GPUs on ``fabric``."""
    if ranks_per_node < 1 or n_ranks < 1 or n_ranks % ranks_per_node:
        raise InputError(f"GPU count ({n_ranks}) must be a positive multiple of GPUs per node ({ranks_per_node})")
    n_nodes = n_ranks // ranks_per_node
    cc = gpu_compute_capability(gpu)
    nvlink = _intra_node_bandwidth_gbytes_per_s(gpu) if ranks_per_node > 1 else 0.0
    placement = placement or NetworkPlacement()
    if n_nodes == 1:
        links = max(round(nvlink / nccl_tuner.nvlink_bw_per_link_gbytes_per_s(cc)), 2)
        graph = Graph(links, nvlink / links, nvlink / links)
        graphs = {"ring": graph, "tree": graph, "nvls": graph, "collnet": graph}
    else:
        nic = per_nic_bandwidth_gbytes_per_s or fabric.effective_bandwidth_gbytes_per_s
        nics = min(nics_per_node, ranks_per_node)
        channels = max(nics, 2)

        def graph_for(pattern: str, intra_multiplier: float) -> Graph:
            inter = nics * nic * routing_efficiency(fabric, placement, pattern, n_nodes) / channels
            if ranks_per_node == 1:
                return Graph(channels, inter, inter)
            if intra_multiplier == 1.0:  # rings run one speed through NVLink and the NIC
                inter = min(inter, nvlink / channels)
            return Graph(channels, min(intra_multiplier * inter, nvlink / channels), inter)

        graphs = {key: graph_for(GRAPH_TRAFFIC_PATTERN[key], 1.0 if key == "ring" else 2.0)
                  for key in ("ring", "tree", "nvls", "collnet")}
    return Communicator(n_ranks=n_ranks, n_nodes=n_nodes, compute_capability=cc, graphs=graphs,
                        cpu_vendor=cpu_vendor, latency_inter_us=latency_inter,
                        collnet_enabled=bool(fabric.in_network_reduction), nvswitch=ranks_per_node >= 4)


@dataclass(frozen=True)
class CollectiveResult:
    """Predicted time of one collective, with nccl-tests algbw/busbw and NCCL's choice."""

    operation: str
    size_bytes: int
    n_gpus: int
    gpus_per_node: int
    n_nodes: int
    fabric: str
    nccl_version: str
    algorithm: str
    protocol: str
    latency_us: float
    time_us: float
    algbw_gbytes_per_s: float
    busbw_gbytes_per_s: float
    per_nic_bandwidth_gbytes_per_s: float
    routing_efficiency: float
    channels: int = 0
    threads: int = 0
    nccl_estimate_us: float = 0.0
    oversubscription_factor: float = 1.0  # part of routing_efficiency due to oversubscribed tiers
    network_step_delay_us: float = 0.0  # store-and-forward of LL/LL128 steps at network hops (in time_us)

    def as_dict(self) -> dict:
        return asdict(self)


def _validate(operation: str, size_bytes: int, n_gpus: int, gpus_per_node: int, nics_per_node: int | None) -> None:
    if operation not in OPERATIONS:
        raise InputError(f"unknown collective '{operation}'; known: {', '.join(OPERATIONS)}", location="op")
    if not isinstance(size_bytes, int) or size_bytes <= 0:
        raise InputError(f"size must be a positive number of bytes, got {size_bytes}", location="size")
    if n_gpus < 2:
        raise InputError(f"a collective needs at least 2 GPUs, got {n_gpus}", location="gpus")
    if gpus_per_node < 1:
        raise InputError(f"GPUs per node must be >= 1, got {gpus_per_node}", location="gpus-per-node")
    if nics_per_node is not None and nics_per_node < 1:
        raise InputError(f"NICs per node must be >= 1, got {nics_per_node}", location="nics-per-node")
    if n_gpus % min(gpus_per_node, n_gpus):
        raise InputError(f"GPU count ({n_gpus}) must be a multiple of GPUs per node ({gpus_per_node})",
                         location="gpus")


@lru_cache(maxsize=1)
def default_catalog():
    """The bundled catalog, loaded once."""
    from fabricplan.catalog import load_catalog

    return load_catalog()


def load_reference_fabric_id(catalog=None) -> str:
    """The fabric NCCL's latency constants are taken to describe (``perf_defaults``;
    ``catalog=None``: the bundled default catalog)."""
    from fabricplan.perf.latency import perf_value

    return str(perf_value("nccl_latency_reference_fabric", catalog))


def fabric_context(fabric, catalog, n_nodes: int, nics_per_node: int, topology: FabricTopology | None = None):
    """(fabric profile, placement, latencyInter [us]) for a fabric id or profile on ``n_nodes`` nodes
    of the ``topology`` (default: non-blocking rail-optimised)."""
    catalog = catalog or default_catalog()
    topology = topology or FabricTopology()
    profile = catalog.fabric(fabric, field="fabric") if isinstance(fabric, str) else fabric
    switch = catalog.switch(profile.hardware.switch)
    radix = switch.radix_at(profile.link_rate_gbps) or max(switch.ports_by_speed_gbps.values())
    placement = placement_for(n_nodes, nics_per_node, radix, topology.style, tuple(topology.oversubscription),
                              topology.reserved_leaf_ports, topology.cluster_nodes, topology.tiers,
                              topology.topology_aware_scheduling)
    reference = catalog.fabric(load_reference_fabric_id())
    reference_switch = catalog.switch(reference.hardware.switch)
    switches = max(2 * placement.tiers - 1, 1)  # up and down through the top tier: 1, 3, 5, 7 switches
    extra = latency_inter_us(profile, reference, switch.port_to_port_latency_ns,
                             reference_switch.port_to_port_latency_ns, switches)
    return profile, placement, extra


def collective_time(operation: str, size_bytes: int, n_gpus: int, gpus_per_node: int, fabric, gpu, *,
                    nics_per_node: int | None = None, algorithm: str | None = None, protocol: str | None = None,
                    nccl_version: str | None = None, cpu_vendor: str = "intel", catalog=None,
                    per_nic_bandwidth_gbytes_per_s: float | None = None,
                    placement: NetworkPlacement | None = None,
                    topology: FabricTopology | None = None) -> CollectiveResult:
    """Time [us], algbw and busbw [GB/s] of one collective, choosing algorithm/protocol like NCCL.

    Parameters
    ----------
    operation : all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce or send_recv.
    size_bytes : nccl-tests "size" [bytes] (total buffer for AllGather/ReduceScatter/AllToAll).
    n_gpus, gpus_per_node : ranks and ranks per node; ``n_gpus`` must be a multiple.
    fabric : a catalog fabric id or FabricProfile (effective per-NIC bandwidth, routing, SHARP).
    gpu : a catalog Gpu (compute capability, NVLink links).
    algorithm, protocol : force one, like ``NCCL_ALGO``/``NCCL_PROTO``; InputError if unavailable.
    nccl_version : tuner constants to use (default: newest bundled).
    topology : the cluster fabric (style, oversubscription, ...; default non-blocking rail-optimised);
        ``placement`` overrides where the communicator sits.
    """
    _validate(operation, size_bytes, n_gpus, gpus_per_node, nics_per_node)
    ranks_per_node = min(gpus_per_node, n_gpus)
    n_nodes = n_gpus // ranks_per_node
    nics_per_node = nics_per_node if nics_per_node is not None else gpus_per_node
    profile, auto_placement, extra = fabric_context(fabric, catalog, n_nodes, nics_per_node, topology)
    placement = placement or auto_placement
    constants = nccl_tuner.tuner_constants(nccl_version)
    nic = per_nic_bandwidth_gbytes_per_s or profile.effective_bandwidth_gbytes_per_s
    build = dict(nics_per_node=nics_per_node, per_nic_bandwidth_gbytes_per_s=nic, placement=placement,
                 latency_inter=extra, cpu_vendor=cpu_vendor)
    if operation in nccl_tuner.TUNED_COLLECTIVES:
        comm = build_communicator(n_gpus, ranks_per_node, gpu, profile, **build)
        choice = nccl_tuner.select_algorithm(constants, comm, operation, size_bytes, algorithm, protocol)
    elif operation == "send_recv":
        pair_per_node = 1 if n_nodes > 1 else 2
        comm = build_communicator(2, pair_per_node, gpu, profile, **build)
        choice = nccl_tuner.select_algorithm(constants, comm, "broadcast", size_bytes, algorithm, protocol)
    else:
        choice = _all_to_all(constants, n_gpus, ranks_per_node, gpu, profile, size_bytes, build, algorithm, protocol)
    time_us = float(choice.achieved_time_us)  # with the launched channels/threads (small messages)
    algbw = size_bytes / (time_us * 1000.0)
    graph_key = nccl_tuner.GRAPH_OF_ALGORITHM.get(choice.algorithm, choice.algorithm)
    pattern = GRAPH_TRAFFIC_PATTERN[graph_key]
    efficiency = float(routing_efficiency(profile, placement, pattern, n_nodes))
    oversubscribed = float(oversubscription_factor(placement, pattern, n_nodes))
    return CollectiveResult(
        operation=operation, size_bytes=size_bytes, n_gpus=n_gpus, gpus_per_node=ranks_per_node, n_nodes=n_nodes,
        fabric=profile.id, nccl_version=constants["version"], algorithm=choice.algorithm, protocol=choice.protocol,
        latency_us=float(choice.latency_us), time_us=time_us, algbw_gbytes_per_s=algbw,
        busbw_gbytes_per_s=algbw * bus_bandwidth_factor(operation, n_gpus),
        per_nic_bandwidth_gbytes_per_s=float(nic),
        routing_efficiency=efficiency, channels=int(choice.channels), threads=int(choice.threads),
        nccl_estimate_us=float(choice.time_us), oversubscription_factor=oversubscribed,
        network_step_delay_us=float(choice.network_step_delay_us))


def _all_to_all(constants, n_gpus, ranks_per_node, gpu, fabric, size_bytes, build, algorithm, protocol):
    """AllToAll as parallel sends: ``t = t_p2p(0) + (n-1) * per_peer + max(remote/B_nic, local/B_nvl)``.

    Each rank sends ``size/n`` to every peer; remote bytes leave through the GPU's own NIC share
    ``k * B_nic * routing / ppn``; local bytes use NVLink.
    """
    if algorithm not in (None, "ring") or protocol not in (None, "simple"):
        raise InputError("all_to_all is a set of point-to-point transfers; it has no algorithm/protocol to force",
                         location="algo")
    n_nodes = n_gpus // ranks_per_node
    pair = build_communicator(2, 1 if n_nodes > 1 else 2, gpu, fabric, **build)
    start = nccl_tuner.select_algorithm(constants, pair, "broadcast", 1).latency_us
    peers_latency = (n_gpus - 1) * perf_parameter("alltoall_per_peer_latency_us")
    remote = size_bytes * (n_gpus - ranks_per_node) / n_gpus
    local = size_bytes * (ranks_per_node - 1) / n_gpus
    nics = min(build["nics_per_node"], ranks_per_node)
    efficiency = routing_efficiency(fabric, build["placement"], "all_to_all", n_nodes)
    nic_share = nics * build["per_nic_bandwidth_gbytes_per_s"] * efficiency / ranks_per_node
    transfer = max(remote / (nic_share * 1000.0) if remote else 0.0,
                   local / (_intra_node_bandwidth_gbytes_per_s(gpu) * 1000.0) if local else 0.0)
    latency = start + peers_latency
    bandwidth = size_bytes / (transfer * 1000.0) if transfer else math.inf
    return nccl_tuner.AlgorithmChoice("p2p", "simple", latency, bandwidth, latency + transfer)


def parse_size(text: str) -> int:
    """'8GiB', '16MiB', '512KB', '8B' or '1024' -> bytes (KiB/MiB/GiB = 2^10.., KB/MB/GB = 10^3..)."""
    units = {"b": 1, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "k": 2**10, "m": 2**20, "g": 2**30,
             "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}
    cleaned = text.strip().lower().replace(" ", "")
    number = cleaned.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = cleaned[len(number):] or "b"
    try:
        value = float(number)
    except ValueError:
        raise InputError(f"cannot read size '{text}'; use e.g. 8B, 64KiB, 16MiB, 8GiB", location="size") from None
    if unit not in units:
        raise InputError(f"unknown size unit '{unit}' in '{text}'; use B, KiB, MiB, GiB (or KB, MB, GB)",
                         location="size")
    size = int(round(value * units[unit]))
    if size <= 0:
        raise InputError(f"size must be positive, got '{text}'", location="size")
    return size


def sweep_sizes(start_bytes: int, stop_bytes: int, factor: int = 2) -> list[int]:
    """Sizes start, start*factor, ... <= stop, like nccl-tests ``-b -e -f``."""
    if start_bytes <= 0 or stop_bytes < start_bytes or factor < 2:
        raise InputError(f"need 0 < start <= stop and factor >= 2, got {start_bytes}:{stop_bytes} x{factor}",
                         location="sweep-sizes")
    sizes, size = [], start_bytes
    while size <= stop_bytes:
        sizes.append(size)
        size *= factor
    return sizes
