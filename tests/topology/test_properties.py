"""Property tests for size_fabric (hypothesis): port budgets, one host link per NIC, oversubscription,
monotonicity in the number of nodes, and capacity/error agreement with max_endpoints (0–4 tiers)."""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from fabricplan.errors import InputError
from fabricplan.topology import max_endpoints, size_fabric
from fabricplan.topology.ports import TIER_NAMES

RATIOS = st.sampled_from([1, 1.125, 1.5, 2, 3, 4, 7])
RADIX = st.one_of(st.integers(2, 40).map(lambda h: 2 * h), st.sampled_from([64, 128, 144, 256]))
STYLE = st.sampled_from(["rail_optimized", "leaf_spine", "fat_tree"])
FABRIC = st.fixed_dictionaries({
    "nodes": st.integers(1, 20_000),
    "nics_per_node": st.integers(1, 16),
    "radix": RADIX,
    "style": STYLE,
    "tiers": st.sampled_from([None, None, 2, 3, 4]),
    "oversubscription": st.tuples(RATIOS, RATIOS),
    "reserved_leaf_ports": st.integers(0, 2),
})
PROPS = settings(max_examples=examples(300), deadline=None)
#: Small radices reach 4 tiers with few nodes (k=8: 3-tier max 128, 4-tier max 512 endpoints).
FOUR_TIER = st.fixed_dictionaries({
    "nodes": st.integers(2, 4_000),
    "nics_per_node": st.integers(1, 8),
    "radix": st.sampled_from([4, 6, 8, 10, 12, 16, 24]),
    "style": STYLE,
    "tiers": st.sampled_from([None, 4]),
    "oversubscription": st.tuples(RATIOS, RATIOS),
    "reserved_leaf_ports": st.integers(0, 1),
})
FOUR_PROPS = settings(max_examples=examples(150), deadline=None)


def sized(kw):
    try:
        return size_fabric(**kw)
    except InputError:
        assume(False)


@PROPS
@given(FABRIC)
def test_port_budgets_links_and_oversubscription(kw):
    check_budgets(kw, sized(kw))


@FOUR_PROPS
@given(FOUR_TIER)
def test_port_budgets_links_and_oversubscription_four_tiers(kw):
    check_budgets(kw, sized(kw))


def check_budgets(kw, f):
    """Ports used ≤ available on every tier, one host link per NIC (nodes > 1), ratios honoured."""
    for tier in TIER_NAMES:
        assert 0 <= f.switch_ports_used[tier] <= f.switch_ports_available[tier]
        assert f.switch_ports_available[tier] == f.switches_by_tier[tier] * f.radix
    assert f.endpoints == kw["nodes"] * kw["nics_per_node"]
    if kw["nodes"] == 1 and kw["tiers"] is None:
        assert f.tiers == 0 and f.total_switches == f.total_links == f.host_links == 0
        return
    assert f.host_links == f.endpoints <= f.max_endpoints
    assert f.total_switches == sum(f.switches_by_tier.values())
    assert f.total_links == f.host_links + f.leaf_spine_links + f.spine_core_links + f.core_super_core_links
    assert f.switch_ports_used["leaf"] == f.host_links + f.reserved_ports_total + f.leaf_spine_links
    assert f.switch_ports_used["spine"] == f.leaf_spine_links + f.spine_core_links
    assert f.switch_ports_used["core"] == f.spine_core_links + f.core_super_core_links
    assert f.switch_ports_used["super_core"] == f.core_super_core_links
    for tiers_needed, tier in enumerate(TIER_NAMES[1:], start=2):
        assert (f.switches_by_tier[tier] > 0) == (f.tiers >= tiers_needed)
    assert len(f.oversubscription_effective) == f.tiers - 1
    r_leaf, r_spine = (Fraction(r) for r in kw["oversubscription"])
    if f.tiers >= 2:
        # every leaf honours r_leaf: uplinks ≥ ceil(host ports used / r)
        assert f.leaf_uplinks >= math.ceil(f.leaf_host_ports_max / r_leaf)
        assert Fraction(f.oversubscription_effective[0]) <= r_leaf
        assert f.leaf_spine_links >= math.ceil(f.host_links / r_leaf)
    if f.tiers >= 3:
        assert Fraction(f.oversubscription_effective[1]) <= r_spine
        assert f.spine_core_links >= math.ceil(f.leaf_spine_links / r_spine)
    if f.tiers == 4:  # the core tier is 1:1: at least one uplink per core down link
        assert f.oversubscription_effective[2] <= 1
        assert f.core_super_core_links >= f.spine_core_links
    assert 0 < f.bisection_ratio <= 1


@PROPS
@given(FABRIC, st.integers(1, 5_000))
def test_switch_count_monotone_in_nodes(kw, extra):
    check_monotone(kw, extra)


@FOUR_PROPS
@given(FOUR_TIER, st.integers(1, 2_000))
def test_switch_count_monotone_in_nodes_four_tiers(kw, extra):
    check_monotone(kw, extra)


def check_monotone(kw, extra):
    small = sized(kw)
    try:
        big = size_fabric(**{**kw, "nodes": kw["nodes"] + extra})
    except InputError:
        return  # the bigger cluster no longer fits: nothing to compare
    assert big.total_switches >= small.total_switches
    assert big.total_links >= small.total_links
    if big.tiers == small.tiers:
        for tier in TIER_NAMES:
            assert big.switches_by_tier[tier] >= small.switches_by_tier[tier]


@PROPS
@given(st.integers(1, 300_000), RADIX, st.tuples(RATIOS, RATIOS), st.integers(1, 4))
def test_fat_tree_fits_exactly_when_max_endpoints_allows(endpoints, radix, ratios, max_tiers):
    cap = max_endpoints(radix, max_tiers, ratios)
    try:
        f = size_fabric(nodes=endpoints, nics_per_node=1, radix=radix, style="fat_tree",
                        oversubscription=ratios, max_tiers=max_tiers)
    except InputError as err:
        assert endpoints > cap, str(err)
    else:
        assert endpoints <= cap
        if endpoints == 1:  # one node: no fabric
            assert f.tiers == 0
        else:
            assert f.tiers == min(t for t in range(1, 5) if endpoints <= max_endpoints(radix, t, ratios))


@settings(max_examples=examples(100), deadline=None)
@given(FABRIC, st.sampled_from(["nodes", "nics_per_node", "radix", "reserved_leaf_ports", "tiers",
                                 "oversubscription", "style"]),
       st.sampled_from([0, -3, 3.5, "8", None, True, (0.9,), 65]))
def test_bad_inputs_raise_input_error(kw, field, value):
    bad = {**kw, field: value}
    valid = {
        "nodes": lambda v: type(v) is int and v >= 1,
        "nics_per_node": lambda v: type(v) is int and v >= 1,
        "radix": lambda v: type(v) is int and v >= 4 and v % 2 == 0,
        "reserved_leaf_ports": lambda v: type(v) is int and 0 <= v < bad["radix"],
        "tiers": lambda v: v is None or (type(v) is int and 1 <= v <= 4),
        "oversubscription": lambda v: type(v) in (int, float) and v >= 1,  # a bare ratio = (r,)
        "style": lambda v: False,
    }[field](value)
    assume(not valid)
    try:
        size_fabric(**bad)
    except InputError:
        pass
    else:
        raise AssertionError(f"{field}={value!r} accepted")


def test_regression_links_monotone_when_one_more_leaf_forces_more_spines():
    """Issue 10: radix 44 at 1.5:1, 13 NICs per node on one-server ToR leaves (1 reserved port), 3 tiers.
    Each leaf needs ceil(13 / 1.5) = 9 uplinks. Taking the fewest spines that fit (6) rounded them up
    to 12 at 13 nodes (433 links) and dropped back to 9 at 14 nodes, when 9 spines became necessary
    (398 links). The sizing now takes the fewest uplinks per leaf (then the fewest spines): 9 spines
    and 9 uplinks per leaf from the start."""
    kw = dict(nics_per_node=13, radix=44, style="leaf_spine", tiers=3, oversubscription=(1.5, 1.5),
              reserved_leaf_ports=1)
    sizes = {n: size_fabric(nodes=n, **kw) for n in range(12, 16)}
    assert [sizes[n].total_links for n in range(12, 16)] == [336, 367, 398, 420]
    assert sizes[13].leaf_uplinks == sizes[14].leaf_uplinks == 9
    assert sizes[13].spine_switches == sizes[14].spine_switches == 9
    for n in range(12, 15):
        assert sizes[n + 1].total_links >= sizes[n].total_links
        assert sizes[n + 1].total_switches >= sizes[n].total_switches
        for tier in TIER_NAMES:
            assert sizes[n + 1].switches_by_tier[tier] >= sizes[n].switches_by_tier[tier]


def test_hypothesis_profiles():
    """The `ci` profile (tests/conftest.py, the default) is derandomised: the same examples on every
    run; `explore` (by hand) draws fresh, many more."""
    from hypothesis import settings as current

    assert current.get_profile("ci").derandomize is True
    assert current.get_profile("explore").derandomize is False
    assert current.get_profile("explore").max_examples >= 10 * current.get_profile("ci").max_examples
    if current.get_current_profile_name() == "ci":
        assert current.default.derandomize is True
