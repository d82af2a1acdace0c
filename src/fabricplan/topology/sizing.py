"""Size a 0- to 4-tier folded-Clos GPU fabric: switch, link and port counts per tier.

Pure integer arithmetic (no graph), so it is instant from 1 to millions of GPUs. Sources and formulas:

* Non-blocking k-ary fat tree: 2-tier max k²/2, 3-tier max k³/4, 5k²/4 switches at full size
  (Al-Fares, Loukissas, Vahdat, "A Scalable, Commodity Data Center Network Architecture", SIGCOMM 2008).
  Its recursive generalisation (folded Clos / k-ary n-tree) adds a super-core tier: 4-tier max
  ``k·(k/2)³ = k⁴/8`` with N/(k/2) switches in each of the three lower tiers and N/k at the top.
* Oversubscription r:1 per tier: ``d = floor(k·r/(r+1))`` down ports, ``u = k − d`` up (docs/reference/topology.md §1.2).
* Rail-optimised scalable units and the leaf/spine/core counts of the NVIDIA DGX SuperPOD B200/H100
  reference architectures (docs/reference/topology.md §1.3), which this module reproduces exactly.

Design rules (see :func:`size_fabric` for the details):

* One node needs no scale-out fabric (0 tiers): NVLink carries all its GPU traffic.
* Pack, then count tiers: the style's attachment (:func:`fabricplan.topology.layout.attach`) gives the
  most nodes t tiers' leaves hold (the tier capacities) and the layout within the chosen tier count,
  from the same packing; rail-optimised rails share leaves where one rail per leaf would cost a tier
  (docs/reference/topology.md §1.3.1). Pods are ``da`` leaves for every style.
* Blocks, recursively: a level-0 block is one leaf; a level-i block joins up to ``g_i`` level-(i−1)
  blocks with tier-i switches (``g_1`` = leaves per pod ≤ ``da``: a *pod*; ``g_2 = dc``: a *super-pod*).
  As in Al-Fares' fat tree, the j-th top switch of every sub-block is in position group j, and each
  group gets its own tier-i switches, sized like a 2-tier spine layer over the group
  (:func:`ports.upper_tier_switches`): every member spreads its uplinks evenly over them.
  Blocks fill in order, so only the last block of each level is partial.
* Top tier: 2 tiers — one group of k-port spines over all leaves; 3+ tiers — the top joins up to k
  blocks and needs only ports: ``ceil(uplinks of the tier below / k)`` switches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from fractions import Fraction
from functools import lru_cache

from fabricplan.errors import InputError
from fabricplan.topology.layout import STYLES, Attachment, LeafLayout, Style, attach, plane_style
from fabricplan.topology.ports import (
    MAX_GIVEN_RATIOS,
    MAX_SUPPORTED_TIERS,
    TIER_NAMES,
    check_count,
    check_radix,
    down_ports_per_tier,
    leaf_ports,
    max_leaves,
    tier_ratios,
    uplinks_needed,
    upper_tier_switches,
)

__all__ = ["FabricSize", "Style", "plane_of", "size_fabric", "tier_capacities", "tiers_needed"]

#: Display names per tier (plural), for notes.
_PLURAL = {"leaf": "leaves", "spine": "spines", "core": "cores", "super_core": "super-cores"}
_SINGULAR = {"leaf": "leaf", "spine": "spine", "core": "core", "super_core": "super-core"}
#: A rail-only rail is at most a 3-tier fat tree (k³/4 servers per rail at 1:1); no 4th tier.
RAIL_ONLY_MAX_TIERS = 3
#: Planes of a multi-plane fabric: each NIC's bandwidth split over this many ports, one per plane
#: (Alibaba HPN: 2 x 200G per 400G NIC; SIGCOMM 2024), at most one plane per 100G lane of an 800G NIC.
MAX_PLANES = 8
NO_FABRIC_NOTE = "1 node: NVLink carries all GPU traffic; no scale-out switch is needed"


@dataclass(frozen=True, slots=True)
class FabricSize:
    """Counts for one sized fabric. Links are point-to-point cables at the chosen port speed.

    Per-tier dictionaries always have the keys ``"leaf"``, ``"spine"``, ``"core"``, ``"super_core"``
    (0 where the tier does not exist). ``switch_ports_used`` counts every cabled port: host links,
    reserved (e.g. UFM/management) ports, and both ends of every switch-to-switch link.
    ``tiers == 0`` (one node, no scale-out switch) has no switches and no links; its NICs still
    count as ``endpoints``.
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
    spine_switches: int                    # the aggregation tier of a 3- or 4-tier fabric
    core_switches: int
    total_switches: int
    host_links: int                        # NIC ↔ leaf (= endpoints; 0 without a fabric)
    leaf_spine_links: int
    spine_core_links: int
    total_links: int                       # host + all switch-to-switch links (reserved ports excluded)
    switch_ports_used: dict[str, int]
    switch_ports_available: dict[str, int]
    host_links_in_rack: bool               # True only for leaf_spine (ToR + DAC); else optical
    pods: int                              # pods of 3- and 4-tier fabrics (0 for 0–2 tiers)
    leaves_per_pod: int                    # leaves in a full pod (0 for 0–2 tiers)
    scalable_units: int                    # rail_optimized SUs (0 otherwise)
    servers_per_leaf: int                  # rail: servers per SU; ToR: servers per rack; 0 = n/a
    leaf_host_ports_max: int               # host ports on the fullest leaf
    leaf_uplinks: int                      # uplinks per leaf (largest over pods)
    spine_uplinks: int                     # uplinks per spine with 3+ tiers (largest), else 0
    max_endpoints: int                     # capacity of this design (style, tiers, radix, ratios)
    oversubscription_effective: tuple[float, ...]  # realised worst down:up per tier with uplinks
    bisection_ratio: float                 # share of host bandwidth that can cross the top tier
    reserved_ports_total: int
    notes: tuple[str, ...]
    super_core_switches: int = 0           # top tier of a 4-tier fabric
    core_super_core_links: int = 0
    nics_per_host: int = 0                 # NICs of one host of a node (the ToR unit); 0 = not given
    rails_per_leaf: int = 0                # rail_optimized: rails of one SU on a leaf (0 otherwise)
    planes: int = 1                        # multi_plane: independent planes (each NIC has a port on each)

    @property
    def switches_by_tier(self) -> dict[str, int]:
        """Switch count per tier name."""
        return dict(zip(TIER_NAMES, (self.leaf_switches, self.spine_switches, self.core_switches,
                                     self.super_core_switches)))


def size_fabric(*, nodes: int, nics_per_node: int, radix: int, style: Style, tiers: int | None = None,
                oversubscription: tuple[float, ...] = (1.0, 1.0), reserved_leaf_ports: int = 0,
                max_tiers: int = MAX_SUPPORTED_TIERS, nics_per_host: int | None = None,
                planes: int = 1) -> FabricSize:
    """Size the fabric for ``nodes`` servers with ``nics_per_node`` NIC ports each on radix-k switches.

    * ``multi_plane`` (``planes`` P >= 2): P independent rail-optimised planes, each NIC with one port on
      each plane at 1/P of its speed (``radix`` is the switch's port count at that speed); see
      :func:`_multi_plane`.

    * ``tiers=None`` picks the smallest tier count (≤ ``max_tiers``) whose capacity holds all
      endpoints: 0 tiers for a single node (NVLink carries its GPU traffic; no switch), 1 tier if
      they fit one switch (``endpoints ≤ k − reserved``), else 2, 3 or 4. An explicit ``tiers``
      (1..4) is honoured even for one node (a switch provisioned for growth).
    * ``oversubscription = (r_leaf, r_spine)`` down:up bandwidth per tier; ``r_spine`` only matters
      for 3+ tiers; the core tier of a 4-tier fabric is 1:1. ``reserved_leaf_ports`` are taken from
      each leaf's down ports (DGX H100 RA: 31 servers + 1 UFM port per rail leaf) and count as used.
    * 2 tiers: ``L`` leaves from the style; each leaf gets ``ceil(host ports / r)`` uplinks (≤ u);
      spines ``S``: among the divisors of u with ``L · ceil(uplinks/S) ≤ k``, the one with the
      fewest leaf uplinks ``S · ceil(uplinks/S)`` (then the fewest spines), leaf uplinks rounded up
      to that multiple of ``S`` (monotone in the nodes; :func:`ports.upper_tier_switches`).
      Full size: k leaves, u spines, k·d endpoints.
    * 3 tiers: pods of ``leaves_per_pod ≤ da`` leaves; each pod's spines sized like a 2-tier fabric
      whose spines have ``da`` down ports; each spine gets ``ceil(down used / r_spine)`` uplinks;
      cores = ``ceil(total spine uplinks / k)``. Full size: k pods, 5k²/4 switches at 1:1.
    * 4 tiers: super-pods of up to ``dc`` pods; in each, spine j of every pod joins core group j,
      sized like a pod's spines (``dc`` down ports per core); super-cores =
      ``ceil(total core uplinks / k)``. Full size: k super-pods, k⁴/8 endpoints at 1:1.

    * Leaves: the style's packing (:func:`fabricplan.topology.layout.attach`) comes before the tier
      count. The capacity of t tiers is the most nodes the packing fits in the leaves t tiers hold
      (k at 2 tiers; k · da, k · da · dc at 3 and 4), and the layout is that packing within them. A
      rail-optimised design packs several rails of an SU on a leaf when one rail per leaf would need
      more tiers than the endpoints do, so it never needs more tiers than a fat tree of the same
      endpoints (72-NIC GB200 NVL72 racks at radix 64: 2 tiers up to 28 racks, 2,016 of the k²/2 =
      2,048 ports); a ToR (``leaf_spine``) holds whole hosts of ``nics_per_host`` NICs (default
      ``nics_per_node``; a multi-host NVLink domain's hosts each take their own ToR ports).

    Raises :class:`fabricplan.errors.InputError` for invalid inputs, for a ``tiers`` too small for
    the endpoints, and when even ``max_tiers`` tiers cannot hold them.
    """
    _validate(nodes, nics_per_node, radix, style, tiers, reserved_leaf_ports, max_tiers, nics_per_host, planes)
    if style == "multi_plane":
        return _multi_plane(planes, size_fabric(
            nodes=nodes, nics_per_node=nics_per_node, radix=radix, style="rail_optimized", tiers=tiers,
            oversubscription=oversubscription, reserved_leaf_ports=reserved_leaf_ports, max_tiers=max_tiers,
            nics_per_host=nics_per_host))
    ratios = tier_ratios(oversubscription)
    host_nics = nics_per_host or nics_per_node
    if style == "rail_only":
        return _rail_only(nodes, nics_per_node, radix, reserved_leaf_ports, tiers, ratios, host_nics)
    fit, capacity = _layout_and_capacity(style, nodes, nics_per_node, radix, ratios, reserved_leaf_ports, host_nics)
    endpoints = nodes * nics_per_node
    common = dict(style=style, radix=radix, nodes=nodes, nics_per_node=nics_per_node, endpoints=endpoints,
                  oversubscription=(float(ratios[0]), float(ratios[1])), reserved_leaf_ports=reserved_leaf_ports,
                  host_links_in_rack=style == "leaf_spine", nics_per_host=host_nics)
    if nodes == 1 and tiers is None:
        return _no_fabric(common, capacity[1])
    chosen, why = _choose_tiers(endpoints, nodes, nics_per_node, radix, style, tiers, max_tiers, capacity,
                                fit, ratios, reserved_leaf_ports)
    common.update(tiers=chosen, max_endpoints=capacity[chosen], notes=(why,))
    if chosen == 1:
        return _one_tier(common, endpoints, radix, reserved_leaf_ports)
    down = down_ports_per_tier(radix, ratios)
    layout = fit.arrange(max_leaves(radix, chosen, fit.spine_down_ports, down))
    return _clos(common, layout, _plan(radix, chosen, ratios, layout.leaves_per_pod), reserved_leaf_ports)


#: FabricSize fields that count parts (multiplied by the planes of a multi-plane fabric).
_PLANE_COUNTS = ("leaf_switches", "spine_switches", "core_switches", "super_core_switches", "total_switches",
                 "host_links", "leaf_spine_links", "spine_core_links", "core_super_core_links", "total_links",
                 "reserved_ports_total")


def _multi_plane(planes: int, plane: FabricSize) -> FabricSize:
    """A multi-plane fabric: ``planes`` copies of one rail-optimised ``plane``, no link between planes.

    Each NIC splits its bandwidth over ``planes`` ports, one on each plane at 1/P of its speed (Alibaba
    HPN, SIGCOMM 2024: 2 x 200G ports per NIC on two planes; NVIDIA's Spectrum-X multi-plane designs),
    so a plane is a rail-optimised fabric of the same nodes and NICs at the lower port speed and the
    higher radix the switch has there (a 51.2T switch: 64 x 800G, 128 x 400G, 256 x 200G): a 2-tier
    plane holds k²/2 NICs at that radix. Switch, link and port counts are P x the plane's; the NICs
    (``endpoints``) are the plane's, each with P host links. Structure (tiers, leaves per SU and pod,
    uplinks, oversubscription) is the plane's: every plane carries 1/P of each NIC's traffic.
    """
    counts = {name: getattr(plane, name) * planes for name in _PLANE_COUNTS}
    ports = {name: {tier: n * planes for tier, n in getattr(plane, name).items()}
             for name in ("switch_ports_used", "switch_ports_available")}
    note = (f"multi-plane: {planes} independent planes, each NIC with one port on each plane at 1/{planes} of "
            f"its speed; per plane: {plane.leaf_switches:,} leaves"
            + (f", {plane.spine_switches:,} spines" if plane.spine_switches else "")
            + (f", {plane.core_switches:,} cores" if plane.core_switches else "")
            + f" at radix {plane.radix} ({plane.tiers} tier{'s' if plane.tiers != 1 else ''})")
    return replace(plane, style="multi_plane", planes=planes, notes=(note,) + plane.notes, **counts, **ports)


def plane_of(size: FabricSize) -> FabricSize:
    """One plane of a multi-plane ``size`` (a rail-optimised FabricSize); any other size is its own plane."""
    if size.planes <= 1:
        return size
    counts = {name: getattr(size, name) // size.planes for name in _PLANE_COUNTS}
    ports = {name: {tier: n // size.planes for tier, n in getattr(size, name).items()}
             for name in ("switch_ports_used", "switch_ports_available")}
    return replace(size, style="rail_optimized", planes=1, notes=size.notes[1:], **counts, **ports)


def size_key(size: FabricSize) -> tuple:
    """A sized fabric's numbers as a hashable key (its per-tier port tables as sorted pairs)."""
    return tuple(tuple(sorted(value.items())) if isinstance(value, dict) else value
                 for value in (getattr(size, f.name) for f in fields(size)))


def tiers_needed(*, nodes: int, nics_per_node: int, radix: int, style: Style,
                 oversubscription: tuple[float, ...] = (1.0, 1.0), reserved_leaf_ports: int = 0,
                 max_tiers: int = MAX_SUPPORTED_TIERS, nics_per_host: int | None = None) -> int:
    """The tier count :func:`size_fabric` chooses for ``nodes`` (``tiers=None``), without sizing
    (a multi-plane fabric: one plane's, at the radix of the plane's port speed).

    0 for one node; else the smallest ``t`` whose capacity (the style's leaf layout at radix k and
    the oversubscription, see :func:`size_fabric`) holds ``nodes x nics_per_node`` endpoints. Only
    the capacity arithmetic runs, so a caller that already holds the whole cluster's
    :class:`FabricSize` can ask how many tiers a subset of its nodes spans. InputError as
    :func:`size_fabric` when nothing fits.
    """
    return _tiers_needed(nodes, nics_per_node, radix, plane_style(style), tuple(oversubscription),
                         reserved_leaf_ports, max_tiers, nics_per_host)


@lru_cache(maxsize=4096)
def _tiers_needed(nodes: int, nics_per_node: int, radix: int, style: Style, oversubscription: tuple[float, ...],
                  reserved_leaf_ports: int, max_tiers: int, nics_per_host: int | None) -> int:
    """:func:`tiers_needed`, remembered per argument tuple: a pure function of numbers, asked again
    for every communicator a placement spans (an InputError is raised again, never remembered)."""
    _validate(nodes, nics_per_node, radix, style, None, reserved_leaf_ports, max_tiers, nics_per_host)
    if nodes == 1:
        return 0
    if style == "rail_only":
        return _rail_size(nodes, radix, tier_ratios(oversubscription), reserved_leaf_ports, None).tiers
    ratios = tier_ratios(oversubscription)
    fit, capacity = _layout_and_capacity(style, nodes, nics_per_node, radix, ratios, reserved_leaf_ports,
                                         nics_per_host or nics_per_node)
    chosen, _why = _choose_tiers(nodes * nics_per_node, nodes, nics_per_node, radix, style, None, max_tiers,
                                 capacity, fit, ratios, reserved_leaf_ports)
    return chosen


def tier_capacities(*, nics_per_node: int, radix: int, style: Style, oversubscription: tuple[float, ...] = (1.0, 1.0),
                    reserved_leaf_ports: int = 0, nics_per_host: int | None = None) -> dict[int, int]:
    """Most nodes 1..4 tiers of this design can hold (the tier boundaries: a non-blocking radix-64
    fat tree holds 64, 2,048 and 65,536 NIC ports in 1, 2 and 3 tiers, Al-Fares et al. 2008).
    The capacity is the style's packing of nodes onto the leaves t tiers hold (the same
    :class:`fabricplan.topology.layout.Attachment` the sizing lays out), so it does not depend on the
    cluster's size: rail-optimised and fat-tree designs hold whole nodes of a fat tree's NIC ports, a ToR
    design whole hosts per ToR; a multi-plane design one plane's (its radix the switch's at the plane's port speed)."""
    style = plane_style(style)
    if style == "rail_only":  # servers per rail: k, k²/2, k³/4 non-blocking; no 4th tier
        _fit, capacity = _layout_and_capacity("fat_tree", 1, 1, radix, tier_ratios(oversubscription),
                                              reserved_leaf_ports, 1)
        return {t: capacity[min(t, RAIL_ONLY_MAX_TIERS)] for t in range(1, MAX_SUPPORTED_TIERS + 1)}
    ratios = tier_ratios(oversubscription)
    _fit, capacity = _layout_and_capacity(style, 1, nics_per_node, radix, ratios, reserved_leaf_ports,
                                          nics_per_host or nics_per_node)
    return {t: c // nics_per_node for t, c in capacity.items()}


def _rail_size(nodes: int, radix: int, ratios, reserved: int, tiers: int | None) -> FabricSize:
    """One rail's own Clos: ``nodes`` servers with one NIC each on a ``fat_tree`` of at most
    :data:`RAIL_ONLY_MAX_TIERS` tiers (k, k²/2, k³/4 servers per rail non-blocking). InputError naming
    ``tiers`` (more than 3, or too few for the servers) or ``nodes`` (beyond the 3-tier maximum)."""
    if tiers is not None and tiers > RAIL_ONLY_MAX_TIERS:
        raise InputError(f"a rail-only fabric has 1 to {RAIL_ONLY_MAX_TIERS} tiers (each rail its own switch, "
                         f"leaf-spine or 3-tier fat tree, no links between rails), got tiers={tiers}", "tiers")
    try:
        return size_fabric(nodes=nodes, nics_per_node=1, radix=radix, style="fat_tree", tiers=tiers,
                           oversubscription=tuple(float(r) for r in ratios[:MAX_GIVEN_RATIOS]),
                           reserved_leaf_ports=reserved, max_tiers=RAIL_ONLY_MAX_TIERS)
    except InputError as exc:
        message = _rail_text(exc.message, nodes).replace(f"; allow more tiers (max_tiers={RAIL_ONLY_MAX_TIERS})", "")
        raise InputError(f"rail-only ({nodes:,} servers per rail, one Clos of at most {RAIL_ONLY_MAX_TIERS} "
                         f"tiers per rail): {message.replace('for style fat_tree ', 'per rail ')}",
                         exc.location) from None


def _rail_text(text: str, nodes: int) -> str:
    """A one-rail fat tree's note or error, in servers (each has one NIC on the rail)."""
    return text.replace(f"{nodes:,} endpoints ({nodes:,} nodes × 1 NICs)", f"{nodes:,} servers")


def _rail_only(nodes: int, nics: int, radix: int, reserved: int, tiers: int | None, ratios,
               host_nics: int) -> FabricSize:
    """Rail-only (Wang, Ghobadi et al., "Rail-only: A Low-Cost High-Performance Network for Training
    LLMs with Trillion Parameters", arXiv:2307.12169, 2023): NIC i of every server on rail i, and no
    spine joins the rails; traffic between rails crosses NVLink inside a node first (NCCL PXN).

    * 1 tier (a rail's servers fit one switch): rails share a switch when their servers fit,
      ``floor((k − reserved) / nodes)`` rails per switch.
    * 2-3 tiers: every rail is its own folded Clos of the chosen switch (the paper's per-rail Clos
      networks): a ``fat_tree`` of ``nodes`` one-NIC servers sized by :func:`size_fabric` (leaves,
      spines and cores, oversubscription per tier), repeated R = ``nics`` times with no link between
      rails. Servers per rail: k − reserved, k·d, k·da·d (k, k²/2, k³/4 non-blocking). Counts are
      R × the rail's; a "pod" is the servers under one rail pod, so ``leaves_per_pod`` counts the
      leaves of all R rails over them (R × a rail pod's leaves), as for rail-optimised SUs.
    """
    endpoints = nodes * nics
    common = dict(style="rail_only", radix=radix, nodes=nodes, nics_per_node=nics, endpoints=endpoints,
                  oversubscription=(float(ratios[0]), float(ratios[1])), reserved_leaf_ports=reserved,
                  host_links_in_rack=False, nics_per_host=host_nics)
    if nodes == 1 and tiers is None:
        return _no_fabric(common, radix - reserved)
    rail = _rail_size(nodes, radix, ratios, reserved, tiers)
    if rail.tiers == 1:
        return _rail_only_one_tier(common, nodes, nics, radix, reserved)
    per_tier = [n * nics for n in (rail.leaf_switches, rail.spine_switches, rail.core_switches)]
    used = {t: n * nics for t, n in rail.switch_ports_used.items()}
    available = {t: n * nics for t, n in rail.switch_ports_available.items()}
    rail_notes = tuple(f"per rail: {_rail_text(n, nodes)}" for n in rail.notes)
    def count(n: int, tier: str) -> str:
        return f"{n:,} {_SINGULAR[tier] if n == 1 else _PLURAL[tier]}"

    notes = (f"rail-only, {rail.tiers} tiers: each of the {nics} rails is its own {rail.tiers}-tier Clos of "
             f"{count(rail.leaf_switches, 'leaf')} + {count(rail.spine_switches, 'spine')}"
             + (f" + {count(rail.core_switches, 'core')}" if rail.core_switches else "")
             + f" over its {nodes:,} servers ({rail.leaf_host_ports_max} per rail leaf), no link between rails; "
             "traffic between rails crosses NVLink inside a node first (NCCL PXN)",) + rail_notes
    return FabricSize(**common, tiers=rail.tiers, leaf_switches=per_tier[0], spine_switches=per_tier[1],
                      core_switches=per_tier[2], total_switches=sum(per_tier), host_links=endpoints,
                      leaf_spine_links=rail.leaf_spine_links * nics, spine_core_links=rail.spine_core_links * nics,
                      total_links=rail.total_links * nics, switch_ports_used=used, switch_ports_available=available,
                      pods=rail.pods, leaves_per_pod=rail.leaves_per_pod * nics, scalable_units=0,
                      servers_per_leaf=rail.leaf_host_ports_max, leaf_host_ports_max=rail.leaf_host_ports_max,
                      leaf_uplinks=rail.leaf_uplinks, spine_uplinks=rail.spine_uplinks,
                      max_endpoints=rail.max_endpoints * nics,
                      oversubscription_effective=rail.oversubscription_effective,
                      bisection_ratio=rail.bisection_ratio, reserved_ports_total=rail.reserved_ports_total * nics,
                      notes=notes)


def _rail_only_one_tier(common: dict, nodes: int, nics: int, radix: int, reserved: int) -> FabricSize:
    """One switch per rail group, no spine (rails share a switch when their servers fit)."""
    endpoints = nodes * nics
    host = radix - reserved
    per_switch = max(1, min(nics, host // nodes))
    switches = -(-nics // per_switch)
    notes = (f"rail-only: {per_switch} rail(s) of {nodes:,} servers per switch on {switches} switches, no spine; "
             "traffic between rails crosses NVLink inside a node first (NCCL PXN)",)
    return FabricSize(**common, tiers=1, leaf_switches=switches, spine_switches=0, core_switches=0,
                      total_switches=switches, host_links=endpoints, leaf_spine_links=0, spine_core_links=0,
                      total_links=endpoints, **_ports(radix, (switches,), (endpoints + reserved * switches,)),
                      pods=0, leaves_per_pod=0, scalable_units=0, servers_per_leaf=nodes,
                      leaf_host_ports_max=min(per_switch, nics) * nodes, leaf_uplinks=0, spine_uplinks=0,
                      max_endpoints=host * nics, oversubscription_effective=(), bisection_ratio=1.0,
                      reserved_ports_total=reserved * switches, notes=notes)


def _layout_and_capacity(style, nodes, nics, radix, ratios, reserved, host_nics) -> tuple[Attachment, dict[int, int]]:
    """The style's attachment at radix k and the NIC ports 1..MAX_SUPPORTED_TIERS tiers can hold: 1 tier,
    one switch's ports; t >= 2, the whole nodes the attachment packs onto the leaves t tiers hold."""
    down = down_ports_per_tier(radix, ratios)
    fit = _attachment(style, nodes, nics, radix, ratios, reserved, host_nics)
    capacity = {1: max(radix - reserved, 0)}
    for t in range(2, MAX_SUPPORTED_TIERS + 1):
        capacity[t] = fit.max_nodes(max_leaves(radix, t, fit.spine_down_ports, down)) * nics
    return fit, capacity


def _attachment(style, nodes, nics, radix, ratios, reserved, host_nics) -> Attachment:
    down = down_ports_per_tier(radix, ratios)
    return attach(style, nodes=nodes, nics_per_node=nics, leaf_down_ports=down[0], reserved_leaf_ports=reserved,
                  spine_down_ports=down[1], nics_per_host=host_nics)


def leaf_layout_of(size: FabricSize) -> LeafLayout:
    """The leaf layout a sized 2- to 4-tier ``size`` was built with: the same attachment and leaf budget
    as :func:`size_fabric` (for the wiring in :mod:`fabricplan.topology.graph`)."""
    ratios = tier_ratios(size.oversubscription)
    fit = _attachment(plane_style(size.style), size.nodes, size.nics_per_node, size.radix, ratios, size.reserved_leaf_ports,
                      size.nics_per_host or size.nics_per_node)
    return fit.arrange(max_leaves(size.radix, size.tiers, fit.spine_down_ports,
                                  down_ports_per_tier(size.radix, ratios)))


def _validate(nodes, nics_per_node, radix, style, tiers, reserved, max_tiers, nics_per_host=None,
              planes=1) -> None:
    check_count(nodes, "nodes")
    if style == "multi_plane" and not (isinstance(planes, int) and 2 <= planes <= MAX_PLANES):
        raise InputError(f"a multi-plane fabric has 2 to {MAX_PLANES} planes, got {planes!r}", "planes")
    check_count(nics_per_node, "nics_per_node")
    if nics_per_host is not None:
        check_count(nics_per_host, "nics_per_host")
        if nics_per_node % nics_per_host:
            raise InputError(f"must divide nics_per_node ({nics_per_node}): a node is whole hosts, got "
                             f"{nics_per_host}", "nics_per_host")
    check_radix(radix)
    if style not in STYLES:
        raise InputError(f"must be one of {', '.join(STYLES)}, got {style!r}", "style")
    check_count(reserved, "reserved_leaf_ports", minimum=0)
    if reserved >= radix:
        raise InputError(f"must be smaller than the radix ({radix}), got {reserved}", "reserved_leaf_ports")
    check_count(max_tiers, "max_tiers")
    if max_tiers > MAX_SUPPORTED_TIERS:
        raise InputError(f"must be 1, 2, 3 or 4 (fabricplan sizes up to {MAX_SUPPORTED_TIERS}-tier Clos), "
                         f"got {max_tiers}", "max_tiers")
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
    ratio_text = ":1, ".join(f"{float(r):g}" for r in ratios[:MAX_GIVEN_RATIOS]) + ":1"
    msg = (f"{what} exceed the {max_tiers}-tier maximum of {capacity[max_tiers]:,} for style {style} at "
           f"radix {radix} (oversubscription {ratio_text})")
    if layout.units_per_leaf == 0 and max_tiers > 1:
        unit = "host" if layout.units_per_node > 1 else "server"
        msg += (f"; a leaf has {max(leaf_ports(radix, ratios[0])[0] - reserved, 0)} host ports, too few "
                f"for one {unit}'s {layout.unit_nics} NICs under this style")
    bigger = _smallest_fitting_radix(layout, radix, ratios, reserved, max_tiers)
    if bigger:
        msg += f"; radix {bigger} would fit"
    if max_tiers < MAX_SUPPORTED_TIERS:
        msg += f"; allow more tiers (max_tiers={max_tiers})"
    if max_tiers > 1:
        msg += "; or raise the oversubscription"
    return msg + "; or split the cluster into several fabrics"


def _smallest_fitting_radix(layout: Attachment, radix, ratios, reserved, max_tiers) -> int | None:
    """First doubling of the radix (up to 8× and ≤ 1,024 ports) whose capacity holds the endpoints."""
    endpoints = layout.nodes * layout.nics_per_node
    k = radix * 2
    while k <= min(radix * 8, 1024):
        if endpoints <= _layout_and_capacity(layout.style, layout.nodes, layout.nics_per_node, k, ratios,
                                             reserved, layout.unit_nics)[1][max_tiers]:
            return k
        k *= 2
    return None


def _ports(radix: int, switches: tuple[int, ...], used: tuple[int, ...]) -> dict:
    """Per-tier used/available port dictionaries (tiers missing from the tuples count 0)."""
    pad = (0,) * len(TIER_NAMES)
    return {"switch_ports_used": dict(zip(TIER_NAMES, used + pad)),
            "switch_ports_available": dict(zip(TIER_NAMES, tuple(radix * n for n in switches) + pad))}


def _no_fabric(common: dict, one_tier_capacity: int) -> FabricSize:
    """One node: all GPU traffic stays on NVLink, so no backend switch, link or optic is needed."""
    notes = (NO_FABRIC_NOTE,
             f"max endpoints = the 1-tier capacity ({one_tier_capacity:,} NIC ports on one "
             f"{common['radix']}-port switch) should the cluster grow; pass tiers=1 to provision it now")
    return FabricSize(**common, tiers=0, leaf_switches=0, spine_switches=0, core_switches=0, total_switches=0,
                      host_links=0, leaf_spine_links=0, spine_core_links=0, total_links=0,
                      **_ports(common["radix"], (), ()), pods=0, leaves_per_pod=0, scalable_units=0,
                      servers_per_leaf=0, leaf_host_ports_max=0, leaf_uplinks=0, spine_uplinks=0,
                      max_endpoints=one_tier_capacity, oversubscription_effective=(), bisection_ratio=1.0,
                      reserved_ports_total=0, notes=notes)


def _one_tier(common: dict, endpoints: int, radix: int, reserved: int) -> FabricSize:
    notes = common.pop("notes") + ("single switch: no uplinks; rails/ToR grouping collapse onto it",)
    return FabricSize(**common, leaf_switches=1, spine_switches=0, core_switches=0, total_switches=1,
                      host_links=endpoints, leaf_spine_links=0, spine_core_links=0, total_links=endpoints,
                      **_ports(radix, (1,), (endpoints + reserved,)), pods=0, leaves_per_pod=0,
                      scalable_units=0, servers_per_leaf=0,
                      leaf_host_ports_max=endpoints, leaf_uplinks=0, spine_uplinks=0,
                      oversubscription_effective=(), bisection_ratio=1.0, reserved_ports_total=reserved,
                      notes=notes)


# --- 2- to 4-tier folded Clos: recursive blocks -------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Plan:
    """Port budget of one design: per tier with uplinks, ratio ``r_i``, down ``d_i`` and up ``u_i`` ports;
    ``block_leaves[i]`` = leaves in a full level-i block (1, leaves per pod, leaves per super-pod)."""

    radix: int
    tiers: int
    ratios: tuple[Fraction, ...]
    down: tuple[int, ...]
    up: tuple[int, ...]
    block_leaves: tuple[int, ...]


def _plan(radix: int, tiers: int, ratios: tuple[Fraction, ...], leaves_per_pod: int) -> _Plan:
    """Block sizes: a pod holds ``leaves_per_pod`` (≤ da) leaves, a level-i block (i ≥ 2) ``d_i`` blocks."""
    down = down_ports_per_tier(radix, ratios)
    sizes = [1, leaves_per_pod][:tiers - 1]
    for level in range(2, tiers - 1):
        sizes.append(sizes[-1] * down[level])
    return _Plan(radix, tiers, ratios, down, tuple(radix - d for d in down), tuple(sizes))


@dataclass(frozen=True, slots=True)
class _Block:
    """Counts inside one block (level 0 = one leaf); tuples run bottom-up over its tiers."""

    switches: tuple[int, ...]      # per tier; switches[-1] = the block's top switches
    links: tuple[int, ...]         # links between tier i and i+1
    uplinks: tuple[int, ...]       # most uplinks on one switch, per tier below the block's top
    ratios: tuple[Fraction, ...]   # worst realised down:up, per tier below the block's top
    top_down: int                  # most down ports used on one top switch
    top_up: int                    # most uplinks one top switch needs: ceil(down / r)
    top_up_total: int              # uplinks all top switches need together
    top_ratio: Fraction            # worst down / needed uplinks over the top switches
    notes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Group:
    """One position group: ``width`` identical groups of ``switches`` upper switches over ``lower``
    lower switches, each lower switch with ``uplinks`` links spread evenly over the group."""

    width: int
    lower: int
    need: int
    switches: int
    uplinks: int
    lower_down: int                # most down ports used on a member (for its realised ratio)
    down: int                      # down ports used per upper switch = lower · uplinks / switches
    up: int                        # uplinks each upper switch needs (0 at the top tier)


def _leaf(host_max: int, plan: _Plan) -> _Block:
    """A leaf with ``host_max`` host ports needs ``ceil(host_max / r_leaf)`` uplinks."""
    need = uplinks_needed(host_max, plan.ratios[0])
    return _Block((1,), (), (), (), host_max, need, need, Fraction(host_max, need), ())


def _split(leaves: int, level: int, plan: _Plan, host_max: int) -> list[tuple[int, _Block]]:
    """Fill ``leaves`` in order into level-``level`` blocks: ``(count, block)`` for full and partial ones."""
    size = plan.block_leaves[level]
    full, rest = divmod(leaves, size)
    return [(n, _block(m, level, plan, host_max)) for n, m in ((full, size), (1, rest)) if n and m]


def _block(leaves: int, level: int, plan: _Plan, host_max: int) -> _Block:
    """A level-``level`` block of ``leaves`` leaves (recursive over the levels below)."""
    if level == 0:
        return _leaf(host_max, plan)
    return _join(_split(leaves, level - 1, plan, host_max), level, plan)


def _groups(subs: list[tuple[int, _Block]], tier: int, plan: _Plan, top: bool) -> list[_Group]:
    """Position groups of a tier-``tier`` join (Al-Fares: core group j serves aggregation switch j of
    every pod). Sub-blocks may differ (the last is partial), so positions with the same members are
    merged; each group is sized by :func:`upper_tier_switches` for its neediest member."""
    down_ports = plan.radix if top else plan.down[tier]
    groups, prev = [], 0
    for m in sorted({b.switches[-1] for _, b in subs}):
        members = [(n, b) for n, b in subs if b.switches[-1] >= m]
        lower = sum(n for n, _ in members)
        need = max(b.top_up for _, b in members)
        switches, uplinks = upper_tier_switches(lower, need, plan.up[tier - 1], down_ports)
        down = lower * uplinks // switches
        up = 0 if top else uplinks_needed(down, plan.ratios[tier])
        groups.append(_Group(m - prev, lower, need, switches, uplinks,
                             max(b.top_down for _, b in members), down, up))
        prev = m
    return groups


def _join(subs: list[tuple[int, _Block]], tier: int, plan: _Plan, top: bool = False) -> _Block:
    """Join sub-blocks with tier-``tier`` switches (``d_tier`` down ports, or k at a 2-tier top)."""
    groups = _groups(subs, tier, plan, top)
    inner = _combine(subs)
    notes = inner.notes + tuple(n for g in groups for n in _rounding_notes(g, tier, plan))
    return _Block(
        inner.switches + (sum(g.width * g.switches for g in groups),),
        inner.links + (sum(g.width * g.lower * g.uplinks for g in groups),),
        inner.uplinks + (max(g.uplinks for g in groups),),
        inner.ratios + (max(Fraction(g.lower_down, g.uplinks) for g in groups),),
        top_down=max(g.down for g in groups), top_up=max(g.up for g in groups),
        top_up_total=sum(g.width * g.switches * g.up for g in groups),
        top_ratio=max((Fraction(g.down, g.up) for g in groups if g.up), default=Fraction(1)), notes=notes)


def _combine(subs: list[tuple[int, _Block]]) -> _Block:
    """Totals (switches, links) and worst cases (uplinks, ratios) over ``count × block`` pairs."""
    blocks = [b for _, b in subs]
    return _Block(
        tuple(map(sum, zip(*[tuple(n * x for x in b.switches) for n, b in subs]))),
        tuple(map(sum, zip(*[tuple(n * x for x in b.links) for n, b in subs]))),
        tuple(map(max, zip(*(b.uplinks for b in blocks)))),
        tuple(map(max, zip(*(b.ratios for b in blocks)))),
        0, 0, 0, Fraction(1), tuple(n for b in blocks for n in b.notes))


def _loose_top(subs: list[tuple[int, _Block]], plan: _Plan) -> _Block:
    """Top of a 3+ tier fabric: each lower top switch keeps exactly the uplinks it needs, and the top
    tier only needs ports for them: ``ceil(Σ uplinks / k)`` switches (5k²/4 at a full 3-tier tree)."""
    inner = _combine(subs)
    links = sum(n * b.top_up_total for n, b in subs)
    return _Block(inner.switches + (-(-links // plan.radix),), inner.links + (links,),
                  inner.uplinks + (max(b.top_up for _, b in subs),),
                  inner.ratios + (max(b.top_ratio for _, b in subs),), 0, 0, 0, Fraction(1), inner.notes)


def _fabric(leaves: int, host_max: int, plan: _Plan) -> _Block:
    """All tiers of a ``plan.tiers``-tier Clos over ``leaves`` leaves."""
    if plan.tiers == 2:
        return _join(_split(leaves, 0, plan, host_max), 1, plan, top=True)
    return _loose_top(_split(leaves, plan.tiers - 2, plan, host_max), plan)


def _rounding_notes(g: _Group, tier: int, plan: _Plan) -> tuple[str, ...]:
    """Explain uplinks rounded up for an even spread and upper counts forced up by the divisor rule."""
    lower, upper = TIER_NAMES[tier - 1], TIER_NAMES[tier]
    ports = plan.radix if tier == plan.tiers - 1 else plan.down[tier]
    notes = []
    if g.uplinks > g.need:
        notes.append(f"{_SINGULAR[lower]} uplinks rounded up from {g.need} to {g.uplinks} to spread evenly "
                     f"over {g.switches} {_PLURAL[upper]}")
    plain = math.ceil(g.lower * g.need / ports)
    if g.switches > plain:
        notes.append(f"{g.switches} {_PLURAL[upper]} (not {plain}): the {_SINGULAR[upper]} count must divide "
                     f"the {_SINGULAR[lower]}'s uplink ports so every {_SINGULAR[lower]} reaches every "
                     f"{_SINGULAR[upper]} evenly")
    return tuple(notes)


def _structure_note(leaves: int, plan: _Plan, fabric: _Block) -> tuple[str, ...]:
    """Pods (3+ tiers), super-pods (4 tiers) and the top-tier count, for the notes."""
    if plan.tiers == 2:
        return ()
    per_pod = plan.block_leaves[1]
    pods, rest = -(-leaves // per_pod), leaves % per_pod
    text = f"{pods:,} pods of up to {per_pod} leaves" + (f" (last pod has {rest} leaves)" if rest else "")
    if plan.tiers == 4:
        per_super = plan.down[2]
        supers, rest_pods = -(-pods // per_super), pods % per_super
        text += (f"; {supers:,} super-pods of up to {per_super} pods"
                 + (f" (last super-pod has {rest_pods} pods)" if rest_pods else ""))
    top, lower = TIER_NAMES[plan.tiers - 1], TIER_NAMES[plan.tiers - 2]
    return (text + f"; {_PLURAL[top]} = ceil({fabric.links[-1]:,} {_SINGULAR[lower]} uplinks / {plan.radix}) "
                   f"= {fabric.switches[-1]:,}",)


def _straddle_note(layout: LeafLayout, plan: _Plan) -> tuple[str, ...]:
    """Rail SUs whose leaves do not fill pods exactly straddle them (3+ tiers: pods of ``da`` leaves)."""
    if plan.tiers < 3 or layout.packing is None:
        return ()
    per_su = -(-layout.nics_per_node // max(layout.rails_per_leaf, 1))
    per_pod = plan.block_leaves[1]
    if per_su > per_pod:
        return (f"an SU's {per_su} leaves exceed a pod's {per_pod}: SUs straddle pods (same-rail traffic inside "
                "an SU still stays on its leaf)",)
    if layout.scalable_units < 2 or per_pod % per_su == 0:
        return ()
    return (f"an SU's {per_su} leaves do not divide a pod's {per_pod}: SUs straddle pods (same-rail traffic "
            "inside an SU still stays on its leaf)",)


def _clos(common: dict, layout: LeafLayout, plan: _Plan, reserved: int) -> FabricSize:
    """FabricSize of a 2- to 4-tier folded Clos from the recursive block counts."""
    leaves, endpoints = layout.leaves, common["endpoints"]
    f = _fabric(leaves, layout.host_ports_max, plan)
    sw = f.switches + (0,) * (len(TIER_NAMES) - len(f.switches))
    links = f.links + (0,) * (len(TIER_NAMES) - len(f.links))
    used = (endpoints + leaves * reserved + links[0],) + tuple(links[t - 1] + links[t] for t in range(1, plan.tiers))
    ratio = math.prod(f.ratios, start=Fraction(1))
    notes = common.pop("notes") + layout.notes + _structure_note(leaves, plan, f) + _straddle_note(layout, plan) + f.notes
    return FabricSize(**common, leaf_switches=sw[0], spine_switches=sw[1], core_switches=sw[2],
                      super_core_switches=sw[3], total_switches=sum(sw), host_links=endpoints,
                      leaf_spine_links=links[0], spine_core_links=links[1], core_super_core_links=links[2],
                      total_links=endpoints + sum(links), **_ports(plan.radix, f.switches, used),
                      pods=-(-leaves // plan.block_leaves[1]) if plan.tiers >= 3 else 0,
                      leaves_per_pod=plan.block_leaves[1] if plan.tiers >= 3 else 0,
                      scalable_units=layout.scalable_units, servers_per_leaf=layout.servers_per_leaf,
                      leaf_host_ports_max=layout.host_ports_max, leaf_uplinks=f.uplinks[0],
                      spine_uplinks=f.uplinks[1] if plan.tiers >= 3 else 0,
                      oversubscription_effective=tuple(float(r) for r in f.ratios),
                      bisection_ratio=float(min(1, 1 / ratio)), reserved_ports_total=leaves * reserved,
                      rails_per_leaf=layout.rails_per_leaf, notes=tuple(dict.fromkeys(notes)))
