"""Reference rows from docs/reference/topology.md: NVIDIA DGX SuperPOD RAs, §1.6 suggested cases, fat-tree maxima."""

from __future__ import annotations

import pytest

from fabricplan.topology import leaf_ports, max_endpoints, size_fabric

# DGX B200 SuperPOD RA table (NDR, k=64, 8 rails, 32 nodes/SU):
# SU, nodes, leaf, spine, core, node-leaf, leaf-spine, spine-core cables
B200_ROWS = [
    (2, 64, 16, 8, 0, 512, 512, 0),
    (4, 128, 32, 16, 0, 1_024, 1_024, 0),
    (8, 256, 64, 32, 0, 2_048, 2_048, 0),
    (16, 512, 128, 128, 64, 4_096, 4_096, 4_096),
    (32, 1_024, 256, 256, 128, 8_192, 8_192, 8_192),
    (64, 2_048, 512, 512, 256, 16_384, 16_384, 16_384),
]


@pytest.mark.parametrize("su, nodes, leaf, spine, core, host, leaf_spine, spine_core", B200_ROWS)
def test_dgx_b200_superpod_ra_rows(su, nodes, leaf, spine, core, host, leaf_spine, spine_core):
    f = size_fabric(nodes=nodes, nics_per_node=8, radix=64, style="rail_optimized")
    assert f.tiers == (2 if su <= 8 else 3)
    assert (f.leaf_switches, f.spine_switches, f.core_switches) == (leaf, spine, core)
    assert (f.host_links, f.leaf_spine_links, f.spine_core_links) == (host, leaf_spine, spine_core)
    assert f.endpoints == nodes * 8 == host
    assert f.scalable_units == su
    assert f.oversubscription_effective == ((1.0,) if su <= 8 else (1.0, 1.0))
    assert f.bisection_ratio == 1.0
    if f.tiers == 3:  # pods of 4 whole SUs (32 leaves = spine down ports)
        assert f.leaves_per_pod == 32 and f.pods == su // 4


def test_su_sizing_rail_optimized_k64():
    """DGX H100 RA: SU = 32 servers / 256 GPUs / 8 leaf (one per rail)."""
    f = size_fabric(nodes=32, nics_per_node=8, radix=64, style="rail_optimized", tiers=2)
    assert (f.scalable_units, f.servers_per_leaf, f.endpoints, f.leaf_switches) == (1, 32, 256, 8)
    assert f.spine_switches == 4  # "4 spines per SU in 2-tier"
    assert f.leaf_uplinks == 32 and f.leaf_host_ports_max == 32


def test_dgx_h100_ra_127_nodes_4_su():
    """H100 RA "4 SU, 127-node": the UFM server takes one of the 128 node slots (no per-leaf reservation)."""
    f = size_fabric(nodes=127, nics_per_node=8, radix=64, style="rail_optimized")
    assert (f.scalable_units, f.leaf_switches, f.spine_switches) == (4, 32, 16)


def test_dgx_h100_ra_reserved_ufm_port_per_leaf():
    """With one UFM port reserved per leaf an SU is 31 servers; 4 SU = 124 nodes still 32 leaf / 16 spine,
    each leaf fully cabled 31 down + 1 UFM + 32 up."""
    f = size_fabric(nodes=124, nics_per_node=8, radix=64, style="rail_optimized", reserved_leaf_ports=1)
    assert (f.scalable_units, f.servers_per_leaf, f.leaf_switches, f.spine_switches) == (4, 31, 32, 16)
    assert f.leaf_uplinks == 32
    assert f.reserved_ports_total == 32
    assert f.switch_ports_used["leaf"] == 32 * 64


def test_dgx_b300_one_su_64_nodes():
    """DGX B300 (NDR, 64 nodes/SU): 1 SU = 64 nodes / 512 GPUs / 16 leaf / 8 spine at k=64.

    Assumption: NVIDIA's 64-node SU is two of our 32-server rail groups (k/2 = 32 servers per rail leaf).
    The B300 16 SU row (1,024 nodes, 256 leaf / 128 spine, 2 tiers) is *not* reproducible: 256 leaves
    cannot all reach a common spine layer of 64-port switches; it needs separate spine planes per rail,
    which this engine does not model (it gives 3 tiers: 256 / 256 / 128).
    """
    f = size_fabric(nodes=64, nics_per_node=8, radix=64, style="rail_optimized")
    assert (f.endpoints, f.leaf_switches, f.spine_switches, f.tiers) == (512, 16, 8, 2)


@pytest.mark.parametrize("su, leaf, spine", [(1, 8, 4), (18, 144, 72)])
def test_dgx_b300_xdr_k144(su, leaf, spine):
    """DGX B300-XDR (Q3400, k=144 @800G): SU = 72 nodes; 18 SU = 1,296 nodes, 10,368 cables."""
    f = size_fabric(nodes=72 * su, nics_per_node=8, radix=144, style="rail_optimized")
    assert (f.tiers, f.leaf_switches, f.spine_switches, f.core_switches) == (2, leaf, spine, 0)
    assert f.host_links == 576 * su
    assert f.servers_per_leaf == 72


@pytest.mark.parametrize("endpoints, leaf, spine, core, links", [
    (1_024, 32, 16, 0, 2_048),
    (2_048, 64, 32, 0, 4_096),
    (4_096, 128, 128, 64, 12_288),
    (32_768, 1_024, 1_024, 512, 98_304),
    (65_536, 2_048, 2_048, 1_024, 196_608),
])
def test_suggested_cases_k64(endpoints, leaf, spine, core, links):
    """docs/reference/topology.md §1.6 (B200 RA; tech-talk-cto sheet: 48 / 96 / 2,560 / 5,120 switches)."""
    for style, nodes, nics in (("fat_tree", endpoints, 1), ("rail_optimized", endpoints // 8, 8)):
        f = size_fabric(nodes=nodes, nics_per_node=nics, radix=64, style=style)
        assert (f.leaf_switches, f.spine_switches, f.core_switches) == (leaf, spine, core), style
        assert f.total_switches == leaf + spine + core
        assert f.total_links == links


def test_full_three_tier_k64_is_5k2_over_4():
    f = size_fabric(nodes=65_536, nics_per_node=1, radix=64, style="fat_tree")
    assert f.total_switches == 5 * 64**2 // 4 == 5_120
    assert f.pods == 64 and f.max_endpoints == 65_536
    assert f.switch_ports_used == f.switch_ports_available  # a full tree uses every port


def test_k144_10368_endpoints_fat_tree():
    f = size_fabric(nodes=10_368, nics_per_node=1, radix=144, style="fat_tree")
    assert (f.tiers, f.leaf_switches, f.spine_switches) == (2, 144, 72)


@pytest.mark.parametrize("k", [4, 8, 16, 32, 64, 128, 144, 256])
def test_non_blocking_maxima(k):
    assert max_endpoints(k, 1) == k
    assert max_endpoints(k, 2) == k * k // 2
    assert max_endpoints(k, 3) == k**3 // 4
    two = size_fabric(nodes=k * k // 2, nics_per_node=1, radix=k, style="fat_tree")
    assert (two.tiers, two.leaf_switches, two.spine_switches) == (2, k, k // 2)
    three = size_fabric(nodes=k**3 // 4, nics_per_node=1, radix=k, style="fat_tree")
    assert (three.tiers, three.leaf_switches, three.spine_switches, three.core_switches) == (
        3, k * k // 2, k * k // 2, k * k // 4)
    assert three.total_switches == 5 * k * k // 4


@pytest.mark.parametrize("k, r, down, up", [(64, 1, 32, 32), (64, 3, 48, 16), (64, 7, 56, 8),
                                            (64, 1.125, 33, 31), (128, 2, 85, 43), (144, 1, 72, 72)])
def test_leaf_ports_split(k, r, down, up):
    assert leaf_ports(k, r) == (down, up)


@pytest.mark.parametrize("k, r", [(64, 3), (64, 7), (128, 2), (32, 1.5)])
def test_oversubscribed_two_tier_maximum_is_k_times_d(k, r):
    d, u = leaf_ports(k, r)
    assert max_endpoints(k, 2, (r,)) == k * d
    f = size_fabric(nodes=k * d, nics_per_node=1, radix=k, style="fat_tree", oversubscription=(r,))
    assert (f.tiers, f.leaf_switches, f.spine_switches, f.max_endpoints) == (2, k, u, k * d)
    assert f.oversubscription_effective == (d / u,)
    assert f.bisection_ratio == pytest.approx(u / d)
    assert size_fabric(nodes=k * d + 1, nics_per_node=1, radix=k, style="fat_tree",
                       oversubscription=(r,)).tiers == 3


def test_three_tier_oversubscribed_spine():
    """Meta-like: non-blocking pods, 7:1 above the pod (spine→core). k=64: da = 56, ua = 8."""
    k = 64
    assert leaf_ports(k, 7) == (56, 8)
    assert max_endpoints(k, 3, (1, 7)) == k * 56 * 32
    f = size_fabric(nodes=4_096, nics_per_node=1, radix=k, style="fat_tree", oversubscription=(1, 7))
    # 128 leaves → pods of 56, 56, 16 leaves; full pod: 32 spines × (56 down, 8 up);
    # last pod: 16 spines × (32 down, ceil(32/7)=5 up); cores = ceil((2·32·8 + 16·5)/64) = ceil(592/64)
    assert (f.tiers, f.pods, f.leaves_per_pod) == (3, 3, 56)
    assert (f.leaf_switches, f.spine_switches, f.core_switches) == (128, 80, 10)
    assert f.spine_core_links == 592 and f.leaf_spine_links == 4_096
    assert f.oversubscription_effective == (1.0, 7.0)
    assert f.bisection_ratio == pytest.approx(1 / 7)
