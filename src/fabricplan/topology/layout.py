"""How each fabric style attaches servers to leaf switches (the bottom tier), and how many leaves that takes.

Three styles have leaves of their own (docs/reference/topology.md §1.1, §1.3, §1.4):

* ``fat_tree``  – generic leaf-spine / k-ary fat tree: NIC ports fill leaves in order, no rails.
* ``rail_optimized`` – NVIDIA DGX SuperPOD / Spectrum-X RA: NIC *i* of the servers of a scalable unit
  (SU) shares one leaf ("rail *i*"). See :class:`RailPacking` for how rails are packed onto leaves.
* ``leaf_spine`` – Meta-style ToR: all NICs of a host go to one ToR over in-rack copper; a ToR holds
  ``floor((d − reserved) / nics_per_host)`` whole hosts. The ToR unit is a *host*: a node that is a
  multi-host NVLink domain (a GB200 NVL72 rack: 18 hosts of 4 NICs = 72 NICs) is not one indivisible
  block of ToR ports; each of its hosts takes its own ToR ports, and hosts fill ToRs in order (a ToR
  may take the trays of two neighbouring racks, as a leaf beside the racks does).

**Pack first, then count tiers.** :func:`attach` returns an :class:`Attachment`: the one place that knows
how a style's nodes go onto leaves. Its :meth:`Attachment.fewest_leaves` is the fewest leaves any
arrangement of the style needs for a number of nodes, :meth:`Attachment.max_nodes` the most nodes a
leaf budget holds (its exact inverse), and :meth:`Attachment.arrange` the arrangement the sizing builds
for a budget (the leaves a 2-tier Clos holds, k; or a 3- or 4-tier one: Al-Fares et al., SIGCOMM 2008).
The sizing takes the capacity of t tiers from ``max_nodes`` and the layout from ``arrange``, so a
design that fits a tier count on capacity is always laid out within it.

``rail_only`` (no spine; :func:`fabricplan.topology.sizing.size_fabric`) has no leaf layout here: each
rail is its own ``fat_tree`` of one-NIC servers.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

Style = Literal["rail_optimized", "leaf_spine", "fat_tree", "rail_only", "multi_plane"]
#: ``rail_only`` (no spine; :func:`fabricplan.topology.sizing.size_fabric`) has no leaf layout here, and
#: ``multi_plane`` is ``planes`` rail-optimised planes side by side (each plane laid out as ``rail_optimized``).
STYLES: tuple[str, ...] = ("rail_optimized", "leaf_spine", "fat_tree", "rail_only", "multi_plane")


def plane_style(style: str) -> str:
    """The style one plane of ``style`` is laid out as: a multi-plane fabric's planes are rail-optimised."""
    return "rail_optimized" if style == "multi_plane" else style


@dataclass(frozen=True, slots=True)
class RailPacking:
    """Rail blocks on leaves. An SU is ``su`` servers; a *block* is one rail of one SU (NIC *i* of its
    servers), which always sits whole on one leaf, so same-rail traffic inside an SU crosses one switch.

    Blocks are laid SU by SU, rail by rail: ``per_leaf`` blocks of a full SU on a leaf (``host_ports //
    su``; a leaf may end one SU and start the next). The last SU of ``tail`` servers (``nodes % su``)
    continues on the last part-filled leaf (``tail_first`` of its blocks), then ``tail_per_leaf`` blocks a
    leaf. ``su = host_ports`` with one rail per leaf is the SuperPOD SU (NVIDIA DGX SuperPOD B200/H100 RA:
    32 servers × 8 rails on 8 leaves at radix 64); a partly filled last SU of a multi-SU fabric then keeps
    its R rail leaves (``tail_per_leaf = 1``, the RA's advice to cable a partial SU as a full one), and a
    cluster that is one partly filled SU folds ``floor(host_ports / nodes)`` rails onto each leaf
    (NVIDIA DGX BasePOD: a 2-16 node cluster's eight rails on a few QM9700 switches).
    """

    nodes: int
    rails: int
    host_ports: int
    su: int
    per_leaf: int
    tail_first: int
    tail_per_leaf: int
    leaves: int
    host_ports_max: int

    @property
    def full_units(self) -> int:
        return self.nodes // self.su

    @property
    def tail(self) -> int:
        return self.nodes % self.su

    @property
    def units(self) -> int:
        return -(-self.nodes // self.su)

    @property
    def rails_per_leaf(self) -> int:
        """Rails of one SU on a leaf: ``per_leaf`` for full SUs (at most R), else the folded tail's."""
        return min(self.per_leaf, self.rails) if self.full_units else min(self.tail_per_leaf, self.rails)

    def leaf_of(self, server: int, nic: int) -> int:
        """The leaf (0-based, in fill order) of NIC ``nic`` of server ``server``."""
        unit = server // self.su
        full_blocks = self.full_units * self.rails
        if unit < self.full_units:
            return (unit * self.rails + nic) // self.per_leaf
        open_leaf = full_blocks // self.per_leaf  # the part-filled leaf of the full SUs (if any)
        if nic < self.tail_first:
            return open_leaf
        first = open_leaf + (1 if full_blocks % self.per_leaf else 0)
        return first + (nic - self.tail_first) // self.tail_per_leaf


@lru_cache(maxsize=65_536)
def rail_packing(nodes: int, rails: int, host_ports: int, su: int, fold_tail: bool) -> RailPacking:
    """Lay the blocks of ``nodes`` servers (SUs of ``su``) on leaves of ``host_ports`` host ports.

    ``fold_tail`` lets the last SU's blocks share leaves (``floor(host_ports / tail)`` a leaf, after
    topping up the part-filled leaf); without it each of its blocks takes a leaf of its own.
    """
    per_leaf = host_ports // su
    full, tail = divmod(nodes, su)
    blocks = full * rails
    leaves, open_blocks = divmod(blocks, per_leaf)
    host_max = per_leaf * su if leaves else open_blocks * su
    first, tail_per_leaf = 0, 1
    if open_blocks:
        leaves += 1
    if tail:
        tail_per_leaf = host_ports // tail if fold_tail else 1
        if fold_tail and open_blocks:
            first = min(rails, (host_ports - open_blocks * su) // tail)
            host_max = max(host_max, open_blocks * su + first * tail)
        rest = rails - first
        if rest:
            leaves += -(-rest // tail_per_leaf)
            host_max = max(host_max, min(rest, tail_per_leaf) * tail)
    return RailPacking(nodes, rails, host_ports, su, per_leaf, first, tail_per_leaf, leaves, host_max)


def _superpod_packing(nodes: int, rails: int, host_ports: int) -> RailPacking:
    """SuperPOD SUs of ``host_ports`` servers, one rail per leaf; one partly filled SU folds its rails."""
    return rail_packing(nodes, rails, host_ports, host_ports, nodes < host_ports)


@lru_cache(maxsize=65_536)
def _rail_arrangement(nodes: int, rails: int, host_ports: int, leaves_max: int) -> RailPacking | None:
    """The SuperPOD packing if it fits ``leaves_max`` leaves; else the packing with the fewest leaves,
    of the largest SU that reaches them; None if even that does not fit.

    The fewest leaves any packing can have is ``ceil(nodes · R / host_ports)`` (no leaf holds more than
    ``host_ports``), and an SU of one server reaches it (its blocks are single NIC ports, laid in order
    as a fat tree lays them), so whatever fits a fat tree of the radix fits here. Taking the fewest
    leaves (not just any SU that fits) keeps the leaf count monotone in the nodes."""
    packing = _superpod_packing(nodes, rails, host_ports)
    if packing.leaves <= leaves_max:
        return packing
    fewest = -(-nodes * rails // host_ports)
    if fewest > leaves_max:
        return None
    for su in range(min(host_ports, nodes) - 1, 0, -1):  # su >= nodes is the folded SuperPOD case above
        packing = rail_packing(nodes, rails, host_ports, su, True)
        if packing.leaves == fewest:
            return packing
    raise AssertionError("an SU of one server reaches the fewest leaves")  # unreachable (su = 1)


@dataclass(frozen=True, slots=True)
class LeafLayout:
    """Bottom-tier attachment for one style, as built.

    ``host_ports_per_leaf`` is how many NIC ports one leaf accepts under the style's rule (0 if the
    style cannot attach even one server or host, e.g. a ToR smaller than one host's NICs).
    """

    style: str
    nodes: int
    nics_per_node: int
    host_ports_per_leaf: int
    servers_per_leaf: int        # rail: servers per SU; ToR: whole nodes per ToR (0 = a node spans ToRs)
    leaves: int                  # leaves needed for ``nodes`` (0 if host_ports_per_leaf == 0)
    host_ports_max: int          # host (NIC) ports in use on the fullest leaf
    leaves_per_pod: int          # leaves per full 3-tier pod (the spine's down ports, Al-Fares)
    scalable_units: int          # rail_optimized SUs (0 for the other styles)
    rails_per_leaf: int          # rail_optimized: rails of one SU on a leaf (0 for the other styles)
    host_links_in_rack: bool     # True: host links are in-rack copper (ToR); False: optical
    notes: tuple[str, ...]
    nics_per_host: int = 0       # the ToR unit (leaf_spine); 0 = one host per node
    packing: RailPacking | None = None

    def leaf_of(self, server: int, nic: int) -> int:
        """The leaf of NIC ``nic`` of node ``server`` (the wiring :mod:`fabricplan.topology.graph` draws)."""
        if self.packing is not None:
            return self.packing.leaf_of(server, nic)
        if self.style == "leaf_spine":  # whole hosts fill ToRs in order
            per_host = self.nics_per_host or self.nics_per_node
            host = server * (self.nics_per_node // per_host) + nic // per_host
            return host // (self.host_ports_per_leaf // per_host)
        return (server * self.nics_per_node + nic) // self.host_ports_per_leaf


@dataclass(frozen=True, slots=True)
class Attachment:
    """How ``nodes`` nodes of ``nics_per_node`` NICs attach to leaves of ``host_ports`` host ports under
    ``style``; the unit a leaf never splits is ``unit_nics`` NICs (1 NIC port: fat tree and rails, whose
    blocks an SU of one server reduces to; a host: ToR).

    * :meth:`fewest_leaves`: ``ceil(nodes · units per node / units per leaf)``;
    * :meth:`max_nodes`: its inverse, the most nodes ``leaves_max`` leaves hold;
    * :meth:`arrange`: the layout within ``leaves_max`` leaves.
    """

    style: str
    nodes: int
    nics_per_node: int
    unit_nics: int
    host_ports: int
    spine_down_ports: int

    @property
    def units_per_node(self) -> int:
        return self.nics_per_node // self.unit_nics

    @property
    def units_per_leaf(self) -> int:
        return self.host_ports // self.unit_nics

    def fewest_leaves(self, nodes: int) -> int:
        """The fewest leaves ``nodes`` nodes need under the style (0 if a leaf holds no unit)."""
        return -(-nodes * self.units_per_node // self.units_per_leaf) if self.units_per_leaf else 0

    def max_nodes(self, leaves_max: int) -> int:
        """The most nodes ``leaves_max`` leaves hold: the largest n with ``fewest_leaves(n) <= leaves_max``."""
        return leaves_max * self.units_per_leaf // self.units_per_node

    def arrange(self, leaves_max: int | None = None) -> LeafLayout:
        """The leaf layout of the style's nodes within ``leaves_max`` leaves (None: no limit).

        The caller checks ``nodes <= max_nodes(leaves_max)`` first; within it, the layout always fits.
        """
        budget = self.fewest_leaves(self.nodes) if leaves_max is None else leaves_max
        if self.style == "rail_optimized":
            return self._rails(budget)
        if self.style == "leaf_spine":
            return self._tors()
        if self.style == "fat_tree":
            endpoints = self.nodes * self.nics_per_node
            return LeafLayout("fat_tree", self.nodes, self.nics_per_node, self.host_ports, 0,
                              self.fewest_leaves(self.nodes), min(endpoints, self.host_ports),
                              self.spine_down_ports, 0, 0, False, ())
        raise ValueError(f"unknown style {self.style!r}")  # validated by the caller

    def _tors(self) -> LeafLayout:
        u, h = self.unit_nics, self.host_ports
        per_tor = h // u  # whole hosts per ToR
        hosts = self.nodes * self.units_per_node
        if not per_tor:
            return LeafLayout("leaf_spine", self.nodes, self.nics_per_node, 0, 0, 0, 0, self.spine_down_ports,
                              0, 0, True, (), u)
        leaves = -(-hosts // per_tor)
        multi = self.units_per_node > 1
        what = (f"{per_tor} hosts × {u} NICs per ToR: each of a node's {self.units_per_node} hosts takes its own "
                f"ToR ports, hosts fill ToRs in order" if multi else f"{per_tor} servers × {u} NICs per ToR")
        notes = (f"ToR style: {what} over in-rack DAC ({h} host ports per ToR)",)
        return LeafLayout("leaf_spine", self.nodes, self.nics_per_node, per_tor * u,
                          per_tor // self.units_per_node, leaves, min(hosts, per_tor) * u, self.spine_down_ports,
                          0, 0, True, notes, u)

    def _rails(self, budget: int) -> LeafLayout:
        rails, h = self.nics_per_node, self.host_ports
        if not h:
            return LeafLayout("rail_optimized", self.nodes, rails, 0, 0, 0, 0, self.spine_down_ports, 0, 0,
                              False, ())
        packing = _rail_arrangement(self.nodes, rails, h, max(budget, 1))
        if packing is None:  # the caller refuses before laying out; lay out the SuperPOD shape regardless
            packing = _superpod_packing(self.nodes, rails, h)
        return LeafLayout("rail_optimized", self.nodes, rails, h, packing.su, packing.leaves,
                          packing.host_ports_max, self.spine_down_ports, packing.units,
                          packing.rails_per_leaf, False, _rail_notes(packing), packing=packing)


def _rail_notes(p: RailPacking) -> tuple[str, ...]:
    endpoints = p.nodes * p.rails
    if p.su == p.host_ports:  # the SuperPOD SU (one rail per leaf; a single partial SU folded)
        notes = [f"rail-optimised: SU = {p.su} servers × {p.rails} rails = {p.su * p.rails:,} NIC ports on "
                 f"{p.rails} leaves; {p.units:,} SU" + ("" if p.tail == 0 else " (last SU partly filled)")]
        if p.full_units == 0 and p.tail_per_leaf > 1 and p.rails > 1:
            notes.append(f"one partly filled SU: {p.rails_per_leaf} rails per leaf on {p.leaves} leaves instead of "
                         f"{p.rails} part-empty rail leaves (every rail stays on one leaf; NVIDIA DGX BasePOD puts a "
                         "2-16 node cluster's eight rails on a few QM9700 switches)")
    else:
        per_su = -(-p.rails // p.rails_per_leaf)
        notes = [f"rail-optimised, rails packed onto leaves: SU = {p.su} servers, {p.rails_per_leaf} of its "
                 f"{p.rails} rails per leaf ({p.rails_per_leaf * p.su} host ports), {per_su} leaves per SU; "
                 f"{p.units:,} SU" + ("" if p.tail == 0 else " (last SU partly filled)")
                 + f": {endpoints:,} NIC ports on {p.leaves:,} leaves. One rail per leaf (SU of {p.host_ports} "
                 f"servers on {p.rails} leaves) would need more leaves than the tier count allows"]
    return tuple(notes)


def attach(style: str, *, nodes: int, nics_per_node: int, leaf_down_ports: int, reserved_leaf_ports: int,
           spine_down_ports: int, nics_per_host: int | None = None) -> Attachment:
    """The style's attachment of ``nodes`` nodes to leaves of ``leaf_down_ports − reserved_leaf_ports`` host
    ports. ``nics_per_host`` (default: ``nics_per_node``) is the ToR unit of ``leaf_spine``.
    ``spine_down_ports`` (the spine/aggregation switch's down ports, ``da``) bounds a 3-tier pod: a pod
    holds ``da`` leaves (Al-Fares et al., SIGCOMM 2008: k/2 edge switches per pod)."""
    host_ports = max(leaf_down_ports - reserved_leaf_ports, 0)
    unit = (nics_per_host or nics_per_node) if style == "leaf_spine" else 1
    return Attachment(style, nodes, nics_per_node, unit, host_ports, spine_down_ports)
