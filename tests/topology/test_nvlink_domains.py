"""Nodes that are multi-host NVLink domains (GB200 NVL72: 72 NICs per rack, 18 hosts of 4): the rails are
packed onto leaves before the tiers are counted (issue 26), and a ToR holds hosts, not whole racks."""

from __future__ import annotations

import pytest

from fabricplan.errors import InputError
from fabricplan.topology import max_endpoints, size_fabric, tier_capacities
from fabricplan.topology.graph import build_graph

GB200 = dict(nics_per_node=72, radix=64)  # a GB200 NVL72 rack's 72 ConnectX-7 400G NICs on QM9700 (k = 64)


def test_four_gb200_racks_are_two_tiers_on_radix_64():
    """288 NICs are far below a 2-tier radix-64 Clos's k²/2 = 2,048 ports (Al-Fares et al. 2008). One
    partly filled SU folds floor(32 / 4) = 8 of its 72 rails onto each leaf: ceil(72 / 8) = 9 leaves of
    32 host ports; spines S | 32 with 9 · ceil(32 / S) <= 64 -> S = 8 (4 links from each leaf to each)."""
    f = size_fabric(nodes=4, style="rail_optimized", **GB200)
    assert (f.tiers, f.leaf_switches, f.spine_switches, f.core_switches, f.total_switches) == (2, 9, 8, 0, 17)
    assert (f.rails_per_leaf, f.leaf_host_ports_max, f.leaf_uplinks) == (8, 32, 32)
    assert (f.host_links, f.leaf_spine_links, f.total_links) == (288, 288, 576)
    assert f.max_endpoints == 28 * 72 == 2_016  # whole racks within k²/2 = 2,048
    assert f.notes[0] == ("2 tiers: 288 endpoints (4 nodes × 72 NICs) exceed the 1-tier maximum of 64 "
                          "at radix 64")
    assert not any("maximum of 0" in n for n in f.notes)
    fat = size_fabric(nodes=4, style="fat_tree", **GB200)
    assert fat.switches_by_tier == f.switches_by_tier  # the same counts as the plain fat tree


def test_tiers_2_and_each_style_build_the_gb200_cluster():
    assert size_fabric(nodes=4, style="rail_optimized", tiers=2, **GB200).total_switches == 17
    tor = size_fabric(nodes=4, style="leaf_spine", nics_per_host=4, **GB200)
    # ToR unit = one compute tray (host) of 4 NICs: 8 trays per ToR, 72 trays on 9 ToRs, 8 spines
    assert (tor.tiers, tor.leaf_switches, tor.spine_switches, tor.leaf_host_ports_max) == (2, 9, 8, 32)
    assert tor.host_links_in_rack and tor.nics_per_host == 4
    assert any("each of a node's 18 hosts takes its own ToR ports" in n for n in tor.notes)
    assert size_fabric(nodes=4, style="leaf_spine", nics_per_host=4, tiers=2, **GB200).total_switches == 17
    # rail-only: 4 servers per rail, 16 rails per 64-port switch: 5 switches, no spine
    only = size_fabric(nodes=4, style="rail_only", **GB200)
    assert (only.tiers, only.total_switches, only.spine_switches) == (1, 5, 0)


def test_a_tor_that_cannot_hold_a_whole_rack_says_so_in_one_line():
    """Without the host size a ToR would have to take a whole 72-NIC rack on 32 host ports."""
    with pytest.raises(InputError) as err:
        size_fabric(nodes=4, style="leaf_spine", **GB200)
    assert "too few for one server's 72 NICs" in err.value.message and "\n" not in err.value.message
    with pytest.raises(InputError) as host:  # a host of 40 NICs does not fit 32 ToR ports either
        size_fabric(nodes=4, nics_per_node=80, radix=64, style="leaf_spine", nics_per_host=40)
    assert "too few for one host's 40 NICs" in host.value.message
    with pytest.raises(InputError) as odd:
        size_fabric(nodes=4, style="leaf_spine", nics_per_host=5, **GB200)
    assert odd.value.location == "nics_per_host"


def test_two_tiers_hold_28_racks_and_pack_four_rails_a_leaf():
    """28 racks = 2,016 NICs <= 2,048. One rail per leaf would need 72 leaves (> k = 64, the most a
    2-tier Clos has); SUs of 8 racks with 4 rails per leaf (32 ports) need 18 leaves each: 3 full SUs
    (54 leaves) + 4 racks at 8 rails per leaf (9 leaves) = 63 = ceil(2,016 / 32), the fat tree's."""
    f = size_fabric(nodes=28, style="rail_optimized", **GB200)
    assert (f.tiers, f.leaf_switches, f.spine_switches) == (2, 63, 32)
    assert (f.servers_per_leaf, f.rails_per_leaf, f.scalable_units) == (8, 4, 4)
    assert f.switches_by_tier == size_fabric(nodes=28, style="fat_tree", **GB200).switches_by_tier
    assert any("4 of its 72 rails per leaf" in n for n in f.notes)
    g = build_graph(f)  # every rail of an SU on one leaf
    for su in range(4):
        for rail in range(72):
            leaves = {next(iter(g.neighbors(("nic", server, rail))))
                      for server in range(su * 8, min(su * 8 + 8, 28))}
            assert len(leaves) == 1
    nxt = size_fabric(nodes=29, style="rail_optimized", **GB200)  # 2,088 > 2,048 ports: a 3rd tier
    assert nxt.tiers == 3
    assert nxt.notes[0].endswith("exceed the 2-tier maximum of 2,016 at radix 64")
    with pytest.raises(InputError, match="3 tiers would fit"):
        size_fabric(nodes=29, style="rail_optimized", tiers=2, **GB200)


def test_tier_capacities_of_72_and_144_nic_domains_are_the_fat_trees_in_whole_racks():
    caps = {t: max_endpoints(64, t) for t in (1, 2, 3, 4)}  # 64, 2,048, 65,536, 2,097,152
    for nics in (72, 144):
        expected = {t: c // nics for t, c in caps.items()}
        assert tier_capacities(nics_per_node=nics, radix=64, style="rail_optimized") == expected
        assert tier_capacities(nics_per_node=nics, radix=64, style="fat_tree") == expected
    assert tier_capacities(nics_per_node=72, radix=64, style="rail_optimized") == {1: 0, 2: 28, 3: 910, 4: 29_127}
    # ToR: whole 4-NIC hosts, 8 per ToR; 32 | 4 so the same whole racks
    assert tier_capacities(nics_per_node=72, radix=64, style="leaf_spine", nics_per_host=4) == {
        1: 0, 2: 28, 3: 910, 4: 29_127}


def test_a_144_gpu_domain_folds_like_a_72_gpu_one():
    """Two 144-NIC domains (288 NICs): 16 rails per leaf, 9 leaves + 8 spines; 14 domains (2,016 NICs)
    still 2 tiers: SUs of 4 domains with 8 rails per leaf, 63 leaves."""
    two = size_fabric(nodes=2, nics_per_node=144, radix=64, style="rail_optimized")
    assert (two.tiers, two.leaf_switches, two.spine_switches, two.rails_per_leaf) == (2, 9, 8, 16)
    many = size_fabric(nodes=14, nics_per_node=144, radix=64, style="rail_optimized")
    assert (many.tiers, many.leaf_switches, many.spine_switches) == (2, 63, 32)
    assert (many.servers_per_leaf, many.rails_per_leaf) == (4, 8)


def test_128_gb200_racks_the_superpod_maximum_at_radix_64():
    """9,216 GPUs (NVIDIA's GB200 SuperPOD scales to 128 racks): 9,216 NICs = 288 leaves of 32 (SUs of 32
    racks, one rail per leaf); 3 tiers of pods of 32 leaves, an SU's 72 leaves straddling pods; 288
    spines and 9,216 / 64 = 144 cores (the fat tree's N/(k/2), N/(k/2), N/k)."""
    f = size_fabric(nodes=128, style="rail_optimized", **GB200)
    assert (f.tiers, f.leaf_switches, f.spine_switches, f.core_switches) == (3, 288, 288, 144)
    assert (f.servers_per_leaf, f.rails_per_leaf, f.pods, f.leaves_per_pod) == (32, 1, 9, 32)
    assert any("SUs straddle pods" in n for n in f.notes)
