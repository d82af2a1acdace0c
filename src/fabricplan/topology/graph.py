"""Explicit wiring of a sized fabric as a networkx MultiGraph (small fabrics only, for simulators/checks).

Nodes: ``("nic", server, i)`` endpoints and ``("leaf"|"spine"|"core"|"super_core", index)`` switches,
each with a ``tier`` attribute (rail-optimised leaves also carry ``rails``, the rails they hold, and
``rail`` when that is one; with 3+ tiers leaves and spines carry
``pod``, and with 4 tiers cores carry ``super_pod``). One edge per cable, so parallel links appear as
parallel edges. The wiring follows :func:`size_fabric` exactly, block by block: in each pod (and
super-pod) the j-th top switch of every sub-block joins position group j and spreads its uplinks
evenly over that group's upper switches; the top tier of a 3+ tier fabric takes the uplinks of the
tier below round-robin. A multi-tier rail-only fabric is one such fat tree per rail, with no link
between rails (all switches carry ``rail``). A single node (0 tiers) is its NICs alone. Reserved leaf ports
(UFM/management) are not drawn.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from fabricplan.errors import InputError
from fabricplan.topology.ports import TIER_NAMES, tier_ratios, uplinks_needed, upper_tier_switches
from fabricplan.topology.sizing import FabricSize, _Plan, _plan, leaf_layout_of, plane_of

#: Refuse to materialise graphs bigger than this many nodes (switches + NIC ports).
MAX_GRAPH_NODES = 50_000
#: Node attribute naming the block a switch belongs to, per block level (1 = pod, 2 = super-pod).
_BLOCK_ATTR = {1: "pod", 2: "super_pod"}


@dataclass
class _Wired:
    """A wired block: its top switches and the uplinks each of them needs."""

    tops: list[tuple]
    needs: list[int]


def build_graph(size: FabricSize) -> nx.MultiGraph:
    """Return the cabling of ``size`` as a MultiGraph; InputError if it exceeds MAX_GRAPH_NODES. A
    multi-plane fabric is drawn as one of its planes (the planes are identical and share no link;
    the graph's ``planes`` attribute says how many there are)."""
    if size.planes > 1:
        g = build_graph(plane_of(size))
        g.graph.update(style=size.style, planes=size.planes)
        return g
    if size.endpoints + size.total_switches > MAX_GRAPH_NODES:
        raise InputError(f"graph of {size.endpoints + size.total_switches:,} nodes exceeds the "
                         f"{MAX_GRAPH_NODES:,}-node limit; use the counts in FabricSize instead", "size")
    if size.style == "rail_only" and size.tiers >= 2:
        return _rail_only_graph(size)
    g = nx.MultiGraph(style=size.style, tiers=size.tiers, radix=size.radix)
    for leaf in range(size.leaf_switches):
        g.add_node(("leaf", leaf), tier="leaf")
    leaf_of = _leaf_of(size)
    rails: dict[int, set[int]] = {}
    for server in range(size.nodes):
        for nic in range(size.nics_per_node):
            g.add_node(("nic", server, nic), tier="nic")
            if size.tiers:
                leaf = leaf_of(server, nic)
                rails.setdefault(leaf, set()).add(nic)
                g.add_edge(("nic", server, nic), ("leaf", leaf))
    if size.style == "rail_optimized" and size.tiers >= 2:  # the rails each leaf carries
        for leaf, on in rails.items():
            g.nodes[("leaf", leaf)]["rails"] = tuple(sorted(on))
            if len(on) == 1:
                g.nodes[("leaf", leaf)]["rail"] = next(iter(on))
    if size.tiers >= 2:
        _wire_upper_tiers(g, size)
    return g


def _rail_only_graph(size: FabricSize) -> nx.MultiGraph:
    """Multi-tier rail-only: one fat tree per rail (``nics_per_node`` = 1), wired as above and laid side
    by side with no link between rails. NIC ``i`` of a server is on rail ``i``; every switch carries
    its ``rail``; switch indices run rail by rail (rail r's leaves are ``r·L .. r·L + L − 1``)."""
    from fabricplan.topology.sizing import size_fabric

    rail = size_fabric(nodes=size.nodes, nics_per_node=1, radix=size.radix, style="fat_tree", tiers=size.tiers,
                       oversubscription=size.oversubscription, reserved_leaf_ports=size.reserved_leaf_ports,
                       max_tiers=size.tiers)
    one = build_graph(rail)
    per_tier = rail.switches_by_tier
    g = nx.MultiGraph(style=size.style, tiers=size.tiers, radix=size.radix)
    for r in range(size.nics_per_node):
        def name(node, r=r):
            return ("nic", node[1], r) if node[0] == "nic" else (node[0], r * per_tier[node[0]] + node[1])
        for node, data in one.nodes(data=True):
            g.add_node(name(node), **data, **({} if node[0] == "nic" else {"rail": r}))
        g.add_edges_from((name(u), name(v)) for u, v in one.edges())
    return g


def _leaf_of(size: FabricSize):
    """``(server, nic) -> leaf``: one switch (1 tier), rail groups on switches (rail-only), else the leaf
    layout :func:`size_fabric` built (:func:`fabricplan.topology.sizing.leaf_layout_of`)."""
    if size.style == "rail_only":  # rails 0..r-1 on switch 0, the next r on switch 1, ...
        per_switch = -(-size.nics_per_node // max(size.leaf_switches, 1))
        return lambda server, nic: nic // per_switch
    if size.tiers <= 1:  # one switch (or none: a single node's NICs are not cabled)
        return lambda server, nic: 0
    return leaf_layout_of(size).leaf_of


def _wire_upper_tiers(g: nx.MultiGraph, size: FabricSize) -> None:
    """Wire pods, super-pods and the top tier (see the module docstring)."""
    plan = _plan(size.radix, size.tiers, tier_ratios(size.oversubscription), size.leaves_per_pod)
    need = uplinks_needed(size.leaf_host_ports_max, plan.ratios[0])
    blocks = [_Wired([("leaf", i)], [need]) for i in range(size.leaf_switches)]
    counter = [0] * len(TIER_NAMES)
    if size.tiers == 2:
        _join(g, blocks, 1, plan, counter, top=True)
        return
    for level in range(1, size.tiers - 1):
        per_block = plan.block_leaves[level] // plan.block_leaves[level - 1]
        blocks = [_join(g, blocks[i:i + per_block], level, plan, counter, block=i // per_block)
                  for i in range(0, len(blocks), per_block)]
    stubs = [s for b in blocks for s, n in zip(b.tops, b.needs) for _ in range(n)]
    top = TIER_NAMES[size.tiers - 1]
    tops = size.switches_by_tier[top]
    for t in range(tops):
        g.add_node((top, t), tier=top)
    for i, s in enumerate(stubs):
        g.add_edge(s, (top, i % tops))


def _join(g: nx.MultiGraph, subs: list[_Wired], tier: int, plan: _Plan, counter: list[int],
          top: bool = False, block: int | None = None) -> _Wired:
    """Add one block's tier-``tier`` switches, one position group at a time, and cable its members."""
    name, down_ports = TIER_NAMES[tier], plan.radix if top else plan.down[tier]
    tops, needs = [], []
    for j in range(max(len(b.tops) for b in subs)):
        members = [b for b in subs if len(b.tops) > j]
        need = max(max(b.needs) for b in members)  # as sizing: a block's neediest top switch
        count, uplinks = upper_tier_switches(len(members), need, plan.up[tier - 1], down_ports)
        group = [(name, counter[tier] + i) for i in range(count)]
        counter[tier] += count
        for node in group:
            g.add_node(node, tier=name, **({_BLOCK_ATTR[tier]: block} if block is not None else {}))
        for member in members:
            if block is not None and tier == 1:
                g.nodes[member.tops[j]]["pod"] = block
            for i in range(uplinks):
                g.add_edge(member.tops[j], group[i % count])
        down = len(members) * uplinks // count
        tops += group
        needs += [0 if top else uplinks_needed(down, plan.ratios[tier])] * count
    return _Wired(tops, needs)
