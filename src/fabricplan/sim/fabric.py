"""Networks of fabricplan designs, and where a job's ranks sit on them.

* :func:`design_network`: the whole sized fabric of a design (:class:`~fabricplan.topology.FabricSize`,
  as :func:`fabricplan.design.resolve` sized it: rail-optimised, ToR leaf-spine or fat tree, 1-4
  tiers, oversubscription, parallel cables) cabled by :func:`fabricplan.topology.graph.build_graph`.
  Hosts are NIC ports: host ``server x nics_per_node + nic``.
* :func:`placement_network`: the part of a design one communicator spans, rebuilt from its
  :class:`~fabricplan.design.NetworkPlacement` (what the efficiency seam receives): ``n_nodes``
  nodes, ``nodes_per_leaf`` of them per leaf group, ``leaf_uplinks`` uplinks per leaf to as many
  spines, and with 3+ tiers pods of ``nodes_per_pod`` nodes whose spines have
  ``ceil(leaves per pod / r_spine)`` uplinks to their core group (the j-th spine of every pod
  joins core group j, as in Al-Fares et al. and :mod:`fabricplan.topology.graph`). On a
  rail-optimised fabric the rails are identical planes (NCCL keeps inter-node traffic on its rail,
  PXN), so one rail is built: one host per node. Under a ToR all of a node's NICs share the leaf.
  4-tier fabrics are modelled by their lower 3 tiers.
* :func:`job_nodes`: the nodes a job's ranks land on, in rank order: with topology-aware scheduling
  the first ``n`` nodes (whole leaf groups, rank order); without it a seeded random choice of
  nodes in a random order (rings and peers land on arbitrary leaves).
"""

from __future__ import annotations

import math

import numpy as np

from fabricplan.errors import InputError
from fabricplan.sim.network import HOST, SWITCH, Network

_TIER_OF = {"nic": 0, "leaf": 1, "spine": 2, "core": 3, "super_core": 4}


def _defaults(link_gbps, link_latency_us, buffer_bytes, catalog) -> tuple[float, float, float]:
    from fabricplan.sim.params import sim_parameter

    return (float(link_gbps if link_gbps is not None else sim_parameter("sim_link_gbps", catalog)),
            float(link_latency_us if link_latency_us is not None else sim_parameter("sim_link_latency_us", catalog)),
            float(buffer_bytes if buffer_bytes is not None else sim_parameter("sim_switch_buffer_bytes_per_port",
                                                                              catalog)))


def _network(up_src, up_dst, n_hosts, tiers, link_gbps, link_latency_us, buffer_bytes) -> Network:
    src = np.concatenate([up_src, up_dst]).astype(np.int64)
    dst = np.concatenate([up_dst, up_src]).astype(np.int64)
    n_links = len(src)
    tiers = np.asarray(tiers, dtype=np.int64)
    kind = np.where(tiers == 0, HOST, SWITCH)
    return Network(link_src=src, link_dst=dst, capacity_gbps=np.full(n_links, link_gbps),
                   latency_us=np.full(n_links, link_latency_us), buffer_bytes=np.full(n_links, buffer_bytes),
                   node_kind=kind, node_tier=tiers, n_hosts=n_hosts)


def design_network(size, link_gbps: float | None = None, link_latency_us: float | None = None,
                   buffer_bytes: float | None = None, *, catalog) -> Network:
    """The cabled fabric of a sized design (module docstring); ``link_gbps`` is the design's port
    speed (default ``perf_defaults.sim_link_gbps``). InputError above the graph size limit.

    A multi-plane design is one plane with its links at ``planes x link_gbps``: each NIC spreads its
    traffic evenly over its ports, one per identical plane, so one plane carrying every flow at P times
    the port speed has the same rates and finishing times as P planes each carrying 1/P of it."""
    from fabricplan.topology.graph import build_graph

    link_gbps, link_latency_us, buffer_bytes = _defaults(link_gbps, link_latency_us, buffer_bytes, catalog)
    link_gbps *= max(int(getattr(size, "planes", 1)), 1)
    graph = build_graph(size)
    nics = size.nics_per_node
    n_hosts = size.nodes * nics
    ids: dict = {}
    switches = sorted((n for n in graph.nodes if n[0] != "nic"), key=lambda n: (_TIER_OF[n[0]], n[1]))
    for node in graph.nodes:
        if node[0] == "nic":
            ids[node] = node[1] * nics + node[2]
    for i, node in enumerate(switches):
        ids[node] = n_hosts + i
    tiers = np.zeros(n_hosts + len(switches), dtype=np.int64)
    tiers[n_hosts:] = [_TIER_OF[n[0]] for n in switches]
    edges = np.array([(ids[u], ids[v]) for u, v in graph.edges()], dtype=np.int64).reshape(-1, 2)
    low_first = tiers[edges[:, 0]] <= tiers[edges[:, 1]]
    up_src = np.where(low_first, edges[:, 0], edges[:, 1])
    up_dst = np.where(low_first, edges[:, 1], edges[:, 0])
    return _network(up_src, up_dst, n_hosts, tiers, link_gbps, link_latency_us, buffer_bytes)


def clos_network(n_hosts: int, hosts_per_leaf: int, leaf_uplinks: int, *, tiers: int = 2,
                 leaves_per_pod: int | None = None, spine_uplinks: int | None = None,
                 link_gbps: float | None = None, link_latency_us: float | None = None,
                 buffer_bytes: float | None = None, catalog) -> Network:
    """A folded Clos: ``n_hosts`` hosts, ``hosts_per_leaf`` per leaf (host h on leaf
    ``h // hosts_per_leaf``), each leaf with one link to each of ``leaf_uplinks`` spines (of its
    pod, with 3 tiers). With ``tiers=3``: pods of ``leaves_per_pod`` leaves; spine j of every pod
    has one link to each of the ``spine_uplinks`` cores of core group j. ``tiers=1``: one switch.
    """
    link_gbps, link_latency_us, buffer_bytes = _defaults(link_gbps, link_latency_us, buffer_bytes, catalog)
    if n_hosts < 1 or hosts_per_leaf < 1 or leaf_uplinks < 1 or tiers not in (1, 2, 3):
        raise InputError(f"a Clos needs hosts, hosts per leaf and leaf uplinks >= 1 and 1-3 tiers; got "
                         f"{n_hosts}, {hosts_per_leaf}, {leaf_uplinks}, {tiers}", location="network")
    if tiers == 1:
        hosts_per_leaf = n_hosts
    n_leaves = -(-n_hosts // hosts_per_leaf)
    if tiers == 3 and n_leaves <= (leaves_per_pod or n_leaves):
        tiers = 2  # the communicator fits one pod
    h = np.arange(n_hosts)
    leaf0 = n_hosts
    up_src, up_dst = [h], [leaf0 + h // hosts_per_leaf]
    node_tiers = [np.zeros(n_hosts), np.ones(n_leaves)]
    if tiers >= 2:
        spine0 = leaf0 + n_leaves
        leaves = np.arange(n_leaves)
        j = np.arange(leaf_uplinks)
        if tiers == 2:
            up_src.append(leaf0 + np.repeat(leaves, leaf_uplinks))
            up_dst.append(spine0 + np.tile(j, n_leaves))
            node_tiers.append(np.full(leaf_uplinks, 2))
        else:
            per_pod = int(leaves_per_pod)
            pods = -(-n_leaves // per_pod)
            core_group = max(int(spine_uplinks or per_pod), 1)
            pod = leaves // per_pod
            up_src.append(leaf0 + np.repeat(leaves, leaf_uplinks))
            up_dst.append(spine0 + np.repeat(pod, leaf_uplinks) * leaf_uplinks + np.tile(j, n_leaves))
            n_spines = pods * leaf_uplinks
            core0 = spine0 + n_spines
            spines = np.arange(n_spines)
            up_src.append(spine0 + np.repeat(spines, core_group))
            up_dst.append(core0 + np.repeat(spines % leaf_uplinks, core_group) * core_group
                          + np.tile(np.arange(core_group), n_spines))
            node_tiers += [np.full(n_spines, 2), np.full(leaf_uplinks * core_group, 3)]
    return _network(np.concatenate(up_src), np.concatenate(up_dst), n_hosts, np.concatenate(node_tiers),
                    link_gbps, link_latency_us, buffer_bytes)


def placement_network(placement, n_nodes: int, link_gbps: float | None = None, *, catalog) -> Network:
    """The fabric one communicator of ``n_nodes`` nodes spans, from its placement (module docstring)."""
    hosts_per_node = max(int(placement.nics_per_leaf), 1)
    tiers = min(max(int(placement.tiers), 1), 3)
    ratios = tuple(placement.oversubscription) or (1.0,)
    per_pod = placement.nodes_per_pod // max(placement.nodes_per_leaf, 1) if placement.nodes_per_pod else None
    spine_ratio = ratios[1] if len(ratios) > 1 else 1.0
    spine_up = math.ceil(per_pod / max(spine_ratio, 1e-9)) if per_pod else None
    return clos_network(n_nodes * hosts_per_node, max(placement.nodes_per_leaf, 1) * hosts_per_node,
                        max(int(placement.leaf_uplinks), 1), tiers=tiers, leaves_per_pod=per_pod,
                        spine_uplinks=spine_up, link_gbps=link_gbps, catalog=catalog)


def job_nodes(cluster_nodes: int, n_nodes: int, *, aligned: bool = True, seed: int = 0) -> np.ndarray:
    """Node ids of a job's ``n_nodes`` nodes in rank order (module docstring)."""
    if not 1 <= n_nodes <= cluster_nodes:
        raise InputError(f"a job of {n_nodes} nodes does not fit {cluster_nodes} nodes", location="gpus")
    if aligned:
        return np.arange(n_nodes)
    rng = np.random.default_rng(seed)
    return rng.permutation(cluster_nodes)[:n_nodes]


def node_hosts(nodes: np.ndarray, hosts_per_node: int) -> np.ndarray:
    """``len(nodes) x hosts_per_node`` host ids: NIC ``i`` of node ``n`` is host ``n x hosts_per_node + i``."""
    nodes = np.asarray(nodes, dtype=np.int64)
    return nodes[:, None] * hosts_per_node + np.arange(hosts_per_node)[None, :]
