"""Multi-tier rail-only: every rail its own leaf-spine or 3-tier fat tree, no link between rails
(Wang, Ghobadi et al., arXiv:2307.12169: per-rail Clos networks, no spine joining the rails)."""

from __future__ import annotations

import pytest

from fabricplan.errors import InputError
from fabricplan.topology import size_fabric, tier_capacities, tiers_needed


def test_8_rails_of_128_servers_at_radix_64_are_8_leaf_spines_of_4_leaves_and_2_spines():
    # Per rail: 128 servers / 32 host ports = 4 leaves, each 32 down + 32 up; spines S | 32 with
    # 4 x ceil(32 / S) <= 64 -> S = 2 (16 links from each leaf to each spine). x 8 rails.
    f = size_fabric(nodes=128, nics_per_node=8, radix=64, style="rail_only")
    assert f.tiers == 2
    assert (f.leaf_switches, f.spine_switches, f.core_switches, f.total_switches) == (8 * 4, 8 * 2, 0, 48)
    assert (f.host_links, f.leaf_spine_links, f.total_links) == (1024, 8 * 4 * 32, 1024 + 1024)
    assert (f.leaf_host_ports_max, f.leaf_uplinks, f.servers_per_leaf) == (32, 32, 32)
    assert f.switch_ports_used == {"leaf": 32 * 64, "spine": 16 * 64, "core": 0, "super_core": 0}
    assert f.oversubscription_effective == (1.0,) and f.max_endpoints == 8 * 2048


def test_3_tier_rails_at_radix_64():
    # Per rail: 4,096 servers = 128 leaves of 32; pods of 32 leaves -> 4 pods of 32 spines (each leaf
    # one link to each of its pod's 32 spines); 4 x 32 spines x 32 uplinks / 64 = 64 cores. x 8 rails.
    f = size_fabric(nodes=4096, nics_per_node=8, radix=64, style="rail_only")
    assert f.tiers == 3
    assert f.switches_by_tier == {"leaf": 8 * 128, "spine": 8 * 128, "core": 8 * 64, "super_core": 0}
    assert (f.leaf_spine_links, f.spine_core_links) == (8 * 4096, 8 * 4096)
    assert (f.pods, f.leaves_per_pod) == (4, 8 * 32)  # a pod's servers are under 32 leaves of every rail


def test_oversubscribed_rail_leaves_take_fewer_spines():
    # 3:1 at radix 64: 48 host ports, 16 up. 96 servers per rail = 2 leaves x 48 hosts, 16 uplinks each;
    # spines S | 16 with 2 x ceil(16 / S) <= 64 -> S = 1 (32 links); 4 rails -> 8 leaves + 4 spines.
    f = size_fabric(nodes=96, nics_per_node=4, radix=64, style="rail_only", oversubscription=(3.0,))
    assert f.switches_by_tier == {"leaf": 8, "spine": 4, "core": 0, "super_core": 0}
    assert (f.leaf_spine_links, f.oversubscription_effective) == (4 * 2 * 16, (3.0,))


def test_one_switch_per_rail_while_the_rail_fits_then_a_second_tier():
    assert size_fabric(nodes=64, nics_per_node=8, radix=64, style="rail_only").switches_by_tier["spine"] == 0
    f = size_fabric(nodes=65, nics_per_node=8, radix=64, style="rail_only")
    # 65 servers per rail: 3 leaves (32, 32, 1 host ports), 32 uplinks each -> S = 2; 8 rails
    assert (f.tiers, f.leaf_switches, f.spine_switches) == (2, 24, 16)
    asked = size_fabric(nodes=16, nics_per_node=8, radix=64, style="rail_only", tiers=2)  # growth: 1 leaf + spine
    assert (asked.tiers, asked.leaf_switches, asked.spine_switches, asked.leaf_spine_links) == (2, 8, 8, 128)


def test_tier_boundaries_are_k_k2_over_2_k3_over_4_servers_per_rail():
    assert tier_capacities(nics_per_node=8, radix=64, style="rail_only") == {1: 64, 2: 2048, 3: 65536, 4: 65536}
    assert tier_capacities(nics_per_node=8, radix=128, style="rail_only") == {1: 128, 2: 8192, 3: 524288,
                                                                              4: 524288}
    assert [tiers_needed(nodes=n, nics_per_node=8, radix=64, style="rail_only")
            for n in (1, 64, 65, 2048, 2049, 65536)] == [0, 1, 2, 2, 3, 3]


def test_four_tiers_and_too_many_servers_per_rail_are_refused_naming_the_field():
    with pytest.raises(InputError) as four:
        size_fabric(nodes=128, nics_per_node=8, radix=64, style="rail_only", tiers=4)
    assert four.value.location == "tiers" and "1 to 3 tiers" in four.value.message
    with pytest.raises(InputError) as big:
        size_fabric(nodes=65537, nics_per_node=8, radix=64, style="rail_only")
    assert big.value.location == "nodes" and "65,536" in big.value.message and "radix 128" in big.value.message
    with pytest.raises(InputError) as few:
        size_fabric(nodes=3000, nics_per_node=8, radix=64, style="rail_only", tiers=2)
    assert few.value.location == "tiers" and "3 tiers would fit" in few.value.message
