"""Behaviour of size_fabric: tier choice, styles, validation, notes, speed."""

from __future__ import annotations

import pytest

from fabricplan.errors import InputError
from fabricplan.topology import FabricSize, max_endpoints, size_fabric


def fab(**kw) -> FabricSize:
    kw.setdefault("nics_per_node", 1)
    kw.setdefault("radix", 64)
    kw.setdefault("style", "fat_tree")
    return size_fabric(**kw)


@pytest.mark.parametrize("endpoints, radix, tiers", [
    (2, 64, 1), (64, 64, 1), (65, 64, 2), (2_048, 64, 2), (2_049, 64, 3), (65_536, 64, 3),
    (100_000, 128, 3), (8_192, 128, 2), (8_193, 128, 3), (65_537, 64, 4), (2_097_152, 64, 4),
])
def test_auto_tier_choice(endpoints, radix, tiers):
    f = fab(nodes=endpoints, radix=radix)
    assert f.tiers == tiers
    assert f.max_endpoints == max_endpoints(radix, tiers)
    assert f.notes[0].startswith(f"{tiers} tier")


def test_auto_tier_note_explains_choice():
    f = fab(nodes=512, nics_per_node=8)
    assert f.notes[0] == "3 tiers: 4,096 endpoints (512 nodes × 8 NICs) exceed the 2-tier maximum of 2,048 at radix 64"


def test_too_many_endpoints_raises_with_advice():
    with pytest.raises(InputError) as err:
        fab(nodes=2_097_153)  # k⁴/8 + 1 at k=64
    msg = str(err.value)
    assert "2,097,152" in msg and "radix 128 would fit" in msg and err.value.location == "nodes"
    with pytest.raises(InputError, match="65,536.*max_tiers=3"):
        fab(nodes=100_000, max_tiers=3)


def test_max_tiers_limits_auto_choice():
    assert fab(nodes=2_048, max_tiers=2).tiers == 2
    with pytest.raises(InputError, match="max_tiers=2"):
        fab(nodes=2_049, max_tiers=2)


def test_explicit_tiers_too_small_raises():
    with pytest.raises(InputError, match="3 tiers would fit") as err:
        fab(nodes=2_049, tiers=2)
    assert err.value.location == "tiers"
    with pytest.raises(InputError):
        fab(nodes=65, tiers=1)


def test_explicit_tiers_larger_than_needed_builds_partial_fabric():
    two = fab(nodes=10, tiers=2)
    assert (two.leaf_switches, two.spine_switches, two.leaf_uplinks, two.leaf_spine_links) == (1, 1, 10, 10)
    three = fab(nodes=1_024, tiers=3)
    assert (three.leaf_switches, three.spine_switches, three.core_switches, three.pods) == (32, 32, 16, 1)


def test_one_tier_single_switch():
    f = fab(nodes=4, nics_per_node=8, style="rail_optimized")
    assert (f.tiers, f.total_switches, f.host_links, f.leaf_spine_links) == (1, 1, 32, 0)
    assert f.switch_ports_used == {"leaf": 32, "spine": 0, "core": 0, "super_core": 0}
    assert f.switch_ports_available == {"leaf": 64, "spine": 0, "core": 0, "super_core": 0}
    assert f.bisection_ratio == 1.0 and f.oversubscription_effective == ()


def test_one_tier_respects_reserved_ports():
    assert fab(nodes=63, reserved_leaf_ports=1).tiers == 1
    assert fab(nodes=64, reserved_leaf_ports=1).tiers == 2


def test_leaf_spine_tor_style():
    """Meta-style ToR: 2 Grand Teton nodes × 8 NICs per rack is a small ToR; here k=64 → 4 servers/ToR."""
    f = fab(nodes=256, nics_per_node=8, style="leaf_spine")
    assert f.host_links_in_rack is True
    assert f.servers_per_leaf == 4 and f.leaf_switches == 64 and f.spine_switches == 32
    # 5 NICs per server: floor(32/5) = 6 servers (30 ports) per ToR, 30 uplinks sized for the used ports
    g = fab(nodes=18, nics_per_node=5, style="leaf_spine")
    assert (g.servers_per_leaf, g.leaf_switches, g.leaf_host_ports_max) == (6, 3, 30)
    assert g.leaf_uplinks >= 30


def test_optical_host_links_for_rail_and_fat_tree():
    assert fab(nodes=256, nics_per_node=8, style="rail_optimized").host_links_in_rack is False
    assert fab(nodes=2_048).host_links_in_rack is False


def test_tor_too_small_for_one_server():
    with pytest.raises(InputError, match="too few for one server"):
        size_fabric(nodes=4, nics_per_node=40, radix=64, style="leaf_spine")
    # a single such server needs no switch, and still fits one if asked for
    assert size_fabric(nodes=1, nics_per_node=40, radix=64, style="leaf_spine").tiers == 0
    assert size_fabric(nodes=1, nics_per_node=40, radix=64, style="leaf_spine", tiers=1).tiers == 1


def test_rail_pods_hold_da_leaves_and_sus_straddle_them():
    # 6 rails at k=64: 2 tiers hold a fat tree's 2,048 ports in whole nodes, 341 x 6 = 2,046, so 11 SUs
    # (352 nodes) need 3 tiers. Pods are 32 leaves, the spines' down ports (Al-Fares), as for a fat
    # tree: an SU's 6 rail leaves straddle pods (32 is not a multiple of 6); whole-SU pods of 30 leaves
    # would cap 3 tiers at 64 x 30 x 32 = 61,440 ports, below the fat tree's 65,536.
    f = size_fabric(nodes=32 * 11, nics_per_node=6, radix=64, style="rail_optimized")
    assert f.tiers == 3 and f.leaves_per_pod == 32 and f.pods == 3
    assert (f.leaf_switches, f.spine_switches, f.core_switches) == (66, 66, 33)
    assert f.max_endpoints == (64 * 32 * 32 // 6) * 6 == 65_532
    assert any("SUs straddle pods" in n for n in f.notes)


def test_oversubscribed_leaf_uplinks_sized_for_used_ports():
    f = fab(nodes=96, oversubscription=(3.0,))  # d=48, u=16 → 2 leaves × 16 uplinks
    assert (f.leaf_switches, f.leaf_uplinks, f.spine_switches) == (2, 16, 1)
    g = fab(nodes=30, tiers=2, oversubscription=(3.0,))  # one leaf, 30 hosts → ceil(30/3) = 10 uplinks
    assert g.leaf_uplinks == 10 and g.oversubscription_effective == (3.0,)


def test_spine_count_divides_leaf_uplinks_and_note():
    f = size_fabric(nodes=127, nics_per_node=8, radix=64, style="rail_optimized", reserved_leaf_ports=1)
    assert (f.leaf_switches, f.spine_switches, f.leaf_uplinks) == (40, 32, 32)
    assert any("must divide" in n for n in f.notes)
    assert any("rounded up from 31 to 32" in n for n in f.notes)


def test_port_accounting_consistent():
    f = size_fabric(nodes=1_000, nics_per_node=8, radix=64, style="rail_optimized", reserved_leaf_ports=1)
    used = f.switch_ports_used
    assert used["leaf"] == f.host_links + f.reserved_ports_total + f.leaf_spine_links
    assert used["spine"] == f.leaf_spine_links + f.spine_core_links
    assert used["core"] == f.spine_core_links
    assert f.total_links == f.host_links + f.leaf_spine_links + f.spine_core_links


@pytest.mark.parametrize("kw, location", [
    ({"nodes": 0}, "nodes"), ({"nodes": 1.5}, "nodes"), ({"nodes": True}, "nodes"),
    ({"nics_per_node": 0}, "nics_per_node"), ({"radix": 63}, "radix"), ({"radix": 2}, "radix"),
    ({"radix": 64.0}, "radix"), ({"style": "torus"}, "style"), ({"tiers": 0}, "tiers"),
    ({"tiers": 5}, "tiers"), ({"max_tiers": 5}, "max_tiers"), ({"reserved_leaf_ports": -1}, "reserved_leaf_ports"),
    ({"reserved_leaf_ports": 64}, "reserved_leaf_ports"), ({"oversubscription": (0.5,)}, "oversubscription[0]"),
    ({"oversubscription": (1.0, float("nan"))}, "oversubscription[1]"),
    ({"oversubscription": (1.0, 1.0, 1.0)}, "oversubscription"), ({"oversubscription": ()}, "oversubscription"),
    ({"oversubscription": ("1",)}, "oversubscription[0]"),
])
def test_bad_inputs_name_the_parameter(kw, location):
    args = {"nodes": 16, **kw}
    with pytest.raises(InputError) as err:
        fab(**args)
    assert err.value.location == location


def test_max_endpoints_helper_validates():
    with pytest.raises(InputError):
        max_endpoints(64, 5)
    with pytest.raises(InputError):
        max_endpoints(65, 2)
    assert max_endpoints(64, 2, (1.0,), reserved_leaf_ports=1) == 64 * 31


def test_large_fabrics_size_without_a_graph(monkeypatch):
    # sizing is arithmetic (its speed is in benchmarks/bench_cost.py): no networkx graph is ever built
    import networkx

    def no_graph(*args, **kwargs):
        raise AssertionError("size_fabric built a graph")

    monkeypatch.setattr(networkx, "MultiGraph", no_graph)
    for nodes in range(1, 16_385, 7):
        size_fabric(nodes=nodes, nics_per_node=8, radix=128, style="rail_optimized")
    f = size_fabric(nodes=16_384, nics_per_node=8, radix=128, style="rail_optimized")  # 131,072 GPUs
    assert f.tiers == 3 and f.host_links == 131_072
