"""NCCL's own cost model: per algorithm and protocol a latency and a bandwidth, and the choice.

NCCL predicts the time of a collective as ``time_us = lat + nBytes / (1000 * bw)`` where ``lat``
[us] and ``bw`` [GB/s, algorithm bandwidth] depend on the collective, the algorithm (Ring, Tree,
CollNet, NVLS, NVLSTree, PAT), the protocol (LL, LL128, Simple), the node count and the topology
graph NCCL searched (channels and per-channel bandwidths). It then picks the fastest enabled
(algorithm, protocol). This module re-implements that model for several NCCL releases with the
constants of the catalog's ``nccl_tuner`` section (``catalog/data/nccl_tuner.yaml`` plus overlays;
the loaders take the ``catalog``, always passed). It does not know about fabrics (see
:mod:`fabricplan.perf.collectives` for how a fabric profile becomes a :class:`Communicator`).

Only one operation per launch is modelled (``numPipeOps = 1``, so ``latCount = 1``), and NCCL's
Reduce/Broadcast rings are assumed to use the same channels (``sameChannels``).

References
----------
.. [1] NVIDIA/nccl ``src/graph/tuning.cc`` (``ncclTopoTuneModel``, ``ncclTopoGetAlgoTime``),
   tags v2.7.5-1, v2.17.1-1, v2.19.3-1 and master 5067397 (2.30.7).
.. [2] docs/reference/nccl_model.md §3 (constants and derived latency vectors).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from fabricplan.catalog.catalog import require_catalog
from fabricplan.catalog.models import plain
from fabricplan.errors import InputError

ALGORITHMS = ("tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat")
PROTOCOLS = ("ll", "ll128", "simple")
TUNED_COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce")
ARCHITECTURES = ("volta", "ampere", "hopper", "blackwell")
CpuVendor = Literal["intel", "amd"]
IntraLink = Literal["nvlink", "pci"]

_PROTOCOL_INDEX = {name: index for index, name in enumerate(PROTOCOLS)}
#: The Communicator graph an algorithm runs on (others use the graph of their own name).
GRAPH_OF_ALGORITHM = {"collnet_direct": "collnet", "collnet_chain": "collnet", "nvls_tree": "nvls", "pat": "ring"}


def _tuner(catalog):
    """The catalog's typed ``nccl_tuner`` section (``None``: TypeError, never the bundled catalog)."""
    return require_catalog(catalog, "nccl_tuner").nccl_tuner


def tuner_versions(catalog) -> tuple[str, ...]:
    """NCCL releases whose tuner constants are in the catalog."""
    return tuple(_tuner(catalog).versions)


def tuner_constants(version: str | None = None, *, catalog) -> dict[str, Any]:
    """The constants of one NCCL release (default: the catalog's ``default_version``) as a mapping.

    The mapping has the version's keys as in ``nccl_tuner.yaml`` plus ``version`` and
    ``network_steps`` (the catalog's store-and-forward step constants), so the functions below that
    take ``constants`` follow the catalog it came from. Treat nested values as read-only.
    """
    tuner = _tuner(catalog)
    version = version or tuner.default_version
    if version not in tuner.versions:
        known = ", ".join(tuner.versions)
        raise InputError(f"unknown NCCL version '{version}'; known: {known}", location="nccl_version")
    dumped = tuner._constants  # per-model cache: a catalog's sections are immutable
    if version not in dumped:
        dumped[version] = {"version": version, **plain(tuner.versions[version]),
                           "network_steps": plain(tuner.network_steps)}
    return dict(dumped[version])


def network_steps(catalog) -> dict[str, Any]:
    """The ``network_steps`` constants (LL/LL128 step sizes and chunk rules) as a mapping."""
    return plain(_tuner(catalog).network_steps)


def nvlink_bw_per_link_gbytes_per_s(compute_capability: int, catalog) -> float:
    """NCCL's assumed NVLink bandwidth per link [GB/s] for a compute capability (x10)."""
    table = _tuner(catalog).nvlink_bw_per_link_gbytes_per_s
    eligible = [cc for cc in table if cc <= compute_capability]
    return float(table[max(eligible)] if eligible else table[min(table)])


def architecture_compute_capabilities(catalog) -> dict[str, int]:
    """Compute capability (x10) of each architecture name (``nccl_tuner``, CUDA guide)."""
    return dict(_tuner(catalog).architecture_compute_capability)


def architecture(compute_capability: int) -> str:
    """NCCL's table row for a GPU: volta (<80), ampere (80-89), hopper (90-99), blackwell (>=100)."""
    if compute_capability >= 100:
        return "blackwell"
    if compute_capability >= 90:
        return "hopper"
    if compute_capability >= 80:
        return "ampere"
    return "volta"


def log2_floor(value: int) -> int:
    """``log2Down`` of NCCL: floor(log2(value)), -1 for 0."""
    return value.bit_length() - 1 if value > 0 else -1


@dataclass(frozen=True)
class Graph:
    """What NCCL's topology search found for one algorithm: channels and per-channel bandwidths.

    ``bw_intra_gbytes_per_s`` and ``bw_inter_gbytes_per_s`` are per channel [GB/s].
    """

    n_channels: int
    bw_intra_gbytes_per_s: float
    bw_inter_gbytes_per_s: float


@dataclass(frozen=True)
class Communicator:
    """The inputs of NCCL's tuner for one communicator.

    ``graphs`` maps "ring", "tree", "collnet" and "nvls" to a :class:`Graph`;
    ``latency_inter_us`` is the net plugin's reported latency (NCCL's ``latencyInter``; the IB and
    socket plugins report 0).
    """

    n_ranks: int
    n_nodes: int
    compute_capability: int
    graphs: dict[str, Graph]
    cpu_vendor: CpuVendor = "intel"
    intra_link: IntraLink = "nvlink"
    latency_inter_us: float = 0.0
    collnet_enabled: bool = False
    nvswitch: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Nodes may hold different numbers of the ranks (a group laid out across nodes partly); NCCL
        # then tunes with nRanks / nNodes (tuning.cc), as ranks_per_node does.
        if self.n_ranks < 1 or self.n_nodes < 1 or self.n_ranks < self.n_nodes:
            raise InputError(f"n_ranks ({self.n_ranks}) must be positive and at least n_nodes ({self.n_nodes})")

    @property
    def ranks_per_node(self) -> int:
        """Ranks per node, ``n_ranks // n_nodes`` (NCCL's integer ``nRanks / nNodes``)."""
        return self.n_ranks // self.n_nodes

    def graph(self, algorithm: str) -> Graph:
        key = GRAPH_OF_ALGORITHM.get(algorithm, algorithm)
        return self.graphs.get(key) or self.graphs["ring"]


@dataclass(frozen=True)
class AlgorithmChoice:
    """One (algorithm, protocol) with NCCL's predicted latency [us], algbw [GB/s] and time [us].

    ``time_us`` is NCCL's own estimate (what its tuner compares); ``launch_time_us`` is the time
    with the channels and threads NCCL actually launches for this size (:func:`launch_shape`) plus
    ``network_step_delay_us``, the store-and-forward of LL/LL128 steps at network hops
    (:func:`network_step_delay_us`): what nccl-tests measures.
    """

    algorithm: str
    protocol: str
    latency_us: float
    bandwidth_gbytes_per_s: float
    time_us: float
    channels: int = 0
    threads: int = 0
    launch_time_us: float | None = None
    network_step_delay_us: float = 0.0
    proxy_overhead_us: float = 0.0

    @property
    def achieved_time_us(self) -> float:
        """Time with the launched channels/threads (falls back to NCCL's estimate)."""
        return self.time_us if self.launch_time_us is None else self.launch_time_us


def _n_steps(collective: str, n_ranks: int) -> int:
    if collective == "all_reduce":
        return 2 * (n_ranks - 1)
    if collective in ("all_gather", "reduce_scatter"):
        return n_ranks - 1
    return n_ranks


def _ring_inter_steps(constants: dict, collective: str, n_nodes: int) -> int:
    """Ring steps NCCL charges the network latency for: AllReduce 2*nNodes (2.17/2.19) or
    2*(nNodes-1) (2.30), other collectives nNodes-1, none on one node."""
    if n_nodes == 1:
        return 0
    if collective == "all_reduce":
        return 2 * n_nodes if constants["allreduce_inter_steps"] == "nodes" else 2 * (n_nodes - 1)
    return n_nodes - 1


def _node_index(n_nodes: int) -> int:
    return n_nodes - 1 if n_nodes <= 2 else 2


def _per_arch(constants: dict, table: str, comm: Communicator) -> float:
    return float(constants[table][architecture(comm.compute_capability)][_node_index(comm.n_nodes)])


def _ll_max_bw(constants: dict, comm: Communicator) -> float:
    """llMaxBw: GPU arch row on one node, CPU vendor row (0 Intel, 1 AMD) on more."""
    rows = constants["ll_max_bw"]
    if comm.n_nodes == 1:
        row = rows[architecture(comm.compute_capability)]
    else:
        row = rows[ARCHITECTURES[1 if comm.cpu_vendor == "amd" else 0]]
    return float(row[_node_index(comm.n_nodes)])


def supports(constants: dict, comm: Communicator, collective: str, algorithm: str, protocol: str) -> bool:
    """Whether NCCL (this release) would consider ``algorithm``/``protocol`` for ``collective``."""
    algorithms = constants["algorithms"]
    if algorithm not in algorithms:
        return False
    if collective in ("broadcast", "reduce") and algorithm != "ring":
        return False
    if collective in ("all_gather", "reduce_scatter"):
        allowed = {"ring", "nvls", "collnet_direct", "pat"} if "pat" in algorithms else {"ring", "nvls"}
        if len(algorithms) == 3:  # 2.7.5: only Ring for anything but AllReduce
            allowed = {"ring"}
        if algorithm not in allowed:
            return False
    if collective == "all_reduce" and algorithm == "pat":
        return False
    if algorithm in ("nvls", "nvls_tree", "pat") and protocol != "simple":
        return False
    if algorithm == "pat" and not (comm.n_nodes == comm.n_ranks and comm.compute_capability >= 60):
        return False
    if algorithm == "nvls_tree" and comm.n_nodes == 1:
        return False
    if algorithm.startswith("collnet") and (not comm.collnet_enabled or comm.n_nodes == 1):
        return False
    if algorithm == "collnet_direct" and not comm.nvswitch:
        return False
    if algorithm in ("nvls", "nvls_tree"):
        if comm.compute_capability < 90 or not comm.nvswitch:
            return False
        efficiency = constants.get("nvls_efficiency")
        if efficiency is not None and efficiency[architecture(comm.compute_capability)] <= 0:
            return False
        if algorithm == "nvls" and comm.n_nodes > 1 and not comm.collnet_enabled:
            return False
        if comm.n_nodes > 1 and constants.get("nvls_rule") == "2.17":
            return False  # 2.17's NVLS is one node only (its tuner: bw = bwIntra, nvls_tuner.yaml nvls_rule)
    if protocol == "ll128":
        if comm.intra_link != "nvlink" or comm.compute_capability not in constants["ll128_compute_capabilities"]:
            return False
    return True


def algorithm_latency_us(constants: dict, comm: Communicator, collective: str, algorithm: str,
                         protocol: str) -> float:
    """NCCL's latency term ``comm->latencies[coll][algo][proto]`` [us] (before the ring plateau).

    Ring (AllReduce/AllGather/ReduceScatter), 2.30.7::

        lat = base + (nsteps - nInterSteps) * max(intraLat, netOverhead) + nInterSteps * interLat

    Tree AllReduce: ``base + 2*((ppn-1)*intraLat + log2(nNodes)*interLat)``; CollNet, NVLS,
    NVLSTree and PAT as in [1]_. Per-release differences (LL x1.8 intra latency before 2.19,
    ``2*nNodes`` inter steps in 2.17/2.19, the ``latencyInter`` rule) come from the data file.

    References
    ----------
    .. [1] NVIDIA/nccl src/graph/tuning.cc ``ncclTopoTuneModel``; docs/reference/nccl_model.md §3.1-3.3.
    """
    p = _PROTOCOL_INDEX[protocol]
    hw_lat = constants["hw_latency_us"]
    n_nodes, n_ranks, ppn = comm.n_nodes, comm.n_ranks, comm.ranks_per_node
    base = float(constants["base_latency_us"][algorithm][p])
    intra_lat = float(hw_lat[comm.intra_link][algorithm][p])
    rule = constants["inter_latency_rule"]
    if rule == "hw_only":
        inter_lat = float(hw_lat["net"][algorithm][p])
    elif rule == "replace":
        # NCCL replaces hwLat by a non-zero plugin latency; ours is an extra over InfiniBand, so it adds.
        inter_lat = float(hw_lat["net"][algorithm][p]) + comm.latency_inter_us
    else:
        net_algorithm = "tree" if (ppn == 1 and constants["ppn1_uses_tree_net_latency"]) else algorithm
        inter_lat = float(hw_lat["net"][net_algorithm][p]) + comm.latency_inter_us
        if protocol == "simple":
            inter_lat += comm.latency_inter_us
    if n_nodes > 1 and protocol == "ll":
        intra_lat *= constants["intra_ll_latency_multiplier_multinode"]

    if algorithm == "ring":
        if collective in ("reduce", "broadcast"):
            hw = comm.intra_link if n_nodes == 1 else "net"
            return base + float(hw_lat[hw]["ring"][p])
        overhead = constants.get("net_overhead_us")
        if overhead is not None and n_nodes > 1:
            net_overhead = overhead[comm.cpu_vendor]
            if protocol == "simple":
                net_overhead *= constants["net_overhead_simple_multiplier"]
            intra_lat = max(intra_lat, net_overhead)
        n_steps = _n_steps(collective, n_ranks)
        inter_steps = _ring_inter_steps(constants, collective, n_nodes)
        return base + (n_steps - inter_steps) * intra_lat + inter_steps * inter_lat
    if algorithm == "tree":
        return base + 2 * ((ppn - 1) * intra_lat + log2_floor(n_nodes) * inter_lat)
    if algorithm == "collnet_direct":
        arity = constants["collnet_arity_latency_us"]
        return base + 2 * (min(1, ppn - 1) * intra_lat + (ppn - 1) * arity) + inter_lat
    if algorithm == "collnet_chain":
        extra = inter_lat if constants["collnet_chain_adds_inter_latency"] else 0.0
        return base + 2 * (ppn - 1) * intra_lat + extra
    if algorithm == "nvls":
        if constants["nvls_latency_rule"] == "base_only":
            return base
        return intra_lat + (inter_lat if n_nodes > 1 else 0.0)
    if algorithm == "nvls_tree":
        return base + intra_lat + 2 * log2_floor(n_nodes) * inter_lat
    if algorithm == "pat":
        return (base + log2_floor(n_nodes) * (inter_lat / constants["pat_log_latency_divisor"])
                + n_ranks * constants["pat_linear_latency_us_per_rank"])
    raise InputError(f"unknown algorithm '{algorithm}'; known: {', '.join(ALGORITHMS)}")


def _nvls_bandwidth(constants: dict, comm: Communicator, collective: str, algorithm: str, graph: Graph,
                    bw: float) -> float:
    rule = constants["nvls_rule"]
    if rule == "2.30":
        if graph.n_channels < 2:
            return 0.0
        efficiency = constants["nvls_efficiency"][architecture(comm.compute_capability)]
        intra = graph.bw_intra_gbytes_per_s * efficiency * (graph.n_channels - 1) / graph.n_channels
        ppn = comm.ranks_per_node
        intra *= 2.0 if collective == "all_reduce" else (ppn - 1) / ppn
        inter = graph.bw_inter_gbytes_per_s * (2 if comm.n_nodes <= 2 and algorithm == "nvls_tree" else 1)
        cap = _per_arch(constants, "per_channel_max_nvls_tree_bw", comm) if algorithm == "nvls_tree" else math.inf
        return min(intra, inter, cap)
    if rule == "2.19":
        if algorithm == "nvls":
            return min(graph.bw_intra_gbytes_per_s, graph.bw_inter_gbytes_per_s)
        inter = graph.bw_inter_gbytes_per_s if comm.n_nodes <= 2 else graph.bw_inter_gbytes_per_s / 2
        return min(graph.bw_intra_gbytes_per_s, inter)
    return bw


def algorithm_bandwidth_gbytes_per_s(constants: dict, comm: Communicator, collective: str, algorithm: str,
                                     protocol: str) -> float:
    """NCCL's algorithm bandwidth ``comm->bandwidths[coll][algo][proto]`` [GB/s]; 0 = not usable.

    ``busBw = nChannels * bw`` (``bw = bwIntra`` on <= 2 nodes or for CollNet, else ``bwInter``),
    refined per protocol (Ring LL x0.5 capped by llMaxBw, LL128 x0.92 capped per channel, Tree
    x0.92 capped per channel, Tree LL /3.8, Tree LL128 x120/128, PAT x0.75, CollNetDirect divided
    by the GPU/NIC factor) and converted to algbw: Ring (and NVLS in 2.30) x nRanks/nsteps, others
    x0.5. Per-release numbers come from the data file.

    References
    ----------
    .. [1] NVIDIA/nccl src/graph/tuning.cc ``ncclTopoTuneModel`` ("Various model refinements").
    """
    if not supports(constants, comm, collective, algorithm, protocol):
        return 0.0
    graph = comm.graph(algorithm)
    n_nodes, n_ranks, ppn, n_ch = comm.n_nodes, comm.n_ranks, comm.ranks_per_node, graph.n_channels
    collnet = algorithm.startswith("collnet")
    # NCCL reads bwInter on > 2 nodes; its graph search guarantees bwInter <= bwIntra (search.cc raises
    # only the intra speed, up to 2 x bwInter), which a graph built from NIC counts need not: min() keeps
    # a 72-GPU NVLink domain's trees at its NVLink share per channel.
    bw = graph.bw_intra_gbytes_per_s if (n_nodes <= 2 or collnet) else min(graph.bw_inter_gbytes_per_s,
                                                                          graph.bw_intra_gbytes_per_s)
    if algorithm in ("nvls", "nvls_tree"):
        bw = _nvls_bandwidth(constants, comm, collective, algorithm, graph, bw)
    bus_bw = n_ch * bw
    arch = architecture(comm.compute_capability)
    cap = constants["arch_bus_bw_cap"].get(arch)
    if cap is not None:
        bus_bw = min(bus_bw, cap)

    if algorithm == "ring" and protocol == "ll":
        factors = constants["ring_ll_factor"]
        multinode = n_nodes > 1 or collective in ("all_reduce", "reduce")
        bus_bw *= factors["multinode_or_reduce"] if multinode else factors["other"]
        if constants["ring_ll_capped_by_ll_max_bw"]:
            bus_bw = min(bus_bw, _ll_max_bw(constants, comm))
    if algorithm == "ring" and protocol == "ll128":
        factors = constants["ring_ll128_factor"]
        bus_bw *= factors["ppn_below_2"] if ppn < 2 else factors["ppn_at_least_2"]
        if constants["ring_ll128_cap"] == "per_channel_arch":
            bus_bw = min(bus_bw, n_ch * _per_arch(constants, "per_channel_max_ring_ll128_bw", comm))
        else:
            bus_bw = min(bus_bw, n_ch * constants["ll128_per_channel_cap_by_collective"][collective])
    if algorithm == "tree" and collective == "all_reduce":
        if constants["tree_cap"] == "per_channel_arch":
            bus_bw = min(bus_bw * constants["tree_factor"], n_ch * _per_arch(constants, "per_channel_max_tree_bw", comm))
        else:
            caps = constants["tree_absolute_cap"]
            ampere_ll128 = arch == "ampere" and protocol == "ll128"
            key = ("more_than_2_nodes" if n_nodes > 2 else "up_to_2_nodes") + ("_ampere_ll128" if ampere_ll128 else "")
            bus_bw = min(bus_bw * constants["tree_factor"], caps[key])
    if algorithm == "tree" and protocol == "ll":
        bus_bw /= constants["tree_ll_divisor"]
        if constants["tree_ll_capped_by_ll_max_bw"]:
            bus_bw = min(bus_bw, _ll_max_bw(constants, comm))
    if algorithm == "tree" and protocol == "ll128":
        factors = constants["tree_ll128_factor"]
        bus_bw *= factors["single_node"] if n_nodes == 1 else factors["multi_node"]
        if constants["tree_ll128_cap"] == "tree_ll128_per_channel_arch":
            bus_bw = min(bus_bw, n_ch * _per_arch(constants, "per_channel_max_tree_ll128_bw", comm))
        else:
            bus_bw = min(bus_bw, n_ch * constants["ll128_per_channel_cap_by_collective"][collective]
                         * constants["tree_ll128_cap_multiplier"])
    if algorithm == "pat":
        bus_bw *= constants["pat_factor"]
    if collnet:
        ll_factor = constants.get("collnet_ll_factor")
        if protocol == "ll128" or (protocol == "ll" and ll_factor is None):
            return 0.0
        bus_bw *= constants["collnet_chain_factor"] if algorithm == "collnet_chain" else 1.0
        if protocol == "ll":
            bus_bw *= ll_factor
    if algorithm == "collnet_direct":
        if collective in ("all_gather", "reduce_scatter"):
            # NCCL 2.20+ (tuning.cc): CollNet Direct ReduceScatter/AllGather with the plugin's
            # iallgather/ireducescatter (the SHARP plugin v8 has them), 1:1 GPU:NIC (every local rank a
            # CollNet head), algbw ppn x min(bwIntra, 0.9 x bwInter): each rank still sends (AllGather:
            # receives) its whole share through its NIC, so at bandwidth-bound sizes the ring is as fast.
            factor = constants.get("collnet_direct_allgather_inter_factor")
            heads = int(comm.extra.get("collnet_heads", 0))
            if factor is None or protocol != "simple" or ppn > heads:
                return 0.0
            return ppn * min(graph.bw_intra_gbytes_per_s, factor * graph.bw_inter_gbytes_per_s)
        factor = ppn / n_ch
        factor -= (factor - 1) / 2
        bus_bw /= factor
        if comm.compute_capability >= 90:
            bus_bw *= constants["collnet_direct_sm90_factor"]
    if algorithm == "nvls" and collective in ("all_gather", "reduce_scatter") and n_nodes > 1:
        return 0.0  # same CollNet plugin requirement

    skip_conversion = (constants["nvls_algbw_ratio"] == "nranks_over_nsteps"
                       and algorithm != "ring" and collective in ("all_gather", "reduce_scatter"))
    if not skip_conversion:
        if algorithm == "ring":
            bus_bw *= n_ranks / _n_steps(collective, n_ranks)
        elif algorithm in ("nvls", "nvls_tree"):
            ratio = constants["nvls_algbw_ratio"]
            bus_bw *= n_ranks / _n_steps(collective, n_ranks) if ratio == "nranks_over_nsteps" else ratio
        else:
            bus_bw *= constants["tree_algbw_ratio"]
    return max(bus_bw, 0.0)


def _corrected_bandwidth(constants: dict, comm: Communicator, collective: str, algorithm: str, protocol: str,
                         size_bytes: int) -> float:
    """Algorithm bandwidth [GB/s] with the tree correction factor for ``size_bytes`` applied."""
    bandwidth = algorithm_bandwidth_gbytes_per_s(constants, comm, collective, algorithm, protocol)
    if bandwidth <= 0:
        return 0.0
    log_size = log2_floor(size_bytes >> 6)
    corrected = (algorithm == "tree" and collective == "all_reduce") or (
        algorithm == "nvls_tree" and collective == "all_reduce" and comm.compute_capability >= 100
        and constants["nvls_rule"] == "2.30")
    limit = constants["tree_correction_max_log_size"] if algorithm == "tree" else len(
        constants["tree_correction_factor"][protocol])
    if corrected and 0 <= log_size < limit:
        bandwidth *= constants["tree_correction_factor"][protocol][log_size]
    return bandwidth


def launch_shape(constants: dict, comm: Communicator, algorithm: str, protocol: str,
                 size_bytes: int) -> tuple[int, int, int, int]:
    """Channels and threads NCCL launches one collective with: ``(nc, nt, nc_max, nt_max)``.

    After choosing (algorithm, protocol) NCCL shrinks the launch for small messages
    (``getAlgoInfo``/``topoGetAlgoInfo`` in ``src/enqueue.cc``)::

        nc = nChannels; nt = maxThreads[algo][proto]; thr = threadThresholds[algo][proto]
        while nBytes < nc * nt * thr:
            if nc >= 2: nc -= 1            # one channel fewer
            elif nt % 128 == 0: nt /= 2    # then halve the threads of the last channel
            else: break

    ``maxThreads``: LL 512, LL128 640, Simple 512 (256 for Ring/Simple when the ring graph's
    ``bwIntra * nChannels <= PCI_BW`` = 12 GB/s). ``threadThresholds`` (bytes per thread before
    another thread/channel is worth it): LL 8 (Ring/LL: x nRanks), LL128 8, Simple 64, CollNet
    Simple 512. CollNetDirect (own rule), NVLS and NVLSTree (fixed ``nvlsChannels``) are left at
    the full launch; in 2.30.7 Tree and PAT always run ``NCCL_MAX_NTHREADS`` threads. ``nChannels``
    is the algorithm graph's channel count as in the tuner (the NCCL runtime may duplicate
    channels; not modelled). Constants per release from ``nccl_tuner.yaml`` (``launch``).

    References
    ----------
    .. [1] NVIDIA/nccl v2.17.1-1 src/enqueue.cc L1182-1206 (``getAlgoInfo``), src/graph/tuning.cc
       L290-296 (``threadThresholds``), src/include/comm.h L32-34 (``NCCL_*_THREAD_THRESHOLD``);
       same loop in v2.7.5-1 enqueue.cc L283-290, v2.19.3-1 enqueue.cc L1224-1229 and master
       5067397 enqueue.cc ``topoGetAlgoInfo`` (2.30.7).
    """
    launch = constants["launch"]
    graph = comm.graph(algorithm)
    nc_max = graph.n_channels
    nt_max = int(launch["max_threads"][protocol])
    if algorithm == "ring" and protocol == "simple":
        ring = comm.graph("ring")
        if ring.bw_intra_gbytes_per_s * ring.n_channels <= launch["pci_bw_gbytes_per_s"]:
            nt_max = int(launch["slow_ring_simple_threads"])
    if algorithm in ("collnet_direct", "nvls", "nvls_tree"):
        return nc_max, nt_max, nc_max, nt_max
    threshold = float(launch["thread_threshold_bytes"][protocol])
    if algorithm == "ring" and protocol == "ll":
        threshold *= comm.n_ranks
    if algorithm.startswith("collnet") and protocol == "simple":
        threshold = float(launch["collnet_simple_thread_threshold_bytes"])
    nc, nt = nc_max, nt_max
    while size_bytes < nc * nt * threshold:
        if nc >= 2:
            nc -= 1
        elif nt % 128 == 0:
            nt //= 2
        else:
            break
    if algorithm in launch.get("all_threads_algorithms", ()):
        nt = nt_max
    return nc, nt, nc_max, nt_max


def tree_ll128_chunk_bytes(comm: Communicator, size_bytes: int, channels: int, steps: dict) -> int:
    """Data bytes per Tree/LL128 chunk: NCCL halves the 614,400 B step until the pipeline is deep
    enough for the tree (``computeColl``, enqueue.cc; constants ``network_steps`` in
    ``nccl_tuner.yaml``)::

        nsteps = 1 + log2(nNodes) + 0.1 x ppn
        while bytes // (nc x chunk) < nsteps x 64 / ppn and chunk > 131072: chunk /= 2
        while bytes // (nc x chunk) < nsteps x 16 / ppn and chunk > 32768:  chunk /= 2

    and the kernel moves ``chunk x 15/16`` data bytes (LL128 lines carry 15 data words of 16).
    ``steps``: the catalog's ``network_steps`` mapping (:func:`network_steps`, or
    ``constants["network_steps"]`` of :func:`tuner_constants`).

    References
    ----------
    .. [1] NVIDIA/nccl v2.17.1-1 src/enqueue.cc L1342-1349.
    """
    data_ratio = 1.0 / float(steps["wire_bytes_per_data_byte"]["ll128"])
    chunk = int(round(int(steps["step_data_bytes"]["ll128"]) / data_ratio))  # the buffer step, flags included
    ppn = comm.n_ranks / comm.n_nodes
    rule = steps["tree_ll128_depth"]
    depth = rule["base"] + rule["per_log2_node"] * log2_floor(comm.n_nodes) + rule["per_rank_per_node"] * ppn
    channels = max(channels, 1)
    for halving in steps["tree_ll128_halving"]:
        while size_bytes // (channels * chunk) < depth * halving["factor"] / ppn and chunk > halving["floor_bytes"]:
            chunk //= 2
    return int(chunk * data_ratio)


def _ll_chunk_bytes(comm: Communicator, collective: str, algorithm: str, protocol: str, size_bytes: int,
                    channels: int, threads: int, steps: dict) -> int:
    """Data bytes per LL/LL128 step of a Ring or Tree channel (see :func:`network_step_delay_us`)."""
    step = int(steps["step_data_bytes"][protocol])
    divisor = int(steps[f"{algorithm}_min_chunk_divisor"][protocol])
    min_chunk = max(threads * int(steps["grain_bytes"][protocol]) // divisor, 1)
    if algorithm == "ring":
        ranks = comm.n_ranks if collective in ("all_reduce", "all_gather", "reduce_scatter") else 1
        return min(step, math.ceil(size_bytes / (channels * ranks * min_chunk)) * min_chunk,
                   math.ceil(size_bytes / (channels * ranks)))  # a step carries no more than the data
    if protocol == "ll128":
        step = tree_ll128_chunk_bytes(comm, size_bytes, channels, steps)
    chunk = step if channels * step <= size_bytes else math.ceil(size_bytes / (channels * min_chunk)) * min_chunk
    return min(chunk, math.ceil(size_bytes / channels))  # a step carries no more than the data


def network_step_delay_us(comm: Communicator, collective: str, algorithm: str, protocol: str, size_bytes: int,
                          channels: int, threads: int, constants: dict) -> float:
    """Store-and-forward delay of LL/LL128 steps at the network hops [us]; 0 where it does not apply.

    NCCL's net proxy hands a step to the NIC only once the GPU has written all of it
    (``sendProxyProgress``), so each network hop on a collective's critical path holds one chunk
    back by its transmission time, the classic store-and-forward term ``L / R`` per hop (a message
    of P packets over N store-and-forward links takes ``(N + P - 1) L / R``; Kurose & Ross,
    *Computer Networking*, §1.4). NVLink hops of LL/LL128 move per line and add nothing; Simple's
    step latency is already inside NCCL's own Simple constants ("the latency of a 256kB chunk",
    tuning.cc), so it is left out here too::

        delay = crossings x chunk x wire_ratio / (1000 x bw_inter)

    ``chunk`` [B] is the kernel's chunk per channel (``constants["network_steps"]``, from the
    catalog's ``nccl_tuner.network_steps``: Ring
    ``min(step, ceil(bytes / (nc x nRanks x minChunk)) x minChunk)``, nRanks -> 1 for
    Broadcast/Reduce; Tree ``step`` (Tree/LL128: :func:`tree_ll128_chunk_bytes`) or
    ``ceil(bytes / (nc x minChunk)) x minChunk`` when one loop holds the message;
    ``minChunk = threads x grain / divisor``; never more than the data a step has to carry,
    ``bytes / (nc x nRanks)`` or ``bytes / nc``), ``wire_ratio`` the protocol's
    bytes on the wire per data byte (LL 2, LL128 16/15), ``bw_inter`` the graph's per-channel
    network bandwidth [GB/s]. ``crossings``: the network steps NCCL's own latency counts (Ring
    AllReduce 2 x nNodes in 2.17/2.19, 2 x (nNodes-1) in 2.30; other Ring collectives nNodes-1;
    Tree AllReduce 2 x log2(nNodes), up and down). NVLSTree/Simple AllReduce on more than one node:
    :func:`nvls_tree_store_forward_us` (its chunk grows to the 512 KiB step and NCCL's NVLSTree latency
    has no chunk term). NCCL's tuner does not include this term, so it changes the achieved time, never
    the choice.

    References
    ----------
    .. [1] NVIDIA/nccl v2.17.1-1 src/transport/net.cc L911-947; src/collectives/device/all_reduce.h
       (``runRing``, ``runTreeSplit``); src/graph/tuning.cc L61 (Simple chunk latency comment).
    """
    if comm.n_nodes < 2:
        return 0.0
    if algorithm == "nvls_tree" and protocol == "simple" and collective == "all_reduce":
        return nvls_tree_store_forward_us(comm, size_bytes, constants)
    if protocol == "simple" or algorithm not in ("ring", "tree"):
        return 0.0
    if algorithm == "tree" and collective != "all_reduce":
        return 0.0
    steps = constants["network_steps"]
    chunk = _ll_chunk_bytes(comm, collective, algorithm, protocol, size_bytes, max(channels, 1), threads, steps)
    if algorithm == "ring":
        crossings = _ring_inter_steps(constants, collective, comm.n_nodes)
    else:
        crossings = 2 * log2_floor(comm.n_nodes)
    rate = comm.graph(algorithm).bw_inter_gbytes_per_s
    if rate <= 0:
        return 0.0
    return crossings * chunk * float(steps["wire_bytes_per_data_byte"][protocol]) / (1000.0 * rate)


def nvls_tree_store_forward_us(comm: Communicator, size_bytes: int, constants: dict) -> float:
    """Store-and-forward of NVLSTree/Simple chunks at the network crossings of a multi-node AllReduce [us].

    NVLSTree moves each chunk through FIFOs between warp groups and the net proxy (NVIDIA/nccl v2.19.3-1
    src/device/all_reduce.h L466-553, ``runNvlsTree``): the reduce warps write a whole chunk to the
    ``treeUp`` send buffer, the proxy posts its ``isend`` once the GPU tail has passed the step
    (``sendProxyProgress``, src/transport/net.cc L1018-1140), and the receiving side's warps see the
    chunk only after the proxy's ``irecv`` completed and it moved the tail. So the chunk is the unit of
    a pipeline whose stages are the network crossings and the NVLS data path, and a pipeline of ``P``
    chunks through stages of times ``t_i`` takes ``P x max(t_i) + (sum(t_i) - max(t_i))`` (the
    store-and-forward term ``(N + P - 1) L / R`` of Kurose & Ross, *Computer Networking*, §1.4, with
    unequal stages). The achieved time already holds ``P x max(t_i)`` (its transfer at the bounded
    bandwidth), so this adds the fill::

        delay = crossings x t_net + t_nvls - max(t_net, t_nvls)
        t_net  = chunk x ops / B_node            (each of the ops' chunks at its share of the node's NICs)
        t_nvls = chunk x ops / (B_nvlink x nvlsEfficiency x ppn / (ppn + 1))   (0 without NVLink figures)

    ``chunk``: NCCL's NVLSTree chunk for the size (:func:`network_chunk_bytes`, up to the 512 KiB Simple
    step); ``ops`` = ``nvlsChannels x nHeads``, the operations in flight at once (enqueue.cc L1371,
    ``concurrentOps``); ``crossings`` = ``2 x log2(nNodes)``, the up and down crossings NCCL's own
    NVLSTree latency counts (tuning.cc ``2 * log2i(nNodes) * interLat``, v2.19.3-1 L242-243);
    ``B_node`` = ``comm.extra['node_nic_gbytes_per_s']['nvls']``, the NVLS data path as in
    :func:`physical_algbw_bound_gbytes_per_s`. When the NVLS data path is the slower stage (2 x 8 H100
    on 32 x 100G EFA: 280 against 376 GB/s) both crossings add their chunk time; when the NICs are (8 x
    200G), one crossing is the bottleneck already counted and the NVLS stage adds its own. NCCL's
    NVLSTree latency (``intraLat + 2 log2(nNodes) interLat``) is fixed and has no chunk term, while the
    chunk grows from 32 to 512 KiB with the size. 0 on one node or without the node's NIC bandwidth.
    """
    nic = float((comm.extra.get("node_nic_gbytes_per_s") or {}).get("nvls", 0.0))
    if comm.n_nodes < 2 or nic <= 0:
        return 0.0
    channels = int(comm.extra.get("nvls_channels", comm.graph("nvls").n_channels))
    shape = network_chunk_bytes(comm, "all_reduce", "nvls_tree", "simple", size_bytes, channels, 0,
                                constants["network_steps"])
    if shape is None:
        return 0.0
    chunk, ops = shape
    ppn = comm.ranks_per_node
    nvls = (float(comm.extra.get("nvlink_gbytes_per_s") or 0.0) * float(comm.extra.get("nvls_data_path_efficiency", 1.0))
            * float(comm.extra.get("mnnvl_nvls_efficiency", 1.0)) * ppn / (ppn + 1))
    t_net = chunk * ops / (1000.0 * nic)
    t_nvls = chunk * ops / (1000.0 * nvls) if nvls > 0 else 0.0
    return 2 * log2_floor(comm.n_nodes) * t_net + t_nvls - max(t_net, t_nvls)


def _halved(chunk: int, size_bytes: int, ops: int, depth: float, rules, *, whole: bool) -> int:
    """NCCL's chunk-halving loops: halve while ``size / (ops x chunk) < depth x factor`` (``whole``: the
    quotient in integers, as for Tree; else exact, as for NVLSTree) and ``chunk > floor``."""
    for rule in rules:
        factor, floor = float(rule["factor"]), int(rule["floor_bytes"])
        while chunk > floor and ((size_bytes // (ops * chunk)) if whole else size_bytes / (ops * chunk)) < depth * factor:
            chunk //= 2
    return chunk


def nvls_heads(comm: Communicator) -> int:
    """NVLS heads per channel (``channel->nvls.nHeads = nvlsGraph->nChannels``, connect.cc L229): one GPU
    and its NIC per head, so at most the ranks per node."""
    return max(1, min(comm.graph("nvls").n_channels, comm.ranks_per_node))


def network_chunk_bytes(comm: Communicator, collective: str, algorithm: str, protocol: str, size_bytes: int,
                        channels: int, threads: int, steps: dict) -> tuple[int, int] | None:
    """``(data bytes per network step, parallel pipelines)`` NCCL moves for one collective, or None where
    the rule is not modelled (CollNet, NVLS on one node, PAT).

    The chunk is NCCL's own for the size (v2.19.3-1 enqueue.cc ``computeColl`` L1326-1373): Ring
    LL/LL128 as :func:`network_step_delay_us`; Ring/Simple ``min(step x ALLREDUCE_CHUNKSTEPS,
    ceil(bytes / (nc x nRanks)))`` sent one 512 KiB step at a time; Tree/Simple the 512 KiB step halved
    until ``bytes / (nc x chunk)`` reaches ``depth x 8, x4, x1`` (depth ``ppn - 1 + log2 nNodes``);
    Tree/LL128 :func:`tree_ll128_chunk_bytes`; NVLSTree the step (64 KiB from 4 nodes) halved by
    ``nc x nHeads`` concurrent operations. Pipelines: nc for Ring and Tree, ``nc x nHeads`` for NVLSTree.
    """
    channels = max(channels, 1)
    simple_step = int(steps["simple_step_bytes"])
    if algorithm == "ring" and protocol == "simple":
        ranks = comm.n_ranks if collective in ("all_reduce", "all_gather", "reduce_scatter") else 1
        chunk = min(simple_step * int(steps["ring_simple_chunk_steps"]), math.ceil(size_bytes / (channels * ranks)))
        return min(chunk, simple_step), channels
    if algorithm in ("ring", "tree") and protocol in ("ll", "ll128"):
        return _ll_chunk_bytes(comm, collective, algorithm, protocol, size_bytes, channels, threads, steps), channels
    if algorithm == "tree" and collective == "all_reduce":
        depth = comm.ranks_per_node - 1 + log2_floor(comm.n_nodes)
        chunk = _halved(simple_step, size_bytes, channels, depth, steps["tree_simple_halving"], whole=True)
        return min(chunk, math.ceil(size_bytes / channels)), channels
    if algorithm == "nvls_tree":
        ops = channels * nvls_heads(comm)
        chunk = simple_step
        if comm.n_nodes >= int(steps["nvls_tree_many_nodes"]):
            chunk = int(steps["nvls_tree_many_nodes_chunk_bytes"])
        chunk = _halved(chunk, size_bytes, ops, 1.0, steps["nvls_tree_halving"], whole=False)
        return min(chunk, math.ceil(size_bytes / ops)), ops
    return None


def _further_network_steps(comm: Communicator, collective: str, algorithm: str, protocol: str, size_bytes: int,
                           chunk: int, pipes: int, constants: dict) -> int:
    """Network steps that wait, one after another, for the handshake of the step before them on the same
    connection, beyond the first step of each crossing (whose latency NCCL's hwLat NET counts): Ring, the
    further 512 KiB messages of the first loop's Simple chunk at each inter-node step (a chunk is 4 steps;
    NCCL_STEPS = 8 slots keep the next chunk in flight, so later loops overlap the transfer); Tree and
    NVLSTree, one per further chunk of the pipeline (a chunk is one step)."""
    if algorithm == "ring":
        steps = constants["network_steps"]
        ranks = comm.n_ranks if collective in ("all_reduce", "all_gather", "reduce_scatter") else 1
        if protocol != "simple":
            return 0
        per_chunk = int(steps["simple_step_bytes"]) * int(steps["ring_simple_chunk_steps"])
        messages = math.ceil(min(per_chunk, size_bytes / (pipes * ranks)) / chunk)
        return _ring_inter_steps(constants, collective, comm.n_nodes) * (messages - 1)
    return math.ceil(size_bytes / (pipes * chunk)) - 1


def proxy_overhead_us(comm: Communicator, collective: str, algorithm: str, protocol: str, size_bytes: int,
                      channels: int, threads: int, constants: dict, transfer_us: float) -> float:
    """Time the NCCL proxy adds to a multi-node collective beyond NCCL's estimate [us]; 0 on one node,
    where the rule is not modelled, or without the proxy figures in ``comm.extra``.

    NCCL moves every network step through its proxy thread (one per GPU, ``ncclProxyProgress`` /
    ``progressOps``, proxy.cc L686-L889 at v2.19.3-1): ``sendProxyProgress`` posts one ``isend`` per
    step only once the GPU's tail shows the step written, ``recvProxyProgress`` posts the ``irecv`` and
    hands the step to the GPU after ``test`` completes (net.cc L1018-L1140, L1143-). Two costs follow:

    * **the op** (``extra['proxy_op_us']``, ``o``): once per collective on more than one node, the
      proxy threads pick the new operation up before its first network step can move: they append
      posted ops only when idle or every ``NCCL_PROGRESS_APPENDOP_FREQ`` (8) progress loops (proxy.cc
      L839-877), and the GPU's first step then waits for the proxy's first ``isend``/``irecv``; a fixed
      term, not one per crossing (the model at 16 nodes stays near the published 58-62 us for 8 B);
    * **handshake** (``extra['proxy_step_us']``, ``a``): each further network step on a pipeline's
      critical path waits for the GPU-proxy-NIC-proxy-GPU round of the step before it on the same
      connection, ``a x further steps`` (:func:`_further_network_steps`): one per further chunk of
      NCCL's chunk for the size (:func:`network_chunk_bytes`);
    * **message rate** (``extra['proxy_message_cpu_us']``, ``c``): a proxy thread serves every channel
      of its GPU, so the GPU's sends and receives take ``c`` each one after another; when they take
      longer than the data path, the collective waits: ``max(0, c x messages per GPU - transfer)``.
      Messages per GPU = sends + receives across the node boundaries / the GPUs that drive a NIC.

    ``transfer_us`` is the time the data path is busy anyway, which the proxy's work overlaps: the
    bandwidth part of the achieved time plus the store-and-forward of the chunks at the network
    crossings (:func:`network_step_delay_us`; :func:`predicted_time_us` passes both): while a chunk is
    held at a crossing the proxy keeps posting and testing the other operations' steps.
    """
    op_us = float(comm.extra.get("proxy_op_us", 0.0))
    step_us = float(comm.extra.get("proxy_step_us", 0.0))
    cpu_us = float(comm.extra.get("proxy_message_cpu_us", 0.0))
    if comm.n_nodes < 2 or (op_us <= 0 and step_us <= 0 and cpu_us <= 0):
        return 0.0
    if algorithm == "tree" and collective != "all_reduce":
        return 0.0
    if algorithm == "nvls_tree":  # NVLS algorithms launch nvlsChannels (enqueue.cc L1219-1221)
        channels = int(comm.extra.get("nvls_channels", channels))
    shape = network_chunk_bytes(comm, collective, algorithm, protocol, size_bytes, channels, threads,
                                constants["network_steps"])
    if shape is None:
        return 0.0
    chunk, pipes = shape
    chunk = max(chunk, 1)
    handshake = op_us + step_us * _further_network_steps(comm, collective, algorithm, protocol, size_bytes, chunk,
                                                         pipes, constants)
    if algorithm == "ring":
        boundary_steps = _n_steps(collective, comm.n_ranks) * math.ceil(size_bytes / (pipes * comm.n_ranks * chunk))
        messages = 2 * pipes * comm.n_nodes * boundary_steps
    else:  # trees: (nNodes - 1) edges between nodes per pipeline, up and down, a send and a receive each
        messages = 4 * pipes * (comm.n_nodes - 1) * math.ceil(size_bytes / (pipes * chunk))
    network_gpus = comm.n_nodes * max(1, min(int(comm.extra.get("network_gpus_per_node", comm.ranks_per_node)),
                                             nvls_heads(comm) if algorithm == "nvls_tree" else comm.ranks_per_node))
    # LL/LL128 steps are polled by the GPU in the data itself (flags per line), so their proxy work is the
    # handshake alone; a Simple step waits on the proxy's tail update (net.cc L1068, L1128-1131).
    rate = max(0.0, cpu_us * messages / network_gpus - transfer_us) if protocol == "simple" else 0.0
    return handshake + rate


def _with_channels(comm: Communicator, algorithm: str, n_channels: int) -> Communicator:
    key = GRAPH_OF_ALGORITHM.get(algorithm, algorithm)
    graphs = dict(comm.graphs)
    graphs[key if key in graphs else "ring"] = replace(comm.graph(algorithm), n_channels=n_channels)
    return replace(comm, graphs=graphs)


def nvls_single_node_algbw_gbytes_per_s(constants: dict, comm: Communicator) -> float | None:
    """Data-path algbw [GB/s] of a one-node NVLS AllReduce, or None when it does not apply.

    NVLS AllReduce (``multimem.ld_reduce`` of each rank's 1/n share through the NVSwitch, then
    ``multimem.st`` of the result to all ranks) moves ``S (n+1)/n`` bytes per direction over every
    GPU's NVLink: ``S`` for the switch's reads of this GPU's data plus ``S/n`` for its own reduced
    share out, and ``S/n + S`` in (sjeaugey: NVLS "algobw = busbw * n / (n+1)", NVIDIA/nccl-tests
    PR #239, 2024-09). So::

        algbw = B_nvlink x nvlsEfficiency x n / (n + 1)

    with ``B_nvlink`` NCCL's per-GPU NVLink bandwidth (links x per-link rate, topo.h: H100 18 x 20.6
    = 370.8 GB/s) and ``nvlsEfficiency`` NCCL's own NVLS factor (tuning.cc, Hopper 0.85). NCCL's
    tuner estimate is min(intra, bwInter) per channel, a ranking number that stays below this
    (it would give 370 GB/s busbw on 8 x H100); measured NVLS on one 8 x H100 node is ~480 GB/s busbw
    (algbw ~275, sjeaugey, NVIDIA/nccl-tests#212; 476 in #290). Used only for the achieved time,
    not for NCCL's choice.
    """
    efficiency = constants.get("nvls_efficiency")
    if comm.n_nodes != 1 or not efficiency:
        return None
    eta = float(efficiency[architecture(comm.compute_capability)])
    eta *= float(comm.extra.get("mnnvl_nvls_efficiency", 1.0))  # a multi-host NVLink domain (NVL72)
    graph = comm.graph("nvls")
    n = comm.n_ranks
    return graph.n_channels * graph.bw_intra_gbytes_per_s * eta * n / (n + 1)


def nvls_warp_share(reduce_warps: int, bcast_warps: int, one_node_warps: int) -> float:
    """Share of the one-node NVLS data path a multi-node NVLS channel's warps can issue (at most 1).

    In one node each of NCCL's ``W_1`` reduce warps of an NVLS channel issues two NVLink multimem
    operations per element (``multimem.ld_reduce`` and ``multimem.st``); across nodes the work is split:
    ``W_r`` warps do the ld_reduce and hand the node's sum to the CollNet/SHARP send, ``W_b`` warps take
    the network's result and do the st (NVIDIA/nccl src/device/all_reduce.h, NVLS AllReduce: W_1 = 5 for
    more than 6 ranks, W_r = 3, W_b = 2 without user-buffer registration). With a warp's multimem rate
    ``c`` and the one-node path just carried by its warps (``c W_1 / 2 = A_1``, an assumption: NCCL sizes
    the one-node split for the NVLink rate, and one-node NVLS on 5-8 H100 follows the NVLink term
    n/(n+1) exactly, NVIDIA/nccl#1455), the slower of the two multi-node stages runs at::

        share = min(1, 2 min(W_r, W_b) / W_1)          (2 x 2 / 5 = 0.8 with NCCL's counts)
    """
    if one_node_warps <= 0:
        return 1.0
    return min(1.0, 2.0 * min(reduce_warps, bcast_warps) / one_node_warps)


def nvls_multinode_algbw_gbytes_per_s(comm: Communicator) -> float | None:
    """Data-path algbw [GB/s] of a multi-node NVLS AllReduce (NVLink SHARP inside each node, IB SHARP
    across nodes through CollNet), or None when it does not apply (one node, no CollNet/SHARP, no NVLink
    figure or warp counts in ``comm.extra``).

    Inside each node the data moves as in one-node NVLS, ``S (n+1)/n`` per GPU per direction for ``n``
    ranks per node (sjeaugey, NVIDIA/nccl-tests PR #239), at NCCL's NVLS efficiency (and, in a multi-host
    NVLink domain, its data-path efficiency); the warps NCCL gives the reduce and broadcast stages carry
    :func:`nvls_warp_share` of it::

        algbw = B_nvlink x nvlsEfficiency x n / (n + 1) x min(1, 2 min(W_r, W_b) / W_1)

    (8 x H100 per node: 370.8 x 0.85 x 8/9 x 0.8 = 224 GB/s, busbw 441 on 64 GPUs). The network side
    is bounded separately (:func:`physical_algbw_bound_gbytes_per_s`: with SHARP each node sends and
    receives ``S``, ``algbw <= B_node``). NCCL's tuner instead gives ``nCh x min(intra, bwInter) x
    nRanks / nsteps``, the ring's conversion to algbw, as if the NICs carried ``2 S (N-1)/N`` (tuning.cc;
    190 GB/s there): a ranking number. Used only for the achieved time, not for NCCL's choice.
    """
    warps = comm.extra.get("nvls_warps")
    nvlink = float(comm.extra.get("nvlink_gbytes_per_s") or 0.0)
    if comm.n_nodes < 2 or not comm.collnet_enabled or not warps or nvlink <= 0:
        return None
    ppn = comm.ranks_per_node
    path = (nvlink * float(comm.extra.get("nvls_data_path_efficiency", 1.0))
            * float(comm.extra.get("mnnvl_nvls_efficiency", 1.0)) * ppn / (ppn + 1))
    return path * nvls_warp_share(int(warps["multinode_reduce"]), int(warps["multinode_bcast"]),
                                  int(warps["one_node"]))


def physical_algbw_bound_gbytes_per_s(comm: Communicator, collective: str, algorithm: str) -> float | None:
    """The most algbw [GB/s] the hardware carries for a multi-node AllReduce, whatever a release's
    tuner constants say; None where it does not apply (one node, other collectives, no bandwidths).

    * **NICs** (every algorithm): each node must send and receive at least ``2 S (N-1)/N`` through its
      NICs without in-network reduction (the bandwidth lower bound of all-reduce, Patarasuk & Yuan,
      J. Parallel Distrib. Comput. 69(2), 2009, §3), and ``S`` with it (CollNet, and NVLS across nodes,
      which needs CollNet/SHARP: the switch returns the reduced data). So
      ``algbw <= B_node x N / (2 (N-1))`` or ``algbw <= B_node``, with ``B_node`` the NIC bandwidth the
      communicator's ranks on a node drive (``Communicator.extra['node_nic_gbytes_per_s']``, per graph,
      after routing efficiency). Rings and trees with NCCL's caps stay below it; the 2-node NVLSTree
      estimate (2.30: inter bandwidth x 2 on <= 2 nodes) can exceed it by ~7 %.
    * **NVLink** (NVLS and NVLSTree): inside each node the data moves as in one-node NVLS, ``S (n+1)/n``
      per direction per GPU for ``n`` ranks per node (sjeaugey, NVIDIA/nccl-tests PR #239), so
      ``algbw <= B_nvlink x nvlsEfficiency x n/(n+1)`` (``extra['nvlink_gbytes_per_s']``,
      ``extra['nvls_data_path_efficiency']``): a multi-node NVLS collective is never faster than the
      same NVLS inside one node. NCCL 2.19's NVLS estimate (``min(bwIntra, bwInter)`` per channel x
      5/6) has no such term and gives 606 GB/s busbw on 16 x 8 H100 at 1 GiB; bounded, 550 GB/s (algbw 277)
      (one-node NVLS on H100 measures ~480 busbw, algbw ~275, NVIDIA/nccl-tests#212, #290).
    * **One NVLink domain** (nodes that are multi-host NVLink domains, ``extra['mnnvl']``: GB200 NVL72
      racks): every algorithm's busbw is at most the one-domain NVLS busbw, ``algbw <= A_1 (n-1)/n x
      N/(N-1)`` with ``A_1`` the in-domain NVLS algbw (``extra['mnnvl_nvls_efficiency']`` applied) for
      ``n`` ranks per domain and ``N`` in all: a multi-rack all-reduce is never faster per GPU than one
      rack (CoreWeave GB200: 1 rack 847 GB/s busbw, 2 racks 820, 20 racks 406; docs/validation.md).

    Applied to the achieved time only (NCCL chooses with its own estimate).
    """
    if collective != "all_reduce" or comm.n_nodes < 2:
        return None
    bounds = []
    nic = (comm.extra.get("node_nic_gbytes_per_s") or {}).get(GRAPH_OF_ALGORITHM.get(algorithm, algorithm)
                                                              if algorithm != "pat" else "ring")
    if nic:
        reducing = algorithm.startswith("collnet") or algorithm == "nvls"
        n = comm.n_nodes
        bounds.append(nic if reducing else nic * n / (2.0 * (n - 1)))
    nvlink = comm.extra.get("nvlink_gbytes_per_s") or 0.0
    ppn = comm.ranks_per_node
    domain = (nvlink * float(comm.extra.get("nvls_data_path_efficiency", 1.0))
              * float(comm.extra.get("mnnvl_nvls_efficiency", 1.0)) * ppn / (ppn + 1))
    if algorithm in ("nvls", "nvls_tree") and nvlink > 0:
        bounds.append(domain)
    if comm.extra.get("mnnvl") and nvlink > 0:
        # Multi-host NVLink domains: each GPU still moves its domain's share over NVLink and more ranks add
        # bytes, so busbw never exceeds the one-domain NVLS busbw: algbw <= A_1 x ((n-1)/n) / ((N-1)/N).
        n_ranks = comm.n_ranks
        bounds.append(domain * ((ppn - 1) / ppn) / ((n_ranks - 1) / n_ranks))
    return min(bounds) if bounds else None


def predicted_time_us(constants: dict, comm: Communicator, collective: str, algorithm: str, protocol: str,
                      size_bytes: int) -> AlgorithmChoice | None:
    """NCCL's ``ncclTopoGetAlgoTime``: ``lat + nBytes / (1000 * bw)`` [us], or None if unusable.

    Tree AllReduce bandwidth is multiplied by ``treeCorrectionFactor[proto][log2(nBytes/64)]``;
    Ring/Simple AllReduce on more than one node multiplies the latency by the "ring plateau"
    factor (1.4 on sm80+, 1.9 before, 2.30.7) once the message is large enough.

    ``launch_time_us`` redoes the bandwidth term with the launched shape (:func:`launch_shape`):
    NCCL's bandwidth formula evaluated for ``nc`` channels (per-channel caps unchanged), times
    ``nt / nt_max`` when the last channel's threads were halved (a channel's copy rate scales
    with its threads; assumption), and adds the store-and-forward delay of LL/LL128 steps and NVLSTree
    chunks at the network hops (:func:`network_step_delay_us`) and the proxy's work
    (:func:`proxy_overhead_us`, whose message-rate term overlaps transfer + that delay). NCCL's tuner
    itself sees none of these.

    References
    ----------
    .. [1] NVIDIA/nccl src/graph/tuning.cc ``ncclTopoGetAlgoTime``; src/enqueue.cc ``getAlgoInfo``.
    """
    bandwidth = _corrected_bandwidth(constants, comm, collective, algorithm, protocol, size_bytes)
    if bandwidth <= 0:
        return None
    latency = algorithm_latency_us(constants, comm, collective, algorithm, protocol)
    plateau = constants["ring_plateau"]
    if algorithm == "ring" and protocol == "simple" and comm.n_nodes > 1 and collective == "all_reduce":
        if plateau["condition"] == "bytes_per_channel_rank":
            reached = size_bytes // (comm.graph("ring").n_channels * comm.n_ranks) >= plateau["min_bytes"]
        else:
            reached = size_bytes >= comm.n_ranks / 16.0 * plateau["min_bytes"]
        if reached:
            below = comm.compute_capability < plateau["threshold_compute_capability"]
            latency *= plateau["factor_below"] if below else plateau["factor_at_or_above"]
    time_us = latency + size_bytes / (1000.0 * bandwidth)
    nc, nt, nc_max, nt_max = launch_shape(constants, comm, algorithm, protocol, size_bytes)
    launched = bandwidth
    if nc < nc_max:
        launched = _corrected_bandwidth(constants, _with_channels(comm, algorithm, nc), collective, algorithm,
                                        protocol, size_bytes)
    launched *= nt / nt_max
    if algorithm == "nvls" and collective == "all_reduce":
        launched = (nvls_single_node_algbw_gbytes_per_s(constants, comm) or nvls_multinode_algbw_gbytes_per_s(comm)
                    or launched)
    bound = physical_algbw_bound_gbytes_per_s(comm, collective, algorithm)
    if bound is not None and launched > bound:
        launched = bound
    delay = network_step_delay_us(comm, collective, algorithm, protocol, size_bytes, nc, nt, constants)
    if launched <= 0:
        return AlgorithmChoice(algorithm, protocol, latency, bandwidth, time_us, nc, nt, math.inf, delay)
    transfer = size_bytes / (1000.0 * launched)
    proxy = proxy_overhead_us(comm, collective, algorithm, protocol, size_bytes, nc, nt, constants, transfer + delay)
    return AlgorithmChoice(algorithm, protocol, latency, bandwidth, time_us, nc, nt, latency + transfer + delay + proxy,
                           delay, proxy)


def select_algorithm(constants: dict, comm: Communicator, collective: str, size_bytes: int,
                     algorithm: str | None = None, protocol: str | None = None) -> AlgorithmChoice:
    """Pick the (algorithm, protocol) with the lowest predicted time, as NCCL's tuner does.

    ``algorithm``/``protocol`` restrict the search like ``NCCL_ALGO``/``NCCL_PROTO``; an
    impossible restriction raises :class:`InputError` naming what is available.
    """
    if collective not in TUNED_COLLECTIVES:
        raise InputError(f"NCCL's tuner does not cover '{collective}'; known: {', '.join(TUNED_COLLECTIVES)}")
    if algorithm is not None and algorithm not in ALGORITHMS:
        raise InputError(f"unknown algorithm '{algorithm}'; known: {', '.join(ALGORITHMS)}", location="algo")
    if protocol is not None and protocol not in PROTOCOLS:
        raise InputError(f"unknown protocol '{protocol}'; known: {', '.join(PROTOCOLS)}", location="protocol")
    best: AlgorithmChoice | None = None
    available: list[str] = []
    for algo in ALGORITHMS:
        for proto in PROTOCOLS:
            choice = predicted_time_us(constants, comm, collective, algo, proto, size_bytes)
            if choice is None:
                continue
            available.append(f"{algo}/{proto}")
            if (algorithm and algo != algorithm) or (protocol and proto != protocol):
                continue
            if best is None or choice.time_us < best.time_us:
                best = choice
    if best is None:
        wanted = "/".join(x for x in (algorithm, protocol) if x)
        what = f"{wanted} is not available" if wanted else "no algorithm/protocol is available"
        raise InputError(
            f"{what} for {collective} on this fabric and GPU count "
            f"(NCCL {constants['version']}); available: {', '.join(available) or 'none'}",
            location="algo" if algorithm else "protocol" if protocol else None)
    return best
