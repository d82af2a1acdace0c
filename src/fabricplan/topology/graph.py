"""Explicit wiring of a sized fabric as a networkx MultiGraph (small fabrics only, for simulators/checks).

Nodes: ``("nic", server, i)`` endpoints and ``("leaf"|"spine"|"core", index)`` switches, each with a
``tier`` attribute (rail leaves also carry ``rail``, pod members ``pod``). One edge per cable, so
parallel links appear as parallel edges. The wiring follows :func:`size_fabric` exactly: every leaf
spreads its uplinks evenly over its (pod's) spines; spine uplinks go round-robin over the cores.
Reserved leaf ports (UFM/management) are not drawn.
"""

from __future__ import annotations

import networkx as nx

from fabricplan.errors import InputError
from fabricplan.topology.ports import leaf_ports, uplinks_needed
from fabricplan.topology.sizing import FabricSize, _pod

#: Refuse to materialise graphs bigger than this many nodes (switches + NIC ports).
MAX_GRAPH_NODES = 50_000


def build_graph(size: FabricSize) -> nx.MultiGraph:
    """Return the cabling of ``size`` as a MultiGraph; InputError if it exceeds MAX_GRAPH_NODES."""
    if size.endpoints + size.total_switches > MAX_GRAPH_NODES:
        raise InputError(f"graph of {size.endpoints + size.total_switches:,} nodes exceeds the "
                         f"{MAX_GRAPH_NODES:,}-node limit; use the counts in FabricSize instead", "size")
    g = nx.MultiGraph(style=size.style, tiers=size.tiers, radix=size.radix)
    for leaf in range(size.leaf_switches):
        g.add_node(("leaf", leaf), tier="leaf")
    for server in range(size.nodes):
        for nic in range(size.nics_per_node):
            g.add_node(("nic", server, nic), tier="nic")
            g.add_edge(("nic", server, nic), ("leaf", _leaf_of(size, server, nic)))
    if size.tiers == 2:
        _wire_spines(g, range(size.leaf_switches), range(size.spine_switches), size.leaf_uplinks)
    elif size.tiers == 3:
        _wire_pods_and_cores(g, size)
    return g


def _leaf_of(size: FabricSize, server: int, nic: int) -> int:
    if size.tiers == 1:
        return 0
    if size.style == "rail_optimized":  # SU = server // servers_per_su, rail = nic
        return (server // size.servers_per_leaf) * size.nics_per_node + nic
    if size.style == "leaf_spine":
        return server // size.servers_per_leaf
    return (server * size.nics_per_node + nic) // size.leaf_host_ports_max


def _wire_spines(g: nx.MultiGraph, leaves, spines, uplinks_per_leaf: int, pod: int | None = None) -> None:
    spines = list(spines)
    for s in spines:
        g.add_node(("spine", s), tier="spine", **({"pod": pod} if pod is not None else {}))
    for leaf in leaves:
        if pod is not None:
            g.nodes[("leaf", leaf)]["pod"] = pod
        for i in range(uplinks_per_leaf):
            g.add_edge(("leaf", leaf), ("spine", spines[i % len(spines)]))


def _wire_pods_and_cores(g: nx.MultiGraph, size: FabricSize) -> None:
    r_leaf, r_spine = size.oversubscription
    leaf_up = leaf_ports(size.radix, r_leaf)[1]
    spine_down = leaf_ports(size.radix, r_spine)[0]
    need = uplinks_needed(size.leaf_host_ports_max, r_leaf)
    first_leaf = first_spine = 0
    stubs: list[int] = []
    for pod in range(size.pods):
        members = min(size.leaves_per_pod, size.leaf_switches - first_leaf)
        shape = _pod(members, need, leaf_up, spine_down, r_spine)
        spines = range(first_spine, first_spine + shape.spines)
        _wire_spines(g, range(first_leaf, first_leaf + members), spines, shape.leaf_uplinks, pod)
        stubs += [s for s in spines for _ in range(shape.spine_up)]
        first_leaf += members
        first_spine += shape.spines
    for c in range(size.core_switches):
        g.add_node(("core", c), tier="core")
    for i, s in enumerate(stubs):
        g.add_edge(("spine", s), ("core", i % size.core_switches))
