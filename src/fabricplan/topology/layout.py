"""How each fabric style attaches servers to leaf switches (the bottom tier).

Three styles (docs/reference/topology.md §1.1, §1.3, §1.4):

* ``fat_tree``  – generic leaf-spine / k-ary fat tree: NIC ports fill leaves in order, no rails.
* ``rail_optimized`` – NVIDIA DGX SuperPOD / Spectrum-X RA: NIC *i* of every server goes to rail leaf
  *i* of its scalable unit (SU); an SU is ``d − reserved`` servers × R rails on R leaves. A cluster
  that is one partly filled SU of n servers folds ``floor((d − reserved) / n)`` rails onto each leaf
  (NVIDIA DGX BasePOD reference architecture: 2-16 nodes' eight rails on a few QM9700 switches), so
  no leaf is left half empty; each rail still sits on one leaf.
* ``leaf_spine`` – Meta-style ToR: all NICs of a rack's servers go to that rack's ToR over DAC;
  a ToR holds ``floor((d − reserved) / nics_per_node)`` whole servers.

A :class:`LeafLayout` says how many leaves the nodes need, how full the fullest leaf is and how
leaves group into 3-tier pods; it knows nothing about spines or cores.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Style = Literal["rail_optimized", "leaf_spine", "fat_tree", "rail_only"]
#: ``rail_only`` (no spine; :func:`fabricplan.topology.sizing.size_fabric`) has no leaf layout here.
STYLES: tuple[str, ...] = ("rail_optimized", "leaf_spine", "fat_tree", "rail_only")


@dataclass(frozen=True, slots=True)
class LeafLayout:
    """Bottom-tier attachment for one style.

    ``host_ports_per_leaf`` is how many NIC ports one leaf accepts under the style's rule (0 if the
    style cannot attach even one server, e.g. a ToR smaller than one server's NICs).
    """

    style: str
    nodes: int
    nics_per_node: int
    host_ports_per_leaf: int
    servers_per_leaf: int        # whole servers per leaf (rail: servers per SU; ToR: per rack); 0 = n/a
    leaves: int                  # leaves needed for ``nodes`` (0 if host_ports_per_leaf == 0)
    host_ports_max: int          # host (NIC) ports in use on the fullest leaf
    leaves_per_group: int        # indivisible block of leaves (R rails for rail_optimized, else 1)
    leaves_per_pod: int          # leaves per full 3-tier pod (whole groups where possible)
    scalable_units: int          # rail_optimized SUs (0 for the other styles)
    host_links_in_rack: bool     # True: host links are in-rack copper (ToR); False: optical
    notes: tuple[str, ...]

    def max_endpoints_for(self, leaves_max: int) -> int:
        """Most NIC ports that ``leaves_max`` leaves hold under this style (whole groups/servers)."""
        if self.host_ports_per_leaf == 0:
            return 0
        if self.style == "rail_optimized":
            return (leaves_max // self.leaves_per_group) * self.servers_per_leaf * self.nics_per_node
        return leaves_max * self.host_ports_per_leaf


def leaf_layout(style: str, *, nodes: int, nics_per_node: int, leaf_down_ports: int,
                reserved_leaf_ports: int, spine_down_ports: int) -> LeafLayout:
    """Attach ``nodes`` servers to leaves with ``leaf_down_ports − reserved_leaf_ports`` host ports each.

    ``spine_down_ports`` (the spine/aggregation switch's down ports, ``da``) bounds a 3-tier pod:
    a pod holds at most ``da`` leaves (Al-Fares et al., SIGCOMM 2008: k/2 edge switches per pod).
    """
    host_ports = max(leaf_down_ports - reserved_leaf_ports, 0)
    endpoints = nodes * nics_per_node
    if style == "rail_optimized":
        return _rail_layout(nodes, nics_per_node, host_ports, spine_down_ports)
    if style == "leaf_spine":
        per_tor = host_ports // nics_per_node
        leaves = -(-nodes // per_tor) if per_tor else 0
        notes = (f"ToR style: {per_tor} servers × {nics_per_node} NICs per ToR over in-rack DAC "
                 f"({host_ports} host ports per ToR)",) if per_tor else ()
        return LeafLayout(style, nodes, nics_per_node, per_tor * nics_per_node, per_tor, leaves,
                          min(nodes, per_tor) * nics_per_node, 1, spine_down_ports, 0, True, notes)
    if style == "fat_tree":
        leaves = -(-endpoints // host_ports) if host_ports else 0
        return LeafLayout(style, nodes, nics_per_node, host_ports, 0, leaves, min(endpoints, host_ports),
                          1, spine_down_ports, 0, False, ())
    raise ValueError(f"unknown style {style!r}")  # validated by the caller


def _rail_layout(nodes: int, rails: int, servers_per_su: int, spine_down_ports: int) -> LeafLayout:
    """Rail-optimised SUs (NVIDIA DGX SuperPOD RA): SU = ``servers_per_su`` servers × R rail leaves.

    Leaves = R · ceil(nodes / servers_per_su). A 3-tier pod is made of whole SUs,
    ``floor(da / R)`` of them, when an SU fits in a pod (R ≤ da); otherwise SUs straddle pods and a
    pod is just ``da`` leaves.
    """
    if servers_per_su == 0:
        return LeafLayout("rail_optimized", nodes, rails, 0, 0, 0, 0, rails, spine_down_ports, 0, False, ())
    units = -(-nodes // servers_per_su)
    notes = [f"rail-optimised: SU = {servers_per_su} servers × {rails} rails = "
             f"{servers_per_su * rails:,} NIC ports on {rails} leaves; {units:,} SU"
             + ("" if nodes % servers_per_su == 0 else " (last SU partly filled)")]
    rails_per_leaf = servers_per_su // nodes if units == 1 and rails > 1 else 1
    if rails_per_leaf > 1:  # one partly filled SU: several rails share a leaf, each rail still on one leaf
        rails_per_leaf = min(rails_per_leaf, rails)
        leaves = -(-rails // rails_per_leaf)
        notes.append(f"one partly filled SU: {rails_per_leaf} rails per leaf on {leaves} leaves instead of "
                     f"{rails} part-empty rail leaves (every rail stays on one leaf; NVIDIA DGX BasePOD puts a "
                     "2-16 node cluster's eight rails on a few QM9700 switches)")
        return LeafLayout("rail_optimized", nodes, rails, servers_per_su, servers_per_su, leaves,
                          rails_per_leaf * nodes, rails, spine_down_ports if rails <= spine_down_ports
                          else spine_down_ports, units, False, tuple(notes))
    if rails <= spine_down_ports:
        per_pod = (spine_down_ports // rails) * rails
    else:
        per_pod = spine_down_ports
        notes.append(f"{rails} rails exceed the {spine_down_ports} leaves a pod can hold: SUs straddle pods")
    return LeafLayout("rail_optimized", nodes, rails, servers_per_su, servers_per_su, rails * units,
                      min(nodes, servers_per_su), rails, per_pod, units, False, tuple(notes))
