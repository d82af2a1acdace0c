"""Routing connections onto equal-cost paths: ECMP per QP, spraying, adaptive (packet and flowlet)."""

from __future__ import annotations

import numpy as np
import pytest

from fabricplan.catalog import load_catalog
from fabricplan.errors import InputError
from fabricplan.sim.maxmin import max_min_rates
from fabricplan.sim.network import Network, fat_tree
from fabricplan.sim.routing import route

CATALOG = load_catalog()


def _per_link(routed, network):
    return np.bincount(routed.entry_link, weights=routed.entry_weight, minlength=network.n_links)


def _weight_of(routed, flow, links):
    mask = routed.entry_flow == flow
    table = dict(zip(routed.entry_link[mask].tolist(), routed.entry_weight[mask].tolist()))
    return [table.get(int(link), 0.0) for link in links]


def test_every_mode_carries_each_connection_once_per_tier():
    net = fat_tree(8, 3, catalog=CATALOG)
    src, dst = np.arange(16), (np.arange(16) + 64) % 128
    for routing in ("ecmp", "spray", "adaptive"):
        routed = route(net, src, dst, routing=routing, qps=4, seed=1)
        total = np.bincount(routed.entry_flow, weights=routed.entry_weight, minlength=16)
        assert total == pytest.approx(np.full(16, 6.0)), routing  # 6 hops across pods
        assert set(routed.n_paths.tolist()) == {16}


def test_spray_splits_evenly_over_the_leaf_uplinks():
    net = fat_tree(8, 2, catalog=CATALOG)
    routed = route(net, [0], [31], routing="spray")
    leaf = net.n_hosts
    uplinks = [net.link_id(leaf, s) for s in range(net.n_hosts + 8, net.n_hosts + 12)]
    assert _weight_of(routed, 0, uplinks) == pytest.approx([0.25] * 4)


def test_ecmp_qps_split_the_data_and_the_seed_fixes_the_draw():
    net = fat_tree(8, 2, catalog=CATALOG)
    one = route(net, [0], [31], routing="ecmp", qps=1, seed=3)
    again = route(net, [0], [31], routing="ecmp", qps=1, seed=3)
    assert one.entry_link.tolist() == again.entry_link.tolist()
    four = route(net, [0] * 50, [31] * 50, routing="ecmp", qps=4, seed=3)
    assert set(np.round(four.entry_weight, 6).tolist()) <= {0.25, 0.5, 0.75, 1.0}
    # over many connections every uplink gets some queue pairs
    leaf = net.n_hosts
    uplinks = [net.link_id(leaf, s) for s in range(net.n_hosts + 8, net.n_hosts + 12)]
    assert all(w > 0 for w in _per_link(four, net)[uplinks])


def _degraded():
    # 2-tier k=8 tree whose leaf 0 -> spine 0 uplink runs at 25 G instead of 100 G
    net = fat_tree(8, 2, catalog=CATALOG)
    capacity = net.capacity_gbps.copy()
    capacity[net.link_id(net.n_hosts, net.n_hosts + 8)] = 25.0
    return Network(net.link_src, net.link_dst, capacity, net.latency_us, net.buffer_bytes, net.node_kind,
                   net.node_tier, net.n_hosts)


def test_adaptive_routing_shifts_load_off_a_slow_path():
    net = _degraded()
    src, dst = np.arange(4), np.arange(4) + 4
    rates = {}
    for routing, granularity in (("ecmp", "packet"), ("spray", "packet"), ("adaptive", "packet"),
                                 ("adaptive", "flowlet")):
        routed = route(net, src, dst, routing=routing, granularity=granularity, seed=3)
        rates[routing, granularity] = max_min_rates(4, routed.entry_flow, routed.entry_link, net.capacity_gbps,
                                                    routed.entry_weight)
    # spraying is held to the slow path's pace (25 G x 4 paths / 4 flows); per-packet adaptive routing
    # reaches the capacity-proportional split: 325 G of uplinks / 4 = 81.25 G each (within 0.1 %)
    assert rates["spray", "packet"] == pytest.approx([25.0] * 4)
    assert rates["adaptive", "packet"] == pytest.approx([81.25] * 4, rel=1e-3)
    # flowlets avoid the slow link entirely: two paths shared, two alone
    assert sorted(rates["adaptive", "flowlet"].tolist()) == pytest.approx([50, 50, 100, 100])


def test_routing_rejects_bad_input():
    net = fat_tree(4, catalog=CATALOG)
    with pytest.raises(InputError):
        route(net, [0], [1], routing="valiant")
    with pytest.raises(InputError):
        route(net, [0], [1], qps=0)
    with pytest.raises(InputError):
        route(net, [0], [1], granularity="cell")
    with pytest.raises(InputError):
        route(net, [0], [99])
    assert route(net, [], []).n_flows == 0


def test_downlink_backlog_kingman_below_saturation_random_walk_at_it():
    import numpy as np

    from fabricplan.sim.routing import downlink_backlog_packets

    # below saturation: s2 / (2 (1 - rho)), s2 = rho (1 - rho / m); long transfers reach it
    assert downlink_backlog_packets(0.5, 4, 1e9) == pytest.approx(0.5 * (1 - 0.125) / 1.0)
    # at saturation: sqrt(2 n s2 / pi), growing with the square root of the transfer
    at = downlink_backlog_packets(1.0, 4, [100, 400])
    assert at[1] == pytest.approx(2 * at[0]) and at[0] == pytest.approx(np.sqrt(2 * 100 * 0.75 / np.pi))
    assert downlink_backlog_packets(1.0, 1, 100) == 0.0  # one input: nothing collides
    assert downlink_backlog_packets(0.0, 8, 100) == 0.0
