"""Placement on a multi-tier rail-only fabric: within a rail, nodes under different rail leaves
cross the rail's spines (and cores with 3 tiers); one NIC per node per leaf."""

from __future__ import annotations

from fabricplan.design.placement import place
from fabricplan.topology import size_fabric


def test_a_job_within_one_rail_leaf_stays_on_it_and_a_larger_one_crosses_the_rail_spines():
    whole = size_fabric(nodes=128, nics_per_node=8, radix=64, style="rail_only")  # 32 servers per rail leaf
    small = place(32, whole)
    assert (small.tiers, small.nodes_per_leaf, small.nics_per_leaf) == (1, 32, 1)
    big = place(33, whole)
    assert (big.tiers, big.nodes_per_leaf, big.leaf_uplinks, big.nics_per_leaf) == (2, 32, 32, 1)
    assert big.switches_on_path == 3


def test_three_tier_rails_place_pods_of_rail_leaves():
    whole = size_fabric(nodes=4096, nics_per_node=8, radix=64, style="rail_only")  # pods of 32 rail leaves
    assert place(1024, whole).tiers == 2  # 1,024 servers fit 2 tiers of one rail (k²/2 = 2,048 ...
    assert place(1024, whole).nodes_per_pod == 32 * 32  # ... and one pod: 32 leaves x 32 servers
    spanning = place(2049, whole)
    assert (spanning.tiers, spanning.nodes_per_pod, spanning.oversubscription) == (3, 1024, (1.0, 1.0))
