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

* Network: the design's :class:`~fabricplan.design.NetworkView` (hardware as built, the sized
  fabric, where a communicator's nodes sit); this module never sizes a fabric. How much of the
  per-NIC bandwidth each traffic pattern gets comes from an efficiency model
  (:mod:`fabricplan.perf.efficiency`, ``analytic`` by default: ECMP collisions x oversubscription).

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
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from fabricplan.design import FabricTopology, NetworkPlacement, NetworkView, bare_network
from fabricplan.errors import InputError
from fabricplan.perf import nccl_tuner
from fabricplan.perf.efficiency import Efficiency, EfficiencyModel, TrafficCase
from fabricplan.perf.efficiency import efficiency_model as resolve_efficiency_model
from fabricplan.perf.latency import perf_parameter, perf_table, perf_value, point_to_point_latency
from fabricplan.perf.nccl_tuner import Communicator, Graph
from fabricplan.units import MAX_MESSAGE_BYTES

OPERATIONS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "send_recv")
# Traffic pattern of each NCCL graph (and of the p2p AllToAll) as the efficiency models see it.
GRAPH_TRAFFIC_PATTERN = {"ring": "ring", "tree": "tree", "nvls": "tree", "collnet": "ring", "p2p": "all_to_all"}


def bus_bandwidth_factor(operation: str, n_ranks: int) -> float:
    """nccl-tests busbw/algbw factor: 2(n-1)/n AllReduce; (n-1)/n AG, RS, AllToAll; else 1."""
    if operation == "all_reduce":
        return 2.0 * (n_ranks - 1) / n_ranks
    if operation in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n_ranks - 1) / n_ranks
    return 1.0


def gpu_compute_capability(gpu, catalog) -> int:
    """Compute capability x10 from the catalog field, else from the architecture name
    (``architecture_compute_capability`` in ``nccl_tuner.yaml``)."""
    value = getattr(gpu, "compute_capability", None)
    if value:
        return int(value)
    table = nccl_tuner.architecture_compute_capabilities(catalog)
    try:
        return table[gpu.architecture]
    except KeyError:
        raise InputError(f"unknown GPU architecture '{gpu.architecture}'; known: "
                         f"{', '.join(table)} (or set compute_capability)",
                         location="gpu.architecture") from None


def nvlink_gbytes_per_link_bidirectional(compute_capability: int, catalog) -> float:
    """Hardware NVLink bandwidth per link, both directions [GB/s] (``perf_defaults.yaml``).

    The entry for the highest listed capability <= ``compute_capability`` (the lowest listed one
    for older GPUs), as NCCL's own per-link table is looked up (src/graph/topo.h).
    """
    table = {int(cc): float(v) for cc, v in perf_table("nvlink_gbytes_per_link_bidirectional", catalog).items()}
    eligible = [cc for cc in table if cc <= compute_capability]
    return table[max(eligible)] if eligible else table[min(table)]


def nvlink_bus_bandwidth_gbytes_per_s(gpu, catalog) -> float:
    """NCCL's intra-node bus bandwidth per GPU [GB/s]: NVLink links x NCCL's per-link bandwidth."""
    cc = gpu_compute_capability(gpu, catalog)
    links = getattr(gpu, "nvlink_links", None)
    if links is None:
        per_link = nvlink_gbytes_per_link_bidirectional(cc, catalog)
        links = round(gpu.nvlink_bandwidth_gbytes_per_s / per_link)
    return links * nccl_tuner.nvlink_bw_per_link_gbytes_per_s(cc, catalog)


def _intra_node_bandwidth_gbytes_per_s(gpu, catalog) -> float:
    """NVLink bus bandwidth [GB/s] for ranks sharing a node; InputError for a GPU without NVLink."""
    nvlink = nvlink_bus_bandwidth_gbytes_per_s(gpu, catalog)
    if nvlink <= 0:
        raise InputError(f"GPU '{getattr(gpu, 'id', 'gpu')}' has no NVLink (0 links or 0 GB/s); the collective "
                         "model needs NVLink between GPUs of one node (use 1 GPU per node for PCIe-only GPUs)",
                         location="gpu.nvlink_bandwidth_gbytes_per_s")
    return nvlink


def latency_inter_us(fabric, reference_fabric, switch_ns: float, reference_switch_ns: float, switches: int,
                     catalog, nccl_version: str | None = None) -> float:
    """Extra one-way latency of ``fabric`` over the reference (InfiniBand) fabric [us], >= 0.

    ``nccl_version`` matters on the socket transport only (inline payloads from 2.27)."""
    mine = point_to_point_latency(fabric, switch_ns, switches, catalog=catalog, nccl_version=nccl_version).total_us
    reference = point_to_point_latency(reference_fabric, reference_switch_ns, switches, catalog=catalog).total_us
    return max(mine - reference, 0.0)


PatternEfficiency = Callable[[str], Efficiency]


def collnet_available(fabric) -> bool:
    """Whether NCCL may run CollNet (and multi-node NVLS, which needs CollNet) on ``fabric``.

    CollNet needs a CollNet network plugin (SHARP, an InfiniBand verbs plugin), so a profile with in-network
    reduction and not on NCCL's socket transport; NVLSTree across nodes needs only NVLS inside the
    node and stays available on sockets (NVIDIA/nccl ext-tuner/example plugin.c, "NVLS intra+inter-node:
    collNetSupport; NVLSTree inter-node: nvlsSupport"; docs/reference/socket_transport.md §4).
    """
    return bool(fabric.in_network_reduction) and getattr(fabric, "socket", None) is None


def socket_message_bytes(operation: str, size_bytes: int, n_gpus: int, connections: int, catalog) -> float:
    """Bytes in flight on one network connection of a collective (the message the socket transport splits).

    All-to-all: the per-peer share ``size / n``; others: the buffer over the connections
    (``size / connections``); never more than NCCL's staging buffer (``NCCL_BUFFSIZE``, 8 steps).
    """
    share = size_bytes / n_gpus if operation == "all_to_all" else size_bytes / max(connections, 1)
    return min(share, perf_parameter("nccl_buffsize_bytes", catalog))


def per_nic_bandwidth(profile, operation: str, size_bytes: int, n_gpus: int, ranks_per_node: int, nics_per_node: int,
                      gpu, catalog, socket_scale: float = 1.0) -> float:
    """The per-NIC bandwidth [GB/s] the collective model uses on ``profile``.

    RDMA profiles: the profile's ``effective_bandwidth_gbytes_per_s`` (a measured ceiling). Socket
    transport profiles: :func:`fabricplan.perf.socket_transport.socket_nic_bandwidth` for this
    collective's message size (sockets x threads, per-core copy, host bounce; the same number
    feeds NCCL's tuner, which in reality sees only the link speed).
    """
    if getattr(profile, "socket", None) is None:
        return profile.effective_bandwidth_gbytes_per_s
    from fabricplan.perf.socket_transport import socket_nic_bandwidth

    nics = min(nics_per_node, ranks_per_node)
    connections = nics * int(perf_parameter("nccl_channels_per_nic", catalog))
    message = socket_message_bytes(operation, size_bytes, n_gpus, connections, catalog)
    return socket_scale * socket_nic_bandwidth(profile, message_bytes=message, nics_per_node=nics_per_node,
                                        gpus_per_node=ranks_per_node,
                                        compute_capability=gpu_compute_capability(gpu, catalog),
                                        hbm_tbytes_per_s=getattr(gpu, "hbm_bandwidth_tbytes_per_s", None),
                                        catalog=catalog).gbytes_per_s


def _full_bandwidth(_pattern: str) -> Efficiency:
    return Efficiency(1.0, 1.0, "none")


def nvls_data_path_efficiency(compute_capability: int, catalog) -> float:
    """NVLS data-path efficiency of the GPU's NVSwitch generation: the newest bundled NCCL release's
    ``nvlsEfficiency`` (tuning.cc, 2.30.7: Hopper 0.85), a property of the hardware that older releases'
    tuners did not model, so every release's achieved NVLS time uses it; 1.0 if no release has one."""
    tuner = catalog.nccl_tuner
    table = tuner.versions[tuner.default_version].nvls_efficiency or {}
    return float(table.get(nccl_tuner.architecture(compute_capability), 1.0) or 1.0)


def gpu_pcie_gbytes_per_s(compute_capability: int, catalog) -> float:
    """The GPU's x16 PCIe link as NCCL models it [GB/s per direction] (``perf_defaults``
    ``pcie_x16_gbytes_per_s``: Gen4 24 for A100, Gen5 48 for H100)."""
    table = {int(k): float(v) for k, v in perf_table("pcie_x16_gbytes_per_s", catalog).items()}
    eligible = [cc for cc in table if cc <= compute_capability]
    return table[max(eligible)] if eligible else table[min(table)]


def nics_per_gpu_by_bandwidth(nics_per_gpu: int, link_rate_gbps: float, compute_capability: int,
                              catalog) -> int:
    """NICs one GPU uses: its share of the node's NICs, but no more than NCCL counts by bandwidth.

    NCCL adds the GPU's local NICs one by one until their bandwidth reaches the GPU's own link
    (``getLocalNetCountByBw`` / ``ncclTopoGetLocalNetCountByBw``, src/graph/topo.cc: ``for (l = 0;
    l < localNetCount && totalNetBw < gpuBw; l++) totalNetBw += path bw``), and spreads channels over
    that many (``ncclTopoGetLocalNet``: ``net += channelId % netsPerGpu``). So
    ``min(nics_per_gpu, ceil(PCIe x16 / NIC speed))``: 4 x 100G EFA per H100 (Gen5, 48 GB/s: 12.5,
    25, 37.5, 50) are all used, a second NDR NIC on one H100 is not (50 >= 48 after the first).
    One NIC per GPU or fewer: unchanged."""
    if nics_per_gpu <= 1:
        return max(nics_per_gpu, 1)
    nic_gbytes = link_rate_gbps / 8.0
    if nic_gbytes <= 0:
        return nics_per_gpu
    return max(1, min(nics_per_gpu, math.ceil(gpu_pcie_gbytes_per_s(compute_capability, catalog) / nic_gbytes)))


def communicator_nics(nics_per_node: int, ranks_per_node: int, nics_per_gpu: int = 1) -> int:
    """NICs one communicator's ranks on a node drive: ``min(nics_per_node, ranks_per_node x nics_per_gpu)``.

    ``nics_per_gpu`` = ``nics_per_node // GPUs per node`` (at least 1) held to what NCCL counts by
    bandwidth (:func:`nics_per_gpu_by_bandwidth`): NCCL spreads a GPU's channels over its own NICs,
    one NIC per channel (``ncclTopoGetLocalNet``, src/graph/topo.cc: ``net += channelId %
    netsPerGpu``); the nccl-tests busbw of a node with 32 x 100G EFA for 8 H100 reaches 487 GB/s,
    far above 8 x 12.5 GB/s (docs/reference/nccl_tests.md T4). With one NIC per GPU or fewer this is
    ``min(nics_per_node, ranks_per_node)``, the rule before several NICs per GPU were expressible.
    """
    return min(nics_per_node, ranks_per_node * max(nics_per_gpu, 1))


def mnnvl_nvls_data_path_efficiency(compute_capability: int, catalog) -> float:
    """NVLS data-path efficiency inside one multi-host NVLink domain, over NCCL's own nvlsEfficiency, per GPU
    generation: ``perf_defaults`` ``mnnvl_nvls_data_path_efficiency`` (GB200 NVL72, calibrated on CoreWeave's
    one-rack 8 GiB row) or, from compute capability 10.3 (Blackwell Ultra, GB300 NVL72),
    ``mnnvl_nvls_data_path_efficiency_sm103`` (calibrated on Verda's one-rack 8 GiB row). NCCL itself has
    no Blackwell Ultra constant (every sm100 row applies from cc 10.0: topo.h, tuning.cc, nvls.cc), so the
    GB200 figure carried over to GB300 would leave the model 5-9 % below GB300's published curve at 8-16 GiB."""
    name = "mnnvl_nvls_data_path_efficiency_sm103" if compute_capability >= 103 else "mnnvl_nvls_data_path_efficiency"
    return perf_parameter(name, catalog)


def nvls_warps(catalog) -> dict[str, int]:
    """Warps of an NVLS AllReduce channel by stage (``perf_defaults`` ``nvls_one_node_reduce_warps``,
    ``nvls_multinode_reduce_warps``, ``nvls_multinode_bcast_warps``; NVIDIA/nccl src/device/all_reduce.h),
    for :func:`fabricplan.perf.nccl_tuner.nvls_multinode_algbw_gbytes_per_s`."""
    return {"one_node": int(perf_parameter("nvls_one_node_reduce_warps", catalog)),
            "multinode_reduce": int(perf_parameter("nvls_multinode_reduce_warps", catalog)),
            "multinode_bcast": int(perf_parameter("nvls_multinode_bcast_warps", catalog))}


def nvls_channels(compute_capability: int, *, multi_domain: bool, catalog) -> int:
    """NVLS channels NCCL opens (``nvlsChannels``, src/transport/nvls.cc ``ncclNvlsInit``): Hopper 16;
    Blackwell 24 inside one NVLink domain, 32 when the communicator spans several (``perf_defaults``
    ``nvls_channels_*``)."""
    if compute_capability >= 100:
        name = "nvls_channels_sm100_multi_domain" if multi_domain else "nvls_channels_sm100_one_domain"
    else:
        name = "nvls_channels_sm90"
    return int(perf_parameter(name, catalog))


def mnnvl_channels(nics: int, nvlink_gbytes_per_s: float, nic_gbytes_per_s: float, compute_capability: int,
                   max_channels: int | None, catalog) -> dict[str, tuple[int, int]]:
    """``graph -> (channels, NICs carrying traffic)`` of a communicator whose nodes are multi-host NVLink
    domains (NCCL MNNVL: one node per NVLink clique, e.g. 72 GPUs and 72 NICs per GB200 NVL72 rack).

    NCCL's limits, not the NIC count, decide how many of the domain's NICs carry a collective:

    * Ring, Tree, CollNet: each channel crosses the network through one NIC and NCCL's graph search stops
      adding channels once ``nChannels x bwInter >= totalBw``, the GPU's own bandwidth (its NVLink)
      (src/graph/search.cc ``ncclTopoCompute``: "if (graph->nChannels*graph->bwInter >= system->totalBw)
      goto done"), and never runs more than ``MAXCHANNELS``: ``c = min(MAXCHANNELS, ceil(B_nvlink /
      B_nic))``, ``min(c, NICs)`` NICs used (GB200 on NDR: ceil(722 / 47) = 16 of 72).
    * NVLS/NVLSTree: one head NIC per NVLS channel, ``nvlsChannels`` = 32 on Blackwell across domains
      (:func:`nvls_channels`), ``min(32, NICs)`` NICs used.

    So the inter-domain bandwidth of a rack is a few tens of NICs' worth, never 72, and the per-channel
    rate is at most one NIC's (the per-GPU NIC rate).
    """
    nic = max(nic_gbytes_per_s, 1e-9)
    search = max(2, math.ceil(nvlink_gbytes_per_s / nic))
    if max_channels:
        search = min(search, int(max_channels))
    nvls = nvls_channels(compute_capability, multi_domain=True, catalog=catalog)
    shapes = {key: (search, min(nics, search)) for key in ("ring", "tree", "collnet")}
    shapes["nvls"] = (nvls, min(nics, nvls))
    return shapes


def efa_plugin_nccl_protocol(fabric, nics_per_node: int, gpus_per_node: int, catalog) -> str | None:
    """The ``NCCL_PROTO`` the aws-ofi-nccl plugin sets on an EFA host, or None where it sets none.

    The plugin runs its RDMA protocol (multi-rail, several EFA devices per GPU) only when the host has
    fewer GPUs than EFA devices, and its SENDRECV protocol otherwise (v1.7.3 src/nccl_ofi_net.c
    L1127-1158); on SENDRECV the EFA endpoint does not give 128-byte in-order delivery, so the plugin
    sets ``NCCL_PROTO=simple`` (src/platform-aws.c L216-233, L448-575)::

        protocol = perf_defaults aws_ofi_nccl_sendrecv_nccl_proto   if fabric is aws-efa* and GPUs >= EFA devices
                 = None                                             otherwise (p5: 8 GPUs < 32 EFA, LL/LL128 kept)

    ``nics_per_node``/``gpus_per_node``: the host's EFA devices and GPUs."""
    if not str(getattr(fabric, "id", "")).startswith("aws-efa") or nics_per_node > gpus_per_node:
        return None
    return str(perf_value("aws_ofi_nccl_sendrecv_nccl_proto", catalog))


def proxy_figures(fabric, nics: int, ranks_per_node: int, compute_capability: int, catalog) -> dict[str, Any]:
    """The NCCL proxy's per-step handshake and per-message CPU time [us] on ``fabric`` (``perf_defaults``
    ``nccl_proxy_op_us``, ``nccl_proxy_step_us``; ``nccl_proxy_message_cpu_us``, or ``..._libfabric`` on ``aws-efa*``), the GPUs
    per node that drive a NIC and the NVLS channels, for :func:`fabricplan.perf.nccl_tuner.proxy_overhead_us`.
    The socket transport has its own per-message costs (:mod:`fabricplan.perf.socket_transport`): none here."""
    if getattr(fabric, "socket", None) is not None:
        return {}
    libfabric = str(getattr(fabric, "id", "")).startswith("aws-efa")
    cpu = perf_parameter("nccl_proxy_message_cpu_us_libfabric" if libfabric else "nccl_proxy_message_cpu_us", catalog)
    return {"proxy_op_us": perf_parameter("nccl_proxy_op_us", catalog),
            "proxy_step_us": perf_parameter("nccl_proxy_step_us", catalog), "proxy_message_cpu_us": cpu,
            "network_gpus_per_node": min(nics, ranks_per_node),
            "nvls_channels": nvls_channels(compute_capability, multi_domain=False, catalog=catalog)}


def build_communicator(n_ranks: int, ranks_per_node: int, gpu, fabric, *, nics_per_node: int,
                       per_nic_bandwidth_gbytes_per_s: float | None = None,
                       efficiency: PatternEfficiency = _full_bandwidth, latency_inter: float = 0.0,
                       cpu_vendor: str = "intel", catalog, nics_per_gpu: int = 1,
                       max_channels: int | None = None, gpus_per_host: int | None = None,
                       n_nodes: int | None = None) -> Communicator:
    """NCCL's view (graphs, channels, bandwidths) of ``n_ranks`` GPUs on ``fabric``.

    ``efficiency(pattern)`` gives the share of the per-NIC bandwidth each graph's traffic pattern
    gets (an efficiency model applied to the communicator's placement; default: all of it).

    Inter-node: ``k`` = :func:`communicator_nics` NICs, ``c = min(max(k, 2), MAXCHANNELS)``
    channels (``max_channels``, the release's ``MAXCHANNELS``; a channel crosses the network
    through one NIC, so at most ``min(k, c)`` NICs carry traffic), per channel
    ``bwInter = min(k, c) x B_nic x efficiency / c`` (``collective_time`` holds ``nics_per_gpu`` to
    what NCCL counts by bandwidth, :func:`nics_per_gpu_by_bandwidth`). NCCL's graph search only ever raises a
    tree/CollNet/NVLS graph's intra speed above its inter speed (search.cc: bwIntra up to 2 x
    bwInter), and the channels' intra speeds share the GPU's NVLink, so ``bwInter <= bwIntra <=
    NVLink / c`` for every graph: a rack of 72 GPUs with one NIC each cannot have 72 tree channels
    at the NIC's 47 GB/s when its NVLink gives each channel 10 GB/s. The graphs keep ``bwInter``
    as the NICs give it (so 8-GPU numbers stay as they were); the tuner reads
    ``min(bwInter, bwIntra)`` where NCCL reads ``bwInter`` (:func:`fabricplan.perf.nccl_tuner.
    algorithm_bandwidth_gbytes_per_s`), a no-op for any graph NCCL's search can produce.
    The GPU's NVLink bandwidth and the node's NIC bandwidth go into ``Communicator.extra``
    (``nvlink_gbytes_per_s``, ``node_nic_gbytes_per_s``) for the data-path bounds of
    :func:`fabricplan.perf.nccl_tuner.physical_algbw_bound_gbytes_per_s`.

    Multi-host NVLink domains (``gpus_per_host`` < ``ranks_per_node``: a GB200 NVL72 rack of 4-GPU trays
    that NCCL's MNNVL support treats as one node): see :func:`mnnvl_channels`; the in-domain NVLS data path
    gets :func:`mnnvl_nvls_data_path_efficiency` (``extra['mnnvl_nvls_efficiency']``) and ``extra['mnnvl']``
    turns on the single-domain bound of the tuner's achieved time.

    ``n_nodes``: the nodes of a communicator whose nodes hold different numbers of its ranks
    (:func:`collective_time`); ``ranks_per_node`` is then the fewest on one node.
    """
    if n_nodes is None:
        if ranks_per_node < 1 or n_ranks < 1 or n_ranks % ranks_per_node:
            raise InputError(f"GPU count ({n_ranks}) must be a positive multiple of GPUs per node ({ranks_per_node})")
        n_nodes = n_ranks // ranks_per_node
    cc = gpu_compute_capability(gpu, catalog)
    nvlink = _intra_node_bandwidth_gbytes_per_s(gpu, catalog) if ranks_per_node > 1 else 0.0
    extra: dict[str, Any] = {"nvlink_gbytes_per_s": nvlink,
                             "nvls_data_path_efficiency": nvls_data_path_efficiency(cc, catalog),
                             "nvls_warps": nvls_warps(catalog)}
    mnnvl = gpus_per_host is not None and 1 < gpus_per_host < ranks_per_node
    if mnnvl:
        extra["mnnvl"] = True
        extra["mnnvl_nvls_efficiency"] = mnnvl_nvls_data_path_efficiency(cc, catalog)
    if n_nodes == 1:
        links = max(round(nvlink / nccl_tuner.nvlink_bw_per_link_gbytes_per_s(cc, catalog)), 2)
        graph = Graph(links, nvlink / links, nvlink / links)
        graphs = {"ring": graph, "tree": graph, "nvls": graph, "collnet": graph}
        if mnnvl:
            nvls = nvls_channels(cc, multi_domain=False, catalog=catalog)
            graphs["nvls"] = Graph(nvls, nvlink / nvls, nvlink / nvls)
    else:
        nic = per_nic_bandwidth_gbytes_per_s or fabric.effective_bandwidth_gbytes_per_s
        nics = communicator_nics(nics_per_node, ranks_per_node, nics_per_gpu)
        channels = max(nics, 2)
        if max_channels:
            channels = min(channels, int(max_channels))
        shapes = {key: (channels, min(nics, channels)) for key in ("ring", "tree", "nvls", "collnet")}
        if mnnvl:
            shapes = mnnvl_channels(nics, nvlink, nic, cc, max_channels, catalog)

        def graph_for(key: str, intra_multiplier: float) -> Graph:
            n_channels, used = shapes[key]
            inter = used * nic * efficiency(GRAPH_TRAFFIC_PATTERN[key]).value / n_channels
            if ranks_per_node == 1:
                return Graph(n_channels, inter, inter)
            if intra_multiplier == 1.0:  # rings run one speed through NVLink and the NIC
                inter = min(inter, nvlink / n_channels)
            return Graph(n_channels, min(intra_multiplier * inter, nvlink / n_channels), inter)

        graphs = {key: graph_for(key, 1.0 if key == "ring" else 2.0) for key in ("ring", "tree", "nvls", "collnet")}
        extra["node_nic_gbytes_per_s"] = {key: shapes[key][1] * nic * efficiency(GRAPH_TRAFFIC_PATTERN[key]).value
                                          for key in ("ring", "tree", "nvls", "collnet")}
        extra["collnet_heads"] = shapes["collnet"][1]  # NICs the CollNet graph uses: NCCL's collNetHeadsNum
        extra.update(proxy_figures(fabric, nics, ranks_per_node, cc, catalog))
    return Communicator(n_ranks=n_ranks, n_nodes=n_nodes, compute_capability=cc, graphs=graphs,
                        cpu_vendor=cpu_vendor, latency_inter_us=latency_inter,
                        collnet_enabled=collnet_available(fabric), nvswitch=ranks_per_node >= 4, extra=extra)


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
    efficiency_model: str = "analytic"  # the efficiency model that gave routing_efficiency
    fabric_latency_us: float = 0.0  # Broadcast/Reduce/SendRecv: hops x latencyInter, outside NCCL's estimate (in time_us)
    proxy_overhead_us: float = 0.0  # NCCL's proxy: op pick-up, further-step handshakes, message rate (in time_us)

    def as_dict(self) -> dict:
        return asdict(self)


#: Program limits of the collective model (sanity bounds, not physical defaults): a buffer of at most
#: 1 TiB (a GPU holds at most ~0.2 TiB), at most 10 million ranks (the spec's bound on a cluster) and
#: at most 1,024 GPUs or NICs per node (an NVL72 rack is 72 GPUs).
MAX_SIZE_BYTES = MAX_MESSAGE_BYTES  # 2^40, the size parser's bound (fabricplan.units)
MAX_RANKS = 10_000_000
MAX_PER_NODE = 1024


def _validate(operation: str, size_bytes: int, n_gpus: int, gpus_per_node: int, nics_per_node: int | None,
              n_nodes: int | None = None) -> None:
    if operation not in OPERATIONS:
        raise InputError(f"unknown collective '{operation}'; known: {', '.join(OPERATIONS)}", location="op")
    if not isinstance(size_bytes, int) or size_bytes <= 0:
        raise InputError(f"size must be a positive number of bytes, got {size_bytes}", location="size")
    if size_bytes > MAX_SIZE_BYTES:
        raise InputError(f"size must be at most 1 TiB ({MAX_SIZE_BYTES:,} bytes), got {size_bytes:,}", location="size")
    if n_gpus < 2:
        raise InputError(f"a collective needs at least 2 GPUs, got {n_gpus}", location="gpus")
    if n_gpus > MAX_RANKS:
        raise InputError(f"at most {MAX_RANKS:,} GPUs, got {n_gpus:,}", location="gpus")
    if gpus_per_node < 1:
        raise InputError(f"GPUs per node must be >= 1, got {gpus_per_node}", location="gpus-per-node")
    if gpus_per_node > MAX_PER_NODE:
        raise InputError(f"GPUs per node must be at most {MAX_PER_NODE:,}, got {gpus_per_node:,}",
                         location="gpus-per-node")
    if nics_per_node is not None and nics_per_node < 1:
        raise InputError(f"NICs per node must be >= 1, got {nics_per_node}", location="nics-per-node")
    if nics_per_node is not None and nics_per_node > MAX_PER_NODE:
        raise InputError(f"NICs per node must be at most {MAX_PER_NODE:,}, got {nics_per_node:,}",
                         location="nics-per-node")
    if n_nodes is not None:  # uneven: gpus_per_node is the fewest ranks on one of the n_nodes nodes
        if not 1 <= n_nodes <= n_gpus or n_nodes * min(gpus_per_node, n_gpus) > n_gpus:
            raise InputError(f"{n_gpus} GPUs cannot sit on {n_nodes} nodes with at least {gpus_per_node} on each",
                             location="nodes")
        return
    if n_gpus % min(gpus_per_node, n_gpus):
        raise InputError(f"GPU count ({n_gpus}) must be a multiple of GPUs per node ({gpus_per_node})",
                         location="gpus")


def load_reference_fabric_id(catalog) -> str:
    """The fabric NCCL's latency constants are taken to describe (``perf_defaults`` of ``catalog``)."""
    from fabricplan.perf.latency import perf_value

    return str(perf_value("nccl_latency_reference_fabric", catalog))


def network_latency_inter_us(network: NetworkView, placement: NetworkPlacement, catalog,
                             nccl_version: str | None = None) -> float:
    """NCCL's ``latencyInter`` for a communicator at ``placement``: the fabric's extra one-way latency
    over the reference fabric through the switches on its longest path (2 x tiers - 1) [us]."""
    reference = catalog.fabric(load_reference_fabric_id(catalog))
    reference_switch = catalog.switch(reference.hardware.switch)
    return latency_inter_us(network.profile, reference, network.switch.port_to_port_latency_ns,
                            reference_switch.port_to_port_latency_ns, placement.switches_on_path, catalog,
                            nccl_version)


def _pattern_efficiency(model: EfficiencyModel, network: NetworkView, placement: NetworkPlacement, n_nodes: int,
                        catalog) -> PatternEfficiency:
    """``pattern -> Efficiency`` for one communicator, asking the model once per pattern."""
    answers: dict[str, Efficiency] = {}

    def efficiency(pattern: str) -> Efficiency:
        if pattern not in answers:
            if n_nodes <= 1:  # NVLink only: no network for the model to judge
                answers[pattern] = Efficiency(1.0, 1.0, model.name)
            else:
                answers[pattern] = model(TrafficCase(pattern, n_nodes, placement, network.profile, catalog))
        return answers[pattern]

    return efficiency


def collective_time(operation: str, size_bytes: int, n_gpus: int, gpus_per_node: int, fabric=None, gpu=None, *,
                    nics_per_node: int | None = None, algorithm: str | None = None, protocol: str | None = None,
                    nccl_version: str | None = None, cpu_vendor: str = "intel", catalog,
                    per_nic_bandwidth_gbytes_per_s: float | None = None,
                    placement: NetworkPlacement | None = None,
                    topology: FabricTopology | None = None, network: NetworkView | None = None,
                    efficiency_model: str | EfficiencyModel | None = None,
                    nics_per_gpu: int | None = None, gpus_per_host: int | None = None,
                    span_nodes: int | None = None, n_nodes: int | None = None) -> CollectiveResult:
    """Time [us], algbw and busbw [GB/s] of one collective, choosing algorithm/protocol like NCCL.

    Parameters
    ----------
    operation : all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce or send_recv.
    size_bytes : nccl-tests "size" [bytes] (total buffer for AllGather/ReduceScatter/AllToAll).
    n_gpus, gpus_per_node : ranks and ranks per node; ``n_gpus`` must be a multiple.
    network : the design's network view (:func:`fabricplan.design.resolve`); it sets the fabric
        profile as built, the GPU, NICs per node and where the communicator sits. Without it,
        ``fabric`` (a catalog fabric id or FabricProfile) and ``gpu`` (a catalog Gpu) describe a
        bare fabric sized for these GPUs as ``topology`` asks (default non-blocking rail-optimised).
    algorithm, protocol : force one, like ``NCCL_ALGO``/``NCCL_PROTO``; InputError if unavailable.
    nccl_version : tuner constants to use (default: newest bundled).
    placement : overrides where the communicator sits.
    efficiency_model : name or model (:mod:`fabricplan.perf.efficiency`; default ``analytic``).
    nics_per_gpu : NICs each GPU drives (:func:`communicator_nics`). Default: from a ``network``,
        its NICs per node // GPUs per node (e.g. 2 for 16 x 100G on 8 GPUs); without one, 1, because
        ``gpus_per_node`` is then the communicator's ranks per node, not the server's GPUs (a
        1-rank-per-node communicator on an 8-NIC node still drives one NIC).
    gpus_per_host : GPUs per host when a node (``gpus_per_node``) is a multi-host NVLink domain (4 on a
        GB200 NVL72 rack of 72); default from the ``network`` (``NetworkView.gpus_per_host``), else one host.
    span_nodes : consecutive nodes the communicator's ranks spread over end to end (default: its own
        nodes, packed). Larger for a strided group (pipeline neighbours ``tp x cp x dp`` GPUs apart): it
        is placed over that span, and the nodes between, each running its own copy of the group at the
        same time, send their flows up the same leaves (placed as not aligned: every node under a leaf
        sends; :func:`fabricplan.perf.efficiency.ecmp_flows`), so ECMP collisions and oversubscription
        act on it as on any traffic that leaves the leaf.
    n_nodes : nodes of a communicator whose nodes hold different numbers of its ranks (a job's group
        laid out across nodes partly, ``fabricplan.design.groups``); ``gpus_per_node`` is then the
        fewest of its ranks on one node. NCCL aligns every rank's graphs to the minimum channel count
        and bandwidths over all ranks (init.cc: ``graphs[a]->nChannels = std::min(...)``, ``bwIntra``,
        ``bwInter`` likewise), so the node with the fewest ranks, driving the fewest NICs, sets the
        pace; the tuner sees ``n_gpus`` ranks on ``n_nodes`` nodes. Default: ``n_gpus / gpus_per_node``.
    """
    _validate(operation, size_bytes, n_gpus, gpus_per_node, nics_per_node, n_nodes)
    if gpus_per_host is not None and (gpus_per_host < 1 or gpus_per_node % gpus_per_host):
        raise InputError(f"GPUs per node ({gpus_per_node}, the NVLink domain) must be a multiple of GPUs per host "
                         f"({gpus_per_host})", location="gpus-per-host")
    ranks_per_node = min(gpus_per_node, n_gpus)
    bare = network is None
    if network is None:
        if fabric is None or gpu is None:
            raise InputError("give a network (a resolved design) or a fabric and a GPU", location="fabric")
        nics = nics_per_node if nics_per_node is not None else gpus_per_node
        network = bare_network(catalog, fabric, gpu, gpus=n_gpus, gpus_per_node=ranks_per_node,
                               nics_per_node=nics, layout=topology)
    else:
        nics = nics_per_node if nics_per_node is not None else network.nics_per_node
        gpu = gpu or network.gpu
        if gpus_per_host is None:
            gpus_per_host = network.gpus_per_host
    profile = network.profile
    n_nodes = n_nodes or n_gpus // ranks_per_node
    span = max(span_nodes or n_nodes, n_nodes)
    if placement is None:
        placement = network.placement(span)
        if span > n_nodes:  # the nodes between run their own copies of the group at the same time
            placement = replace(placement, aligned=False)
    model = resolve_efficiency_model(efficiency_model)
    efficiency = _pattern_efficiency(model, network, placement, span, catalog)
    constants = nccl_tuner.tuner_constants(nccl_version, catalog=catalog)
    extra = network_latency_inter_us(network, placement, catalog, constants["version"])
    nic = per_nic_bandwidth_gbytes_per_s or per_nic_bandwidth(profile, operation, size_bytes, n_gpus, ranks_per_node,
                                                              nics, gpu, catalog, network.socket_bandwidth_scale)
    if nics_per_gpu is None:
        nics_per_gpu = 1 if bare else max(network.nics_per_node // max(network.gpus_per_node, 1), 1)
    if nics_per_gpu < 1:
        raise InputError(f"NICs per GPU must be >= 1, got {nics_per_gpu}", location="nics-per-gpu")
    nics_per_gpu = nics_per_gpu_by_bandwidth(nics_per_gpu, profile.link_rate_gbps, gpu_compute_capability(gpu, catalog),
                                             catalog)
    if protocol is None:  # a user's NCCL_PROTO wins over the plugin's
        host_gpus = ranks_per_node if bare else network.gpus_per_node
        protocol = efa_plugin_nccl_protocol(profile, nics, host_gpus, catalog)
    build = dict(nics_per_node=nics, per_nic_bandwidth_gbytes_per_s=nic, efficiency=efficiency,
                 latency_inter=extra, cpu_vendor=cpu_vendor, catalog=catalog, nics_per_gpu=nics_per_gpu,
                 max_channels=constants.get("max_channels"), gpus_per_host=gpus_per_host)
    uneven = {"n_nodes": n_nodes} if n_nodes * ranks_per_node != n_gpus else {}
    hops = 0  # network hops whose fabric latency NCCL's Broadcast/Reduce estimate leaves out
    if operation in nccl_tuner.TUNED_COLLECTIVES:
        comm = build_communicator(n_gpus, ranks_per_node, gpu, profile, **build, **uneven)
        choice = nccl_tuner.select_algorithm(constants, comm, operation, size_bytes, algorithm, protocol)
        if operation in ("broadcast", "reduce"):
            hops = n_nodes - 1
    elif operation == "send_recv":
        pair_per_node = 1 if n_nodes > 1 else 2
        comm = build_communicator(2, pair_per_node, gpu, profile, **build)
        choice = nccl_tuner.select_algorithm(constants, comm, "broadcast", size_bytes, algorithm, protocol)
        hops = 1 if n_nodes > 1 else 0
    else:
        choice = _all_to_all(constants, n_gpus, ranks_per_node, gpu, profile, size_bytes, build, algorithm, protocol,
                             extra if n_nodes > 1 else 0.0)
    fabric_latency = hops * extra
    time_us = float(choice.achieved_time_us) + fabric_latency  # launched channels/threads (small messages)
    algbw = size_bytes / (time_us * 1000.0)
    graph_key = nccl_tuner.GRAPH_OF_ALGORITHM.get(choice.algorithm, choice.algorithm)
    used = efficiency(GRAPH_TRAFFIC_PATTERN[graph_key])
    return CollectiveResult(
        operation=operation, size_bytes=size_bytes, n_gpus=n_gpus, gpus_per_node=ranks_per_node, n_nodes=n_nodes,
        fabric=profile.id, nccl_version=constants["version"], algorithm=choice.algorithm, protocol=choice.protocol,
        latency_us=float(choice.latency_us), time_us=time_us, algbw_gbytes_per_s=algbw,
        busbw_gbytes_per_s=algbw * bus_bandwidth_factor(operation, n_gpus),
        per_nic_bandwidth_gbytes_per_s=float(nic),
        routing_efficiency=float(used.value), channels=int(choice.channels), threads=int(choice.threads),
        nccl_estimate_us=float(choice.time_us), oversubscription_factor=float(used.oversubscription),
        network_step_delay_us=float(choice.network_step_delay_us), efficiency_model=model.name,
        fabric_latency_us=float(fabric_latency), proxy_overhead_us=float(choice.proxy_overhead_us))


def _all_to_all(constants, n_gpus, ranks_per_node, gpu, fabric, size_bytes, build, algorithm, protocol,
                fabric_latency_us=0.0):
    """AllToAll as parallel sends:
    ``t = t_p2p(0) + latencyInter + (n-1) * per_peer + remote_peers * socket_per_peer + max(remote/B_nic, local/B_nvl)``.

    Each rank sends ``size/n`` to every peer; remote bytes leave through the GPU's own NIC share
    ``k * B_nic * efficiency(all_to_all) / ppn``; local bytes use NVLink. ``t_p2p(0)`` is NCCL's
    2-rank estimate (InfiniBand constants); ``latencyInter`` the fabric's extra one-way latency (host
    stack, switch hops; 0 on InfiniBand). On the socket transport the proxy thread also spends
    ``socket_per_peer_latency_us`` of system calls per remote peer, one peer after another.
    """
    if algorithm not in (None, "ring") or protocol not in (None, "simple"):
        raise InputError("all_to_all is a set of point-to-point transfers; it has no algorithm/protocol to force",
                         location="algo")
    n_nodes = n_gpus // ranks_per_node
    catalog = build["catalog"]
    pair = build_communicator(2, 1 if n_nodes > 1 else 2, gpu, fabric, **build)
    start = nccl_tuner.select_algorithm(constants, pair, "broadcast", 1).latency_us + fabric_latency_us
    peers_latency = (n_gpus - 1) * perf_parameter("alltoall_per_peer_latency_us", catalog)
    if getattr(fabric, "socket", None) is not None:
        from fabricplan.perf.socket_transport import socket_per_peer_latency_us

        peers_latency += (n_gpus - ranks_per_node) * socket_per_peer_latency_us(
            perf_parameter("socket_syscall_us", catalog))
    remote = size_bytes * (n_gpus - ranks_per_node) / n_gpus
    local = size_bytes * (ranks_per_node - 1) / n_gpus
    nics = communicator_nics(build["nics_per_node"], ranks_per_node, build.get("nics_per_gpu", 1))
    efficiency = build["efficiency"]("all_to_all").value
    nic_share = nics * build["per_nic_bandwidth_gbytes_per_s"] * efficiency / ranks_per_node
    transfer = max(remote / (nic_share * 1000.0) if remote else 0.0,
                   local / (_intra_node_bandwidth_gbytes_per_s(gpu, catalog) * 1000.0) if local else 0.0)
    latency = start + peers_latency
    bandwidth = size_bytes / (transfer * 1000.0) if transfer else math.inf
    return nccl_tuner.AlgorithmChoice("p2p", "simple", latency, bandwidth, latency + transfer)


def sweep_sizes(start_bytes: int, stop_bytes: int, factor: int = 2) -> list[int]:
    """Sizes start, start*factor, ... <= stop, like nccl-tests ``-b -e -f``."""
    if start_bytes <= 0 or stop_bytes < start_bytes or factor < 2:
        raise InputError(f"need 0 < start <= stop and factor >= 2, got {start_bytes}:{stop_bytes} x{factor}",
                         location="--sweep-sizes")
    if stop_bytes > MAX_SIZE_BYTES:
        raise InputError(f"the sweep must stop at most at 1 TiB ({MAX_SIZE_BYTES:,} bytes), got {stop_bytes:,}",
                         location="--sweep-sizes")
    sizes, size = [], start_bytes
    while size <= stop_bytes:
        sizes.append(size)
        size *= factor
    return sizes
