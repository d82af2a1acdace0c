"""The simulator's network contract: fat-tree shape, link lookup, equal-cost paths, flows CSR."""

from __future__ import annotations

import numpy as np
import pytest

from fabricplan.catalog import load_catalog
from fabricplan.errors import InputError
from fabricplan.sim.network import Flows, Network, equal_cost_paths, fat_tree

CATALOG = load_catalog()


def _path_nodes(net: Network, path: np.ndarray) -> list[int]:
    return [int(net.link_src[path[0]])] + [int(net.link_dst[link]) for link in path]


@pytest.mark.parametrize("k, tiers, hosts, switches", [(4, 2, 8, 6), (8, 2, 32, 12), (4, 3, 16, 20), (8, 3, 128, 80)])
def test_fat_tree_counts(k, tiers, hosts, switches):
    net = fat_tree(k, tiers, link_gbps=100, catalog=CATALOG)
    assert net.n_hosts == hosts
    assert int((net.node_kind == 1).sum()) == switches
    # every switch uses at most k ports, every host one; every cable is two directed links
    degree = np.bincount(net.link_src, minlength=net.n_nodes)
    assert degree[:hosts].tolist() == [1] * hosts
    assert degree[hosts:].max() == k
    assert np.all(net.reverse_links() >= 0)
    assert np.all(net.capacity_gbps == 100)


def test_fat_tree_defaults_come_from_catalog():
    from fabricplan.perf.params import perf_parameter

    net = fat_tree(4, catalog=CATALOG)
    assert net.capacity_gbps[0] == perf_parameter("sim_link_gbps", catalog=CATALOG)
    assert net.latency_us[0] == perf_parameter("sim_link_latency_us", catalog=CATALOG) == 1.0
    assert net.buffer_bytes[0] == perf_parameter("sim_switch_buffer_bytes_per_port", catalog=CATALOG)


def test_host_on_leaf_floor_h_over_half_k():
    net = fat_tree(8, 3, catalog=CATALOG)
    leaves = net.leaf_of(np.arange(net.n_hosts))
    first_leaf = net.n_hosts
    assert (leaves - first_leaf).tolist() == (np.arange(net.n_hosts) // 4).tolist()


def test_partial_hosts_keep_the_switch_fabric():
    net = fat_tree(4, 2, hosts=3, catalog=CATALOG)
    assert net.n_hosts == 3 and int((net.node_kind == 1).sum()) == 6
    assert len(equal_cost_paths(net, 0, 2)) == 2


def test_link_id_lookup():
    net = fat_tree(4, 2, catalog=CATALOG)
    link = net.link_id(0, net.n_hosts)
    assert net.link_src[link] == 0 and net.link_dst[link] == net.n_hosts
    assert net.link_ids([0, 1], [5, 3]).tolist() == [-1, -1]
    with pytest.raises(KeyError):
        net.link_id(0, 1)


@pytest.mark.parametrize("k, tiers, src, dst, n_paths, hops", [
    (8, 3, 0, 0, 1, 0), (8, 3, 0, 3, 1, 2), (8, 3, 0, 4, 4, 4), (8, 3, 0, 127, 16, 6), (8, 2, 0, 31, 4, 4)])
def test_equal_cost_paths(k, tiers, src, dst, n_paths, hops):
    net = fat_tree(k, tiers, catalog=CATALOG)
    paths = equal_cost_paths(net, src, dst)
    assert len(paths) == n_paths
    assert {len(p) for p in paths} == {hops}
    seen = set()
    for path in paths:
        if hops:
            nodes = _path_nodes(net, path)
            assert nodes[0] == src and nodes[-1] == dst
            assert all(net.link_dst[a] == net.link_src[b] for a, b in zip(path, path[1:]))
            tiers_on = net.node_tier[nodes].tolist()
            top = tiers_on.index(max(tiers_on))
            assert tiers_on[:top + 1] == sorted(tiers_on[:top + 1])  # up, then down
            assert tiers_on[top:] == sorted(tiers_on[top:], reverse=True)
        seen.add(tuple(path.tolist()))
    assert len(seen) == n_paths


def test_paths_reject_unknown_host():
    with pytest.raises(InputError):
        equal_cost_paths(fat_tree(4, catalog=CATALOG), 0, 99)


@pytest.mark.parametrize("k, tiers", [(3, 2), (4, 4), (0, 2)])
def test_fat_tree_rejects_bad_shape(k, tiers):
    with pytest.raises(InputError):
        fat_tree(k, tiers, catalog=CATALOG)


def test_flows_csr():
    net = fat_tree(4, 2, catalog=CATALOG)
    paths = [equal_cost_paths(net, 0, 7)[1], equal_cost_paths(net, 2, 3)[0]]
    flows = Flows.from_paths([0, 2], [7, 3], 1e6, paths)
    assert flows.n_flows == 2
    assert flows.path_ptr.tolist() == [0, 4, 6]
    assert flows.path(1).tolist() == paths[1].tolist()
    assert flows.flow_of_entry().tolist() == [0, 0, 0, 0, 1, 1]
    assert flows.start_us.tolist() == [0.0, 0.0] and flows.size_bytes.tolist() == [1e6, 1e6]
    load = np.bincount(flows.path_links, weights=np.array([10.0, 5.0])[flows.flow_of_entry()],
                       minlength=net.n_links)
    assert load.sum() == 4 * 10 + 2 * 5
    with pytest.raises(ValueError):
        Flows.from_paths([0], [1], 1.0, [])
    assert not flows.src.flags.writeable


def test_parallel_cables_are_distinct_paths():
    # two hosts on two leaves joined by one spine with two parallel cables per leaf
    src = [0, 2, 1, 3, 2, 2, 3, 3]
    dst = [2, 0, 3, 1, 4, 4, 4, 4]
    src, dst = src + dst[4:], dst + src[4:]
    net = Network(link_src=src, link_dst=dst, capacity_gbps=np.ones(12), latency_us=np.ones(12),
                  buffer_bytes=np.ones(12), node_kind=[0, 0, 1, 1, 1], node_tier=[0, 0, 1, 1, 2], n_hosts=2)
    reverse = net.reverse_links()
    assert np.all(reverse >= 0) and np.all(reverse[reverse] == np.arange(12))
    assert len(set(reverse.tolist())) == 12
    paths = equal_cost_paths(net, 0, 1)
    assert len(paths) == 4 and len({tuple(p.tolist()) for p in paths}) == 4
