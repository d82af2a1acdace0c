"""Networks of designs and placements, and where a job's nodes land."""

from __future__ import annotations

import numpy as np
import pytest

from fabricplan.catalog import load_catalog
from fabricplan.design import NetworkPlacement
from fabricplan.errors import InputError
from fabricplan.sim.fabric import clos_network, design_network, job_nodes, node_hosts, placement_network
from fabricplan.sim.network import equal_cost_paths
from fabricplan.topology import size_fabric

CATALOG = load_catalog()


def test_design_network_matches_the_sized_fabric():
    size = size_fabric(nodes=128, nics_per_node=8, radix=64, style="rail_optimized")
    net = design_network(size, link_gbps=400, catalog=CATALOG)
    assert net.n_hosts == size.endpoints == 1024
    switches = int((net.node_kind == 1).sum())
    assert switches == size.total_switches
    assert net.n_links == 2 * size.total_links
    # NIC r of server s is host s*8 + r; rail-optimised: NICs of one rail share a leaf, rails differ
    leaves = net.leaf_of(np.arange(16))
    assert leaves[0] == leaves[8] and len(set(leaves[:8].tolist())) == 8
    # same rail, other SU: up any of the leaf's uplinks, down any of the parallel cables from that
    # spine to the far leaf (32 uplinks over 16 spines: 2 cables per leaf-spine pair)
    paths = equal_cost_paths(net, 0, 32 * 8)
    parallel = size.leaf_uplinks // size.spine_switches
    assert (size.leaf_uplinks, parallel) == (32, 2)
    assert len(paths) == size.leaf_uplinks * parallel and {len(p) for p in paths} == {4}
    assert np.all(net.capacity_gbps == 400)


def test_clos_network_three_tiers():
    net = clos_network(64, 8, 4, tiers=3, leaves_per_pod=2, spine_uplinks=2, catalog=CATALOG)
    assert int((net.node_tier == 1).sum()) == 8
    assert int((net.node_tier == 2).sum()) == 16  # 4 pods x 4 spines
    assert int((net.node_tier == 3).sum()) == 8   # 4 core groups of 2
    assert len(equal_cost_paths(net, 0, 63)) == 8  # 4 spines x 2 cores
    assert len(equal_cost_paths(net, 0, 8)) == 4   # same pod: 4 spines
    assert len(equal_cost_paths(net, 0, 7)) == 1


def test_placement_network_of_a_rail_and_a_tor_placement():
    rail = placement_network(NetworkPlacement(2, 32, 32, 0, (1.0,), 1, True), 128, link_gbps=400, catalog=CATALOG)
    assert rail.n_hosts == 128 and int((rail.node_tier == 1).sum()) == 4 and int((rail.node_tier == 2).sum()) == 32
    tor = placement_network(NetworkPlacement(2, 4, 16, 0, (2.0,), 8, True), 16, link_gbps=400, catalog=CATALOG)
    assert tor.n_hosts == 128 and int((tor.node_tier == 1).sum()) == 4 and int((tor.node_tier == 2).sum()) == 16


def test_job_nodes_packed_or_scattered():
    assert job_nodes(100, 10).tolist() == list(range(10))
    spread = job_nodes(100, 10, aligned=False, seed=1)
    assert len(set(spread.tolist())) == 10 and spread.tolist() != list(range(10))
    assert spread.tolist() == job_nodes(100, 10, aligned=False, seed=1).tolist()
    assert node_hosts(np.array([0, 3]), 2).tolist() == [[0, 1], [6, 7]]
    with pytest.raises(InputError):
        job_nodes(4, 5)
    with pytest.raises(InputError):
        clos_network(0, 1, 1, catalog=CATALOG)


def test_design_network_of_a_two_tier_rail_only_fabric_has_no_path_between_rails():
    """8 rails x (4 leaves + 2 spines), 128 servers: NIC 0 of server 0 reaches NIC 0 of server 32
    (another rail-0 leaf) over rail 0's spines; NIC 1 of any server only via NVLink (no network path)."""
    size = size_fabric(nodes=128, nics_per_node=8, radix=64, style="rail_only")
    net = design_network(size, link_gbps=400, catalog=CATALOG)
    assert net.n_hosts == 1024 and int((net.node_kind == 1).sum()) == size.total_switches == 48
    assert net.n_links == 2 * size.total_links
    same_rail = equal_cost_paths(net, 0, 32 * 8)
    assert {len(p) for p in same_rail} == {4} and len(same_rail) == 32 * 16  # 32 uplinks x 16 cables down
    assert len(equal_cost_paths(net, 0, 8)) == 1  # same rail leaf: one path through it
    assert equal_cost_paths(net, 0, 32 * 8 + 1) == [] and equal_cost_paths(net, 0, 1) == []
