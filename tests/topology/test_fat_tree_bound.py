"""Property: no style ever needs more tiers or switches than a fat tree of the same endpoints, and a design
that fits is never refused (issue 26), over styles x NVLink-domain sizes x radices x node counts.

The bound is the k-ary fat tree (Al-Fares, Loukissas, Vahdat, SIGCOMM 2008; its oversubscribed and 4-tier
generalisation in docs/reference/topology.md §1.1-1.2): N endpoints need 1 tier while N <= k − reserved,
2 while N <= k·d (k²/2 at 1:1), 3 while N <= k·da·d (k³/4), 4 while N <= k·dc·da·d (k⁴/8). Switches
are compared with this engine's own ``fat_tree`` sized for the same tier count (its spine counts divide
the leaves' uplinks, docs §1.1), leaves per tier and all switches in total, rounded up to the style's
unit. (Spines are not bounded tier by tier: the spine rule takes the fewest uplinks per leaf first,
issue 10, so 3 leaves of 15 host ports can get 5 spines where 8 leaves of 19 get 4.)

* ``fat_tree``: the same N endpoints.
* ``rail_optimized``: whole scalable units at the leaf tier (the DGX SuperPOD RA cables a partly filled
  SU as a full one: R leaves per SU of k/2 servers), i.e. ``R · (d − reserved) · ceil(n / (d − reserved))``
  endpoints, capped at the tier count's capacity; the tiers are exactly the fat tree's.
* ``leaf_spine``: whole hosts per ToR (``floor(h / u)`` hosts of u NICs on a leaf of h host ports), i.e.
  a fat tree whose leaves offer ``floor(h / u) · u`` host ports; where u divides h, exactly the fat tree.
* ``rail_only``: each rail its own fat tree of the n servers (Wang et al., arXiv:2307.12169), R times;
  tiers at most the fat tree's of all N endpoints.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from fabricplan.errors import InputError
from fabricplan.topology import leaf_ports, max_endpoints, size_fabric, tier_capacities
from fabricplan.topology.ports import TIER_NAMES

#: NICs per node and NICs per host: 8-GPU hosts, 72- and 144-GPU NVLink domains of 4- or 8-NIC hosts, 4 and 16.
DOMAINS = st.sampled_from([(4, 4), (8, 8), (16, 16), (72, 4), (72, 8), (144, 4), (144, 8)])
RADICES = st.sampled_from([32, 36, 40, 48, 64, 128, 256])
STYLES = st.sampled_from(["rail_optimized", "leaf_spine", "fat_tree", "rail_only"])
RATIOS = st.sampled_from([(1.0, 1.0), (1.0, 1.0), (3.0, 1.0), (1.0, 3.0), (1.5, 2.0)])
PROPS = settings(max_examples=examples(250), deadline=None)


@st.composite
def designs(draw):
    """A design and a node count near one of its fat-tree tier boundaries (or anywhere below 4 tiers)."""
    (nics, host), radix, style, ratios = draw(DOMAINS), draw(RADICES), draw(STYLES), draw(RATIOS)
    reserved = draw(st.sampled_from([0, 0, 1]))
    boundary = [max_endpoints(radix, t, ratios, reserved) // nics for t in (1, 2, 3)]
    top = max_endpoints(radix, 4, ratios, reserved) // nics
    anchor = draw(st.sampled_from(boundary + [top]))
    nodes = draw(st.one_of(st.integers(max(anchor - 3, 1), anchor + 3), st.integers(1, max(min(top, 40_000), 1))))
    return dict(nodes=nodes, nics_per_node=nics, nics_per_host=host, radix=radix, style=style,
                oversubscription=ratios, reserved_leaf_ports=reserved)


def fat_tree_tiers(endpoints: int, radix: int, ratios, reserved: int) -> int | None:
    """Tiers a fat tree of ``endpoints`` NIC ports needs (None past 4 tiers)."""
    return next((t for t in (1, 2, 3, 4) if endpoints <= max_endpoints(radix, t, ratios, reserved)), None)


def bound(kw: dict, tiers: int) -> dict[str, int]:
    """Per-tier switch bound of the style at ``tiers`` tiers (the module docstring)."""
    n, nics, host, radix = kw["nodes"], kw["nics_per_node"], kw["nics_per_host"], kw["radix"]
    ratios, reserved, style = kw["oversubscription"], kw["reserved_leaf_ports"], kw["style"]
    h = leaf_ports(radix, ratios[0])[0] - reserved
    endpoints, extra = n * nics, 0
    if style == "rail_only":
        rail = size_fabric(nodes=n, nics_per_node=1, radix=radix, style="fat_tree", tiers=tiers,
                           oversubscription=ratios, reserved_leaf_ports=reserved, max_tiers=3)
        return {t: nics * c for t, c in rail.switches_by_tier.items()}
    if style == "rail_optimized" and tiers >= 2:
        endpoints = min(nics * h * -(-n // h), max_endpoints(radix, tiers, ratios, reserved))
    if style == "leaf_spine" and tiers >= 2:
        extra = h - (h // host) * host  # ToR ports no whole host can use
    ft = size_fabric(nodes=endpoints, nics_per_node=1, radix=radix, style="fat_tree", tiers=tiers,
                     oversubscription=ratios, reserved_leaf_ports=reserved + extra)
    return ft.switches_by_tier


@PROPS
@given(designs())
def test_no_style_exceeds_the_fat_tree_and_a_design_that_fits_is_built(kw):
    style, n, nics, host = kw["style"], kw["nodes"], kw["nics_per_node"], kw["nics_per_host"]
    radix, ratios, reserved = kw["radix"], kw["oversubscription"], kw["reserved_leaf_ports"]
    capacity = tier_capacities(nics_per_node=nics, radix=radix, style=style, oversubscription=ratios,
                               reserved_leaf_ports=reserved, nics_per_host=host)
    try:
        f = size_fabric(**kw)
    except InputError as err:  # refused only when even the style's 4-tier capacity is too small
        assert n > capacity[4], (str(err), capacity)
        assert err.location == "nodes"
        if style in ("rail_optimized", "fat_tree"):  # and then a fat tree is too small as well
            assert fat_tree_tiers(n * nics, radix, ratios, reserved) is None
        return
    if n == 1:  # one node: NVLink only, whatever the style's leaves could hold
        assert f.tiers == 0 and f.total_switches == 0
        return
    assert n <= capacity[4] and f.endpoints <= f.max_endpoints
    strict = fat_tree_tiers(n * nics, radix, ratios, reserved)
    h = leaf_ports(radix, ratios[0])[0] - reserved
    if style in ("rail_optimized", "fat_tree"):
        assert f.tiers == strict  # never more tiers than the fat tree, never fewer
    elif style == "rail_only":  # disjoint rails can hold more than one fat tree of all N (strict None)
        assert strict is None or f.tiers <= strict
    else:
        whole_hosts = 1 if strict == 1 else fat_tree_tiers(n * nics, radix, ratios, reserved + h - (h // host) * host)
        assert f.tiers == whole_hosts  # (one switch takes any NICs; leaves of 2+ tiers whole hosts)
        if h % host == 0:
            assert f.tiers == strict
    limit = bound(kw, f.tiers)
    assert f.leaf_switches <= limit["leaf"], (f.switches_by_tier, limit)
    assert f.total_switches <= sum(limit.values()), (f.switches_by_tier, limit)
    assert all(f.switches_by_tier[t] == 0 for t in TIER_NAMES[max(f.tiers, 1):])
    if style == "rail_optimized" and f.tiers >= 2:
        assert f.leaf_switches >= -(-f.endpoints // h)  # no packing beats a leaf's host ports
        if f.rails_per_leaf > 1 and f.scalable_units > 1:  # rails packed to fit: the fat tree's leaves
            assert f.leaf_switches == -(-f.endpoints // h)


@PROPS
@given(designs(), st.integers(1, 4))
def test_explicit_tiers_are_built_wherever_they_fit(kw, tiers):
    """``tiers: t`` works exactly when the nodes are within the style's t-tier capacity (rail-only: 1-3)."""
    capacity = tier_capacities(nics_per_node=kw["nics_per_node"], radix=kw["radix"], style=kw["style"],
                               oversubscription=kw["oversubscription"], reserved_leaf_ports=kw["reserved_leaf_ports"],
                               nics_per_host=kw["nics_per_host"])
    fits = kw["nodes"] <= capacity[tiers] and not (kw["style"] == "rail_only" and tiers == 4)
    try:
        f = size_fabric(**kw, tiers=tiers)
    except InputError as err:
        assert not fits, str(err)
        assert err.location == "tiers"
    else:
        assert fits and f.tiers == tiers
        if kw["style"] != "rail_only" and tiers >= 2:  # (1 tier: the switch's ports)
            assert f.max_endpoints == capacity[tiers] * kw["nics_per_node"]
