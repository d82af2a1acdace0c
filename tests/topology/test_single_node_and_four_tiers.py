"""0 tiers (one node: NVLink only) and 4-tier folded Clos (super-core tier): hand-computed counts."""

from __future__ import annotations

import pytest

from fabricplan.errors import InputError
from fabricplan.topology import max_endpoints, size_fabric
from fabricplan.topology.sizing import NO_FABRIC_NOTE

ZERO_TIERS = {"leaf": 0, "spine": 0, "core": 0, "super_core": 0}


@pytest.mark.parametrize("style", ["rail_optimized", "leaf_spine", "fat_tree"])
def test_single_node_needs_no_scale_out_fabric(style):
    f = size_fabric(nodes=1, nics_per_node=8, radix=64, style=style, reserved_leaf_ports=1)
    assert f.tiers == 0 and f.endpoints == 8  # the NICs still exist in the server
    assert f.switches_by_tier == ZERO_TIERS and f.total_switches == 0
    assert (f.host_links, f.leaf_spine_links, f.spine_core_links, f.core_super_core_links, f.total_links) == (
        0, 0, 0, 0, 0)
    assert f.switch_ports_used == f.switch_ports_available == ZERO_TIERS
    assert f.reserved_ports_total == 0 and f.oversubscription_effective == ()
    assert f.max_endpoints == max_endpoints(64, 1, reserved_leaf_ports=1) == 63  # 1-tier capacity
    assert f.notes[0] == NO_FABRIC_NOTE
    assert "1-tier capacity" in f.notes[1]


def test_single_node_with_explicit_tiers_gets_a_switch():
    one = size_fabric(nodes=1, nics_per_node=8, radix=64, style="rail_optimized", tiers=1)
    assert (one.tiers, one.total_switches, one.host_links) == (1, 1, 8)
    two = size_fabric(nodes=1, nics_per_node=8, radix=64, style="rail_optimized", tiers=2)
    # one partly filled SU folds its rails: the node's 8 rails share one leaf (32 host ports) under one spine
    assert (two.tiers, two.leaf_switches, two.spine_switches, two.host_links) == (2, 1, 1, 8)
    assert size_fabric(nodes=2, nics_per_node=8, radix=64, style="rail_optimized").tiers == 1


def test_single_node_ignores_max_tiers_and_fits_even_a_small_radix():
    """One node never needs a switch, so even 40 NICs on radix-16 switches size (to 0 tiers)."""
    f = size_fabric(nodes=1, nics_per_node=40, radix=16, style="fat_tree", max_tiers=1)
    assert (f.tiers, f.total_switches, f.endpoints, f.max_endpoints) == (0, 0, 40, 16)


@pytest.mark.parametrize("k", [4, 8, 16, 32, 64, 128])
def test_non_blocking_four_tier_maximum_is_k4_over_8(k):
    n = k**4 // 8
    assert max_endpoints(k, 4) == n == 2 * (k // 2) ** 4
    f = size_fabric(nodes=n, nics_per_node=1, radix=k, style="fat_tree")
    # N/(k/2) switches in each of the three lower tiers, N/k at the top; every tier carries N links
    assert f.tiers == 4 and f.max_endpoints == n
    assert (f.leaf_switches, f.spine_switches, f.core_switches, f.super_core_switches) == (
        n // (k // 2), n // (k // 2), n // (k // 2), n // k)
    assert (f.host_links, f.leaf_spine_links, f.spine_core_links, f.core_super_core_links) == (n, n, n, n)
    assert f.total_links == 4 * n and f.total_switches == 7 * n // k
    assert f.switch_ports_used == f.switch_ports_available  # a full tree uses every port
    assert f.pods == n // (k // 2) // (k // 2) and f.leaves_per_pod == k // 2
    with pytest.raises(InputError, match=f"{n:,}"):
        size_fabric(nodes=n + 1, nics_per_node=1, radix=k, style="fat_tree")


def test_full_k64_four_tier_counts():
    f = size_fabric(nodes=2_097_152, nics_per_node=1, radix=64, style="fat_tree")
    assert f.switches_by_tier == {"leaf": 65_536, "spine": 65_536, "core": 65_536, "super_core": 32_768}
    assert f.total_links == 4 * 2_097_152


@pytest.mark.parametrize("style, nodes, nics", [("rail_optimized", 16_384, 8), ("fat_tree", 131_072, 1)])
def test_131072_gpus_on_radix_64_need_four_tiers(style, nodes, nics):
    """131,072 GPUs on QM9700 (k=64): 4,096 leaves in 128 pods of 32 (= 4 SU each for rails), 4 super-pods
    of 32 pods; each super-pod has 32 core groups of 32 cores (1,024); 131,072 core uplinks / 64 = 2,048."""
    f = size_fabric(nodes=nodes, nics_per_node=nics, radix=64, style=style)
    assert f.tiers == 4 and f.endpoints == 131_072
    assert (f.leaf_switches, f.spine_switches, f.core_switches, f.super_core_switches) == (4_096, 4_096, 4_096, 2_048)
    assert f.total_switches == 14_336
    assert (f.host_links, f.leaf_spine_links, f.spine_core_links, f.core_super_core_links) == (131_072,) * 4
    assert f.total_links == 4 * 131_072
    assert (f.pods, f.leaves_per_pod) == (128, 32)
    assert f.oversubscription_effective == (1.0, 1.0, 1.0) and f.bisection_ratio == 1.0
    assert f.switch_ports_used == f.switch_ports_available
    assert f.notes[0].startswith("4 tiers") and any("4 super-pods of up to 32 pods" in n for n in f.notes)


def test_65537_endpoints_at_k64_go_to_four_tiers():
    """One endpoint past k³/4: 2,049 leaves = 64 full pods + a 1-leaf pod (1 spine); the last super-pod
    holds that pod alone (1 core); super-cores = ceil((2,048 + 1) cores × 32 uplinks / 64) = 1,025."""
    f = size_fabric(nodes=65_537, nics_per_node=1, radix=64, style="fat_tree")
    assert f.tiers == 4
    assert f.switches_by_tier == {"leaf": 2_049, "spine": 2_049, "core": 2_049, "super_core": 1_025}
    assert f.host_links == 65_537 and f.leaf_spine_links == f.spine_core_links == f.core_super_core_links == 65_568
    assert all(f.switch_ports_used[t] <= f.switch_ports_available[t] for t in f.switch_ports_used)


@pytest.mark.parametrize("k", [8, 16, 64, 128])
def test_auto_picks_four_tiers_only_when_three_do_not_fit(k):
    three = k**3 // 4
    assert size_fabric(nodes=three, nics_per_node=1, radix=k, style="fat_tree").tiers == 3
    assert size_fabric(nodes=three + 1, nics_per_node=1, radix=k, style="fat_tree").tiers == 4
    with pytest.raises(InputError, match="max_tiers=3"):
        size_fabric(nodes=three + 1, nics_per_node=1, radix=k, style="fat_tree", max_tiers=3)


def test_explicit_four_tiers_for_a_small_fabric():
    f = size_fabric(nodes=1_024, nics_per_node=1, radix=64, style="fat_tree", tiers=4)
    # 32 leaves → 1 pod of 32 spines → 1 super-pod: 32 core groups of 1 core → 32 × 32 / 64 = 16 super-cores
    assert f.switches_by_tier == {"leaf": 32, "spine": 32, "core": 32, "super_core": 16}
    assert f.max_endpoints == 2_097_152


def test_explicit_three_tiers_too_small_suggests_four():
    with pytest.raises(InputError, match="4 tiers would fit"):
        size_fabric(nodes=65_537, nics_per_node=1, radix=64, style="fat_tree", tiers=3)


def test_four_tier_with_oversubscribed_spine():
    """(1, 3): da = 48, ua = 16; pods of 48 leaves with 32 spines (48 down, 16 up); the core tier is 1:1,
    so a core group serves 32 pods' spine j with 16 cores of 32 down / 32 up."""
    k = 64
    assert max_endpoints(k, 4, (1, 3)) == k * 32 * 48 * 32
    f = size_fabric(nodes=3 * 32 * 48 * 32, nics_per_node=1, radix=k, style="fat_tree", oversubscription=(1, 3))
    assert (f.pods, f.leaves_per_pod) == (96, 48)  # 3 full super-pods
    assert (f.leaf_switches, f.spine_switches, f.core_switches) == (96 * 48, 96 * 32, 3 * 32 * 16)
    assert f.super_core_switches == 3 * 32 * 16 * 32 // k
    assert f.oversubscription_effective == (1.0, 3.0, 1.0)
    assert f.bisection_ratio == pytest.approx(1 / 3)
    assert f.spine_core_links == f.leaf_spine_links // 3 == f.core_super_core_links


def test_rail_optimized_goes_to_four_tiers_exactly_where_a_fat_tree_does():
    # 6 rails at k=64: 3 tiers hold 65,536 ports (k³/4), 10,922 whole nodes (65,532 NICs); one node more
    # needs a 4th tier. Pods are 32 leaves, super-pods 32 pods; capacity 2 · 32⁴ ports in whole nodes.
    three = size_fabric(nodes=10_922, nics_per_node=6, radix=64, style="rail_optimized")
    assert three.tiers == 3 and three.leaf_switches == 2_048 == 65_536 // 32
    four = size_fabric(nodes=10_923, nics_per_node=6, radix=64, style="rail_optimized")
    assert four.tiers == 4 and four.leaves_per_pod == 32
    assert four.max_endpoints == (2 * 32**4 // 6) * 6 == 2_097_150
    # 3 tiers: 10,922 nodes in 32-server SUs would need 342 x 6 = 2,052 rail leaves, more than the
    # 2,048 a 3-tier radix-64 Clos holds, so the rails are packed two to a leaf (SUs of 16 servers)
    assert (three.servers_per_leaf, three.rails_per_leaf) == (16, 2)
    assert (four.servers_per_leaf, four.rails_per_leaf, four.leaf_switches) == (32, 1, 342 * 6)


def test_three_tier_results_unchanged_by_the_four_tier_plan():
    """max_tiers=3 and the default give identical 3-tier fabrics (the recursion reduces to pods + cores)."""
    for nodes in (512, 1_000, 2_048, 8_191):
        a = size_fabric(nodes=nodes, nics_per_node=8, radix=64, style="rail_optimized")
        b = size_fabric(nodes=nodes, nics_per_node=8, radix=64, style="rail_optimized", max_tiers=3)
        assert a == b and a.super_core_switches == 0 and a.core_super_core_links == 0


def test_one_partly_filled_scalable_unit_folds_rails_onto_fewer_leaves():
    """128 GPUs (16 nodes x 8 rails) at radix 64: a 32-server SU half filled. Two rails share each
    leaf (16 + 16 host ports), so 4 leaves + 2 spines instead of 8 half-empty rail leaves + 2 spines."""
    f = size_fabric(nodes=16, nics_per_node=8, radix=64, style="rail_optimized")
    assert (f.tiers, f.leaf_switches, f.spine_switches, f.leaf_host_ports_max) == (2, 4, 2, 32)
    assert f.leaf_uplinks == 32 and f.bisection_ratio == 1.0
    # a full SU is not folded: the SuperPOD's 8 rail leaves per 32-node SU stay
    full = size_fabric(nodes=32, nics_per_node=8, radix=64, style="rail_optimized")
    assert (full.leaf_switches, full.leaf_host_ports_max) == (8, 32)
    # 24 of 32 servers: one rail per leaf still (2 rails would need 48 host ports)
    assert size_fabric(nodes=24, nics_per_node=8, radix=64, style="rail_optimized").leaf_switches == 8


def test_rail_only_puts_each_rail_on_one_switch_without_a_spine():
    f = size_fabric(nodes=16, nics_per_node=8, radix=64, style="rail_only")
    assert (f.tiers, f.total_switches, f.leaf_host_ports_max, f.total_links) == (1, 2, 64, 128)
    full = size_fabric(nodes=64, nics_per_node=8, radix=64, style="rail_only")
    assert (full.total_switches, full.spine_switches, full.leaf_spine_links) == (8, 0, 0)
    # one server more than a switch holds: each rail becomes its own leaf-spine (tests/topology/test_rail_only_tiers.py)
    assert size_fabric(nodes=65, nics_per_node=8, radix=64, style="rail_only").tiers == 2
