"""Size a 1-, 2- or 3-tier folded-Clos GPU fabric: switch, link and port counts per tier.

Pure integer arithmetic (no graph), so it is instant from 1 to millions of GPUs. Sources and formulas:

* Non-blocking k-ary fat tree: 2-tier max k²/2, 3-tier max k³/4, 5k²/4 switches at full size
  (Al-Fares, Loukissas, Vahdat, "A Scalable, Commodity Data Center Network Architecture", SIGCOMM 2008).
* Oversubscription r:1 per tier: ``d = floor(k·r/(r+1))`` down ports, ``u = k − d`` up (topology.md §1.2).
* Rail-optimised scalable units and the leaf/spine/core counts of the NVIDIA DGX SuperPOD B200/H100
  reference architectures (topology.md §1.3), which this module reproduces exactly.

Design rules (see :func:`size_fabric` for the details):

* Leaves come from the style's attachment rule (:mod:`fabricplan.topology.layout`).
* Every leaf has the same uplink count, sized for its fullest member (``ceil(host ports / r)``) and
  spread evenly over all spines of its (pod's) spine group (:func:`ports.upper_tier_switches`).
* 3 tiers: leaves group into pods of ≤ ``da`` leaves, each pod with its own spines (aggregation);
  partial pods are allowed; cores = ``ceil(total spine uplinks / k)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from fabricplan.errors import InputError
from fabricplan.topology.layout import STYLES, LeafLayout, Style, leaf_layout
from fabricplan.topology.ports import (
    MAX_SUPPORTED_TIERS, TIER_NAMES, check_count, check_radix, leaf_ports, max_leaves, tier_ratios,
    upper_tier_switches, uplinks_needed,
)

__all__ = ["FabricSize", "Style", "size_fabric"]


@dataclass(frozen=True, slots=True)
class FabricSize:
    """Counts for one sized fabric. Links are point-to-point cables at the chosen port speed.

    Per-tier dictionaries always have the keys ``"leaf"``, ``"spine"``, ``"core"`` (0 where the tier
    does not exist). ``switch_ports_used`` counts every cabled port: host links, reserved
    (e.g. UFM/management) ports, and both ends of every switch-to-switch link.
    """

    style: str
    tiers: int
    radix: int
    nodes: int
    nics_per_node: int
    endpoints: int                         # NIC ports = nodes × nics_per_node
    oversubscription: tuple[float, float]  # design ratio per tier (leaf, spine), as requested
    reserved_leaf_ports: int               # per leaf
    leaf_switches: int
    spine_switches: int                    # the aggregation tier in a 3-tier fabric
    core_switches: int
    total_switches: int
    host_links: int                        # NIC ↔ leaf (= endpoints)
    leaf_spine_links: int
    spine_core_links: int
    total_links: int                       # host + leaf-spine + spine-core (reserved ports excluded)
    switch_ports_used: dict[str, int]
    switch_ports_available: dict[str, int]
    host_links_in_rack: bool               # True only for leaf_spine (ToR + DAC); else optical
    pods: int                              # 3-tier pods (0 for 1 or 2 tiers)
    leaves_per_pod: int                    # leaves in a full pod (0 for 1 or 2 tiers)
    scalable_units: int                    # rail_optimized SUs (0 otherwise)
    servers_per_leaf: int                  # rail: servers per SU; ToR: servers per rack; 0 = n/a
    leaf_host_ports_max: int               # host ports on the fullest leaf
    leaf_uplinks: int                      # uplinks per leaf (largest over pods)
    spine_uplinks: int                     # uplinks per spine in a 3-tier fabric (largest), else 0
    max_endpoints: int                     # capacity of this design (style, tiers, radix, ratios)
    oversubscription_effective: tuple[float, ...]  # realised worst down:up per tier with uplinks
    bisection_ratio: float                 # share of host bandwidth that can cross the top tier
    reserved_ports_total: int
    notes: tuple[str, ...]

    @property
    def switches_by_tier(self) -> dict[str, int]:
        """Switch count per tier name."""
        return dict(zip(TIER_NAMES, (self.leaf_switches, self.spine_switches, self.core_switches)))


def size_fabric(*, nodes: int, nics_per_node: int, radix: int, style: Style, tiers: int | None = None,
                oversubscription: tuple[float, ...] = (1.0, 1.0), reserved_leaf_ports: int = 0,
                max_tiers: int = MAX_SUPPORTED_TIERS) -> FabricSize:
    """Size the fabric for ``nodes`` servers with ``nics_per_node`` NIC ports each on radix-k switches.

    * ``tiers=None`` picks the smallest tier count (≤ ``max_tiers``) whose capacity holds all
      endpoints: 1 tier if they fit one switch (``endpoints ≤ k − reserved``), else 2, else 3.
    * ``oversubscription = (r_leaf, r_spine)`` down:up bandwidth per tier; ``r_spine`` only matters
      for 3 tiers. ``reserved_leaf_ports`` are taken from each leaf's down ports (DGX H100 RA:
      31 servers + 1 UFM port per rail leaf) and count as used ports.
    * 2 tiers: ``L`` leaves from the style; each leaf gets ``ceil(host ports / r)`` uplinks (≤ u);
      spines ``S`` = smallest divisor of u with ``L · ceil(uplinks/S) ≤ k``, leaf uplinks then
      rounded up to a multiple of ``S``. Full size: k leaves, u spines, k·d endpoints.
    * 3 tiers: pods of ``leaves_per_pod ≤ da`` leaves; each pod's spines sized like a 2-tier fabric
      whose spines have ``da`` down ports; each spine gets ``ceil(down used / r_spine)`` uplinks;
      cores = ``ceil(total spine uplinks / k)``. Full size: k pods, 5k²/4 switches at 1:1.

    Raises :class:`fabricplan.errors.InputError` for invalid inputs, for a ``tiers`` too small for
    the endpoints, and when even ``max_tiers`` tiers cannot hold them.
    """
    _validate(nodes, nics_per_node, radix, style, tiers, reserved_leaf_ports, max_tiers)
    r_leaf, r_spine = tier_ratios(oversubscription)
    leaf_down, leaf_up = leaf_ports(radix, r_leaf)
    spine_down, spine_up = leaf_ports(radix, r_spine)
    layout = leaf_layout(style, nodes=nodes, nics_per_node=nics_per_node, leaf_down_ports=leaf_down,
                         reserved_leaf_ports=reserved_leaf_ports, spine_down_ports=spine_down)
    endpoints = nodes * nics_per_node
    capacity = {1: max(radix - reserved_leaf_ports, 0)}
    for t in (2, 3):
        capacity[t] = layout.max_endpoints_for(max_leaves(radix, t, layout.leaves_per_pod))
    chosen, why = _choose_tiers(endpoints, nodes, nics_per_node, radix, style, tiers, max_tiers, capacity,
                                layout, (r_leaf, r_spine), reserved_leaf_ports)
    common = dict(style=style, tiers=chosen, radix=radix, nodes=nodes, nics_per_node=nics_per_node,
                  endpoints=endpoints, oversubscription=(float(r_leaf), float(r_spine)),
                  reserved_leaf_ports=reserved_leaf_ports, host_links_in_rack=layout.host_links_in_rack,
                  max_endpoints=capacity[chosen], notes=(why,))
    if chosen == 1:
        return _one_tier(common, endpoints, radix, reserved_leaf_ports, layout)
    if chosen == 2:
        return _two_tier(common, layout, radix, r_leaf, leaf_up, reserved_leaf_ports)
    return _three_tier(common, layout, radix, r_leaf, r_spine, leaf_up, spine_down, reserved_leaf_ports)


def _validate(nodes, nics_per_node, radix, style, tiers, reserved, max_tiers) -> None:
    check_count(nodes, "nodes")
    check_count(nics_per_node, "nics_per_node")
    check_radix(radix)
    if style not in STYLES:
        raise InputError(f"must be one of {', '.join(STYLES)}, got {style!r}", "style")
    check_count(reserved, "reserved_leaf_ports", minimum=0)
    if reserved >= radix:
        raise InputError(f"must be smaller than the radix ({radix}), got {reserved}", "reserved_leaf_ports")
    check_count(max_tiers, "max_tiers")
    if max_tiers > MAX_SUPPORTED_TIERS:
        raise InputError(f"must be 1, 2 or 3 (fabricplan sizes up to 3-tier Clos), got {max_tiers}",
                         "max_tiers")
    if tiers is not None:
        check_count(tiers, "tiers")
        if tiers > max_tiers:
            raise InputError(f"must be between 1 and max_tiers={max_tiers}, got {tiers}", "tiers")


def _choose_tiers(endpoints, nodes, nics, radix, style, tiers, max_tiers, capacity, layout, ratios,
                  reserved) -> tuple[int, str]:
    """Return the tier count and a note saying why; raise InputError if nothing fits."""
    what = f"{endpoints:,} endpoints ({nodes:,} nodes × {nics} NICs)"
    if tiers is not None:
        if endpoints <= capacity[tiers]:
            return tiers, f"{tiers} tier{'s' if tiers > 1 else ''} (requested): {what} within the " \
                          f"maximum of {capacity[tiers]:,} at radix {radix}"
        fits = next((t for t in range(tiers + 1, MAX_SUPPORTED_TIERS + 1) if endpoints <= capacity[t]), None)
        hint = f"; {fits} tiers would fit (max {capacity[fits]:,})" if fits else ""
        raise InputError(f"{tiers} tier(s) hold at most {capacity[tiers]:,} endpoints for style {style} "
                         f"at radix {radix}, but the fabric has {what}{hint}", "tiers")
    for t in range(1, max_tiers + 1):
        if endpoints <= capacity[t]:
            if t == 1:
                return 1, f"1 tier: {what} fit one {radix}-port switch"
            return t, (f"{t} tiers: {what} exceed the {t - 1}-tier maximum of {capacity[t - 1]:,} "
                       f"at radix {radix}")
    raise InputError(_too_big_message(what, radix, style, max_tiers, capacity, layout, ratios, reserved),
                     "nodes")


def _too_big_message(what, radix, style, max_tiers, capacity, layout, ratios, reserved) -> str:
    ratio_text = ":1, ".join(f"{float(r):g}" for r in ratios) + ":1"
    msg = (f"{what} exceed the {max_tiers}-tier maximum of {capacity[max_tiers]:,} for style {style} at "
           f"radix {radix} (oversubscription {ratio_text})")
    if layout.host_ports_per_leaf == 0 and max_tiers > 1:
        msg += (f"; a leaf has {max(leaf_ports(radix, ratios[0])[0] - reserved, 0)} host ports, too few "
                f"for one server's {layout.nics_per_node} NICs under this style")
    bigger = _smallest_fitting_radix(layout, radix, ratios, reserved, max_tiers)
    if bigger:
        msg += f"; radix {bigger} would fit"
    if max_tiers < MAX_SUPPORTED_TIERS:
        msg += f"; allow more tiers (max_tiers={max_tiers})"
    if max_tiers > 1:
        msg += "; or raise the oversubscription"
    return msg + "; or split the cluster into several fabrics"


def _smallest_fitting_radix(layout: LeafLayout, radix, ratios, reserved, max_tiers) -> int | None:
    """First doubling of the radix (up to 8× and ≤ 1,024 ports) whose capacity holds the endpoints."""
    endpoints = layout.nodes * layout.nics_per_node
    k = radix * 2
    while k <= min(radix * 8, 1024):
        d, da = leaf_ports(k, ratios[0])[0], leaf_ports(k, ratios[1])[0]
        trial = leaf_layout(layout.style, nodes=layout.nodes, nics_per_node=layout.nics_per_node,
                            leaf_down_ports=d, reserved_leaf_ports=reserved, spine_down_ports=da)
        fits = (endpoints <= k - reserved if max_tiers == 1 else
                endpoints <= trial.max_endpoints_for(max_leaves(k, max_tiers, trial.leaves_per_pod)))
        if fits:
            return k
        k *= 2
    return None


def _ports(radix: int, leaf: int, spine: int, core: int, used: tuple[int, int, int]) -> dict:
    return {"switch_ports_used": dict(zip(TIER_NAMES, used)),
            "switch_ports_available": dict(zip(TIER_NAMES, (radix * leaf, radix * spine, radix * core)))}


def _one_tier(common: dict, endpoints: int, radix: int, reserved: int, layout: LeafLayout) -> FabricSize:
    notes = common.pop("notes") + ("single switch: no uplinks; rails/ToR grouping collapse onto it",)
    return FabricSize(**common, leaf_switches=1, spine_switches=0, core_switches=0, total_switches=1,
                      host_links=endpoints, leaf_spine_links=0, spine_core_links=0, total_links=endpoints,
                      **_ports(radix, 1, 0, 0, (endpoints + reserved, 0, 0)), pods=0, leaves_per_pod=0,
                      scalable_units=0, servers_per_leaf=0,
                      leaf_host_ports_max=endpoints, leaf_uplinks=0, spine_uplinks=0,
                      oversubscription_effective=(), bisection_ratio=1.0, reserved_ports_total=reserved,
                      notes=notes)


def _two_tier(common, layout: LeafLayout, radix, r_leaf, leaf_up, reserved) -> FabricSize:
    leaves, host_max = layout.leaves, layout.host_ports_max
    need = uplinks_needed(host_max, r_leaf)
    spines, uplinks = upper_tier_switches(leaves, need, leaf_up, radix)
    links = leaves * uplinks
    notes = common.pop("notes") + layout.notes + _rounding_notes(leaves, need, uplinks, spines, radix)
    ratio = Fraction(host_max, uplinks)
    return FabricSize(**common, leaf_switches=leaves, spine_switches=spines, core_switches=0,
                      total_switches=leaves + spines, host_links=common["endpoints"], leaf_spine_links=links,
                      spine_core_links=0, total_links=common["endpoints"] + links,
                      **_ports(radix, leaves, spines, 0,
                               (common["endpoints"] + leaves * reserved + links, links, 0)),
                      pods=0, leaves_per_pod=0, scalable_units=layout.scalable_units,
                      servers_per_leaf=layout.servers_per_leaf, leaf_host_ports_max=host_max,
                      leaf_uplinks=uplinks, spine_uplinks=0, oversubscription_effective=(float(ratio),),
                      bisection_ratio=float(min(1, 1 / ratio)), reserved_ports_total=leaves * reserved,
                      notes=notes)


def _rounding_notes(leaves, need, uplinks, spines, upper_ports) -> tuple[str, ...]:
    notes = []
    if uplinks > need:
        notes.append(f"leaf uplinks rounded up from {need} to {uplinks} to spread evenly over {spines} spines")
    if spines > math.ceil(leaves * need / upper_ports):
        notes.append(f"{spines} spines (not {math.ceil(leaves * need / upper_ports)}): the spine count "
                     "must divide the leaf's uplink ports so every leaf reaches every spine evenly")
    return tuple(notes)


@dataclass(frozen=True, slots=True)
class _Pod:
    leaves: int
    spines: int
    leaf_uplinks: int      # per leaf
    spine_down: int        # per spine
    spine_up: int          # per spine


def _pod(leaves: int, need: int, leaf_up: int, spine_down_ports: int, r_spine: Fraction) -> _Pod:
    """One pod: its spines are a 2-tier spine layer whose switches have ``da`` down ports."""
    spines, uplinks = upper_tier_switches(leaves, need, leaf_up, spine_down_ports)
    down = leaves * uplinks // spines
    return _Pod(leaves, spines, uplinks, down, uplinks_needed(down, r_spine))


def _three_tier(common, layout: LeafLayout, radix, r_leaf, r_spine, leaf_up, spine_down_ports,
                reserved) -> FabricSize:
    leaves, host_max, per_pod = layout.leaves, layout.host_ports_max, layout.leaves_per_pod
    need = uplinks_needed(host_max, r_leaf)
    full, rest = divmod(leaves, per_pod)
    shapes = [(n, _pod(size, need, leaf_up, spine_down_ports, r_spine))
              for n, size in ((full, per_pod), (1, rest)) if n and size]
    spines = sum(n * p.spines for n, p in shapes)
    leaf_spine = sum(n * p.leaves * p.leaf_uplinks for n, p in shapes)
    spine_core = sum(n * p.spines * p.spine_up for n, p in shapes)
    cores = math.ceil(spine_core / radix)
    endpoints = common["endpoints"]
    leaf_ratio = Fraction(host_max, min(p.leaf_uplinks for _, p in shapes))
    spine_ratio = max(Fraction(p.spine_down, p.spine_up) for _, p in shapes)
    notes = common.pop("notes") + layout.notes + (
        f"{full + (rest > 0):,} pods of up to {per_pod} leaves"
        + (f" (last pod has {rest} leaves)" if rest else "")
        + f"; cores = ceil({spine_core:,} spine uplinks / {radix}) = {cores:,}",)
    for _, p in shapes:
        notes += _rounding_notes(p.leaves, need, p.leaf_uplinks, p.spines, spine_down_ports)
    return FabricSize(**common, leaf_switches=leaves, spine_switches=spines, core_switches=cores,
                      total_switches=leaves + spines + cores, host_links=endpoints,
                      leaf_spine_links=leaf_spine, spine_core_links=spine_core,
                      total_links=endpoints + leaf_spine + spine_core,
                      **_ports(radix, leaves, spines, cores, (endpoints + leaves * reserved + leaf_spine,
                                                              leaf_spine + spine_core, spine_core)),
                      pods=full + (rest > 0), leaves_per_pod=per_pod, scalable_units=layout.scalable_units,
                      servers_per_leaf=layout.servers_per_leaf, leaf_host_ports_max=host_max,
                      leaf_uplinks=max(p.leaf_uplinks for _, p in shapes),
                      spine_uplinks=max(p.spine_up for _, p in shapes),
                      oversubscription_effective=(float(leaf_ratio), float(spine_ratio)),
                      bisection_ratio=float(min(1, 1 / (leaf_ratio * spine_ratio))),
                      reserved_ports_total=leaves * reserved, notes=tuple(dict.fromkeys(notes)))
