"""build_graph: the explicit wiring agrees with the counts of size_fabric."""

from __future__ import annotations

from collections import Counter

import networkx as nx
import pytest

from fabricplan.errors import InputError
from fabricplan.topology import size_fabric
from fabricplan.topology.graph import build_graph

CASES = [
    dict(nodes=4, nics_per_node=8, radix=64, style="rail_optimized"),
    dict(nodes=64, nics_per_node=8, radix=64, style="rail_optimized"),
    dict(nodes=127, nics_per_node=8, radix=64, style="rail_optimized", reserved_leaf_ports=1),
    dict(nodes=160, nics_per_node=4, radix=16, style="rail_optimized"),
    dict(nodes=300, nics_per_node=2, radix=16, style="fat_tree", oversubscription=(3, 1.5)),
    dict(nodes=700, nics_per_node=1, radix=16, style="fat_tree", tiers=3),
    dict(nodes=90, nics_per_node=5, radix=24, style="leaf_spine", oversubscription=(2, 3)),
    dict(nodes=1, nics_per_node=8, radix=64, style="rail_optimized"),           # 0 tiers: NICs only
    dict(nodes=16, nics_per_node=8, radix=64, style="rail_optimized"),          # folded SU: 2 rails per leaf
    dict(nodes=10, nics_per_node=8, radix=64, style="rail_optimized"),          # folded SU: 3 rails per leaf
    dict(nodes=1, nics_per_node=8, radix=64, style="rail_optimized", tiers=2),  # one leaf holds all 8 rails
    dict(nodes=16, nics_per_node=8, radix=64, style="rail_only"),               # 4 rails per switch, no spine
    dict(nodes=63, nics_per_node=8, radix=64, style="rail_only", reserved_leaf_ports=1),  # one switch per rail
    dict(nodes=128, nics_per_node=8, radix=64, style="rail_only"),              # 8 rails x (4 leaves + 2 spines)
    dict(nodes=100, nics_per_node=4, radix=8, style="rail_only", oversubscription=(1, 1.5)),  # 3-tier rails
    dict(nodes=100, nics_per_node=2, radix=16, style="rail_only", reserved_leaf_ports=1),    # 2-tier, reserved
    dict(nodes=512, nics_per_node=1, radix=8, style="fat_tree"),                # full 4-tier k=8: k⁴/8
    dict(nodes=300, nics_per_node=1, radix=8, style="fat_tree"),                # partial super-pod
    dict(nodes=170, nics_per_node=4, radix=10, style="rail_optimized", oversubscription=(1, 1.5)),
    dict(nodes=200, nics_per_node=3, radix=12, style="leaf_spine", oversubscription=(2, 3), tiers=4),
    dict(nodes=4, nics_per_node=72, radix=64, style="rail_optimized"),          # GB200 NVL72: 8 rails per leaf
    dict(nodes=28, nics_per_node=72, radix=64, style="rail_optimized"),         # SUs of 8 racks, 4 rails per leaf
    dict(nodes=341, nics_per_node=6, radix=64, style="rail_optimized"),         # SUs of 16, 2 rails per leaf
    dict(nodes=9, nics_per_node=72, radix=64, style="leaf_spine", nics_per_host=4),  # ToR per 8 trays
    dict(nodes=5, nics_per_node=144, radix=32, style="rail_optimized", tiers=3),
]


@pytest.mark.parametrize("kw", CASES)
def test_graph_matches_counts(kw):
    f = size_fabric(**kw)
    g = build_graph(f)
    tiers = Counter(tier for _, tier in g.nodes(data="tier"))
    assert tiers == Counter({"nic": f.endpoints, **f.switches_by_tier}) - Counter()
    assert g.number_of_edges() == f.total_links
    if f.style == "rail_only":  # rails meet only over NVLink inside a node, which the graph does not draw
        groups = f.nics_per_node if f.tiers >= 2 else f.total_switches  # one component per rail (group)
        assert nx.number_connected_components(g) == groups
        assert all(len({d.get("rail") for n, d in g.subgraph(c).nodes(data=True) if n[0] != "nic"}) == 1
                   for c in nx.connected_components(g)) or f.tiers == 1
    else:
        assert nx.is_connected(g) or f.tiers == 0
    for node, tier in g.nodes(data="tier"):
        if tier == "nic":
            assert g.degree(node) == (1 if f.tiers else 0)
        else:
            reserved = f.reserved_leaf_ports if tier == "leaf" else 0
            assert g.degree(node) + reserved <= f.radix
    used = Counter()
    for node, tier in g.nodes(data="tier"):
        if tier != "nic":
            used[tier] += g.degree(node)
    assert used["leaf"] + f.reserved_ports_total == f.switch_ports_used["leaf"]
    assert all(used[t] == f.switch_ports_used[t] for t in ("spine", "core", "super_core"))


def test_four_tier_graph_core_groups():
    """Full k=8 4-tier tree: core j of a super-pod's group i links once to spine i of each of its 4 pods."""
    g = build_graph(size_fabric(nodes=512, nics_per_node=1, radix=8, style="fat_tree"))
    for node, tier in g.nodes(data="tier"):
        if tier == "core":
            spines = [n for n in g.neighbors(node) if n[0] == "spine"]
            assert len(spines) == len(set(spines)) == 4
            assert len({g.nodes[s]["pod"] for s in spines}) == 4
            assert {g.nodes[s]["pod"] // 4 for s in spines} == {g.nodes[node]["super_pod"]}


def test_rail_optimized_nic_i_goes_to_rail_i():
    f = size_fabric(nodes=64, nics_per_node=8, radix=64, style="rail_optimized")
    g = build_graph(f)
    for server in range(f.nodes):
        for nic in range(8):
            (leaf,) = list(g.neighbors(("nic", server, nic)))
            assert leaf[1] % 8 == nic and leaf[1] // 8 == server // 32


def test_rail_blocks_sit_whole_on_one_leaf_and_leaves_say_their_rails():
    """Rails packed onto leaves (28 GB200 racks at radix 64): NIC i of the servers of one SU share a leaf,
    and each leaf carries 4 rails of one SU (``rails``)."""
    f = size_fabric(nodes=28, nics_per_node=72, radix=64, style="rail_optimized")
    g = build_graph(f)
    for su in range(f.scalable_units):
        for rail in range(72):
            servers = range(su * f.servers_per_leaf, min((su + 1) * f.servers_per_leaf, f.nodes))
            assert len({next(iter(g.neighbors(("nic", s, rail)))) for s in servers}) == 1
    rails = [d["rails"] for n, d in g.nodes(data=True) if d["tier"] == "leaf"]
    assert len(rails) == 63 and all(len(r) == 4 for r in rails[:54])  # the last SU (4 racks): 8 a leaf
    assert all(len(r) == 8 for r in rails[54:])


def test_graph_size_limit():
    with pytest.raises(InputError):
        build_graph(size_fabric(nodes=8_192, nics_per_node=8, radix=64, style="rail_optimized"))
